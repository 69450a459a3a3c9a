"""The results store and the batch runner, with the stand-in core."""

from __future__ import annotations

import json

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from manetfair.runner import BatchError, RunSpec, execute
from manetfair.scenario import load
from manetfair.store import ResultsStore


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
        written = store.export(tmp_path / "pq", "parquet")
        csvs = store.export(tmp_path / "csv", "csv")
    assert {p.name for p in written} == {"runs.parquet", "flows.parquet", "experiment_runs.parquet"}
    runs = pq.read_table(tmp_path / "pq" / "runs.parquet").to_pylist()
    assert sorted(r["seed"] for r in runs) == [1, 2]
    assert runs[0]["aggregate_kbps"] == pytest.approx(out[0].summary["aggregate_kbps"])
    assert json.loads(runs[0]["summary"]) == out[0].summary
    flows = pq.read_table(tmp_path / "pq" / "flows.parquet").to_pylist()
    assert len(flows) == 2 and flows[0]["src"] == 1 and flows[0]["dst"] == 2
    links = pacsv.read_csv(tmp_path / "csv" / "experiment_runs.csv").to_pylist()
    assert links[0]["experiment_id"] == "exp" and links[0]["seed"] == 1
    assert len(csvs) == 3
