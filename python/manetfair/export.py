"""Tidy tables out of the results store (`manetfair export`, docs/results-store.md).

- `runs`: one row per run; one typed column per scenario parameter that any
  exported run sets (named by its dotted key; a run that did not set it shows the
  default it ran with), and the summary's headline counters
  (MAC frames and collisions by type, drops by cause, routing overhead, ledger) as
  columns named by their path in the summary joined with `_`.
- `flows`: one row per flow per run, with the run's parameter columns and the flow's
  scalar fields, nested ones (its `tcp` counters as `tcp_...`, losses by cause as
  `losses_...`) flattened with `_`.
- `series`: long format (run_id, t, entity, metric, value).
- `experiment_runs`: which run is which experiment's variant and seed, with one
  typed column per sweep axis.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from manetfair.store import ResultsStore

FORMATS = ("parquet", "csv")

# Columns of `runs` that come before the parameter columns.
RUN_COLUMNS = (
    "run_id",
    "scenario_hash",
    "seed",
    "code_version",
    "scenario_name",
    "experiment_id",
    "created_at",
    "wall_s",
)
# Summary fields left out of the flattened counters: per-flow lists and the name.
_NOT_COUNTERS = {"flows", "name", "seed", "wall_s"}


def export(store: ResultsStore, out: str | os.PathLike[str], fmt: str = "parquet") -> list[Path]:
    """Writes the tidy tables runs, flows and series (and the experiment links) of
    `store` to the directory `out` as Parquet or CSV (docs/results-store.md)."""
    with store.session() as con:
        return export_store(con, Path(out), fmt, store.all_traces())


def export_store(
    con: Any, out_dir: Path, fmt: str, traces: Iterable[tuple[str, Mapping[str, Any]]]
) -> list[Path]:
    """Writes runs, flows, series and experiment_runs tables from an open store;
    `traces` gives every run's (run id, traces) by run id."""
    from manetfair.store import rows_as_dicts

    if fmt not in FORMATS:
        raise ValueError(f"export format must be 'parquet' or 'csv', not {fmt!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = rows_as_dicts(
        con,
        "SELECT run_id, scenario_hash, seed, code_version, scenario_name, experiment_id, "
        "created_at, wall_s, CAST(parameters AS VARCHAR) AS parameters, "
        "CAST(variant AS VARCHAR) AS variant, CAST(summary AS VARCHAR) AS summary, "
        "CAST(scenario AS VARCHAR) AS scenario FROM runs ORDER BY created_at, run_id",
    )
    scenarios = {r["run_id"]: json.loads(r["scenario"]) for r in runs}
    given = [json.loads(r["parameters"]) if r["parameters"] else {} for r in runs]
    keys = sorted({k for p in given for k in p})
    # Every parameter column holds the value the run used: the one it set, else the
    # default the core filled into its canonical scenario (NULL only where the key
    # is not a scenario key, e.g. an experiment's layout parameter it did not set).
    params = [
        {k: p[k] if k in p else scenario_value(scenarios[r["run_id"]], k) for k in keys}
        for r, p in zip(runs, given)
    ]
    summaries = [json.loads(r["summary"]) for r in runs]
    param_cols = typed_columns(params)

    run_rows = []
    for r, p, s in zip(runs, params, summaries):
        row = {k: r[k] for k in RUN_COLUMNS}
        row.update({k: p.get(k) for k in param_cols})
        row.update(flatten_counters(s))
        row["variant"] = r["variant"]
        run_rows.append(row)

    flow_rows = []
    for r, p, s in zip(runs, params, summaries):
        for f in s.get("flows", []):
            row = {"run_id": r["run_id"], "seed": r["seed"], "experiment_id": r["experiment_id"]}
            row.update({k: p.get(k) for k in param_cols})
            # The flow's scalar fields, nested tables (`tcp` counters, `losses` by cause)
            # flattened with `_`; lists (series, delay histogram) stay in the store.
            fields = flatten_flow({("flow_id" if k == "id" else k): v for k, v in f.items()})
            row.update(fields)
            flow_rows.append(row)

    links = rows_as_dicts(
        con,
        "SELECT experiment_id, CAST(variant AS VARCHAR) AS variant, seed, run_id, quick "
        "FROM experiment_runs ORDER BY experiment_id, variant, seed",
    )
    variants = [json.loads(x["variant"]) for x in links]
    axis_cols = typed_columns(variants)
    link_rows = [
        {
            **{k: x[k] for k in ("experiment_id", "seed", "run_id", "quick")},
            **{k: v.get(k) for k in axis_cols},
            "variant": x["variant"],
        }
        for x, v in zip(links, variants)
    ]

    written = [
        _write(_table(run_rows, param_cols), out_dir / f"runs.{fmt}", fmt),
        _write(_table(flow_rows, param_cols), out_dir / f"flows.{fmt}", fmt),
        write_series(traces, scenarios, out_dir / f"series.{fmt}", fmt),
        _write(_table(link_rows, axis_cols), out_dir / f"experiment_runs.{fmt}", fmt),
    ]
    return written


def scenario_value(scenario: Any, key: str) -> Any:
    """The value at dotted `key` in a canonical scenario (list positions by number),
    or None where it has none."""
    value = scenario
    for part in key.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def typed_columns(rows: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Every key any row sets, sorted, with the one Arrow type that holds all its values:
    int64 for integers, float64 for numbers, bool, else string (tables and arrays as
    JSON text)."""
    seen: dict[str, set[str]] = {}
    for row in rows:
        for key, value in row.items():
            seen.setdefault(key, set()).add(_kind(value))
    out = {}
    for key in sorted(seen):
        kinds = seen[key] - {"null"}
        if kinds == {"bool"}:
            out[key] = "bool"
        elif kinds == {"int"}:
            out[key] = "int64"
        elif kinds and kinds <= {"int", "float"}:
            out[key] = "float64"
        else:
            out[key] = "string"
    return out


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "string"


def flatten_counters(summary: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The summary's scalar fields (but the name, seed and per-flow list), nested tables
    flattened with `_`: `mac_frames_sent_rts`, `drops_queue_overflow`, `jain_index`."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if not prefix and key in _NOT_COUNTERS:
            continue
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flatten_counters(value, name + "_"))
        elif isinstance(value, (int, float, bool, str)) or value is None:
            out[name] = value
    return out


def flatten_flow(flow: Mapping[str, Any]) -> dict[str, Any]:
    """A flow's scalar fields, nested tables flattened with `_`: `p95_delay_s`,
    `losses_queue_overflow`, `tcp_retransmitted_segments` (TCP flows)."""
    return flatten_counters(flow)


def _table(rows: Sequence[Mapping[str, Any]], typed: Mapping[str, str]) -> Any:
    """A pyarrow Table with `typed` columns cast to their type (strings JSON-encoded
    where a value is not one) and the rest inferred."""
    import pyarrow as pa

    arrow_types: dict[str, pa.DataType] = {
        "bool": pa.bool_(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "string": pa.string(),
    }
    names: list[str] = []
    for row in rows:
        names.extend(k for k in row if k not in names)
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        kind = typed.get(name)
        if kind == "string":
            values = [
                v if v is None or isinstance(v, str) else json.dumps(v, sort_keys=True)
                for v in values
            ]
        elif kind == "float64":
            values = [None if v is None else float(v) for v in values]
        columns[name] = pa.array(values, type=arrow_types.get(kind or ""))
    return pa.table(columns) if columns else pa.table({"run_id": pa.array([], pa.string())})


# Rows of the long series table gathered before they are written out: a full
# reproduction's store holds hundreds of millions, far more than fit in memory as
# Python objects, so the table is written a batch at a time.
SERIES_BATCH_ROWS = 1_000_000


def write_series(
    all_traces: Iterable[tuple[str, Mapping[str, Any]]],
    scenarios: Mapping[str, Mapping[str, Any]],
    target: Path,
    fmt: str,
    batch_rows: int = SERIES_BATCH_ROWS,
) -> Path:
    """The long series table, one row per (run, bin, entity, metric), written to
    `target` in batches of about `batch_rows` rows (one row group each in Parquet)."""

    from manetfair.output import write_file

    write_file(target, lambda tmp: _write_series(all_traces, scenarios, tmp, fmt, batch_rows))
    return target


def _write_series(
    all_traces: Iterable[tuple[str, Mapping[str, Any]]],
    scenarios: Mapping[str, Mapping[str, Any]],
    target: Path,
    fmt: str,
    batch_rows: int,
) -> None:
    import pyarrow as pa

    columns: list[tuple[str, pa.DataType]] = [
        ("run_id", pa.string()),
        ("t", pa.float64()),
        ("entity", pa.string()),
        ("metric", pa.string()),
        ("value", pa.float64()),
    ]
    schema = pa.schema(columns)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        writer: Any = pq.ParquetWriter(target, schema)
    else:
        import pyarrow.csv as pacsv

        writer = pacsv.CSVWriter(target, schema)
    cols: list[list[Any]] = [[] for _ in schema.names]

    def flush() -> None:
        batch = pa.table([pa.array(c, f.type) for c, f in zip(cols, schema)], schema=schema)
        writer.write_table(batch)
        for c in cols:
            c.clear()

    with writer:
        for run_id, traces in all_traces:
            if run_id not in scenarios:
                continue
            times = [float(t) for t in traces.get("time_s", [])]
            # A series at a time, by list extensions rather than a row at a time:
            # a full store has hundreds of millions of rows.
            for entity, metric, values in run_series(traces, scenarios[run_id]):
                n = min(len(times), len(values))
                cols[0].extend([run_id] * n)
                cols[1].extend(times[:n])
                cols[2].extend([entity] * n)
                cols[3].extend([metric] * n)
                cols[4].extend([None if v is None else float(v) for v in values[:n]])
            if len(cols[0]) >= batch_rows:
                flush()
        if cols[0]:
            flush()


def run_series(
    traces: Mapping[str, Any], scenario: Mapping[str, Any]
) -> Iterable[tuple[str, str, Sequence[Any]]]:
    """(entity, metric, values per bin) of one run's traces: entity `flow<i>` for
    throughput_kbps and the TCP variables, `node<id>` (the file's ids for an explicit
    topology) for queue_pkts, busy_frac and nav_frac."""
    nodes = scenario.get("node")
    n = len(traces.get("queue_len_pkts", []))
    ids = (
        [node.get("id", i) for i, node in enumerate(nodes)]
        if isinstance(nodes, list) and len(nodes) == n
        else list(range(n))
    )
    for i, values in enumerate(traces.get("flow_throughput_kbps", [])):
        yield f"flow{i}", "throughput_kbps", values
    for i, tcp in enumerate(traces.get("tcp", []) or []):
        for key, values in (tcp or {}).items():
            yield f"flow{i}", key, values
    for key, metric in (
        ("queue_len_pkts", "queue_pkts"),
        ("radio_busy_frac", "busy_frac"),
        ("nav_busy_frac", "nav_frac"),
    ):
        for node, values in zip(ids, traces.get(key, [])):
            yield f"node{node}", metric, values


def _write(table: Any, target: Path, fmt: str) -> Path:
    """One table to `target`, whole or not at all (manetfair.output)."""
    from manetfair.output import write_file

    if fmt == "parquet":
        import pyarrow.parquet as pq

        return write_file(target, lambda tmp: pq.write_table(table, str(tmp)))
    import pyarrow.csv as pacsv

    return write_file(target, lambda tmp: pacsv.write_csv(table, str(tmp)))
