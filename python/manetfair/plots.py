"""The report's pictures: each experiment's figure, drawn the way its paper draws it
(lines over an axis, bars, per-flow bars, time series of one run, per-node bars), and
a picture of its topology (nodes, transmission and carrier-sense ranges, and flows as
arrows along their routes).

Error bars span the lowest to the highest seed. For the median of a quantity that
range is a distribution-free confidence interval at level 1 - 2^(1 - n) for n seeds
(75% with 3 seeds, 94% with 5, 99.8% with 10), and it never leaves the quantity's own
range (a fairness index stays in [0, 1], a throughput at or above 0), unlike a
Student t interval over two or three seeds.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from manetfair import claims as claims_mod
from manetfair.experiment_result import ExperimentResult
from manetfair.layouts import positions
from manetfair.output import write_file

PAPER_STYLE = {"linestyle": "none", "marker": "D", "markersize": 6, "color": "black"}
THRESHOLD_STYLE = {"linestyle": "none", "marker": "_", "markersize": 16, "markeredgewidth": 2}


def seed_range(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, lowest, highest) of the seeds' values, NaN for none."""
    finite = [v for v in values if isinstance(v, (int, float)) and math.isfinite(v)]
    if not finite:
        return math.nan, math.nan, math.nan
    return sum(finite) / len(finite), min(finite), max(finite)


def coverage(n: int) -> float:
    """The confidence level of [lowest, highest] of n seeds as an interval for the median."""
    return 0.0 if n < 2 else 1.0 - 2.0 ** (1 - n)


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    # SVG element ids from a fixed salt: equal figures, equal bytes.
    matplotlib.rcParams["svg.hashsalt"] = "manetfair"
    import matplotlib.pyplot as plt

    return plt


def draw(r: ExperimentResult, folder: Path, stem: str) -> tuple[bool, bool]:
    """The experiment's figure `<stem>.png` and topology `<stem>-topology.png` in
    `folder`; (figure drawn, topology drawn). Module-level, so that a worker process
    can draw them while others simulate (matplotlib is not safe in threads); the
    bytes are the same wherever they are drawn."""
    return figure(r, folder / f"{stem}.png"), topology(r, folder / f"{stem}-topology.png")


def figure(r: ExperimentResult, path: Path) -> bool:
    """Draws the experiment's `[plot]` into `path`; False if it has none."""
    spec = dict(r.experiment.figure_spec)
    kind = spec.get("kind")
    if not kind or not r.outcomes:
        return False
    plt = _pyplot()
    panels = _panels(spec)
    rows = len(panels)
    fig, axes = plt.subplots(rows, 1, figsize=(7, 3.2 * rows + 0.6), dpi=110, squeeze=False)
    try:
        for ax, panel in zip([a[0] for a in axes], panels):
            if kind in ("line", "bar"):
                _plot_xy(ax, r, panel, bars=kind == "bar")
            elif kind == "flows":
                _plot_flows(ax, r, panel)
            elif kind == "nodes":
                _plot_nodes(ax, r, panel)
            elif kind == "timeseries":
                _plot_timeseries(ax, r, panel)
            elif kind == "trace":
                _plot_trace(ax, r, panel)
            else:
                raise ValueError(f"{r.experiment.id}: unknown plot kind {kind!r}")
            ax.grid(True, alpha=0.3)
            handles, labels = unique_legend(ax)
            if handles:
                ax.legend(handles, labels, fontsize=7)
        fig.suptitle(spec.get("title", r.experiment.title), fontsize=10)
        fig.text(
            0.01,
            0.005,
            _footer(r),
            fontsize=6,
            color="#555",
        )
        fig.tight_layout(rect=(0, 0.02, 1, 1))
        write_file(path, lambda tmp: fig.savefig(tmp, format="png"))
        write_file(
            path.with_suffix(".svg"),
            lambda tmp: fig.savefig(tmp, format="svg", metadata={"Date": None}),
        )
        write_file(path.with_suffix(".csv"), lambda tmp: figure_data(fig, tmp))
    finally:
        plt.close(fig)
    return True


def figure_data(fig: Any, path: Path) -> Path:
    """The numbers a figure draws, as CSV: one row per point of every line, bar and
    error bar of every panel (`panel`, `series`, `x`, `x_label` where the axis names
    its ticks, `y`, `y_low`, `y_high` for error bars), so that it can be re-plotted
    in one's own style."""
    import csv

    rows: list[list[Any]] = []
    for i, ax in enumerate(fig.axes):
        panel = ax.get_title() or ax.get_ylabel() or str(i)
        ticks = {float(t): lab.get_text() for t, lab in zip(ax.get_xticks(), ax.get_xticklabels())}
        named = any(t and not _is_number_text(t) for t in ticks.values())
        seen: set[int] = set()
        points: list[tuple[str, Any, Any, Any, Any]] = []  # series, x, y, low, high
        for c in ax.containers:
            name = c.get_label() if not str(c.get_label()).startswith("_") else ""
            bars = getattr(c, "patches", None)
            err = c if hasattr(c, "has_yerr") else getattr(c, "errorbar", None)
            spans: dict[float, tuple[float, float]] = {}
            if err is not None:
                line, _, cols = err.lines
                if line is not None:
                    seen.add(id(line))
                for col in cols:
                    # A point without an error bar (no spread: NaN) has an empty segment.
                    for seg in filter(len, col.get_segments()):
                        (x0, y0), (_, y1) = seg[0], seg[-1]
                        spans[float(x0)] = (min(y0, y1), max(y0, y1))
            if bars:
                for b in bars:
                    x = b.get_x() + b.get_width() / 2
                    points.append((name, x, b.get_height(), *spans.get(float(x), (None, None))))
            elif err is not None and err.lines[0] is not None:
                for x, y in zip(*err.lines[0].get_data()):
                    points.append((name, x, y, *spans.get(float(x), (None, None))))
        for line in ax.get_lines():
            if id(line) in seen:
                continue
            name = line.get_label() if not str(line.get_label()).startswith("_") else ""
            points += [(name, x, y, None, None) for x, y in zip(*line.get_data())]
        for name, x, y, lo, hi in points:
            label = ticks.get(float(x), "") if named else ""
            rows.append([panel, name, x, label, y, lo, hi])
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["panel", "series", "x", "x_label", "y", "y_low", "y_high"])
        w.writerows([["" if v is None else v for v in row] for row in rows])
    return path


def _is_number_text(text: str) -> bool:
    try:
        float(text.replace("\u2212", "-"))
    except ValueError:
        return False
    return True


def unique_legend(ax: Any) -> tuple[list[Any], list[str]]:
    """The axes' legend entries, each label once (the first artist drawn with it): one
    "paper" entry for every series' paper values, not one per series."""
    handles, labels = ax.get_legend_handles_labels()
    seen: dict[str, Any] = {}
    for handle, label in zip(handles, labels):
        seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def trace_roots(spec: Mapping[str, Any]) -> set[str]:
    """The top-level trace entries that the figure of the plot table `spec` reads: the
    paths its measures and traces name (claims.trace_roots), and the per-flow series
    behind a bar chart of flows from `from_s`."""
    roots = claims_mod.trace_roots(spec)
    if spec.get("kind") == "flows" and any("from_s" in panel for panel in _panels(spec)):
        roots.add("flow_throughput_kbps")
    return roots


def _footer(r: ExperimentResult) -> str:
    seeds = sorted({o.spec.seed for o in r.outcomes})
    mode = " (quick mode)" if r.quick else ""
    if r.experiment.figure_spec.get("kind") in ("timeseries", "trace"):
        return f"manetfair; one run of {len(seeds)} seeds{mode}, as the paper shows one run"
    return (
        f"manetfair; {len(seeds)} seeds per point{mode}; "
        "points and bars: mean (a ratio or change: of the means, as its verdict); "
        "error bars: lowest to highest seed"
    )


def _panels(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One dict per subplot: the plot's keys, overridden by each `panels` entry, or by
    each `panels_where` entry as that panel's `where`."""
    base = {k: v for k, v in spec.items() if k not in ("panels", "panels_where")}
    if "panels" in spec:
        return [{**base, **dict(p)} for p in spec["panels"]]
    if "panels_where" in spec:
        return [{**base, "where": dict(w)} for w in spec["panels_where"]]
    return [base]


def _axis_values(r: ExperimentResult, name: str | None, only: Sequence[Any] | None) -> list[Any]:
    if name is None:
        return [None]
    for axis in r.experiment.axes:
        if axis.name == name:
            present = {str(o.spec.variant[name]) for o in r.outcomes}
            values = [v for v in axis.values if str(v) in present]
            if only is not None:
                values = [v for v in values if any(str(v) == str(x) for x in only)]
            return values
    raise ValueError(f"{r.experiment.id}: plot names unknown axis {name!r}")


def _axis_label(r: ExperimentResult, name: str) -> str:
    for axis in r.experiment.axes:
        if axis.name == name:
            return axis.label or axis.name
    return name


def _where(panel: Mapping[str, Any]) -> dict[str, Any]:
    return dict(panel.get("where", {}))


def _point(
    r: ExperimentResult, measure: Mapping[str, Any], where: Mapping[str, Any]
) -> tuple[float, float, float]:
    """(value, lowest, highest) of a measure at one selection. For a field, trace or
    unfairness measure: the mean over runs and the lowest and highest run. For a ratio,
    difference or other composite: the value the claims take (claims.measure_value:
    the ratio of the means, so that a figure shows its verdicts' numbers) with the
    lowest and highest seed's own value around it."""
    runs = r.runs
    composite = ("ratio", "difference", "percent_change", "across", "max", "min", "mean")
    if any(op in measure for op in composite):
        seeds = sorted({x.seed for x in runs})
        values = [
            claims_mod.measure_value(measure, [x for x in runs if x.seed == s], where)
            for s in seeds
        ]
        value = claims_mod.measure_value(measure, runs, where)
        kept = [v for v in values if math.isfinite(v)]
        if not math.isfinite(value) or not kept:
            return value, value, value
        return value, min([value, *kept]), max([value, *kept])
    values = claims_mod.per_run_values(measure, runs, where)
    return seed_range(values)


def _errors(points: Sequence[tuple[float, float, float]]) -> list[list[float]]:
    low = [0.0 if math.isnan(m) else m - lo for m, lo, _ in points]
    high = [0.0 if math.isnan(m) else hi - m for m, _, hi in points]
    return [low, high]


def _plot_xy(ax: Any, r: ExperimentResult, spec: Mapping[str, Any], bars: bool) -> None:
    x_name = str(spec["x"])
    series_name = spec.get("series")
    reference_arm = spec.get("reference_arm")
    xs = [
        x
        for x in _axis_values(r, x_name, spec.get("x_values"))
        if reference_arm is None or str(x) != str(reference_arm)
    ]
    numeric = not bars and all(_number(x) is not None for x in xs)
    positions = (
        [float(_number(x) or 0.0) for x in xs] if numeric else [float(i) for i in range(len(xs))]
    )
    series_values = _axis_values(r, series_name, spec.get("series_values"))
    base = _where(spec)
    y = dict(spec["y"])
    width = 0.8 / max(1, len(series_values))
    for k, s in enumerate(series_values):
        where = dict(base)
        if s is not None and series_name is not None:
            where[series_name] = s
        points = [_point(r, y, {**where, x_name: x}) for x in xs]
        means = [p[0] for p in points]
        label = "measured" if s is None else f"{_axis_label(r, str(series_name))} {s}"
        if bars:
            pos = [p + (k - (len(series_values) - 1) / 2) * width for p in positions]
            drawn = ax.bar(pos, means, width, yerr=_errors(points), capsize=3, label=label)
            color = drawn.patches[0].get_facecolor() if drawn.patches else None
        else:
            pos = positions
            line = ax.errorbar(pos, means, yerr=_errors(points), marker="o", capsize=3, label=label)
            color = line[0].get_color()
        _references(ax, r, y, x_name, xs, pos, series_name, s, color, spec, where)
        if reference_arm is not None:
            mean, lo, hi = _point(r, y, {**where, x_name: reference_arm})
            if math.isfinite(mean):
                ax.axhline(mean, linestyle=":", color=color, label=f"{reference_arm} (measured)")
                ax.axhspan(lo, hi, color=color, alpha=0.08)
    if not numeric:
        ax.set_xticks(positions)
        ax.set_xticklabels([str(x) for x in xs])
    ax.set_xlabel(spec.get("xlabel", _axis_label(r, x_name)))
    ax.set_ylabel(spec.get("ylabel", str(y.get("field", "value"))))


def _number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float)):
        return float(x)
    try:
        return float(str(x))
    except ValueError:
        return None


def _references(
    ax: Any,
    r: ExperimentResult,
    y: Mapping[str, Any],
    x_name: str,
    xs: Sequence[Any],
    positions: Sequence[float],
    series_name: Any,
    s: Any,
    color: Any,
    spec: Mapping[str, Any],
    where: Mapping[str, Any],
) -> None:
    """The claims that measure what the panel draws at one x (and this series): the
    paper's own values (a `within` claim on a number) as black diamonds labelled
    "paper", a model's values as a dashed line, and thresholds of the readings
    (at least / at most / greater / less) as bars labelled "threshold".

    A claim measures the drawn quantity when its measure is the panel's `y` at the
    same selection, or, for the paper's own numbers, when its measured value is the
    panel's value at that x and series (a percent change whose arm the claim names
    inside its measure and the figure as its series: Table 2's cells)."""
    paper, model, threshold = [], [], []
    for v in r.verdicts:
        if x_name not in v.where or not math.isfinite(v.paper):
            continue
        hits = [i for i, x in enumerate(xs) if str(x) == str(v.where[x_name])]
        if not hits:
            continue
        same = (
            v.measure is not None
            and dict(v.measure) == dict(y)
            and (series_name is None or str(v.where.get(series_name)) == str(s))
            and not set(v.where) - {x_name, series_name} - set(spec.get("where", {}))
        )
        if not same and not _shows_value(r, v, y, where, x_name):
            continue
        point = (positions[hits[0]], v.paper)
        if v.is_model:
            model.append(point)
        elif v.test == "within":
            paper.append(point)
        else:
            threshold.append(point)
    if model:
        model.sort()
        ax.plot(
            [p[0] for p in model],
            [p[1] for p in model],
            linestyle="--",
            marker="x",
            color=color,
            label=str(spec.get("reference_label", "model")),
        )
    if paper:
        ax.plot([p[0] for p in paper], [p[1] for p in paper], label="paper", **PAPER_STYLE)
    if threshold:
        ax.plot(
            [p[0] for p in threshold],
            [p[1] for p in threshold],
            color="#b00",
            label="threshold of a claim",
            **THRESHOLD_STYLE,
        )


def _shows_value(
    r: ExperimentResult,
    v: claims_mod.Verdict,
    y: Mapping[str, Any],
    where: Mapping[str, Any],
    x_name: str,
) -> bool:
    """Whether a claim on a number of the paper measures exactly the panel's value at
    its x under this series' selection `where` (the same number from the same runs)."""
    if v.test != "within" or v.is_model or not math.isfinite(v.measured):
        return False
    if any(k in v.where and str(v.where[k]) != str(x) for k, x in where.items()):
        return False
    at = {**where, **v.where}
    if set(at) != set(where) | {x_name}:
        return False  # the claim selects an axis the panel does not fix
    value = claims_mod.measure_value(y, r.runs, at)
    return math.isfinite(value) and math.isclose(value, v.measured, rel_tol=1e-9, abs_tol=1e-12)


def _flow_labels(r: ExperimentResult, n: int) -> list[str]:
    return [r.experiment.flow_name(i) for i in range(n)]


def _plot_flows(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    """Grouped bars: each flow's throughput (from `from_s` if given, else the summary's
    `throughput_kbps`), one bar per value of `series`."""
    series_name = spec.get("series")
    series_values = _axis_values(r, series_name, spec.get("series_values"))
    base = _where(spec)
    runs = [x for x in r.runs if claims_mod.matches(x.variant, base)]
    n_flows = max((len(x.summary.get("flows", [])) for x in runs), default=0)
    ideal = _ideal(r, spec, n_flows)
    groups = len(series_values) + (1 if ideal else 0)
    width = 0.8 / max(1, groups)
    if ideal:
        pos = [f - (groups - 1) / 2 * width for f in range(n_flows)]
        ax.bar(pos, ideal, width, color="#bbb", label="ideal (estimated)")
    for k, s in enumerate(series_values, start=1 if ideal else 0):
        where = dict(base)
        if s is not None and series_name is not None:
            where[series_name] = s
        points = []
        for f in range(n_flows):
            if "from_s" in spec:
                measure: dict[str, Any] = {
                    "trace": "flow_throughput_kbps",
                    "series": [f],
                    "from_s": spec["from_s"],
                }
            else:
                measure = {"field": f"flows.{f}.throughput_kbps"}
            points.append(_point(r, measure, where))
        pos = [f + (k - (groups - 1) / 2) * width for f in range(n_flows)]
        label = "measured" if s is None else f"{_axis_label(r, str(series_name))} {s}"
        ax.bar(pos, [p[0] for p in points], width, yerr=_errors(points), capsize=3, label=label)
    ax.set_xticks(range(n_flows))
    ax.set_xticklabels(_flow_labels(r, n_flows), fontsize=8)
    ax.set_ylabel(spec.get("ylabel", "throughput (kbit/s)"))


def _ideal(r: ExperimentResult, spec: Mapping[str, Any], n_flows: int) -> list[float]:
    """`ideal` (one measure per flow: its throughput alone) times `ideal_share` (its
    share, default 1): the paper's "estimated ideal throughput for each flow" bars."""
    raw = spec.get("ideal")
    if not raw:
        return []
    shares = list(spec.get("ideal_share", [1.0] * len(raw)))
    if len(raw) != n_flows or len(shares) != n_flows:
        raise ValueError(
            f"{r.experiment.id}: [plot] ideal and ideal_share need one entry per flow "
            f"({n_flows}), not {len(raw)} and {len(shares)}"
        )
    return [claims_mod.measure_value(m, r.runs, {}) * float(f) for m, f in zip(raw, shares)]


def _plot_nodes(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    """Grouped bars: a per-node trace's time mean at each node, one group per series value."""
    series_name = spec.get("series")
    series_values = _axis_values(r, series_name, spec.get("series_values"))
    runs = r.runs
    first = next((x.traces for x in runs if x.traces is not None), None)
    path = str(spec["trace"])
    n_nodes = len(claims_mod.walk(first, path.split("."), path)) if first else 0
    labels = [str(x) for x in spec.get("labels", range(n_nodes))]
    width = 0.8 / max(1, len(series_values))
    for k, s in enumerate(series_values):
        where = _where(spec)
        if s is not None and series_name is not None:
            where[series_name] = s
        points = [
            _point(r, {"trace": path, "series": [i], "from_s": spec.get("from_s", 0.0)}, where)
            for i in range(n_nodes)
        ]
        pos = [i + (k - (len(series_values) - 1) / 2) * width for i in range(n_nodes)]
        ax.bar(
            pos,
            [p[0] for p in points],
            width,
            yerr=_errors(points),
            capsize=3,
            label="measured" if s is None else str(s),
        )
    ax.set_xticks(range(n_nodes))
    ax.set_xticklabels(labels[:n_nodes])
    ax.set_xlabel(spec.get("xlabel", "node"))
    ax.set_ylabel(spec.get("ylabel", path))


def _one_run(r: ExperimentResult, spec: Mapping[str, Any]) -> claims_mod.Run | None:
    """The run a time series shows: the papers plot one typical run, so one seed
    (`seed`, default the lowest) of the variant `where` selects."""
    runs = sorted(
        (x for x in r.runs if claims_mod.matches(x.variant, _where(spec))), key=lambda x: x.seed
    )
    wanted = spec.get("seed")
    for x in runs:
        if wanted is None or x.seed == wanted:
            return x
    return runs[0] if runs else None


def _plot_timeseries(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    run = _one_run(r, spec)
    if run is None:
        return
    flows = run.summary.get("flows", [])
    for f, flow in enumerate(flows):
        series = flow.get("series_kbps", [])
        ax.plot(range(len(series)), series, label=r.experiment.flow_name(f), linewidth=1)
    for start, end, name in spec.get("phases", []):
        shade = "#2a7" if str(name) == "away" else "#c63"
        ax.axvspan(float(start), float(end), color=shade, alpha=0.08)
        ax.text(
            (float(start) + float(end)) / 2,
            1.0,
            str(name),
            transform=ax.get_xaxis_transform(),
            ha="center",
            va="bottom",
            fontsize=7,
            color=shade,
        )
    where = ", ".join(f"{k} = {v}" for k, v in run.variant.items())
    ax.set_title(f"{where}, seed {run.seed}", fontsize=8)
    ax.set_xlabel(spec.get("xlabel", "time (s)"))
    ax.set_ylabel(spec.get("ylabel", "throughput (kbit/s)"))


def _plot_trace(ax: Any, r: ExperimentResult, spec: Mapping[str, Any]) -> None:
    """A trace path over time in one run (`seed`), and optionally a second on its own
    y axis (`twin_trace`, for two series in different units)."""
    run = _one_run(r, spec)
    if run is None or run.traces is None:
        return
    path = str(spec["trace"])
    values = claims_mod.walk(run.traces, path.split("."), path)
    ax.plot(range(len(values)), values, label=str(spec.get("label", path)))
    ax.set_xlabel(spec.get("xlabel", "time (s)"))
    ax.set_ylabel(spec.get("ylabel", path))
    ax.set_title(f"seed {run.seed}", fontsize=8)
    if "twin_trace" in spec:
        other = ax.twinx()
        twin_path = str(spec["twin_trace"])
        twin = claims_mod.walk(run.traces, twin_path.split("."), twin_path)
        other.plot(
            range(len(twin)),
            twin,
            color="tab:orange",
            label=str(spec.get("twin_label", twin_path)),
        )
        other.set_ylabel(spec.get("twin_ylabel", twin_path))
        other.legend(fontsize=7, loc="lower right")


# ---- topology ------------------------------------------------------------------------


def shortest_path(
    pos: Mapping[int, tuple[float, float]], src: int, dst: int, reach: float
) -> list[int]:
    """Fewest hops of at most `reach` metres, ties to the lower id (breadth first)."""
    prev: dict[int, int | None] = {src: None}
    queue = deque([src])
    ids = sorted(pos)
    while queue:
        u = queue.popleft()
        if u == dst:
            break
        for v in ids:
            if v not in prev and math.dist(pos[u], pos[v]) <= reach + 1e-9:
                prev[v] = u
                queue.append(v)
    if dst not in prev:
        return [src, dst]
    path = [dst]
    while prev[path[-1]] is not None:
        path.append(prev[path[-1]])  # type: ignore[arg-type]
    return path[::-1]


def topology(r: ExperimentResult, path: Path) -> bool:
    """Draws the experiment's topology (first variant, or `[plot] topology_where`):
    nodes with their ids, the transmission range (solid) and carrier-sense range
    (dashed) around the first flow's source (around every node in small networks),
    flows as arrows along their routes, and scripted movements as dotted paths. A
    random field is the core's placement of the variant's lowest seed at time 0,
    with that run's flows, and says so. False when there is nothing to draw."""
    exp = r.experiment
    if exp.scenario is None:
        return False
    want = dict(exp.figure_spec.get("topology_where", {}))
    variants = [v for v in exp.variants(r.quick) if claims_mod.matches(v, want)]
    if not variants:
        return False
    scenario = exp.expand(variants[0]).data
    flows = list(scenario.get("flow", []))
    pos = positions(scenario)
    placed = ""
    if not pos:
        # Random: each seed draws its own field (and pairs); show one run's.
        runs = sorted(
            (o for o in r.outcomes if claims_mod.matches(o.spec.variant, variants[0])),
            key=lambda o: o.spec.seed,
        )
        if not runs:
            return False
        from manetfair.runplots import node_positions

        first = runs[0]
        pos = {int(k): p for k, p in node_positions(first.spec.scenario).items()}
        if not pos:
            return False
        if not flows:
            flows = [{"src": f["src"], "dst": f["dst"]} for f in first.summary.get("flows", [])]
        placed = (
            f"\nrandom placement: seed {first.spec.seed}'s field at t = 0 "
            "(every seed draws its own)"
        )
    radio = dict(scenario.get("radio", {}))
    tx = float(radio.get("tx_range_m", 250.0))
    cs = float(radio.get("cs_range_m", 550.0))
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 5), dpi=110)
    try:
        xs = [p[0] for p in pos.values()]
        ys = [p[1] for p in pos.values()]
        ax.scatter(xs, ys, s=22, color="#333", zorder=3)
        if len(pos) <= 30:
            for i, (x, y) in pos.items():
                ax.annotate(str(i), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        centres = list(pos) if len(pos) <= 6 else [int(flows[0]["src"])] if flows else []
        for c in centres:
            x, y = pos[c]
            ax.add_patch(plt.Circle((x, y), tx, fill=False, color="#2a6", alpha=0.5, lw=0.8))
            ax.add_patch(
                plt.Circle((x, y), cs, fill=False, color="#999", alpha=0.6, lw=0.8, ls="--")
            )
        ax.plot([], [], color="#2a6", lw=0.8, label=f"transmission range {tx:g} m")
        ax.plot([], [], color="#999", lw=0.8, ls="--", label=f"carrier sense {cs:g} m")
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        static = dict(scenario.get("routing", {})).get("protocol", "static") == "static"
        for f, flow in enumerate(flows):
            src, dst = int(flow["src"]), int(flow["dst"])
            route = [int(n) for n in flow.get("route", [])] or shortest_path(pos, src, dst, tx)
            color = colors[f % len(colors)]
            for a, b in zip(route, route[1:]):
                if a in pos and b in pos:
                    ax.annotate(
                        "",
                        xy=pos[b],
                        xytext=pos[a],
                        arrowprops={"arrowstyle": "->", "color": color, "lw": 1.6},
                    )
            ax.plot([], [], color=color, lw=1.6, label=exp.flow_name(f))
        for move in dict(scenario.get("mobility", {})).get("node", []):
            points = move.get("path") or move.get("moves") or []
            if points:
                ax.plot(
                    [float(p[1]) for p in points],
                    [float(p[2]) for p in points],
                    ls=":",
                    color="#a0a",
                    marker=".",
                    label=f"node {move.get('id')} moves",
                )
        note = "" if static else " (routes drawn as shortest paths; AODV finds its own)"
        note += placed
        if len(variants) > 1:
            label = ", ".join(f"{k} = {v}" for k, v in variants[0].items())
            note += f"\nshown: the first of {len(variants)} variants ({label})"
        ax.set_title(f"{exp.title}: topology{note}", fontsize=9)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        handles, labels = unique_legend(ax)
        ax.legend(handles, labels, fontsize=7, loc="best")
        fig.tight_layout()
        write_file(path, lambda tmp: fig.savefig(tmp, format="png"))
    finally:
        plt.close(fig)
    return True
