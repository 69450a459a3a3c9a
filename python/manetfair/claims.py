"""Measured values and verdicts: the small vocabulary experiment claims are written in.

A measure (the `measured` table of a claim, or a plot's `y`) is one of

    { field = "aggregate_kbps", stat = "mean" }             a summary field, over seeds
    { field = "flows.*.throughput_kbps", reduce = "min" }   `*` fans out; reduce per run
    { ratio = [<measure>, <measure>] }                      first / second
    { difference = [<measure>, <measure>] }                 first - second
    { percent_change = [<measure>, <measure>] }             100 * (first / second - 1)
    { trace = "flow_throughput_kbps", series = [0, 1], over = "longest_silence_s" }
                                                            a statistic of 1 s series
    { unfairness = <vector>, optimal = [<measure>, ...] }   Osipov-Tschudin u, eq. (4)

each optionally with `where = { axis = value, ... }`, which narrows the claim's
own selection of runs. The paper-side value is a number or `{ model = "<name>" }`
(see manetfair.models), evaluated on the scenario of each selected variant and
averaged. A claim's `test` is "within" (|m - p| <= rel_tol |p| + abs_tol),
"at_least" (m >= p - tolerance), "at_most" (m <= p + tolerance), "greater"
(m > p) or "less" (m < p); for the first three, a difference below TIE (relative
to max(1, |p|)) is a floating-point tie, not a miss. A claim's `kind` is "claim" or
"control" (cannot fail by construction: shown, never counted).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable

from manetfair.errors import InputError

REDUCERS: dict[str, Callable[[Sequence[float]], float]] = {
    "sum": lambda xs: float(sum(xs)),
    "mean": lambda xs: float(statistics.fmean(xs)) if xs else math.nan,
    # The mean of the values that exist: a trace's series without a value in the
    # window (a TCP flow that never measured an RTT) is left out, not NaN.
    "mean_defined": lambda xs: _mean_defined(xs),
    "min": lambda xs: float(min(xs)) if xs else math.nan,
    "max": lambda xs: float(max(xs)) if xs else math.nan,
    "jain": lambda xs: jain_index(xs),
    "argmax": lambda xs: float(max(range(len(xs)), key=lambda i: xs[i])) if xs else math.nan,
}
STAT_FNS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "min": min,
    "max": max,
    "distinct": lambda xs: float(len(set(xs))),
    "positive_frac": lambda xs: sum(x > 0 for x in xs) / len(xs),
}
STATS = tuple(STAT_FNS)
TESTS = ("within", "at_least", "at_most", "greater", "less")
# Statistics of one 1 s series over a time window (`over`), per series ...
PER_SERIES = ("mean", "min", "max", "cv", "longest_silence_s", "active_frac", "silent_frac")
# ... and of several series together, bin by bin.
JOINT = ("all_active_frac", "alone_frac", "leads_frac", "corr")


@dataclass
class Run:
    """One run as claims see it: its variant (axis values), seed, summary and, for
    experiments whose measures read them, its traces."""

    variant: Mapping[str, Any]
    seed: int
    summary: Mapping[str, Any]
    traces: Mapping[str, Any] | None = None


def _mean_defined(xs: Sequence[float]) -> float:
    kept = [x for x in xs if not math.isnan(x)]
    return float(statistics.fmean(kept)) if kept else math.nan


def jain_index(xs: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2), as the core defines it in the run
    summary (`metrics::jain_index`): 1 for a single flow, 0 when no flow delivered
    anything; NaN for no flows at all (nothing to index)."""
    if not xs:
        return math.nan
    if len(xs) == 1:
        return 1.0
    squares = sum(x * x for x in xs)
    return 0.0 if squares == 0 else float(sum(xs)) ** 2 / (len(xs) * squares)


def t95(df: int) -> float:
    """The two-sided 95% quantile of Student's t with `df` degrees of freedom."""
    if df <= 0:
        return math.nan
    from scipy.stats import t as student_t  # imported here: scipy.stats takes ~0.3 s to load

    return float(student_t.ppf(0.975, df))


def mean_ci(values: Sequence[float]) -> tuple[float, float]:
    """Mean and the half-width of its 95% confidence interval (NaN half-width for one value)."""
    if not values:
        return math.nan, math.nan
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan
    return mean, t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def matches(variant: Mapping[str, Any], where: Mapping[str, Any]) -> bool:
    return all(k in variant and _same(variant[k], v) for k, v in where.items())


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return math.isclose(float(a), float(b), rel_tol=1e-12, abs_tol=0.0)
    return a == b or str(a) == str(b)


def field_value(
    summary: Mapping[str, Any],
    path: str,
    reduce: str | None,
    pick: Sequence[int] | None = None,
) -> float:
    """A summary field by dotted path; `*` over a list fans out (to the positions
    `pick` lists, if given) and `reduce` combines."""
    values = walk(summary, path.split("."), path)
    if isinstance(values, list) and pick is not None:
        for i in pick:
            if not isinstance(i, int) or not 0 <= i < len(values):
                raise InputError(f"field {path!r}: pick {i!r} out of range ({len(values)} items)")
        values = [values[i] for i in pick]
    if isinstance(values, list):
        name = reduce or "sum"
        if name not in REDUCERS:
            raise InputError(f"reduce = {name!r} is not one of {', '.join(REDUCERS)}")
        return REDUCERS[name]([float(v) for v in values])
    return float(values)


def walk(node: Any, parts: list[str], path: str) -> Any:
    if not parts:
        return node
    head, rest = parts[0], parts[1:]
    if head == "*":
        if not isinstance(node, list):
            raise InputError(f"field {path!r}: '*' needs a list")
        return [walk(item, rest, path) for item in node]
    if isinstance(node, list):
        if not head.isdigit() or int(head) >= len(node):
            raise InputError(f"field {path!r}: index {head!r} out of range ({len(node)} items)")
        return walk(node[int(head)], rest, path)
    if not isinstance(node, Mapping) or head not in node:
        raise InputError(f"field {path!r}: the run summary has no {head!r} here")
    return walk(node[head], rest, path)


def per_run_values(
    measure: Mapping[str, Any], runs: Sequence[Run], where: Mapping[str, Any]
) -> list[float]:
    """The measure's value for each selected run (a field, trace or unfairness measure)."""
    if "unfairness" in measure:
        return unfairness_values(measure, runs, where)
    selection = {**where, **dict(measure.get("where", {}))}
    chosen = [r for r in runs if matches(r.variant, selection)]
    if isinstance(measure.get("trace"), str):
        return [trace_value(r, measure) for r in chosen]
    path = measure.get("field")
    if not isinstance(path, str):
        raise InputError(
            f"a measure needs field, trace, ratio, difference or percent_change: {dict(measure)}"
        )
    pick = measure.get("pick")
    return [field_value(r.summary, path, measure.get("reduce"), pick) for r in chosen]


def trace_value(run: Run, measure: Mapping[str, Any]) -> float:
    """A statistic of a trace from `from_s` (default 0) to `to_s` (default the end), for one run.

    `trace` is a dotted path into the traces (`queue_len_pkts`, `tcp.0.cwnd_pkts`).
    A path that ends at one list per node or flow takes the series whose positions
    `series` lists (default all).

    `over` says what is taken of the bins in the window. Per series, combined over
    the listed series with `reduce` (default mean):
      mean               the time mean (default);
      min, max           the smallest or largest bin;
      cv                 the coefficient of variation (sample stdev / mean);
      longest_silence_s  the longest run of consecutive silent bins, in seconds;
      active_frac        the fraction of bins that are active;
      silent_frac        the fraction of bins that are silent.
    Of the listed series together, bin by bin:
      all_active_frac    the fraction of bins in which every listed series is active;
      alone_frac         the fraction of bins in which the first listed series is
                         active and every other one is silent;
      leads_frac         the fraction of bins in which the first listed series is
                         larger than every other one;
      corr               Pearson's correlation of the first listed series with the
                         sum of the others.
    A bin is active when its value exceeds `active_above` (default 0).
    """
    if run.traces is None:
        raise InputError("a trace measure needs the runs' traces")
    path = str(measure["trace"])
    node = walk(run.traces, path.split("."), path)
    times = list(run.traces.get("time_s", []))
    spans = _windows(measure)
    over = str(measure.get("over", "mean"))
    threshold = float(measure.get("active_above", 0.0))
    bin_s = float(run.traces.get("bin_s", 1.0) or 1.0)

    def window(values: Sequence[float | None]) -> list[float]:
        return [
            math.nan if v is None else float(v)
            for t, v in zip(times, values)
            if any(a <= t < b for a, b in spans)
        ]

    def pieces(values: Sequence[float | None]) -> list[list[float]]:
        return [
            [math.nan if v is None else float(v) for t, v in zip(times, values) if a <= t < b]
            for a, b in spans
        ]

    if not node or not isinstance(node[0], list):
        series = [window(node)]
        raw_series = [node]
    else:
        picks = measure.get("series", list(range(len(node))))
        for i in picks:
            if not isinstance(i, int) or not 0 <= i < len(node):
                raise InputError(f"trace {path!r}: series {i!r} out of range ({len(node)} series)")
        series = [window(node[i]) for i in picks]
        raw_series = [node[i] for i in picks]
    if over in JOINT:
        return _joint(over, series, threshold, path)
    if over not in PER_SERIES:
        raise InputError(f"over = {over!r} is not one of {', '.join(PER_SERIES + JOINT)}")
    if over == "longest_silence_s":
        values = [
            max(_per_series(over, piece, threshold, bin_s) for piece in pieces(xs))
            for xs in raw_series
        ]
    else:
        values = [_per_series(over, xs, threshold, bin_s) for xs in series]
    if len(values) == 1 and not isinstance(node[0], list):
        return values[0]
    name = str(measure.get("reduce", "mean"))
    if name not in REDUCERS:
        raise InputError(f"reduce = {name!r} is not one of {', '.join(REDUCERS)}")
    return REDUCERS[name](values)


def _windows(measure: Mapping[str, Any]) -> list[tuple[float, float]]:
    """The time windows of a trace measure: `windows = [[from, to], ...]`, or one
    window from `from_s` (default 0) to `to_s` (default the end). A bin belongs to a
    window when it starts in [from, to). A silence does not run on across a gap
    between windows: each window's bins are taken in time order and joined."""
    raw = measure.get("windows")
    if raw is None:
        return [(float(measure.get("from_s", 0.0)), float(measure.get("to_s", math.inf)))]
    if not isinstance(raw, list) or not all(
        isinstance(w, list) and len(w) == 2 and all(isinstance(x, (int, float)) for x in w)
        for w in raw
    ):
        raise InputError(f"windows must be a list of [from_s, to_s] pairs, not {raw!r}")
    return [(float(a), float(b)) for a, b in raw]


def _per_series(over: str, xs: Sequence[float], threshold: float, bin_s: float) -> float:
    kept = [x for x in xs if not math.isnan(x)]
    if not kept:
        return 0.0 if over == "longest_silence_s" else math.nan
    if over == "mean":
        return float(statistics.fmean(kept))
    if over in ("min", "max"):
        return float(min(kept) if over == "min" else max(kept))
    if over == "cv":
        mean = statistics.fmean(kept)
        return math.nan if len(kept) < 2 or mean == 0 else statistics.stdev(kept) / mean
    active = [x > threshold for x in kept]
    if over == "active_frac":
        return sum(active) / len(active)
    if over == "silent_frac":
        return 1.0 - sum(active) / len(active)
    longest = run = 0
    for a in active:
        run = 0 if a else run + 1
        longest = max(longest, run)
    return longest * bin_s


def _joint(over: str, series: Sequence[Sequence[float]], threshold: float, path: str) -> float:
    if len(series) < 2:
        raise InputError(f"trace {path!r}: over = {over!r} needs at least two series")
    bins: list[tuple[float, ...]] = [
        row for row in zip(*series) if not any(math.isnan(x) for x in row)
    ]
    if not bins:
        return math.nan
    if over == "all_active_frac":
        return sum(all(x > threshold for x in row) for row in bins) / len(bins)
    if over == "alone_frac":
        return sum(
            row[0] > threshold and all(x <= threshold for x in row[1:]) for row in bins
        ) / len(bins)
    if over == "leads_frac":
        return sum(all(row[0] > x for x in row[1:]) for row in bins) / len(bins)
    first = [row[0] for row in bins]
    rest = [sum(row[1:]) for row in bins]
    return pearson(first, rest)


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Pearson's correlation; NaN when either series is constant or shorter than 2."""
    if len(xs) < 2 or len(xs) != len(ys):
        return math.nan
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    return math.nan if sxx == 0 or syy == 0 else sxy / math.sqrt(sxx * syy)


def unfairness_index(optimal: Sequence[float], actual: Sequence[float]) -> float:
    """Osipov and Tschudin's unfairness index u, eq. (4): the distance of the actual
    per-flow throughputs from their optima over the optima's length. 0 is perfect;
    NaN for fewer than two flows, different lengths or all-zero optima (as the core's
    `metrics::unfairness_index`)."""
    if len(optimal) < 2 or len(optimal) != len(actual):
        return math.nan
    norm = sum(o * o for o in optimal)
    if norm <= 0:
        return math.nan
    return math.sqrt(sum((o - a) ** 2 for o, a in zip(optimal, actual)) / norm)


def vector_value(run: Run, spec: Mapping[str, Any]) -> list[float]:
    """One number per flow (or node) of one run: a summary field whose path has a `*`
    (`flows.*.throughput_kbps`), or the time means of a per-flow trace's series
    (`{ trace = "flow_throughput_kbps", from_s = 18.0 }`)."""
    if isinstance(spec.get("trace"), str):
        if run.traces is None:
            raise InputError("a trace measure needs the runs' traces")
        trace = str(spec["trace"])
        node = walk(run.traces, trace.split("."), trace)
        if not node or not isinstance(node[0], list):
            raise InputError(f"trace {trace!r} is one series, not one per flow or node")
        picks = spec.get("series", list(range(len(node))))
        return [trace_value(run, {**spec, "series": [i], "reduce": "mean"}) for i in picks]
    field = spec.get("field")
    if not isinstance(field, str) or "*" not in field:
        raise InputError(f"a per-flow vector needs a field with '*' or a trace: {dict(spec)}")
    values = walk(run.summary, field.split("."), field)
    return [float(v) for v in values]


def maxmin_shares(run: Run, n: int) -> list[float]:
    """Each flow's max-min fair C-load share φ_i in one run, as the core's allocator
    (`metrics::maxmin`, Osipov and Tschudin §3.3) gave it: `throttle.flows[i].phi`."""
    section = run.summary.get("throttle")
    flows = section.get("flows") if isinstance(section, Mapping) else None
    if not isinstance(flows, list) or len(flows) != n:
        raise InputError(
            'unfairness: share = "maxmin" needs the run\'s allocator shares '
            "(summary `throttle.flows[*].phi`: a scenario with a [throttle] table)"
        )
    return [float(f["phi"]) for f in flows]


def unfairness_values(
    measure: Mapping[str, Any], runs: Sequence[Run], where: Mapping[str, Any]
) -> list[float]:
    """u (eq. 4) of each selected run. `unfairness` gives the actual per-flow vector;
    `optimal` the ideal throughput of each flow, as a list of measures (one per flow)
    or one measure for every flow, each evaluated over the runs its own `where`
    selects (typically the flow alone); `share` (default "equal": 1/n; "maxmin": the
    allocator's, from each run's summary; or a list) the C-load share φ_i that scales
    it: Thr_opt,i = φ_i · Thr_alone,i (Osipov and Tschudin, §5.1.1)."""
    selection = {**where, **dict(measure.get("where", {}))}
    chosen = [r for r in runs if matches(r.variant, selection)]
    spec = measure["unfairness"]
    if not isinstance(spec, Mapping):
        raise InputError("unfairness needs a per-flow measure (a field with '*' or a trace)")
    raw = measure.get("optimal")
    if raw is None:
        raise InputError("unfairness needs optimal: the flows' throughput alone")
    out = []
    for run in chosen:
        actual = vector_value(run, spec)
        n = len(actual)
        parts = list(raw) if isinstance(raw, list) else [raw] * n
        if len(parts) != n:
            raise InputError(f"unfairness: {len(parts)} optimal values for {n} flows")
        alone = [measure_value(p, runs, selection) for p in parts]
        share = measure.get("share", "equal")
        if share == "equal":
            shares = [1.0 / n] * n
        elif share == "maxmin":
            shares = maxmin_shares(run, n)
        elif isinstance(share, list) and len(share) == n:
            shares = [float(x) for x in share]
        else:
            raise InputError(
                f'unfairness: share must be "equal", "maxmin" or {n} numbers, not {share!r}'
            )
        out.append(unfairness_index([a * f for a, f in zip(alone, shares)], actual))
    return out


def uses_traces(spec: Any) -> bool:
    """Whether a claim, measure or plot table (at any depth) reads traces."""
    if isinstance(spec, Mapping):
        return "trace" in spec or any(uses_traces(v) for v in spec.values())
    if isinstance(spec, list):
        return any(uses_traces(v) for v in spec)
    return False


# The trace entries that every trace measure reads besides its own path: the bins.
TRACE_BINS = ("bin_s", "time_s")


def trace_roots(spec: Any) -> set[str]:
    """The top-level trace entries that a claim, measure or plot table (at any depth)
    reads: the first part of every `trace` and `twin_trace` path (`tcp` for
    `tcp.*.srtt_s`). TRACE_BINS, which every trace measure reads too, are not listed."""
    found: set[str] = set()
    if isinstance(spec, Mapping):
        for key, value in spec.items():
            if key in ("trace", "twin_trace") and isinstance(value, str):
                found.add(value.split(".")[0])
            else:
                found |= trace_roots(value)
    elif isinstance(spec, list):
        for value in spec:
            found |= trace_roots(value)
    return found


def measure_value(
    measure: Mapping[str, Any], runs: Sequence[Run], where: Mapping[str, Any]
) -> float:
    """Evaluates a measure over the runs selected by `where` (and its own where)."""
    selection = {**where, **dict(measure.get("where", {}))}
    if "across" in measure:
        return across_value(measure, runs, selection)
    for op in ("max", "min", "mean"):
        if op in measure:
            parts = measure[op]
            if not isinstance(parts, list) or not parts:
                raise InputError(f"{op} needs a list of measures")
            return STAT_FNS[op]([measure_value(p, runs, selection) for p in parts])
    for op, fn in (
        ("ratio", _ratio),
        ("difference", lambda a, b: a - b),
        ("percent_change", _percent_change),
    ):
        if op in measure:
            parts = measure[op]
            if not isinstance(parts, list) or len(parts) != 2:
                raise InputError(f"{op} needs a list of two measures")
            if measure.get("per_seed"):
                return _stat(measure, _per_seed(fn, parts, runs, selection))
            a, b = (measure_value(p, runs, selection) for p in parts)
            return fn(a, b)
    return _stat(measure, per_run_values(measure, runs, where))


def _stat(measure: Mapping[str, Any], values: Sequence[float]) -> float:
    """Combines per-run (or per-seed) values with the measure's `stat` (default mean)."""
    if not values:
        return math.nan
    stat = measure.get("stat", "mean")
    if stat not in STATS:
        raise InputError(f"stat = {stat!r} is not one of {', '.join(STATS)}")
    return float(STAT_FNS[stat](values))


def _per_seed(
    fn: Callable[[float, float], float],
    parts: Sequence[Mapping[str, Any]],
    runs: Sequence[Run],
    selection: Mapping[str, Any],
) -> list[float]:
    """`per_seed = true`: the ratio or difference within each seed (both sides from the
    runs of that seed), one value per seed that both sides have."""
    seeds = sorted({r.seed for r in runs})
    out = []
    for seed in seeds:
        mine = [r for r in runs if r.seed == seed]
        a, b = (measure_value(p, mine, selection) for p in parts)
        if not (math.isnan(a) or math.isnan(b)):
            out.append(fn(a, b))
    return out


TAKES = ("max", "min", "mean", "spearman")


def across_value(
    measure: Mapping[str, Any], runs: Sequence[Run], selection: Mapping[str, Any]
) -> float:
    """`{ across = "max_p", values = [...], take = "max", of = <measure> }`: the inner
    measure at each listed value of an axis (default: every value some selected run
    has), combined with `take`: max, min, mean, or spearman (Spearman's rank
    correlation of the values with their order in the list: 1 when the measure rises
    along the list, -1 when it falls)."""
    axis = str(measure["across"])
    inner = measure.get("of")
    if not isinstance(inner, Mapping):
        raise InputError(f"across {axis!r} needs `of`, the measure to take at each value")
    values = measure.get("values")
    if values is None:
        values = []
        others = {k: v for k, v in selection.items() if k != axis}
        for r in runs:
            if matches(r.variant, others) and axis in r.variant and r.variant[axis] not in values:
                values.append(r.variant[axis])
    take = str(measure.get("take", "max"))
    if take not in TAKES:
        raise InputError(f"take = {take!r} is not one of {', '.join(TAKES)}")
    # Values no selected run has (an axis value a quick sweep leaves out) are skipped.
    values = [v for v in values if any(_same(r.variant.get(axis), v) for r in runs)]
    points = [measure_value(inner, runs, {**selection, axis: v}) for v in values]
    if any(math.isnan(p) for p in points) or not points:
        return math.nan
    if take == "spearman":
        return spearman(list(range(len(points))), points)
    return float(STAT_FNS[take](points))


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties)."""
    return pearson(_ranks(xs), _ranks(ys))


def _ranks(xs: Sequence[float]) -> list[float]:
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    ranks = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2.0
        i = j + 1
    return ranks


def _ratio(a: float, b: float) -> float:
    return math.nan if b == 0 else a / b


def _percent_change(a: float, b: float) -> float:
    """The change of `a` from `b` in percent, as papers give "+15%" over a baseline."""
    return math.nan if b == 0 else 100.0 * (a / b - 1.0)


@dataclass
class Verdict:
    what: str
    paper: float
    measured: float
    holds: bool
    test: str
    tolerance: str
    deviation: float | None  # (measured - paper) / |paper|
    where: dict[str, Any]
    measure: Mapping[str, Any] | None = None  # the claim's `measured` table
    quote: str = ""  # the sentence of the paper the claim tests
    note: str = ""  # how the claim reads the sentence, where that needs saying
    direction_only: bool = False  # the sentence states a direction and no number
    is_model: bool = False  # the paper-side value comes from a model, not the paper
    paraphrase: bool = False  # a validation claim's reference, in our words
    # "claim": a sentence of the paper, counted; "control": a check that cannot fail by
    # construction (an input built to give the answer), shown but never counted.
    kind: str = "claim"
    # Why the verdict rests on a setting chosen to fit the paper ("" when it does not).
    calibrated: str = ""
    # The paper's headline result this claim carries ("" for the others).
    headline: str = ""
    # The platform the runs followed ("standard" or "ns2"; docs/models.md).
    platform: str = ""
    # The same claim on the other platform's runs, when those runs exist.
    other: OtherPlatform | None = None
    # ns-2.35's own value of the claim's measure (experiments/ns2-values.toml).
    ns2: Ns2Value | None = None

    @property
    def counted(self) -> bool:
        """Whether the verdict counts among the paper's claims (controls do not)."""
        return self.kind == "claim"

    @property
    def miss_class(self) -> str:
        """ "holds"; "ns2-shares" for a miss that ns-2.35 shares (its own value misses
        the paper's threshold on the same side); "manetfair" for a miss that is
        manetfair's alone, as far as is known (also where ns-2.35 misses on the other
        side: then the two simulators disagree, and the scenario alone does not explain
        manetfair's miss)."""
        if self.holds:
            return "holds"
        if self.ns2 is not None and shares_miss(
            self.test, self.measured, self.ns2.value, self.ns2.holds, self.paper
        ):
            return "ns2-shares"
        return "manetfair"

    def as_json(self) -> dict[str, Any]:
        out = {
            "what": self.what,
            "quote": self.quote,
            "paper": _finite(self.paper),
            "measured": _finite(self.measured),
            "holds": self.holds,
            "test": self.test,
            "tolerance": self.tolerance,
            "deviation": _finite(self.deviation) if self.deviation is not None else None,
            "where": self.where,
            "direction_only": self.direction_only,
        }
        if self.paraphrase:
            out["paraphrase"] = True
        if self.note:
            out["note"] = self.note
        out["kind"] = self.kind
        out["calibrated"] = bool(self.calibrated)
        if self.calibrated:
            out["calibration"] = self.calibrated
        out["platform"] = self.platform
        out["other_platform"] = self.other.as_json() if self.other is not None else None
        out["ns2_35"] = self.ns2.as_json() if self.ns2 is not None else None
        out["class"] = self.miss_class
        if self.headline:
            out["headline"] = self.headline
        return out

    def margin_text(self) -> str:
        if self.deviation is None or not math.isfinite(self.deviation):
            return "n/a"
        return f"{self.deviation * 100:+.1f}%"


@dataclass
class OtherPlatform:
    """A claim's value on the other platform than the one it is judged on: shown beside
    the verdict, never counted."""

    platform: str
    measured: float
    holds: bool

    def as_json(self) -> dict[str, Any]:
        return {"platform": self.platform, "measured": _finite(self.measured), "holds": self.holds}


@dataclass
class Ns2Value:
    """ns-2.35's own value of a claim's measure (experiments/ns2-values.toml), with the
    case it was measured in and whether it passes the claim's own test."""

    value: float
    case: str
    source: str
    holds: bool
    seeds: str = ""  # the seeds the value is the mean over ("1-10")

    def as_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "seeds": self.seeds,
            "case": self.case,
            "source": self.source,
            "holds": self.holds,
        }


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


# The largest difference read as a floating-point tie, relative to max(1, |paper|).
TIE = 1e-6


def check(test: str, measured: float, paper: float, claim: Mapping[str, Any]) -> tuple[bool, str]:
    """Applies a claim's test; returns (holds, the tolerance in words)."""
    rel = float(claim.get("rel_tol", 0.0))
    abs_tol = float(claim.get("abs_tol", 0.0))
    if not (math.isfinite(measured) and math.isfinite(paper)):
        return False, "no value"
    # A floating-point tie is a tie: two equal quantities computed along different paths
    # (every variant's Jain index of exactly 1) differ in the last digits.
    slack = rel * abs(paper) + abs_tol + TIE * max(1.0, abs(paper))
    words = _tolerance_words(rel, abs_tol)
    if test == "within":
        return abs(measured - paper) <= slack, f"within {words}"
    if test == "at_least":
        return measured >= paper - slack, f"at least, less {words}"
    if test == "at_most":
        return measured <= paper + slack, f"at most, plus {words}"
    if test == "greater":
        return measured > paper, "greater"
    if test == "less":
        return measured < paper, "less"
    raise InputError(f"test = {test!r} is not one of {', '.join(TESTS)}")


def miss_side(test: str, value: float, paper: float) -> int:
    """The side of the paper's threshold on which `value`, a miss of `test`, lies: -1
    below, +1 above, 0 for no value. A one-sided test is missed on one side only."""
    if not (math.isfinite(value) and math.isfinite(paper)):
        return 0
    if test in ("at_least", "greater"):
        return -1
    if test in ("at_most", "less"):
        return 1
    return -1 if value < paper else 1


def shares_miss(
    test: str, measured: float, ns2_value: float, ns2_holds: bool, paper: float
) -> bool:
    """Whether ns-2.35 shares manetfair's miss of `test`: its own value misses too, on
    the same side of the paper's value (both above, or both below, a "within" band)."""
    if ns2_holds:
        return False
    side = miss_side(test, measured, paper)
    return side != 0 and side == miss_side(test, ns2_value, paper)


def _tolerance_words(rel: float, abs_tol: float) -> str:
    parts = []
    if rel:
        parts.append(f"{rel * 100:g}%")
    if abs_tol:
        parts.append(f"{abs_tol:g}")
    return " + ".join(parts) if parts else "0"


def expand_claims(
    claims: Sequence[Mapping[str, Any]], variants: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Expands each claim's `for_each` axes over the values present in `variants`
    (only those `for_values = { axis = [...] }` lists, if given)."""
    out: list[dict[str, Any]] = []
    for claim in claims:
        axes = list(claim.get("for_each", []))
        base_where = dict(claim.get("where", {}))
        if not axes:
            # A claim on an axis value this sweep does not run (one of the values a
            # quick sweep leaves out) is not evaluated, as `across` skips such values.
            if variants and not any(_selects(v, base_where) for v in variants):
                continue
            out.append({**claim, "where": base_where})
            continue
        only = dict(claim.get("for_values", {}))
        seen: list[dict[str, Any]] = []
        for v in variants:
            if not matches(v, base_where):
                continue
            if any(not any(_same(v.get(a), x) for x in xs) for a, xs in only.items()):
                continue
            combo = {a: v[a] for a in axes}
            if combo not in seen:
                seen.append(combo)
        for combo in seen:
            out.append({**claim, "where": {**base_where, **combo}})
    return out


def _selects(variant: Mapping[str, Any], where: Mapping[str, Any]) -> bool:
    """Whether `variant` has the values `where` gives for the axes it has."""
    return all(_same(variant[k], v) for k, v in where.items() if k in variant)


class _Fmt(dict):  # type: ignore[type-arg]
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def evaluate(
    claims: Sequence[Mapping[str, Any]],
    runs: Sequence[Run],
    variants: Sequence[Mapping[str, Any]],
    model_value: Callable[[str, Mapping[str, Any]], float],
) -> list[Verdict]:
    """Verdicts for every (expanded) claim. `model_value(name, where)` evaluates a model
    for the variants selected by `where`."""
    verdicts = []
    for claim in expand_claims(claims, variants):
        where = dict(claim["where"])
        measured = measure_value(claim["measured"], runs, where)
        paper_spec = claim["paper"]
        if isinstance(paper_spec, Mapping):
            if "model" not in paper_spec:
                raise InputError(
                    f"claim {claim['what']!r}: paper must be a number or {{model = ...}}"
                )
            paper = model_value(str(paper_spec["model"]), where)
        else:
            paper = float(paper_spec)
        test = str(claim.get("test", "within"))
        holds, tolerance = check(test, measured, paper, claim)
        deviation = (measured - paper) / abs(paper) if paper and math.isfinite(measured) else None
        what = str(claim["what"]).format_map(_Fmt({k: str(v) for k, v in where.items()}))
        verdicts.append(
            Verdict(
                what,
                paper,
                measured,
                holds,
                test,
                tolerance,
                deviation,
                where,
                dict(claim["measured"]),
                quote=" ".join(str(claim.get("quote", "")).split()),
                note=" ".join(str(claim.get("note", "")).split()),
                direction_only=bool(claim.get("direction_only", False)),
                is_model=isinstance(paper_spec, Mapping),
                paraphrase=bool(claim.get("paraphrase", False)),
                kind=str(claim.get("kind", "claim")),
                calibrated=" ".join(str(claim.get("calibrated", "")).split()),
                headline=str(claim.get("headline", "")),
            )
        )
    return verdicts
