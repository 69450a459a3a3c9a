"""The reproduction report: one page per experiment (its figure drawn as the paper draws
it, a picture of its topology, every claim with the sentence of the paper it tests, and
the runs by variant), and an index in Markdown and HTML.

Each page also leaves `<id>.json`, the verdicts in short, so that a later `reproduce ID`
rewrites the index with every experiment already reported in the same folder still
listed and linked (with the date and code version of its own run).
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from manetfair import claims as claims_mod
from manetfair import plots
from manetfair.reproduce import ExperimentResult

CSS = """body{font-family:sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.3em .6em;text-align:left;vertical-align:top}
th{background:#eee}.holds{color:#176417;font-weight:bold}.fails{color:#a01818;font-weight:bold}
.na{color:#777}img{max-width:100%}code{background:#f4f4f4;padding:0 .2em}
blockquote{margin:0;font-style:italic;color:#444}.meta{color:#555;font-size:90%}
.figs{display:flex;flex-wrap:wrap;gap:1em}.figs img{max-width:48em}"""

INTERVAL_NOTE = (
    "Values are means over seeds; ranges and error bars run from the lowest to the "
    "highest seed (for the median a distribution-free confidence interval at 75% with 3 "
    "seeds, 94% with 5, 99.8% with 10)."
)


def code_version() -> str:
    from manetfair.runner import code_version as version

    try:
        return version()
    except (ImportError, OSError):  # the report must not fail because the core is absent
        return "unknown"


def write(results: Sequence[ExperimentResult], out: Path) -> list[Path]:
    """Writes index.md, index.html and per available experiment <id>.md, <id>.html,
    <id>.json, the figure <id>.png and the topology <id>-topology.png; runs under the
    SINR reception model get <id>-sinr.* instead, and reception.md/.html puts both
    models side by side wherever both were reported (report_reception.py)."""
    from manetfair import report_reception

    out.mkdir(parents=True, exist_ok=True)
    stamp = {
        "version": code_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    written: list[Path] = []
    for r in results:
        if not r.available:
            continue
        exp_id = r.experiment.id + report_reception.suffix(r.reception)
        png = out / f"{exp_id}.png"
        topo = out / f"{exp_id}-topology.png"
        drawn = plots.figure(r, png)
        topo_drawn = plots.topology(r, topo)
        written += [p for p, ok in ((png, drawn), (topo, topo_drawn)) if ok]
        md, body = _experiment_page(
            r, png.name if drawn else None, topo.name if topo_drawn else None, stamp
        )
        written.append(_write(out / f"{exp_id}.md", md))
        title = r.experiment.title + report_reception.title_suffix(r.reception)
        written.append(_write(out / f"{exp_id}.html", _html_page(title, body)))
        written.append(_write(out / f"{exp_id}.json", json.dumps(_entry(r, stamp), indent=1)))
    written += report_reception.write(out)
    md, body = _index(results, out, stamp)
    link_md, link_html = report_reception.index_link(out)
    md, body = md + link_md, body + link_html
    written.append(_write(out / "index.md", md))
    written.append(_write(out / "index.html", _html_page("manetfair reproduction report", body)))
    return written


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _verdict_word(v: claims_mod.Verdict) -> str:
    return "holds" if v.holds else "does not hold"


def fmt_number(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "n/a"
    return f"{x:.4g}" if abs(x) < 10 else f"{x:.1f}"


def _entry(r: ExperimentResult, stamp: Mapping[str, str]) -> dict[str, Any]:
    """What the index needs of one reported experiment."""
    exp = r.experiment
    held, total = r.holds_count()
    return {
        "id": exp.id,
        "title": exp.title,
        "description": exp.description,
        "held": held,
        "total": total,
        "pending": len(exp.pending_claims()),
        "missing_arms": [f"{a} = {v}" for a, v, _ in exp.missing_arms()],
        "quick": r.quick,
        "seeds": len({o.spec.seed for o in r.outcomes}),
        "runs": len(r.outcomes),
        "reception": r.reception,
        "claims": [
            {"what": v.what, "paper": v.paper, "measured": v.measured, "holds": v.holds}
            for v in r.verdicts
        ],
        **stamp,
    }


def _known_experiments() -> list[Any]:
    from manetfair import experiments
    from manetfair.errors import InputError

    try:
        return experiments.load_all()
    except InputError:  # no experiments folder: list only what was given
        return []


def _index(
    results: Sequence[ExperimentResult], out: Path, stamp: Mapping[str, str]
) -> tuple[str, str]:
    """Every experiment: this run's, then those an earlier run reported in `out` (from
    their `<id>.json`), then the rest of the known ones as unavailable or not run."""
    # The index lists the papers' own reception model; SINR runs have their page.
    fresh = {r.experiment.id: r for r in results if r.reception == "threshold"}
    order: list[tuple[str, str, str, Any]] = [
        (r.experiment.id, r.experiment.title, r.experiment.description, r.experiment)
        for r in results
    ]
    seen = {exp_id for exp_id, _, _, _ in order}
    for exp in _known_experiments():
        if exp.id not in seen:
            order.append((exp.id, exp.title, exp.description, exp))
            seen.add(exp.id)
    for sidecar in sorted(out.glob("*.json")):
        earlier = _sidecar(out, sidecar.stem)
        if (
            sidecar.stem not in seen
            and earlier is not None
            and earlier.get("reception", "threshold") == "threshold"
        ):
            order.append((sidecar.stem, earlier["title"], earlier["description"], None))
            seen.add(sidecar.stem)
    rows_md, rows_html = [], []
    held_all = total_all = 0
    for exp_id, title, description, exp in order:
        entry: dict[str, Any] | None = None
        reason = ""
        if exp_id in fresh:
            r = fresh[exp_id]
            if r.available:
                entry = _entry(r, stamp)
            else:
                reason = f"not yet available: {r.reason}"
        else:
            entry = _sidecar(out, exp_id)
            if entry is None and exp is not None:
                ok, why = _availability(exp)
                reason = (
                    f"not yet available: {why}"
                    if not ok
                    else f"not run yet: `manetfair reproduce {exp_id}`"
                )
        if entry is not None:
            held_all += int(entry["held"])
            total_all += int(entry["total"])
            status = f"{entry['held']}/{entry['total']} claims hold" if entry["total"] else ""
            if entry.get("pending"):
                status += ("; " if status else "") + f"{entry['pending']} wait for a scheme"
            if entry.get("missing_arms"):
                status += f" (arms not yet available: {', '.join(entry['missing_arms'])})"
            mode = "quick" if entry.get("quick") else "full"
            run = f"{mode}, {entry.get('seeds', '?')} seeds; {entry.get('date', '?')}"
            cls = "holds" if entry["held"] == entry["total"] else "fails"
            rows_md.append(
                f"| [{title}]({exp_id}.md) | `{exp_id}` | {description} | "
                f"{status or 'no claims run yet'} | {run} |"
            )
            rows_html.append(
                f'<tr><td><a href="{exp_id}.html">{html.escape(title)}</a></td>'
                f"<td><code>{exp_id}</code></td><td>{html.escape(description)}</td>"
                f'<td class="{cls}">{html.escape(status or "no claims run yet")}</td>'
                f"<td>{html.escape(run)}</td></tr>"
            )
        else:
            rows_md.append(f"| {title} | `{exp_id}` | {description} | {reason} | |")
            rows_html.append(
                f"<tr><td>{html.escape(title)}</td><td><code>{exp_id}</code></td>"
                f'<td>{html.escape(description)}</td><td class="na">{html.escape(reason)}'
                "</td><td></td></tr>"
            )
    quick = any(r.quick for r in results)
    seeds = sorted({len({o.spec.seed for o in r.outcomes}) for r in results if r.outcomes})
    count = "/".join(str(n) for n in seeds) or "no"
    mode = (
        f"This run: quick mode (shorter runs in some experiments, {count} seeds); "
        "its verdicts are indicative."
        if quick
        else f"This run: full mode (the papers' durations, {count} seeds)."
    )
    meta = f"Code version {stamp['version']}, written {stamp['date']}. {mode}"
    total = f"{held_all} of {total_all} evaluated claims hold."
    md = (
        "# manetfair reproduction report\n\n"
        f"{meta}\n\n{total} {INTERVAL_NOTE}\n\n"
        "| experiment | id | description | verdicts | run |\n| --- | --- | --- | --- | --- |\n"
        + "\n".join(rows_md)
        + "\n"
    )
    body = (
        "<h1>manetfair reproduction report</h1>"
        f'<p class="meta">{html.escape(meta)}</p><p>{html.escape(total)} '
        f"{html.escape(INTERVAL_NOTE)}</p>"
        "<table><tr><th>experiment</th><th>id</th><th>description</th><th>verdicts</th>"
        "<th>run</th></tr>" + "".join(rows_html) + "</table>"
    )
    return md, body


def _sidecar(out: Path, exp_id: str) -> dict[str, Any] | None:
    """What an earlier run left for the index (`<id>.json` beside its `<id>.html`)."""
    path = out / f"{exp_id}.json"
    if not (path.is_file() and (out / f"{exp_id}.html").is_file()):
        return None
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    needed = {"title", "description", "held", "total"}
    return entry if isinstance(entry, dict) and needed <= set(entry) else None


def _availability(exp: Any) -> tuple[bool, str]:
    result: tuple[bool, str] = exp.availability()
    return result


def _experiment_page(
    r: ExperimentResult, png: str | None, topo: str | None, stamp: Mapping[str, str]
) -> tuple[str, str]:
    exp = r.experiment
    seeds = sorted({o.spec.seed for o in r.outcomes})
    cached = sum(o.cached for o in r.outcomes)
    facts = (
        f"{len(r.outcomes)} runs ({len(seeds)} seeds per variant, {cached} served from the "
        f"results store){', quick mode' if r.quick else ''}"
        f"{', reception model ' + r.reception if r.reception != 'threshold' else ''}. "
        f"Code version {stamp['version']}, "
        f"written {stamp['date']}. Experiment id {exp.id}, paper file {exp.paper}."
    )
    md = [f"# {exp.title}\n", f"{exp.description}\n", facts + "\n"]
    body = [
        f"<h1>{html.escape(exp.title)}</h1><p>{html.escape(exp.description)}</p>",
        f'<p class="meta">{html.escape(facts)}</p>',
    ]
    if exp.reference:
        md.append(f"Reference: {exp.reference}\n")
        body.append(f"<p>Reference: {html.escape(exp.reference)}</p>")
    figs_md, figs_html = [], []
    if png:
        figs_md.append(f"![{exp.title}]({png})")
        figs_html.append(f'<img src="{png}" alt="{html.escape(exp.title)}">')
    if topo:
        figs_md.append(f"![topology of {exp.id}]({topo})")
        figs_html.append(f'<img src="{topo}" alt="topology of {html.escape(exp.id)}">')
    if figs_md:
        md.append("\n".join(figs_md) + "\n")
        body.append('<div class="figs">' + "".join(figs_html) + "</div>")
    held, total = r.holds_count()
    md.append(f"## Claims: {held} of {total} hold\n")
    body.append(f"<h2>Claims: {held} of {total} hold</h2>")
    md.append(
        "| claim | the paper's sentence | paper | measured | test | verdict |\n"
        "| --- | --- | --- | --- | --- | --- |"
    )
    hrow = [
        (
            "<table><tr><th>claim</th><th>the paper's sentence</th><th>paper</th>"
            "<th>measured</th><th>test</th><th>verdict</th></tr>"
        )
    ]
    for v in r.verdicts:
        note = f" ({v.note})" if v.note else ""
        kind = f"{v.test}, direction only" if v.direction_only else v.tolerance
        quote = f"{v.quote} (paraphrase)" if v.paraphrase else f"“{v.quote}”"
        md.append(
            f"| {v.what}{note} | {quote} | {_paper_cell(v)} | {fmt_number(v.measured)} | "
            f"{kind} | **{_verdict_word(v)}** |"
        )
        cls = "holds" if v.holds else "fails"
        hrow.append(
            f"<tr><td>{html.escape(v.what)}"
            + (f'<br><span class="meta">{html.escape(v.note)}</span>' if v.note else "")
            + f"</td><td><blockquote>{html.escape(v.quote)}</blockquote>"
            + ('<span class="meta">(paraphrase)</span>' if v.paraphrase else "")
            + "</td>"
            f"<td>{html.escape(_paper_cell(v))}</td><td>{fmt_number(v.measured)}</td>"
            f"<td>{html.escape(kind)}</td>"
            f'<td class="{cls}">{_verdict_word(v)}</td></tr>'
        )
    hrow.append("</table>")
    body.append("".join(hrow))
    missing_md, missing_html = _missing_section(r)
    md.append(missing_md)
    body.append(missing_html)
    table_md, table_html = _variant_table(r)
    md.append(f"\n## Runs by variant\n\n{INTERVAL_NOTE}\n\n" + table_md)
    body.append(f"<h2>Runs by variant</h2><p>{html.escape(INTERVAL_NOTE)}</p>" + table_html)
    if exp.notes.strip():
        md.append("\n## Notes\n\n" + exp.notes.strip() + "\n")
        body.append(f"<h2>Notes</h2><p>{html.escape(exp.notes.strip())}</p>")
    md.append("\n[all experiments](index.md)\n")
    body.append('<p><a href="index.html">all experiments</a></p>')
    return "\n".join(md), "".join(body)


def _paper_cell(v: claims_mod.Verdict) -> str:
    if v.is_model:
        return f"{fmt_number(v.paper)} (model)"
    if v.test == "within":
        return fmt_number(v.paper)
    return f"{fmt_number(v.paper)} (threshold)"


def _missing_section(r: ExperimentResult) -> tuple[str, str]:
    """The arms this experiment cannot run yet and the claims that wait for them."""
    exp = r.experiment
    missing = exp.missing_arms()
    pending = exp.pending_claims()
    if not missing and not pending:
        return "", ""
    md = ["\n## Not yet available\n"]
    body = ["<h2>Not yet available</h2>"]
    if missing:
        md.append("Arms not run (their scheme is not built yet):\n")
        md.extend(f"- {a} = {v}: {why}" for a, v, why in missing)
        body.append(
            "<p>Arms not run (their scheme is not built yet):</p><ul>"
            + "".join(
                f"<li>{html.escape(f'{a} = {v}')}: {html.escape(why)}</li>" for a, v, why in missing
            )
            + "</ul>"
        )
    if pending:
        md.append("\nClaims not evaluated until those arms exist:\n")
        md.append("| claim | the paper's sentence | paper | waits for |\n| --- | --- | --- | --- |")
        md.extend(
            f"| {_placeholders(c['what'])} | “{_quote(c)}” | {_paper_text(c)} | {why} |"
            for c, why in pending
        )
        body.append(
            "<p>Claims not evaluated until those arms exist:</p><table><tr><th>claim</th>"
            "<th>the paper's sentence</th><th>paper</th><th>waits for</th></tr>"
            + "".join(
                f"<tr><td>{html.escape(_placeholders(c['what']))}</td>"
                f"<td><blockquote>{html.escape(_quote(c))}</blockquote></td>"
                f"<td>{html.escape(_paper_text(c))}</td><td>{html.escape(why)}</td></tr>"
                for c, why in pending
            )
            + "</table>"
        )
    return "\n".join(md) + "\n", "".join(body)


def _quote(claim: Mapping[str, Any]) -> str:
    return " ".join(str(claim.get("quote", "")).split())


def _placeholders(what: Any) -> str:
    """A claim text whose `{axis}` placeholders (one claim per value) read as <axis>."""
    return str(what).replace("{", "<").replace("}", ">")


def _paper_text(claim: Mapping[str, Any]) -> str:
    paper = claim["paper"]
    if isinstance(paper, Mapping):
        return f"model {paper.get('model', '?')}"
    text = fmt_number(float(paper))
    return text if claim.get("test", "within") == "within" else f"{text} (threshold)"


def _variant_table(r: ExperimentResult) -> tuple[str, str]:
    """Per variant: its axis values, seeds, and the aggregate, Jain index and u
    (mean, lowest-highest seed)."""
    variants: list[dict[str, Any]] = []
    for o in r.outcomes:
        if o.spec.variant not in variants:
            variants.append(o.spec.variant)
    names = list(variants[0]) if variants else []
    head = names + ["seeds", "aggregate kbit/s", "Jain index", "unfairness u (equal shares)"]
    md = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    hrows = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    runs = r.runs
    for v in variants:
        chosen = [x for x in runs if claims_mod.matches(x.variant, v)]
        cells = [str(v[k]) for k in names] + [str(len(chosen))]
        for field in ("aggregate_kbps", "jain_index", "unfairness_index"):
            values = [
                float(x.summary[field])
                for x in chosen
                if isinstance(x.summary.get(field), (int, float))
            ]
            cells.append(_range(plots.seed_range(values)))
        md.append("| " + " | ".join(cells) + " |")
        hrows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    hrows.append("</table>")
    return "\n".join(md) + "\n", "".join(hrows)


def _range(point: tuple[float, float, float]) -> str:
    mean, lo, hi = point
    if not math.isfinite(mean):
        return "n/a"
    if lo == hi:
        return fmt_number(mean)
    return f"{fmt_number(mean)} ({fmt_number(lo)}–{fmt_number(hi)})"


def _html_page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>{body}</body>"
        "</html>\n"
    )
