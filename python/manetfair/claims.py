"""Measured values and verdicts: the small vocabulary experiment claims are written in.

A measure (the `measured` table of a claim, or a plot's `y`) is one of

    { field = "aggregate_kbps", stat = "mean" }             a summary field, over seeds
    { field = "flows.*.throughput_kbps", reduce = "min" }   `*` fans out; reduce per run
    { ratio = [<measure>, <measure>] }                      first / second
    { difference = [<measure>, <measure>] }                 first - second

each optionally with `where = { axis = value, ... }`, which narrows the claim's
own selection of runs. The paper-side value is a number or `{ model = "<name>" }`
(see manetfair.models), evaluated on the scenario of each selected variant and
averaged. A claim's `test` is "within" (|m - p| <= rel_tol |p| + abs_tol),
"at_least" (m >= p - tolerance), "at_most" (m <= p + tolerance), "greater"
(m > p) or "less" (m < p).
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
    "min": lambda xs: float(min(xs)) if xs else math.nan,
    "max": lambda xs: float(max(xs)) if xs else math.nan,
    "jain": lambda xs: jain_index(xs),
}
STAT_FNS: dict[str, Callable[[Sequence[float]], float]] = {
    "mean": statistics.fmean,
    "median": statistics.median,
    "min": min,
    "max": max,
}
STATS = tuple(STAT_FNS)
TESTS = ("within", "at_least", "at_most", "greater", "less")

# Two-sided 95% Student t quantiles by degrees of freedom.
_T95 = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    6: 2.447,
    7: 2.365,
    8: 2.306,
    9: 2.262,
    10: 2.228,
    11: 2.201,
    12: 2.179,
    13: 2.160,
    14: 2.145,
    15: 2.131,
    16: 2.120,
    17: 2.110,
    18: 2.101,
    19: 2.093,
    20: 2.086,
    25: 2.060,
    30: 2.042,
    40: 2.021,
    60: 2.000,
    120: 1.980,
}


@dataclass
class Run:
    """One run as claims see it: its variant (axis values), seed, summary and, for
    experiments whose measures read them, its traces."""

    variant: Mapping[str, Any]
    seed: int
    summary: Mapping[str, Any]
    traces: Mapping[str, Any] | None = None


def jain_index(xs: Sequence[float]) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2); 1.0 when all are equal."""
    if not xs:
        return math.nan
    squares = sum(x * x for x in xs)
    return 1.0 if squares == 0 else float(sum(xs)) ** 2 / (len(xs) * squares)


def t95(df: int) -> float:
    if df <= 0:
        return math.nan
    for k in sorted(_T95):
        if df <= k:
            return _T95[k]
    return 1.960


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


def field_value(summary: Mapping[str, Any], path: str, reduce: str | None) -> float:
    """A summary field by dotted path; `*` over a list fans out and `reduce` combines."""
    values = walk(summary, path.split("."), path)
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
    """The measure's value for each selected run (a field or trace measure only)."""
    selection = {**where, **dict(measure.get("where", {}))}
    chosen = [r for r in runs if matches(r.variant, selection)]
    if isinstance(measure.get("trace"), str):
        return [trace_value(r, measure) for r in chosen]
    path = measure.get("field")
    if not isinstance(path, str):
        raise InputError(f"a measure needs field, trace, ratio or difference: {dict(measure)}")
    return [field_value(r.summary, path, measure.get("reduce")) for r in chosen]


def trace_value(run: Run, measure: Mapping[str, Any]) -> float:
    """The time mean of a trace from `from_s` (default 0) to `to_s` (default the end), for one run.

    `trace` is a dotted path into the traces (`queue_len_pkts`, `tcp.0.cwnd_pkts`).
    A path that ends at one list per node or flow takes the series whose positions
    `series` lists (default all) and combines their time means with `reduce`
    (default mean).
    """
    if run.traces is None:
        raise InputError("a trace measure needs the runs' traces")
    path = str(measure["trace"])
    node = walk(run.traces, path.split("."), path)
    times = list(run.traces.get("time_s", []))
    start = float(measure.get("from_s", 0.0))
    end = float(measure.get("to_s", math.inf))

    def time_mean(values: Sequence[float]) -> float:
        kept = [v for t, v in zip(times, values) if start <= t < end and v is not None]
        return float(statistics.fmean(kept)) if kept else math.nan

    if not node or not isinstance(node[0], list):
        return time_mean(node)
    picks = measure.get("series", list(range(len(node))))
    for i in picks:
        if not isinstance(i, int) or not 0 <= i < len(node):
            raise InputError(f"trace {path!r}: series {i!r} out of range ({len(node)} series)")
    name = str(measure.get("reduce", "mean"))
    if name not in REDUCERS:
        raise InputError(f"reduce = {name!r} is not one of {', '.join(REDUCERS)}")
    return REDUCERS[name]([time_mean(node[i]) for i in picks])


def uses_traces(spec: Any) -> bool:
    """Whether a claim, measure or plot table (at any depth) reads traces."""
    if isinstance(spec, Mapping):
        return "trace" in spec or any(uses_traces(v) for v in spec.values())
    if isinstance(spec, list):
        return any(uses_traces(v) for v in spec)
    return False


def measure_value(
    measure: Mapping[str, Any], runs: Sequence[Run], where: Mapping[str, Any]
) -> float:
    """Evaluates a measure over the runs selected by `where` (and its own where)."""
    selection = {**where, **dict(measure.get("where", {}))}
    for op, fn in (("ratio", _ratio), ("difference", lambda a, b: a - b)):
        if op in measure:
            parts = measure[op]
            if not isinstance(parts, list) or len(parts) != 2:
                raise InputError(f"{op} needs a list of two measures")
            a, b = (measure_value(p, runs, selection) for p in parts)
            return fn(a, b)
    values = per_run_values(measure, runs, selection)
    if not values:
        return math.nan
    stat = measure.get("stat", "mean")
    if stat not in STATS:
        raise InputError(f"stat = {stat!r} is not one of {', '.join(STATS)}")
    return STAT_FNS[stat](values)


def _ratio(a: float, b: float) -> float:
    return math.nan if b == 0 else a / b


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

    def as_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "paper": _finite(self.paper),
            "measured": _finite(self.measured),
            "holds": self.holds,
            "test": self.test,
            "tolerance": self.tolerance,
            "deviation": _finite(self.deviation) if self.deviation is not None else None,
            "where": self.where,
        }

    def margin_text(self) -> str:
        if self.deviation is None or not math.isfinite(self.deviation):
            return "n/a"
        return f"{self.deviation * 100:+.1f}%"


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None


def check(test: str, measured: float, paper: float, claim: Mapping[str, Any]) -> tuple[bool, str]:
    """Applies a claim's test; returns (holds, the tolerance in words)."""
    rel = float(claim.get("rel_tol", 0.0))
    abs_tol = float(claim.get("abs_tol", 0.0))
    if not (math.isfinite(measured) and math.isfinite(paper)):
        return False, "no value"
    slack = rel * abs(paper) + abs_tol
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
    """Expands each claim's `for_each` axes over the values present in `variants`."""
    out: list[dict[str, Any]] = []
    for claim in claims:
        axes = list(claim.get("for_each", []))
        base_where = dict(claim.get("where", {}))
        if not axes:
            out.append({**claim, "where": base_where})
            continue
        seen: list[dict[str, Any]] = []
        for v in variants:
            if not matches(v, base_where):
                continue
            combo = {a: v[a] for a in axes}
            if combo not in seen:
                seen.append(combo)
        for combo in seen:
            out.append({**claim, "where": {**base_where, **combo}})
    return out


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
            )
        )
    return verdicts
