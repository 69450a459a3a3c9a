"""The reproduction report: one page per experiment (its figure recreated from the
runs, with 95% confidence intervals over seeds, and the paper's values beside the
measured ones), and an index in Markdown and HTML."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from manetfair import claims as claims_mod
from manetfair.reproduce import ExperimentResult

CSS = """body{font-family:sans-serif;max-width:60em;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #bbb;padding:.3em .6em;text-align:left}
th{background:#eee}.holds{color:#176417;font-weight:bold}.fails{color:#a01818;font-weight:bold}
.na{color:#777}img{max-width:100%}code{background:#f4f4f4;padding:0 .2em}"""


def write(results: Sequence[ExperimentResult], out: Path) -> list[Path]:
    """Writes index.md, index.html and per experiment <id>.md, <id>.html, <id>.png."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for r in results:
        if not r.available:
            continue
        png = out / f"{r.experiment.id}.png"
        drawn = plot(r, png)
        if drawn:
            written.append(png)
        md, body = _experiment_page(r, png.name if drawn else None)
        written.append(_write(out / f"{r.experiment.id}.md", md))
        written.append(_write(out / f"{r.experiment.id}.html", _html_page(r.experiment.id, body)))
    md, body = _index(results)
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


def _index(results: Sequence[ExperimentResult]) -> tuple[str, str]:
    quick = any(r.quick for r in results)
    title = "# manetfair reproduction report\n\n"
    mode = (
        "Quick mode: shortened durations and fewer seeds; verdicts are indicative.\n\n"
        if quick
        else "Full mode: the papers' durations and seed counts.\n\n"
    )
    rows = []
    hrows = []
    for r in results:
        exp = r.experiment
        if r.available:
            held, total = r.holds_count()
            status = f"{held}/{total} claims hold" if total else "no claims"
            missing = exp.missing_arms()
            if missing:
                arms = ", ".join(f"{a} = {v}" for a, v, _ in missing)
                status += f"; arms not yet available: {arms}"
            link_md = f"[{exp.id}]({exp.id}.md)"
            link_html = f'<a href="{exp.id}.html">{html.escape(exp.id)}</a>'
            cls = "holds" if held == total else "fails"
        else:
            status = f"not yet available: {r.reason}"
            link_md = exp.id
            link_html = html.escape(exp.id)
            cls = "na"
        rows.append(f"| {link_md} | {exp.paper} | {exp.figure} | {exp.description} | {status} |")
        hrows.append(
            f"<tr><td>{link_html}</td><td>{html.escape(exp.paper)}</td><td>{html.escape(exp.figure)}"
            f'</td><td>{html.escape(exp.description)}</td><td class="{cls}">{html.escape(status)}</td></tr>'
        )
    md = (
        title + mode + "| experiment | paper | figure/table | description | verdicts |\n"
        "| --- | --- | --- | --- | --- |\n" + "\n".join(rows) + "\n"
    )
    body = (
        f"<h1>manetfair reproduction report</h1><p>{html.escape(mode.strip())}</p>"
        "<table><tr><th>experiment</th><th>paper</th><th>figure/table</th><th>description</th>"
        "<th>verdicts</th></tr>" + "".join(hrows) + "</table>"
    )
    return md, body


def _experiment_page(r: ExperimentResult, png: str | None) -> tuple[str, str]:
    exp = r.experiment
    seeds = sorted({o.spec.seed for o in r.outcomes})
    cached = sum(o.cached for o in r.outcomes)
    facts = (
        f"Paper: {exp.paper} — {exp.figure}. {len(r.outcomes)} runs "
        f"({len(seeds)} seeds per variant, {cached} served from the results store)"
        f"{', quick mode' if r.quick else ''}."
    )
    md = [f"# {exp.id}: {exp.description}\n", facts + "\n"]
    body = [
        f"<h1>{html.escape(exp.id)}</h1><p>{html.escape(exp.description)}</p>",
        f"<p>{html.escape(facts)}</p>",
    ]
    if exp.reference:
        md.append(f"Reference: {exp.reference}\n")
        body.append(f"<p>Reference: {html.escape(exp.reference)}</p>")
    if png:
        md.append(f"![{exp.id}]({png})\n")
        body.append(f'<img src="{png}" alt="{html.escape(exp.id)}">')
    md.append(
        "| claim | paper | measured | deviation | test | verdict |\n| --- | --- | --- | --- | --- | --- |"
    )
    hrow = [
        (
            "<table><tr><th>claim</th><th>paper</th><th>measured</th><th>deviation</th>"
            "<th>test</th><th>verdict</th></tr>"
        )
    ]
    for v in r.verdicts:
        md.append(
            f"| {v.what} | {fmt_number(v.paper)} | {fmt_number(v.measured)} | {v.margin_text()} | "
            f"{v.tolerance} | **{_verdict_word(v)}** |"
        )
        cls = "holds" if v.holds else "fails"
        hrow.append(
            f"<tr><td>{html.escape(v.what)}</td><td>{fmt_number(v.paper)}</td><td>{fmt_number(v.measured)}"
            f"</td><td>{v.margin_text()}</td><td>{html.escape(v.tolerance)}</td>"
            f'<td class="{cls}">{_verdict_word(v)}</td></tr>'
        )
    hrow.append("</table>")
    body.append("".join(hrow))
    missing_md, missing_html = _missing_section(r)
    md.append(missing_md)
    body.append(missing_html)
    table_md, table_html = _variant_table(r)
    md.append("\n## Runs by variant (mean ± 95% CI over seeds)\n\n" + table_md)
    body.append("<h2>Runs by variant (mean ± 95% CI over seeds)</h2>" + table_html)
    if exp.notes.strip():
        md.append("\n## Notes\n\n" + exp.notes.strip() + "\n")
        body.append(f"<h2>Notes</h2><p>{html.escape(exp.notes.strip())}</p>")
    md.append("\n[all experiments](index.md)\n")
    body.append('<p><a href="index.html">all experiments</a></p>')
    return "\n".join(md), "".join(body)


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
        md.append("| claim | paper | waits for |\n| --- | --- | --- |")
        md.extend(
            f"| {_placeholders(c['what'])} | {_paper_text(c['paper'])} | {why} |"
            for c, why in pending
        )
        body.append(
            "<p>Claims not evaluated until those arms exist:</p><table><tr><th>claim</th>"
            "<th>paper</th><th>waits for</th></tr>"
            + "".join(
                f"<tr><td>{html.escape(_placeholders(c['what']))}</td><td>{html.escape(_paper_text(c['paper']))}"
                f"</td><td>{html.escape(why)}</td></tr>"
                for c, why in pending
            )
            + "</table>"
        )
    return "\n".join(md) + "\n", "".join(body)


def _placeholders(what: Any) -> str:
    """A claim text whose `{axis}` placeholders (one claim per value) read as <axis>."""
    return str(what).replace("{", "<").replace("}", ">")


def _paper_text(paper: Any) -> str:
    if isinstance(paper, Mapping):
        return f"model {paper.get('model', '?')}"
    return fmt_number(float(paper))


def _variant_table(r: ExperimentResult) -> tuple[str, str]:
    variants: list[dict[str, Any]] = []
    for o in r.outcomes:
        if o.spec.variant not in variants:
            variants.append(o.spec.variant)
    names = list(variants[0]) if variants else []
    head = names + ["seeds", "aggregate kbit/s", "Jain index"]
    md = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    hrows = ["<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head) + "</tr>"]
    runs = r.runs
    for v in variants:
        agg = claims_mod.mean_ci(claims_mod.per_run_values({"field": "aggregate_kbps"}, runs, v))
        jain = claims_mod.mean_ci(claims_mod.per_run_values({"field": "jain_index"}, runs, v))
        n = sum(1 for x in runs if claims_mod.matches(x.variant, v))
        cells = [str(v[k]) for k in names] + [str(n), _pm(agg), _pm(jain)]
        md.append("| " + " | ".join(cells) + " |")
        hrows.append("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    hrows.append("</table>")
    return "\n".join(md) + "\n", "".join(hrows)


def _pm(mc: tuple[float, float]) -> str:
    mean, half = mc
    return (
        fmt_number(mean) if not math.isfinite(half) else f"{fmt_number(mean)} ± {fmt_number(half)}"
    )


def _html_page(title: str, body: str) -> str:
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f"<style>{CSS}</style></head><body>{body}</body></html>\n"
    )


def plot(r: ExperimentResult, path: Path) -> bool:
    """Draws the experiment's `[plot]`; returns False if it has none."""
    spec = r.experiment.figure_spec
    kind = spec.get("kind")
    if not kind:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    try:
        if kind in ("line", "bar"):
            _plot_xy(ax, r, spec, bars=kind == "bar")
        elif kind == "flows":
            _plot_flows(ax, r, spec)
        elif kind == "nodes":
            _plot_nodes(ax, r, spec)
        elif kind == "timeseries":
            _plot_timeseries(ax, r, spec)
        elif kind == "trace":
            _plot_trace(ax, r, spec)
        else:
            raise ValueError(f"{r.experiment.id}: unknown plot kind {kind!r}")
        ax.set_title(spec.get("title", f"{r.experiment.id}: {r.experiment.figure}"), fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)
    return True


def _axis_values(r: ExperimentResult, name: str | None) -> list[Any]:
    if name is None:
        return [None]
    for axis in r.experiment.axes:
        if axis.name == name:
            present = {str(o.spec.variant[name]) for o in r.outcomes}
            return [v for v in axis.values if str(v) in present]
    raise ValueError(f"{r.experiment.id}: plot names unknown axis {name!r}")


def _axis_label(r: ExperimentResult, name: str) -> str:
    for axis in r.experiment.axes:
        if axis.name == name:
            return axis.label or axis.name
    return name


def _plot_xy(ax: Any, r: ExperimentResult, spec: Mapping[str, Any], bars: bool) -> None:
    x_name = spec["x"]
    series_name = spec.get("series")
    xs = _axis_values(r, x_name)
    numeric = all(isinstance(x, (int, float)) for x in xs) and not bars
    positions = [float(x) for x in xs] if numeric else list(range(len(xs)))
    series_values = _axis_values(r, series_name)
    runs = r.runs
    width = 0.8 / max(1, len(series_values))
    for k, s in enumerate(series_values):
        where: dict[str, Any] = {} if s is None or series_name is None else {series_name: s}
        means, halves = [], []
        for x in xs:
            vals = claims_mod.per_run_values(spec["y"], runs, {**where, x_name: x})
            mean, half = claims_mod.mean_ci(vals)
            means.append(mean)
            halves.append(0.0 if not math.isfinite(half) else half)
        label = "measured" if s is None else f"{s} (measured)"
        if bars:
            pos = [p + (k - (len(series_values) - 1) / 2) * width for p in positions]
            bar = ax.bar(pos, means, width, yerr=halves, capsize=3, label=label)
            ref = [(x, y) for x, y in _reference_points(r, x_name, series_name, s) if x in xs]
            if ref:
                name = spec.get("reference_label", "paper")
                ax.plot(
                    [pos[xs.index(x)] for x, _ in ref],
                    [y for _, y in ref],
                    linestyle="none",
                    marker="_",
                    markersize=18,
                    markeredgewidth=2.5,
                    color="black" if len(series_values) == 1 else bar.patches[0].get_facecolor(),
                    label=f"{s} ({name})" if s is not None else name,
                )
        else:
            line = ax.errorbar(positions, means, yerr=halves, marker="o", capsize=3, label=label)
            ref = _reference_points(r, x_name, series_name, s)
            if ref:
                rx = [float(x) if numeric else positions[xs.index(x)] for x, _ in ref if x in xs]
                ry = [y for x, y in ref if x in xs]
                name = spec.get("reference_label", "paper")
                ax.plot(
                    rx,
                    ry,
                    linestyle="--",
                    marker="x",
                    color=line[0].get_color(),
                    label=f"{s} ({name})" if s is not None else name,
                )
    if not numeric:
        ax.set_xticks(positions)
        ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel(spec.get("xlabel", _axis_label(r, x_name)))
    ax.set_ylabel(spec.get("ylabel", str(spec["y"].get("field", "value"))))


def _reference_points(
    r: ExperimentResult, x_name: str, series_name: str | None, s: Any
) -> list[tuple[Any, float]]:
    """The paper's values of the claims that sit at one x (and this series) and
    measure what the plot draws."""
    points = []
    y = r.experiment.figure_spec.get("y")
    for v in r.verdicts:
        if x_name not in v.where or not math.isfinite(v.paper):
            continue
        if v.measure is not None and y is not None and dict(v.measure) != dict(y):
            continue
        if series_name is not None and str(v.where.get(series_name)) != str(s):
            continue
        if set(v.where) - {x_name, series_name}:
            continue
        points.append((v.where[x_name], v.paper))
    points.sort(key=lambda p: float(p[0]) if isinstance(p[0], (int, float)) else 0.0)
    return points


def _plot_flows(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    series_name = spec.get("series")
    series_values = _axis_values(r, series_name)
    runs = r.runs
    n_flows = max((len(x.summary.get("flows", [])) for x in runs), default=0)
    width = 0.8 / max(1, len(series_values))
    for k, s in enumerate(series_values):
        where: dict[str, Any] = {} if s is None or series_name is None else {series_name: s}
        means, halves = [], []
        for f in range(n_flows):
            vals = claims_mod.per_run_values({"field": f"flows.{f}.throughput_kbps"}, runs, where)
            mean, half = claims_mod.mean_ci(vals)
            means.append(mean)
            halves.append(0.0 if not math.isfinite(half) else half)
        pos = [f + (k - (len(series_values) - 1) / 2) * width for f in range(n_flows)]
        ax.bar(pos, means, width, yerr=halves, capsize=3, label="measured" if s is None else str(s))
    ax.set_xticks(range(n_flows))
    ax.set_xticklabels([f"flow {f}" for f in range(n_flows)])
    ax.set_ylabel(spec.get("ylabel", "throughput (kbit/s)"))


def _plot_nodes(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    """Grouped bars: a per-node trace's time mean at each node, one group per series value."""
    series_name = spec.get("series")
    series_values = _axis_values(r, series_name)
    runs = r.runs
    first = runs[0].traces if runs else None
    n_nodes = (
        len(claims_mod.walk(first, str(spec["trace"]).split("."), spec["trace"])) if first else 0
    )
    labels = [str(x) for x in spec.get("labels", range(n_nodes))]
    width = 0.8 / max(1, len(series_values))
    for k, s in enumerate(series_values):
        where: dict[str, Any] = {} if s is None or series_name is None else {series_name: s}
        means, halves = [], []
        for i in range(n_nodes):
            measure = {"trace": spec["trace"], "series": [i], "from_s": spec.get("from_s", 0.0)}
            mean, half = claims_mod.mean_ci(claims_mod.per_run_values(measure, runs, where))
            means.append(mean)
            halves.append(0.0 if not math.isfinite(half) else half)
        pos = [i + (k - (len(series_values) - 1) / 2) * width for i in range(n_nodes)]
        ax.bar(pos, means, width, yerr=halves, capsize=3, label="measured" if s is None else str(s))
    ax.set_xticks(range(n_nodes))
    ax.set_xticklabels(labels[:n_nodes])
    ax.set_xlabel(spec.get("xlabel", "node"))
    ax.set_ylabel(spec.get("ylabel", str(spec["trace"])))


def _trace_mean(runs: Sequence[Any], path: str) -> list[float]:
    """One trace path's series, averaged bin by bin over the runs that have it."""
    series = []
    for x in runs:
        if x.traces is not None:
            values = claims_mod.walk(x.traces, path.split("."), path)
            series.append([math.nan if v is None else float(v) for v in values])
    if not series:
        return []
    length = min(len(s) for s in series)
    return [sum(s[i] for s in series) / len(series) for i in range(length)]


def _plot_trace(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    """A trace path over time (mean over the selected runs); `twin_trace`, if
    given, on a second y axis (for two series in different units)."""
    runs = [x for x in r.runs if claims_mod.matches(x.variant, dict(spec.get("where", {})))]
    mean = _trace_mean(runs, str(spec["trace"]))
    ax.plot(range(len(mean)), mean, label=str(spec.get("label", spec["trace"])))
    ax.set_xlabel(spec.get("xlabel", "time (s)"))
    ax.set_ylabel(spec.get("ylabel", str(spec["trace"])))
    if "twin_trace" in spec:
        other = ax.twinx()
        twin = _trace_mean(runs, str(spec["twin_trace"]))
        other.plot(
            range(len(twin)),
            twin,
            color="tab:orange",
            label=str(spec.get("twin_label", spec["twin_trace"])),
        )
        other.set_ylabel(spec.get("twin_ylabel", str(spec["twin_trace"])))
        other.legend(fontsize=8, loc="lower right")


def _plot_timeseries(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    where = dict(spec.get("where", {}))
    runs = [x for x in r.runs if claims_mod.matches(x.variant, where)]
    if not runs:
        return
    n_flows = len(runs[0].summary.get("flows", []))
    for f in range(n_flows):
        series = [x.summary["flows"][f].get("series_kbps", []) for x in runs]
        length = min(len(s) for s in series)
        mean = [sum(s[i] for s in series) / len(series) for i in range(length)]
        ax.plot(range(length), mean, label=f"flow {f}")
    ax.set_xlabel(spec.get("xlabel", "time (s)"))
    ax.set_ylabel(spec.get("ylabel", "throughput (kbit/s)"))
