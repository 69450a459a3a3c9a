"""The results store and the batch runner, with the stand-in core."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from manetfair.export import export
from manetfair.runner import BatchError, RunSpec, execute
from manetfair.scenario import load
from manetfair.store import (
    SCHEMA_VERSION,
    ResultsStore,
    StoreBusyError,
    join_traces,
    split_traces,
)


def specs_for(pair_file, seeds, rates=(400.0,)):
    base = load(pair_file)
    out = []
    for rate in rates:
        sc = base.with_overrides({"flow.0.rate_kbps": rate})
        for seed in seeds:
            out.append(
                RunSpec(
                    sc.with_run(seed=seed),
                    seed,
                    variant={"rate": rate},
                    parameters={"flow.0.rate_kbps": rate},
                )
            )
    return out


def counting(calls):
    from fake_core import run_scenario

    def simulate(text, origin):
        calls.append(json.loads(text)["seed"])
        return run_scenario(text, "json", origin)

    return simulate


def test_second_identical_batch_is_served_from_the_store(fake, tmp_path, pair_file):
    calls: list[int] = []
    with ResultsStore(tmp_path / "r.duckdb") as store:
        first = execute(specs_for(pair_file, [1, 2, 3]), store, simulate=counting(calls))
        assert [o.cached for o in first] == [False, False, False]
        assert store.count() == 3 and calls == [1, 2, 3]
        second = execute(specs_for(pair_file, [1, 2, 3]), store, simulate=counting(calls))
        assert [o.cached for o in second] == [True, True, True]
        assert [o.run_id for o in second] == [o.run_id for o in first]
        assert [o.summary for o in second] == [o.summary for o in first]
        assert store.count() == 3 and calls == [1, 2, 3]
        # A new seed and a changed parameter are new runs; the rest are reused.
        third = execute(
            specs_for(pair_file, [1, 4], rates=(400.0, 800.0)), store, simulate=counting(calls)
        )
        assert [o.cached for o in third] == [True, False, False, False]
        assert store.count() == 6


def test_store_survives_reopening_and_keys_on_code_version(fake, tmp_path, pair_file, monkeypatch):
    path = tmp_path / "r.duckdb"
    calls: list[int] = []
    with ResultsStore(path) as store:
        execute(specs_for(pair_file, [1]), store, simulate=counting(calls))
    with ResultsStore(path) as store:
        assert execute(specs_for(pair_file, [1]), store, simulate=counting(calls))[0].cached
        from manetfair import runner

        monkeypatch.setattr(runner, "code_version", lambda: "0.2.0+other")
        assert not execute(specs_for(pair_file, [1]), store, simulate=counting(calls))[0].cached
        assert store.count() == 2
    assert calls == [1, 1]


def test_duplicate_specs_in_one_batch_simulate_once(fake, tmp_path, pair_file):
    calls: list[int] = []
    with ResultsStore(tmp_path / "r.duckdb") as store:
        out = execute(specs_for(pair_file, [1, 1]), store, simulate=counting(calls))
    assert calls == [1]
    assert out[0].run_id == out[1].run_id and [o.cached for o in out] == [False, True]


def test_a_failing_run_keeps_the_others(fake, tmp_path, pair_file):
    from fake_core import run_scenario

    def flaky(text, origin):
        if json.loads(text)["seed"] == 2:
            raise RuntimeError("boom")
        return run_scenario(text, "json", origin)

    with ResultsStore(tmp_path / "r.duckdb") as store:
        with pytest.raises(BatchError, match="1 run\\(s\\) failed") as info:
            execute(specs_for(pair_file, [1, 2, 3]), store, simulate=flaky)
        assert store.count() == 2
        assert [o.spec.seed for o in info.value.outcomes] == [1, 3]


def test_traces_and_export(fake, tmp_path, pair_file):
    with ResultsStore(tmp_path / "r.duckdb") as store:
        out = execute(specs_for(pair_file, [1, 2]), store, simulate=counting([]))
        store.link("exp", {"rate": 400.0}, 1, out[0].run_id, quick=True)
        traces = store.traces(out[0].run_id)
        assert traces is not None and traces["bin_s"] == 1.0
        written = export(store, tmp_path / "pq", "parquet")
        csvs = export(store, tmp_path / "csv", "csv")
    assert {p.name for p in written} == {
        "runs.parquet",
        "flows.parquet",
        "series.parquet",
        "experiment_runs.parquet",
    }
    runs = pq.read_table(tmp_path / "pq" / "runs.parquet").to_pylist()
    assert sorted(r["seed"] for r in runs) == [1, 2]
    by_id = {r["run_id"]: r for r in runs}
    first = by_id[out[0].run_id]
    assert first["aggregate_kbps"] == pytest.approx(out[0].summary["aggregate_kbps"])
    assert first["flow.0.rate_kbps"] == 400.0
    assert first["mac_frames_sent_rts"] == 0 and first["drops_queue_overflow"] == 0
    flows = pq.read_table(tmp_path / "pq" / "flows.parquet").to_pylist()
    assert len(flows) == 2 and flows[0]["src"] == 1 and flows[0]["dst"] == 2
    assert flows[0]["flow.0.rate_kbps"] == 400.0
    series = pq.read_table(tmp_path / "pq" / "series.parquet")
    assert series.column_names == ["run_id", "t", "entity", "metric", "value"]
    rows = [r for r in series.to_pylist() if r["run_id"] == out[0].run_id]
    kbps = [r["value"] for r in rows if r["entity"] == "flow0" and r["metric"] == "throughput_kbps"]
    assert kbps == traces["flow_throughput_kbps"][0]
    assert {r["entity"] for r in rows if r["metric"] == "queue_pkts"} == {"node1", "node2"}
    links = pacsv.read_csv(tmp_path / "csv" / "experiment_runs.csv").to_pylist()
    assert links[0]["experiment_id"] == "exp" and links[0]["seed"] == 1
    assert links[0]["rate"] == 400.0
    assert len(csvs) == 4


def test_store_records_schema_and_duckdb_versions(fake, tmp_path):
    import duckdb

    path = tmp_path / "r.duckdb"
    with ResultsStore(path) as store:
        meta = store.meta()
    assert meta["schema_version"] == str(SCHEMA_VERSION)
    assert meta["duckdb_version"] == meta["created_by_duckdb"] == duckdb.__version__
    con = duckdb.connect(str(path))
    con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    con.close()
    with pytest.raises(StoreBusyError, match="schema 99"):
        ResultsStore(path)


def test_export_gives_typed_parameter_columns_that_sort_numerically(fake, tmp_path, pair_file):
    """The export's parameter columns are typed: a query sorts 1, 2, 10, 20, not as text."""
    import duckdb

    base = load(pair_file)
    specs = [
        RunSpec(
            base.with_overrides({"flow.0.rate_kbps": float(rate)}).with_run(seed=1),
            1,
            experiment_id="demo",
            variant={"stations": stations, "access": "basic", "rts": stations > 5},
            parameters={
                "layout.stations": stations,
                "flow.0.rate_kbps": float(rate),
                "mac.quick_exchange.enabled": stations > 5,
            },
        )
        for stations, rate in ((10, 100), (2, 200), (20, 300), (1, 400))
    ]
    with ResultsStore(tmp_path / "r.duckdb") as store:
        outcomes = execute(specs, store, simulate=counting([]))
        export(store, tmp_path / "out", "parquet")
    by_stations = {o.spec.variant["stations"]: o.summary["aggregate_kbps"] for o in outcomes}
    runs = pq.read_table(tmp_path / "out" / "runs.parquet")
    assert str(runs.schema.field("layout.stations").type) == "int64"
    assert str(runs.schema.field("flow.0.rate_kbps").type) == "double"
    # A switch is a boolean column (a full reproduction's store has many).
    assert str(runs.schema.field("mac.quick_exchange.enabled").type) == "bool"
    links = pq.read_table(tmp_path / "out" / "experiment_runs.parquet")
    assert str(links.schema.field("rts").type) == "bool"
    con = duckdb.connect()
    runs_path = tmp_path / "out" / "runs.parquet"
    rows = con.execute(
        f"SELECT \"layout.stations\" AS stations, count(*) FROM '{runs_path}' "
        "GROUP BY stations ORDER BY stations"
    ).fetchall()
    assert [r[0] for r in rows] == [1, 2, 10, 20]
    links_path = tmp_path / "out" / "experiment_runs.parquet"
    rows = con.execute(
        f"SELECT e.stations, avg(r.aggregate_kbps) FROM '{links_path}' e "
        f"JOIN '{runs_path}' r USING (run_id) WHERE e.experiment_id = 'demo' "
        "GROUP BY e.stations ORDER BY e.stations"
    ).fetchall()
    assert [r[0] for r in rows] == [1, 2, 10, 20]
    assert [r[1] for r in rows] == pytest.approx([by_stations[n] for n in (1, 2, 10, 20)])


READER = """
import sys, time
sys.path.insert(0, sys.argv[3])
import fake_core
fake_core.install()
from manetfair.store import ResultsStore
path, target, ready = sys.argv[1], int(sys.argv[2]), sys.argv[4]
counts, end = [], time.monotonic() + 300
while time.monotonic() < end:
    counts.append(ResultsStore(path, read_only=True).count())
    if len(counts) == 1:
        open(ready, "w").close()
    if counts[-1] >= target:
        break
    time.sleep(0.02)
print(" ".join(map(str, counts)))
"""


def test_other_processes_read_the_store_while_a_batch_writes(fake, tmp_path, pair_file):
    """A batch writes run after run; meanwhile another process opens the store
    read-only again and again and sees the count grow."""
    import subprocess
    import sys
    import time

    path = tmp_path / "r.duckdb"
    with ResultsStore(path) as store:
        execute(specs_for(pair_file, [1]), store, simulate=counting([]))

    def slow(text, origin):
        time.sleep(0.2)
        return counting([])(text, origin)

    ready = tmp_path / "reader-ready"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(path), "15", str(Path(__file__).parent), str(ready)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not ready.exists() and reader.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    with ResultsStore(path) as store:
        execute(specs_for(pair_file, range(2, 16)), store, simulate=slow)
    out, err = reader.communicate(timeout=300)
    assert reader.returncode == 0, err
    counts = [int(c) for c in out.split()]
    assert counts[-1] == 15
    # Reads succeeded while the batch was writing: counts between the first and last.
    assert any(1 < c < 15 for c in counts), counts


# --- the traces' layout (schema 3) and stores of schema 2 -----------------------------

_number = st.one_of(st.none(), st.floats(allow_nan=False))
_leaf = st.one_of(_number, st.integers(), st.booleans(), st.text(max_size=3))
_trace_tree = st.recursive(
    st.one_of(_leaf, st.lists(_number, max_size=4)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.text(alphabet="ab.1_", max_size=3), inner, max_size=3),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(alphabet="abc._0", max_size=4), _trace_tree, max_size=4))
def test_split_traces_gives_back_exactly_the_traces(traces):
    text = json.dumps(traces)
    layout, series = split_traces(json.loads(text))
    assert all(v and all(x is None or type(x) is float for x in v) for _, v in series)
    back = join_traces(json.loads(json.dumps(layout)), series)
    assert json.dumps(back) == text


def test_traces_are_one_row_per_series(fake, tmp_path, pair_file):
    import duckdb

    path = tmp_path / "r.duckdb"
    with ResultsStore(path) as store:
        out = execute(specs_for(pair_file, [1, 2]), store, simulate=counting([]))
        whole = {o.run_id: store.traces(o.run_id) for o in out}
    con = duckdb.connect(str(path), read_only=True)
    rows = con.execute("SELECT run_id, seq, path, len(points) FROM series ORDER BY seq, path")
    got = rows.fetchall()
    layouts = dict(con.execute("SELECT run_id, CAST(layout AS VARCHAR) FROM traces").fetchall())
    con.close()
    first = out[0].run_id
    traces = whole[first]
    assert traces is not None
    bins = len(traces["time_s"])
    # The stand-in core's traces: time_s, a throughput series per flow, two shares per node.
    assert [(r, s, p, n) for r, s, p, n in got if r == first] == [
        (first, 1, "flow_throughput_kbps.0", bins),
        (first, 1, "queue_len_pkts.0", bins),
        (first, 1, "queue_len_pkts.1", bins),
        (first, 1, "radio_busy_frac.0", bins),
        (first, 1, "radio_busy_frac.1", bins),
        (first, 1, "tcp", 1),
        (first, 1, "time_s", bins),
    ]
    assert json.loads(layouts[first])["bin_s"] == 1.0
    assert json.loads(layouts[first])["queue_len_pkts"] == [None, None]


def _schema_2_store(path: Path) -> None:
    """A store as manetfair wrote it before schema 3: each run's traces one JSON text."""
    import duckdb
    from manetfair.store import SCHEMA

    con = duckdb.connect(str(path))
    con.execute(SCHEMA)
    con.execute("CREATE TABLE series (run_id VARCHAR PRIMARY KEY, traces JSON NOT NULL)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '2')")
    con.close()


def test_a_schema_2_store_is_read_and_written_as_it_is(fake, tmp_path, pair_file):
    import duckdb

    path = tmp_path / "old.duckdb"
    _schema_2_store(path)
    with ResultsStore(path) as store:
        out = execute(specs_for(pair_file, [1, 2]), store, simulate=counting([]))
        traces = store.traces(out[0].run_id)
        part = store.traces(out[0].run_id, {"time_s"})
        assert store.meta()["schema_version"] == "2"
        export(store, tmp_path / "pq", "parquet")
    assert traces is not None and traces["bin_s"] == 1.0
    assert part == {"time_s": traces["time_s"]}
    con = duckdb.connect(str(path), read_only=True)
    tables = {
        r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    stored = con.execute("SELECT CAST(traces AS VARCHAR) FROM series WHERE run_id = ?",
                         [out[0].run_id]).fetchone()  # fmt: skip
    con.close()
    assert "traces" not in tables
    assert stored is not None and json.loads(stored[0]) == traces
    series = pq.read_table(tmp_path / "pq" / "series.parquet").to_pylist()
    kbps = [
        r["value"]
        for r in series
        if r["run_id"] == out[0].run_id
        and r["entity"] == "flow0"
        and r["metric"] == "throughput_kbps"
    ]
    assert kbps == traces["flow_throughput_kbps"][0]


def test_export_of_both_layouts_is_the_same(fake, tmp_path, pair_file):
    tables = {}
    for name in ("old", "new"):
        path = tmp_path / f"{name}.duckdb"
        if name == "old":
            _schema_2_store(path)
        with ResultsStore(path) as store:
            out = execute(specs_for(pair_file, [1, 2, 3]), store, simulate=counting([]))
            export(store, tmp_path / name, "parquet")
        ids = {o.run_id: f"run{i}" for i, o in enumerate(out)}
        rows = pq.read_table(tmp_path / name / "series.parquet").to_pylist()
        tables[name] = sorted(
            (ids[r["run_id"]], r["t"], r["entity"], r["metric"], r["value"]) for r in rows
        )
    assert tables["old"] == tables["new"] and tables["new"]


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_the_series_export_is_the_same_in_batches_or_whole(tmp_path, fmt):
    """Written a few rows at a time or in one batch, the long series table is the same,
    in the same order; a store without traces gives the header alone."""
    from manetfair.export import write_series

    trace = {
        "time_s": [0.0, 1.0, 2.0],
        "flow_throughput_kbps": [[1.0, 2.0, None]],
        "queue_len_pkts": [[0.0, 3.0, 4.0], [1.0, 1.0, 1.0]],
        "tcp": [{"cwnd_pkts": [1.0, 2.0, 4.0]}],
    }
    runs = [("a", trace), ("b", trace), ("c", trace)]
    scenarios = {"a": {}, "b": {"node": [{"id": 7}, {"id": 9}]}}
    read = pq.read_table if fmt == "parquet" else pacsv.read_csv
    whole = write_series(iter(runs), scenarios, tmp_path / f"whole.{fmt}", fmt)
    parts = write_series(iter(runs), scenarios, tmp_path / f"parts.{fmt}", fmt, batch_rows=4)
    rows = read(whole).to_pylist()
    assert read(parts).to_pylist() == rows
    assert len(rows) == 2 * 3 * 4 and {r["run_id"] for r in rows} == {"a", "b"}
    assert {r["entity"] for r in rows if r["run_id"] == "b" and r["metric"] == "queue_pkts"} == {
        "node7",
        "node9",
    }
    empty = write_series(iter([]), {}, tmp_path / f"empty.{fmt}", fmt)
    assert read(empty).num_rows == 0
    assert read(empty).column_names == ["run_id", "t", "entity", "metric", "value"]
