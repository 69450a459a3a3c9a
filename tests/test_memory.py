"""What a reproduction holds in memory: of the runs' traces (about 1 MB of JSON per
100-node run, 2.5 GB in a full reproduction's store), only the entries that an
experiment's claims and figure read, one run's whole traces at a time, and only until
its figure is drawn. Holding every entry of every run of an experiment took a full
reproduction to 8.2 GB (bench/RESULTS.md at fe6291b, "Memory of a full reproduction")."""

from __future__ import annotations

import copy
from pathlib import Path

import fake_core
from manetfair import claims, experiments, plots, report
from manetfair.reproduce import reproduce, trace_roots
from manetfair.store import ResultsStore

# A claim on the time mean of every node's radio busy share (the fake core's traces
# hold flow_throughput_kbps, queue_len_pkts, radio_busy_frac and tcp as well).
BUSY_CLAIM = {
    "what": "radio busy half the time",
    "quote": "",
    "measured": {"trace": "radio_busy_frac", "reduce": "mean"},
    "paper": 0.5,
    "test": "within",
    "rel_tol": 0.01,
}


def _bianchi_reading_traces() -> experiments.Experiment:
    (exp,) = experiments.select(experiments.load_all(), ["validate-bianchi"])
    exp = copy.deepcopy(exp)
    exp.claims = [*exp.claims, BUSY_CLAIM]
    return exp


class CountingStore(ResultsStore):
    """Records which runs' traces were read and which entries were kept."""

    reads: list[tuple[str, frozenset[str] | None]]

    def traces(self, run_id, keep=None):  # type: ignore[no-untyped-def]
        self.reads.append((run_id, None if keep is None else frozenset(keep)))
        return super().traces(run_id, keep)


def test_trace_roots_name_every_entry_a_claim_or_figure_reads():
    assert claims.trace_roots(BUSY_CLAIM) == {"radio_busy_frac"}
    ratio = {
        "ratio": [{"trace": "tcp.*.srtt_s", "from_s": 20.0}, {"trace": "tcp.0.rttvar_s"}],
    }
    assert claims.trace_roots([ratio]) == {"tcp"}
    figure = {"kind": "trace", "trace": "neighborhood.real_avg", "twin_trace": "queue_len_pkts"}
    assert plots.trace_roots(figure) == {"neighborhood", "queue_len_pkts"}
    # A bar chart of flows from a time on reads the per-flow series, though it names none.
    assert plots.trace_roots({"kind": "flows", "panels": [{"from_s": 18.0}]}) == {
        "flow_throughput_kbps"
    }
    assert plots.trace_roots({"kind": "flows"}) == set()


def test_the_rtt_claims_of_self_contention_read_tcp_only():
    """selfcontention-fig6's claims read TCP's RTT: 6 % of its runs' traces. Loading the
    rest (every node's busy and queue shares) took 3.1 GB for its 700 runs."""
    (exp,) = experiments.select(experiments.load_all(), ["selfcontention-fig6"])
    assert trace_roots(exp) == {"bin_s", "time_s", "tcp"}


def test_a_reproduction_keeps_only_the_trace_entries_its_claims_read(fake, tmp_path):
    exp = _bianchi_reading_traces()
    store = CountingStore(tmp_path / "s.duckdb")
    store.reads = []
    (result,) = reproduce([exp], store, quick=True, seeds=2, jobs=1, simulate=fake_core.simulate)
    keep = {"bin_s", "time_s", "radio_busy_frac"}
    assert trace_roots(exp) == keep
    run_ids = {o.run_id for o in result.outcomes}
    # Each run read once, keeping only what the claims read.
    assert sorted(r for r, _ in store.reads) == sorted(run_ids)
    assert {k for _, k in store.reads} == {frozenset(keep)}
    assert set(result.traces) == run_ids
    assert all(set(t) == keep for t in result.traces.values())
    # The same verdicts as from the whole traces.
    whole = [
        claims.Run(o.spec.variant, o.spec.seed, o.summary, store.traces(o.run_id))
        for o in result.outcomes
    ]
    assert all(t is not None and "queue_len_pkts" in t for t in (r.traces for r in whole))
    again = claims.evaluate(exp.runnable_claims(), whole, exp.variants(True), _model(exp))
    for v in again:  # the platform judged on is the reproduction's to say
        v.platform = result.platform
    assert [v.as_json() for v in again] == [v.as_json() for v in result.verdicts]
    assert result.verdicts[-1].what == "radio busy half the time" and result.verdicts[-1].holds


def test_traces_are_released_once_the_figure_is_drawn(fake, tmp_path):
    exp = _bianchi_reading_traces()
    store = ResultsStore(tmp_path / "s.duckdb")
    with report.plot_folder(tmp_path / "out") as folder:
        (result,) = reproduce(
            [exp], store, quick=True, seeds=2, jobs=2, simulate=fake_core.simulate,
            draw_into=folder,
        )  # fmt: skip
        assert result.drawn == (True, True)
        assert result.traces == {}
        assert result.verdicts[-1].holds
        report.write([result], tmp_path / "out", drawn_in=folder)
    assert (tmp_path / "out" / "validate-bianchi.png").exists()


def test_a_store_read_keeps_only_the_entries_asked_for(fake, tmp_path, pair_file):
    from manetfair.runner import RunSpec, execute
    from manetfair.scenario import load

    store = ResultsStore(tmp_path / "s.duckdb")
    (out,) = execute([RunSpec(load(pair_file).with_run(seed=1), 1)], store,
                     simulate=fake_core.simulate)  # fmt: skip
    whole = store.traces(out.run_id)
    assert whole is not None and "queue_len_pkts" in whole
    part = store.traces(out.run_id, {"time_s", "tcp", "no_such_entry"})
    assert part == {"time_s": whole["time_s"], "tcp": whole["tcp"]}
    assert store.traces("no-such-run", {"time_s"}) is None


def _model(exp: experiments.Experiment):  # type: ignore[no-untyped-def]
    from manetfair.reproduce import model_evaluator

    return model_evaluator(exp, True)


def _mib(setting: str) -> float:
    number, unit = setting.split()
    return float(number) * {"KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "TiB": 1024.0**2}[unit]


def test_writes_hold_duckdb_to_a_bounded_buffer_pool(fake, tmp_path, pair_file):
    """DuckDB's buffer pool may take 80 % of the machine: a commit, which rewrites the
    last row group of `series`, runs with it held to WRITE_MEMORY_LIMIT, lifted after."""
    from manetfair.runner import RunSpec, execute
    from manetfair.scenario import load

    store = ResultsStore(tmp_path / "s.duckdb")
    limits: list[str] = []
    write = store._insert_traces

    def spy(con, rows):  # type: ignore[no-untyped-def]
        limits.append(con.execute("SELECT current_setting('memory_limit')").fetchone()[0])
        return write(con, rows)

    store._insert_traces = spy  # type: ignore[method-assign]
    execute([RunSpec(load(pair_file).with_run(seed=s), s) for s in (1, 2)], store,
            simulate=fake_core.simulate)  # fmt: skip
    assert limits and all(_mib(x) <= 512 for x in limits), limits
    with store.session() as con:
        after = con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
    assert _mib(after) > 512


def _many_runs(runs: int, nodes: int, bins: int) -> list[tuple[str, dict]]:
    """Runs whose per-node series hold integers, so each exported value is an object
    of its own, as the varied numbers of real runs are."""
    trace = {
        "time_s": [float(t) for t in range(bins)],
        "flow_throughput_kbps": [list(range(bins))],
        "queue_len_pkts": [list(range(bins)) for _ in range(nodes)],
        "radio_busy_frac": [list(range(bins)) for _ in range(nodes)],
        "nav_busy_frac": [list(range(bins)) for _ in range(nodes)],
    }
    return [(f"run{i:04}", trace) for i in range(runs)]


def _series_peak(tmp: Path, runs: list[tuple[str, dict]], batch_rows: int) -> int:
    import tracemalloc

    from manetfair.export import write_series

    tracemalloc.start()
    write_series(iter(runs), {r: {} for r, _ in runs}, tmp / "series.parquet", "parquet",
                 batch_rows=batch_rows)  # fmt: skip
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def test_the_series_export_holds_one_batch_of_rows_not_the_store(tmp_path):
    """`manetfair export` of a full reproduction's store (hundreds of millions of series
    rows) needed far more than 8 GB while it built the long table in Python; it writes
    a batch of rows at a time. 200,000 rows in batches of 20,000 peak at under a third
    of the Python heap that one batch of them all takes."""
    import pyarrow.parquet as pq

    runs = _many_runs(20, 50, 66)
    whole = _series_peak(tmp_path, runs, 10**9)
    batched = _series_peak(tmp_path, runs, 20_000)
    table = pq.read_table(tmp_path / "series.parquet")
    assert table.num_rows == 20 * 66 * (1 + 3 * 50)
    assert pq.ParquetFile(tmp_path / "series.parquet").num_row_groups > 1
    assert batched < whole / 3, f"{batched / 2**20:.1f} MiB batched, {whole / 2**20:.1f} whole"
