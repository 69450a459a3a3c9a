"""The reproduction report: one page per experiment (its figure drawn as the paper draws
it, a picture of its topology, every claim with the sentence of the paper it tests, and
the runs by variant), and an index in Markdown and HTML.

Each page also leaves `<id>.json`, the verdicts in short, so that a later `reproduce ID`
rewrites the index with every experiment already reported in the same folder still
listed and linked (with the date and code version of its own run).
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from manetfair import claims as claims_mod
from manetfair import plots
from manetfair.experiment_result import ExperimentResult
from manetfair.pages import fmt_number, render
from manetfair.reproduce import Timing

# Where the time of the last reproduction written into the folder went (Timing.as_json).
TIMING_FILE = "timing.json"

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


def write(
    results: Sequence[ExperimentResult],
    out: Path,
    *,
    drawn_in: Path | None = None,
    timing: Timing | None = None,
    store_path: Path | None = None,
) -> list[Path]:
    """Writes index.md, index.html and per available experiment <id>.md, <id>.html,
    <id>.json, the figure <id>.png and the topology <id>-topology.png; runs under the
    SINR reception model get <id>-sinr.* instead, and reception.md/.html puts both
    models side by side wherever both were reported (report_reception.py); runs on the
    other platform than the paper's get <id>-ns2.* or <id>-standard.*, and
    platform.md/.html puts both platforms side by side (report_platform.py).

    Plots already drawn into `drawn_in` (the batch drew them while others simulated,
    `ExperimentResult.drawn`) are moved into place; the others are drawn here. With
    `timing`, the index's footer says where the time went, and `timing.json` keeps it.
    With `store_path` (the results store the runs are in), the first seed's run of each
    variant (of the first RUN_PAGES variants) gets a page of its own under `runs/<id>/`
    (manetfair.runplots), linked from the experiment's table of variants.
    """
    from manetfair import league, report_platform, report_reception
    from manetfair.output import check_target

    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    stamp = {
        "version": code_version(),
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }
    written: list[Path] = []
    for r in results:
        if not r.available:
            continue
        exp_id = r.file_stem
        png = out / f"{exp_id}.png"
        topo = out / f"{exp_id}-topology.png"
        if r.drawn is not None and drawn_in is not None:
            drawn, topo_drawn = r.drawn
            for path, ok in ((png, drawn), (topo, topo_drawn)):
                if ok:
                    check_target(path)
                    os.replace(drawn_in / path.name, path)
            if drawn:
                for companion in (png.with_suffix(".svg"), png.with_suffix(".csv")):
                    os.replace(drawn_in / companion.name, companion)
        else:
            drawn, topo_drawn = plots.draw(r, out, exp_id)
        written += [p for p, ok in ((png, drawn), (topo, topo_drawn)) if ok]
        if drawn:
            written += [png.with_suffix(".svg"), png.with_suffix(".csv")]
        # The league's runs are listed by id on its own page (league-runs.md): pages of
        # its runs would double the cost of a quick league.
        run_pages = (
            _run_pages(r, out, store_path)
            if store_path is not None and not league.is_league(r)
            else {}
        )
        written += [out / href for href in run_pages.values()]
        md, page = _experiment_page(
            r, png.name if drawn else None, topo.name if topo_drawn else None, stamp, run_pages
        )
        written.append(_write(out / f"{exp_id}.md", md))
        written.append(_write(out / f"{exp_id}.html", page))
        written.append(_write(out / f"{exp_id}.json", json.dumps(_entry(r, stamp), indent=1)))
    written += report_reception.write(out)
    written += report_platform.write(out)
    written += league.write(results, out)
    footer = None
    if timing is not None:
        timing.report_s += time.perf_counter() - t0
        timing.stop()
        footer = _timing_footer(timing)
    pages = {
        "reception": report_reception.has_page(out),
        "platform": report_platform.has_page(out),
        "league": league.has_page(out),
    }
    md, page = _index(results, out, stamp, pages, footer)
    written.append(_write(out / "index.md", md))
    written.append(_write(out / "index.html", page))
    if timing is not None:
        written.append(_write(out / TIMING_FILE, json.dumps(timing.as_json(), indent=1) + "\n"))
    return written


@contextmanager
def plot_folder(out: Path) -> Iterator[Path]:
    """A fresh hidden folder inside `out` for plots drawn while runs simulate, removed
    afterwards (and, when a command was killed outright, by the next one): plots land
    in the report only when the report is written."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob(".plots-*"):
        # Left by a command killed outright (SIGKILL): its process is gone.
        pid = stale.name.split("-")[1]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=f".plots-{os.getpid()}-", dir=out))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


def _timing_footer(t: Timing) -> dict[str, Any]:
    """The index's footer: the whole command, then per experiment, in seconds."""
    j = t.as_json()
    phases = j["phases"]
    rows = [
        {
            "id": e["id"],
            "runs": f"{e['simulated']}/{e['runs']}",
            "wall": f"{e['wall_s']:.2f}",
            "core": f"{e['core_s']:.2f}",
            "share": f"{100 * e['core_share']:.0f} %",
            "rate": f"{e['sim_s_per_wall_s']:.1f}",
            "plots": f"{e['plot_s']:.2f}",
        }
        for e in j["experiments"]
    ]
    workers = "worker" if t.jobs == 1 else "workers"
    reused = (
        f"; {j['reused']} of the experiments' {j['runs']} runs came from the results store "
        "or from an identical run of another experiment"
        if j["reused"]
        else ""
    )
    summary = (
        f"{j['wall_s']:.1f} s of wall time with {t.jobs} {workers}: {j['simulated']} runs "
        f"simulated ({j['sim_s']:.0f} simulated s, {j['sim_s_per_wall_s']:.1f} simulated s "
        f"per wall s){reused}; "
        f"{j['core_s']:.1f} s in the core ({100 * j['core_share']:.0f} % of the "
        f"workers' wall time). Outside the core: scenario expansion "
        f"{phases['expansion_s']:.1f} s, results store {phases['store_s']:.1f} s in "
        f"{j['commits']} commits, claims {phases['claims_s']:.1f} s, plots "
        f"{phases['plots_s']:.1f} s, pages {phases['report_s']:.1f} s."
    )
    return {"summary": summary, "rows": rows, "file": TIMING_FILE}


def _write(path: Path, text: str) -> Path:
    from manetfair.output import write_text

    return write_text(path, text)


def _verdict_word(v: claims_mod.Verdict) -> str:
    return "holds" if v.holds else "does not hold"


def verdict_words(v: claims_mod.Verdict) -> str:
    """The verdict with what a reader must know beside it: a control (not counted), a
    calibrated setting, and whether ns-2.35 shares a miss."""
    words = _verdict_word(v)
    if not v.counted:
        words += " (control, not counted)"
    if v.calibrated:
        words += " (calibrated)"
    if v.ns2 is not None:
        value = fmt_number(v.ns2.value)
        if v.holds:
            words += f"; ns-2.35 gives {value}"
        elif v.miss_class == "ns2-shares":
            words += f"; ns-2.35 gives {value} as well"
        elif v.ns2.holds:
            words += f"; ns-2.35 gives {value}, which holds"
        else:
            words += f"; ns-2.35 gives {value}, a miss on the other side"
    return words


def _other_cell(v: claims_mod.Verdict) -> str:
    """The claim's value on the other platform, or why there is none."""
    if v.other is None:
        return "not run"
    word = "holds" if v.other.holds else "does not hold"
    return f"{fmt_number(v.other.measured)} ({word})"


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
        "platform": r.platform or exp.platform,
        "paper_platform": exp.platform,
        "claims": [
            {
                "what": v.what,
                "paper": v.paper,
                "measured": v.measured,
                "holds": v.holds,
                "kind": v.kind,
                "headline": v.headline,
            }
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
    results: Sequence[ExperimentResult],
    out: Path,
    stamp: Mapping[str, str],
    side_by_side: Mapping[str, bool],
    timing: Mapping[str, Any] | None = None,
) -> tuple[str, str]:
    """Every experiment: this run's, then those an earlier run reported in `out` (from
    their `<id>.json`), then the rest of the known ones as unavailable or not run; and
    links to the side-by-side pages (`side_by_side`: reception models, platforms) that
    exist."""
    from manetfair import league

    # The index lists the papers' own reception model; SINR runs have their page.
    fresh = {r.experiment.id: r for r in results if r.reception == "threshold" and r.own_platform}
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
            and earlier.get("platform") == earlier.get("paper_platform")
        ):
            order.append((sidecar.stem, earlier["title"], earlier["description"], None))
            seen.add(sidecar.stem)
    rows: list[dict[str, Any]] = []
    held_all = total_all = 0
    for exp_id, title, description, exp in order:
        row = {"id": exp_id, "title": title, "description": description, "run": ""}
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
        if entry is None:
            rows.append({**row, "linked": False, "status": reason, "cls": "na"})
            continue
        held_all += int(entry["held"])
        total_all += int(entry["total"])
        status = f"{entry['held']}/{entry['total']} claims hold" if entry["total"] else ""
        if entry.get("pending"):
            status += ("; " if status else "") + f"{entry['pending']} wait for a scheme"
        if entry.get("missing_arms"):
            status += f" (arms not yet available: {', '.join(entry['missing_arms'])})"
        mode = "quick" if entry.get("quick") else "full"
        row["run"] = f"{mode}, {entry.get('seeds', '?')} seeds; {entry.get('date', '?')}"
        cls = "holds" if entry["held"] == entry["total"] else "fails"
        if exp_id.startswith(league.PREFIX):
            # The league compares the remedies and claims nothing: its page has the numbers.
            status, cls = "no claims: the league page compares the remedies", "na"
        rows.append({**row, "linked": True, "status": status or "no claims run yet", "cls": cls})
    quick = any(r.quick for r in results)
    seeds = sorted({len({o.spec.seed for o in r.outcomes}) for r in results if r.outcomes})
    count = "/".join(str(n) for n in seeds) or "no"
    mode = (
        f"This run: quick mode (shorter runs in some experiments, {count} seeds); "
        "its verdicts are indicative."
        if quick
        else f"This run: full mode (the papers' durations, {count} seeds)."
    )
    return render(
        "index",
        headlines=_headlines(results),
        page_title="manetfair reproduction report",
        meta=f"Code version {stamp['version']}, written {stamp['date']}. {mode}",
        total=f"{held_all} of {total_all} evaluated claims hold.",
        interval_note=INTERVAL_NOTE,
        rows=rows,
        reception=side_by_side["reception"],
        platform=side_by_side["platform"],
        league=side_by_side["league"],
        timing=timing,
    )


def _headlines(results: Sequence[ExperimentResult]) -> list[dict[str, Any]]:
    """Per paper, its headline results (the claims' `headline`) and whether every claim
    carrying one holds, as judged on the paper's own platform in this run."""
    papers: dict[str, dict[str, list[claims_mod.Verdict]]] = {}
    for r in results:
        if r.reception != "threshold" or not r.own_platform:
            continue
        for v in r.verdicts:
            if v.headline:
                title = r.experiment.paper_title or r.experiment.paper
                papers.setdefault(title, {}).setdefault(v.headline, []).append(v)
    out = []
    for paper, heads in papers.items():
        rows = []
        for name, verdicts in heads.items():
            held = sum(v.holds for v in verdicts)
            word = "holds" if held == len(verdicts) else "does not hold"
            rows.append(
                {
                    "name": name,
                    "holds": held == len(verdicts),
                    "status": f"{word} ({held} of {len(verdicts)} claims)",
                    "platform": verdicts[0].platform,
                }
            )
        out.append({"paper": paper, "rows": rows})
    return out


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


# Variants of one experiment that get a page of their run in the report: each page
# is six figures, one to two seconds to draw: a quick reproduction of every
# experiment stays within minutes.
RUN_PAGES = 2


def _run_pages(r: ExperimentResult, out: Path, store_path: Path) -> dict[int, str]:
    """Draws the page of the first seed's run of each of the first RUN_PAGES variants
    (in the order of the table of variants); variant index -> the page's path
    relative to `out`."""
    from manetfair.runplots import RunData, write_run_page
    from manetfair.store import ResultsStore

    order: list[dict[str, Any]] = []
    for o in r.outcomes:
        if o.spec.variant not in order:
            order.append(o.spec.variant)
    pages: dict[int, str] = {}
    with ResultsStore(store_path, read_only=True) as store:
        for i, variant in enumerate(order[:RUN_PAGES]):
            first = min(
                (o for o in r.outcomes if o.spec.variant == variant), key=lambda o: o.spec.seed
            )
            folder = out / "runs" / first.run_id
            if not (folder / "index.html").is_file():
                write_run_page(RunData.of_stored(store, first.run_id), folder)
            pages[i] = f"runs/{first.run_id}/index.html"
    return pages


def _experiment_page(
    r: ExperimentResult,
    png: str | None,
    topo: str | None,
    stamp: Mapping[str, str],
    pages: Mapping[int, str] | None = None,
) -> tuple[str, str]:
    from manetfair.report_reception import title_suffix

    exp = r.experiment
    seeds = sorted({o.spec.seed for o in r.outcomes})
    cached = sum(o.cached for o in r.outcomes)
    facts = (
        f"{len(r.outcomes)} runs ({len(seeds)} seeds per variant, {cached} served from the "
        f"results store){', quick mode' if r.quick else ''}"
        f"{', reception model ' + r.reception if r.reception != 'threshold' else ''}, "
        f"platform {r.platform or exp.platform}"
        f"{'' if r.own_platform else ' (the paper ran ' + exp.platform + ')'}. "
        f"Code version {stamp['version']}, "
        f"written {stamp['date']}. Experiment id {exp.id}, paper file {exp.paper}."
    )
    verdicts = [
        {
            "what": v.what,
            "note": v.note,
            "quote": v.quote,
            "paraphrase": v.paraphrase,
            "paper": _paper_cell(v),
            "measured": fmt_number(v.measured),
            "kind": f"{v.test}, direction only" if v.direction_only else v.tolerance,
            "holds": v.holds,
            "word": verdict_words(v),
            "other": _other_cell(v),
            "calibration": v.calibrated,
        }
        for v in r.verdicts
    ]
    held, total = r.holds_count()
    c_held, controls = r.controls_count()
    return render(
        "experiment",
        page_title=exp.title
        + title_suffix(r.reception)
        + ("" if r.own_platform else f" ({r.platform} platform)"),
        exp=exp,
        facts=facts,
        png=png,
        topo=topo,
        held=held,
        total=total,
        controls=controls,
        controls_held=c_held,
        platform=r.platform or exp.platform,
        other_platform=r.other_platform,
        verdicts=verdicts,
        missing=[(f"{a} = {v}", why) for a, v, why in exp.missing_arms()],
        pending=[
            {
                "what": _placeholders(c["what"]),
                "quote": _quote(c),
                "paper": _paper_text(c),
                "why": why,
            }
            for c, why in exp.pending_claims()
        ],
        interval_note=INTERVAL_NOTE,
        variants=_variant_table(r, pages or {}),
        notes=exp.notes.strip(),
    )


def _paper_cell(v: claims_mod.Verdict) -> str:
    if v.is_model:
        return f"{fmt_number(v.paper)} (model)"
    if v.test == "within":
        return fmt_number(v.paper)
    return f"{fmt_number(v.paper)} (threshold)"


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


def _variant_table(r: ExperimentResult, pages: Mapping[int, str]) -> dict[str, list[Any]]:
    """Per variant: its axis values, seeds, and the aggregate, Jain index and
    equal-share unfairness (mean, lowest-highest seed); `pages` (variant index ->
    href) its run's page. Runs stored before the summary had
    `equal_share_unfairness` give the same value as `unfairness_index`."""
    variants: list[dict[str, Any]] = []
    for o in r.outcomes:
        if o.spec.variant not in variants:
            variants.append(o.spec.variant)
    names = list(variants[0]) if variants else []
    head = names + ["seeds", "aggregate kbit/s", "Jain index", "equal-share unfairness"]
    rows = []
    for v in variants:
        chosen = [x for x in r.runs if claims_mod.matches(x.variant, v)]
        cells = [str(v[k]) for k in names] + [str(len(chosen))]
        for fields in (
            ("aggregate_kbps",),
            ("jain_index",),
            ("equal_share_unfairness", "unfairness_index"),
        ):
            found = (next((x.summary[f] for f in fields if f in x.summary), None) for x in chosen)
            values = [float(v) for v in found if isinstance(v, (int, float))]
            cells.append(_range(plots.seed_range(values)))
        rows.append(cells)
    links = [pages.get(i) for i in range(len(rows))] if pages else []
    if links:
        head.append("first seed's run")
    return {"head": head, "rows": rows, "links": links}


def _range(point: tuple[float, float, float]) -> str:
    mean, lo, hi = point
    if not math.isfinite(mean):
        return "n/a"
    if lo == hi:
        return fmt_number(mean)
    return f"{fmt_number(mean)} ({fmt_number(lo)}–{fmt_number(hi)})"
