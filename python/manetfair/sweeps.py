"""Sweeps as tables and figures: `manetfair.sweep(...)` and `manetfair.results(...)`
return pandas DataFrames, one row per run, with one typed column per parameter; and
`manetfair sweep ... --out DIR` draws each summary metric against each swept axis,
the mean over the seeds with their lowest-to-highest range, as PNG, SVG and CSV.

pandas is imported only where a DataFrame is made: the commands that do not need it
start without it.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manetfair.export import flatten_counters, typed_columns

if TYPE_CHECKING:
    import numpy as np
    from pandas.api.extensions import ExtensionDtype
from manetfair.output import write_file

# The summary metrics drawn by `sweep --out`, when the runs have them.
METRICS = {
    "aggregate_kbps": "aggregate throughput (kbit/s)",
    "jain_index": "Jain's fairness index",
    "equal_share_unfairness": "equal-share unfairness (coefficient of variation)",
    # The same values under the name the summary first gave them (deprecated).
    "unfairness_index": "equal-share unfairness (coefficient of variation)",
    "maxmin_unfairness": "unfairness index u against max-min shares",
    "loss_pct": "data packets lost (%)",
    "flows_throughput_kbps": "per-flow throughput (kbit/s)",
    "flows_p95_delay_s": "per-flow p95 delay (s)",
    "mac_retry_drops": "MAC retry-limit drops",
    "drops_queue_overflow": "queue overflow drops",
}
# Lines drawn per figure: one per combination of the other axes' values.
MAX_LINES = 8


def run_row(
    run_id: str, seed: int, parameters: Mapping[str, Any], summary: Mapping[str, Any]
) -> dict[str, Any]:
    """One run as a row: id, seed, its parameters by dotted key, the summary's scalar
    fields (nested ones joined with `_`), and `flow<i>_throughput_kbps`,
    `flow<i>_p95_delay_s` per flow."""
    row: dict[str, Any] = {"run_id": run_id, "seed": seed, **parameters}
    row.update(flatten_counters(summary))
    for f in summary.get("flows", []):
        row[f"flow{f['id']}_throughput_kbps"] = f.get("throughput_kbps")
        row[f"flow{f['id']}_p95_delay_s"] = f.get("p95_delay_s")
    return row


def frame(rows: Sequence[Mapping[str, Any]], params: Sequence[str]) -> Any:
    """A DataFrame of `rows`, the `params` columns first, each column given the one
    dtype that holds all its values: Int64, float64, boolean or string (nullable)."""
    import numpy as np
    import pandas as pd

    if not rows:
        return pd.DataFrame({"run_id": pd.Series(dtype="string"), "seed": pd.Series(dtype="Int64")})
    df = pd.DataFrame.from_records(list(rows))
    dtypes: dict[str, ExtensionDtype | np.dtype[Any]] = {
        "int64": pd.Int64Dtype(),
        "float64": np.dtype("float64"),
        "bool": pd.BooleanDtype(),
        "string": pd.StringDtype(),
    }
    for name, kind in typed_columns(rows).items():
        if name in df.columns:
            values = df[name]
            if kind == "string":
                values = values.map(lambda v: v if v is None or isinstance(v, str) else str(v))
            df[name] = values.astype(dtypes[kind])
    first = ["run_id", "seed", *[p for p in params if p in df.columns]]
    return df[first + [c for c in df.columns if c not in first]]


def sweep(
    scenario: Any,
    params: Mapping[str, Sequence[Any]] | None = None,
    *,
    seeds: int = 1,
    duration_s: float | None = None,
    store: str | os.PathLike[str] | None = None,
    jobs: int | None = None,
    max_memory: int | None = None,
) -> Any:
    """Runs `scenario` (a path, TOML text, a dict or a Scenario) at every point of the
    product of `params` (dotted key -> values), seeds 1..`seeds` each, through the
    results store (runs already there are not simulated again), and returns a pandas
    DataFrame: one row per run, `run_id`, `seed`, one typed column per parameter, the
    summary's scalar fields and each flow's throughput and p95 delay.

    `manetfair.sweep("chain.toml", {"mac.queue_capacity_pkts": [10, 50]}, seeds=3)`
    """
    from manetfair import throttle
    from manetfair.errors import InputError
    from manetfair.runner import RunSpec, execute
    from manetfair.scenario import load
    from manetfair.store import ResultsStore

    base = load(scenario)
    axes = [(str(k), list(v)) for k, v in (params or {}).items()]
    if any(not values for _, values in axes):
        raise InputError("sweep: every parameter needs at least one value")
    if seeds < 1:
        raise InputError(f"sweep: seeds = {seeds}; give 1 or more")
    specs = []
    for combo in itertools.product(*[values for _, values in axes]):
        variant = {k: v for (k, _), v in zip(axes, combo)}
        sc = base.with_overrides(variant) if variant else base
        for seed in range(1, seeds + 1):
            run = sc.with_run(seed=seed, duration_s=duration_s)
            specs.append(RunSpec(run, seed, variant=variant, parameters=variant))
    workers = jobs or os.cpu_count() or 1
    with ResultsStore(store) as st:
        specs = throttle.complete(specs, st, jobs=workers)
        outcomes = execute(specs, st, jobs=workers, max_memory=max_memory)
    rows = [run_row(o.run_id, o.spec.seed, o.spec.parameters, o.summary) for o in outcomes]
    return frame(rows, [k for k, _ in axes])


def results(
    store: str | os.PathLike[str] | None = None,
    *,
    experiment: str | None = None,
    scenario_name: str | None = None,
    code_version: str | None = None,
) -> Any:
    """Every run of a results store (or those of one experiment, scenario name or code
    version) as a pandas DataFrame, one row per run: `run_id`, `seed`, `scenario_name`,
    `experiment_id`, `code_version`, one typed column per parameter any of them sets
    (NULL where a run did not set it), the summary's scalar fields and each flow's
    throughput and p95 delay. The store is opened read-only."""
    import json

    from manetfair.errors import InputError
    from manetfair.store import ResultsStore, default_path, rows_as_dicts

    path = Path(store) if store is not None else default_path()
    if not path.exists():
        raise InputError(f"{path}: no results store here")
    where, args = [], []
    for column, value in (
        ("experiment_id", experiment),
        ("scenario_name", scenario_name),
        ("code_version", code_version),
    ):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    query = (
        "SELECT run_id, seed, scenario_name, experiment_id, code_version, "
        "CAST(parameters AS VARCHAR) AS parameters, CAST(summary AS VARCHAR) AS summary "
        "FROM runs"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " ORDER BY created_at, run_id"
    )
    with ResultsStore(path, read_only=True) as st, st.session() as con:
        stored = rows_as_dicts(con, query, args)
    rows: list[dict[str, Any]] = []
    params: set[str] = set()
    for r in stored:
        p = json.loads(r["parameters"]) if r["parameters"] else {}
        params.update(p)
        row = run_row(r["run_id"], r["seed"], p, json.loads(r["summary"]))
        row.update({k: r[k] for k in ("scenario_name", "experiment_id", "code_version")})
        rows.append(row)
    return frame(rows, sorted(params))


# ---- figures ----------------------------------------------------------------------------


def draw_outcomes(
    outcomes: Sequence[Any], axes: Sequence[str], out: Path, title: str
) -> list[Path]:
    """`draw` for the runs of a batch (manetfair.runner.RunOutcome)."""
    rows = [run_row(o.run_id, o.spec.seed, o.spec.parameters, o.summary) for o in outcomes]
    return draw(frame(rows, axes), axes, out, title)


def draw(df: Any, axes: Sequence[str], out: Path, title: str = "") -> list[Path]:
    """For each metric of METRICS the runs have and each swept axis in `axes`: the mean
    over seeds against the axis, with the seeds' lowest-to-highest range as error bars,
    one line per combination of the other axes' values (per flow for the per-flow
    metrics). Writes `<metric>-vs-<axis>.png/.svg/.csv` and `runs.csv` into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    written = [_write_df(df, out / "runs.csv")]
    for axis in axes:
        for metric, label in METRICS.items():
            columns = _metric_columns(df, metric)
            if not columns:
                continue
            written += _figure(df, axes, axis, metric, label, columns, out, title)
    return written


def _metric_columns(df: Any, metric: str) -> list[tuple[str, str]]:
    """(column, line label) of a metric: itself, or each flow's for `flows_*`."""
    if metric.startswith("flows_"):
        rest = metric[len("flows") :]
        cols = sorted(
            (
                c
                for c in df.columns
                if c.startswith("flow") and c.endswith(rest) and c[4 : -len(rest)].isdigit()
            ),
            key=lambda c: int(c[4 : -len(rest)]),
        )
        return [(c, f"flow {c[4 : -len(rest)]}") for c in cols if df[c].notna().any()]
    if metric in df.columns and df[metric].notna().any():
        return [(metric, "")]
    return []


def _figure(
    df: Any,
    axes: Sequence[str],
    axis: str,
    metric: str,
    label: str,
    columns: Sequence[tuple[str, str]],
    out: Path,
    title: str,
) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "manetfair"
    import matplotlib.pyplot as plt

    others = [a for a in axes if a != axis]
    xs = list(dict.fromkeys(df[axis].tolist()))
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
    if numeric:
        xs = sorted(xs)
    pos = {x: (float(x) if numeric else i) for i, x in enumerate(xs)}
    groups = list(df.groupby(others, sort=True, dropna=False)) if others else [((), df)]
    rows: list[list[Any]] = []
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    try:
        drawn = 0
        for key, part in groups:
            key = key if isinstance(key, tuple) else (key,)
            where = ", ".join(f"{a}={v}" for a, v in zip(others, key))
            for column, what in columns:
                if drawn >= MAX_LINES:
                    break
                points = []
                for x in xs:
                    values = [float(v) for v in part.loc[part[axis] == x, column].dropna()]
                    if values:
                        avg = sum(values) / len(values)
                        points.append((pos[x], avg, min(values), max(values)))
                        rows.append([where, what, x, len(values), avg, min(values), max(values)])
                if not points:
                    continue
                ax.errorbar(
                    [p[0] for p in points],
                    [p[1] for p in points],
                    yerr=[[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]],
                    marker="o",
                    capsize=3,
                    label=", ".join(s for s in (what, where) if s) or None,
                )
                drawn += 1
        if not numeric:
            ax.set_xticks(list(pos.values()), [str(x) for x in xs])
        ax.set_xlabel(axis)
        ax.set_ylabel(label)
        seeds = df["seed"].nunique()
        ax.set_title(
            f"{title + ': ' if title else ''}{label} against {axis}\n"
            f"mean of {seeds} seed(s); bars: lowest to highest seed",
            fontsize=9,
        )
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        stem = f"{metric}-vs-{_safe(axis)}"
        files = []
        for fmt in ("png", "svg"):
            path = out / f"{stem}.{fmt}"
            meta: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
            write_file(path, partial(fig.savefig, format=fmt, metadata=meta))
            files.append(path)
    finally:
        plt.close(fig)
    from manetfair.runplots import write_csv

    header = ["where", "line", axis, "seeds", "mean", "min", "max"]
    files.append(write_csv(out / f"{stem}.csv", header, rows))
    return files


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name)


def _write_df(df: Any, path: Path) -> Path:
    write_file(path, lambda tmp: df.to_csv(tmp, index=False))
    return path
