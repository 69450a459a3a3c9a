"""The batch as a pipeline: finished runs committed in groups (one transaction each)
and reported only once committed, links to experiments written once, plots drawn in
the workers while other runs simulate (the same bytes as drawn in the main process),
and the record of where the time went (kept out of everything compared between runs)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import fake_core
import pytest
from conftest import run_cli
from manetfair import experiments, report, runner
from manetfair.reproduce import Timing, reproduce
from manetfair.runner import BatchClock, CommitPolicy, RunSpec, Task, WorkerPool, execute
from manetfair.scenario import load
from manetfair.store import NewRun, ResultsStore, StoreWriteError

HOLD = CommitPolicy(min_delay_s=3600.0, max_delay_s=3600.0, max_runs=4)


def specs_for(pair_file: Path, seeds, experiment_id: str | None = None) -> list[RunSpec]:
    base = load(pair_file)
    return [
        RunSpec(
            base.with_run(seed=s),
            s,
            experiment_id=experiment_id,
            variant={"rate": 400.0} if experiment_id else {},
            parameters={"flow.0.rate_kbps": 400.0},
        )
        for s in seeds
    ]


# --- commits in groups -------------------------------------------------------------------


def test_runs_are_committed_in_groups_and_reported_only_once_stored(fake, tmp_path, pair_file):
    clock = BatchClock()
    seen: list[tuple[int, int]] = []
    with ResultsStore(tmp_path / "s.duckdb") as store:

        def on_done(outcome, done, total):
            seen.append((done, store.count()))

        out = execute(
            specs_for(pair_file, range(1, 11)),
            store,
            simulate=fake_core.simulate,
            on_done=on_done,
            commit=HOLD,
            clock=clock,
        )
        assert store.count() == 10
    assert [o.cached for o in out] == [False] * 10
    # 4 + 4 + 2: two full groups, and what was left when the batch ended.
    assert clock.commits == 3
    # Every run reported finished was already in the store when it was reported.
    assert all(stored >= done for done, stored in seen), seen
    assert clock.simulated == 10 and clock.sim_s == pytest.approx(50.0)


def test_a_long_run_is_committed_at_once(fake, tmp_path, pair_file, monkeypatch):
    """A run that took longer than the commit delay does not wait for the next one."""
    monkeypatch.setenv("FAKE_CORE_DELAY_S", "0.3")
    clock = BatchClock()
    policy = CommitPolicy(min_delay_s=0.2, max_delay_s=0.2, max_runs=100)
    with ResultsStore(tmp_path / "s.duckdb") as store:
        execute(
            specs_for(pair_file, [1, 2, 3]),
            store,
            simulate=fake_core.simulate,
            commit=policy,
            clock=clock,
        )
    assert clock.commits == 3


def test_an_interrupted_batch_commits_the_runs_that_finished(fake, tmp_path, pair_file):
    def stop_at_seed_6(text: str, origin: str) -> tuple[str, str]:
        if json.loads(text)["seed"] == 6:
            raise KeyboardInterrupt
        return fake_core.simulate(text, origin)

    reported: list[int] = []
    with ResultsStore(tmp_path / "s.duckdb") as store:
        with pytest.raises(KeyboardInterrupt):
            execute(
                specs_for(pair_file, range(1, 11)),
                store,
                simulate=stop_at_seed_6,
                on_done=lambda o, d, t: reported.append(o.spec.seed),
                commit=HOLD,
            )
        # Seeds 1-4 were committed as a group; 5 was waiting and is committed on the
        # way out; nothing after the interruption ran.
        assert store.count() == 5
        assert reported == [1, 2, 3, 4, 5]
        again = execute(specs_for(pair_file, range(1, 11)), store, simulate=fake_core.simulate)
    assert [o.cached for o in again] == [True] * 5 + [False] * 5


def _new_run(seed: int, summary: str = '{"name": "x"}') -> NewRun:
    return NewRun(
        scenario_hash="h",
        seed=seed,
        code_version="v",
        scenario_json="{}",
        summary_json=summary,
        traces_json="{}",
        experiment_id="exp",
        variant={"a": 1},
        links=[("exp", {"a": 1}, seed, False)],
    )


def test_a_group_is_one_transaction(fake, tmp_path):
    """A group that cannot be written leaves nothing of itself; the groups before it
    stay, and the same runs can be stored afterwards."""
    with ResultsStore(tmp_path / "s.duckdb") as store:
        first = store.insert_many([_new_run(1)])
        with pytest.raises(StoreWriteError, match="2 finished runs"):
            store.insert_many([_new_run(2), _new_run(2**70)])  # a seed BIGINT cannot hold
        assert store.count() == 1
        with store.session() as con:
            assert con.execute("SELECT count(*) FROM experiment_runs").fetchone()[0] == 1
        ids = store.insert_many([_new_run(2), _new_run(3), _new_run(1)])
        assert store.count() == 3
        assert ids[2] == first[0]  # already stored: its id, not a second row
        assert len(set(ids)) == 3


def test_links_of_runs_already_stored_are_not_written_again(fake, tmp_path, pair_file):
    written: list[int] = []
    with ResultsStore(tmp_path / "s.duckdb") as store:
        link_missing = store.link_missing

        def counting(links):
            n = link_missing(links)
            written.append(n)
            return n

        store.link_missing = counting  # type: ignore[method-assign]
        specs = specs_for(pair_file, [1, 2, 3], experiment_id="exp-a")
        execute(specs, store, simulate=fake_core.simulate)
        execute(specs_for(pair_file, [1, 2, 3], "exp-a"), store, simulate=fake_core.simulate)
        # The same runs as another experiment's: those links are new.
        execute(specs_for(pair_file, [1, 2], "exp-b"), store, simulate=fake_core.simulate)
        with store.session() as con:
            rows = con.execute(
                "SELECT experiment_id, count(*) FROM experiment_runs GROUP BY 1 ORDER BY 1"
            ).fetchall()
    assert written == [0, 0, 2]
    assert rows == [("exp-a", 3), ("exp-b", 2)]


# --- the worker pool's tasks -------------------------------------------------------------


def _echo(text: str, origin: str) -> tuple[str, str]:
    time.sleep(0.05)
    return json.dumps({"origin": origin}), "{}"


def _label(name: str) -> str:
    return f"task {name} in {os.getpid()}"


def _fail(name: str) -> str:
    raise ValueError(f"no {name}")


def test_tasks_added_while_the_pool_runs_go_before_the_waiting_runs():
    pool = WorkerPool(_echo, 1)
    work = [([i], RunSpec(load('name = "x"'), 1, canonical_json="{}")) for i in range(4)]
    for i, (_, spec) in enumerate(work):
        spec.scenario.origin = f"run{i}"
    pool.add_runs(work)
    order: list[str] = []
    values: dict[str, object] = {}
    for event in pool.events(lambda: None):
        if isinstance(event, runner.RunDone):
            order.append(json.loads(event.result[0])["origin"])
            if event.indices == [0]:
                pool.add_tasks([Task("a", _label, ("a",)), Task("b", _fail, ("b",))])
        elif isinstance(event, runner.TaskDone):
            order.append(str(event.task.key))
            values[str(event.task.key)] = event.value
    assert order == ["run0", "a", "b", "run1", "run2", "run3"]
    assert str(values["a"]).startswith("task a in ") and str(os.getpid()) not in str(values["a"])
    assert isinstance(values["b"], ValueError) and "no b" in str(values["b"])


def test_the_pool_ticks_while_nothing_finishes(monkeypatch):
    monkeypatch.setenv("FAKE_CORE_DELAY_S", "0.6")
    pool = WorkerPool(fake_core.simulate, 1)
    pool.add_runs([([0], RunSpec(load('name = "x"'), 1, canonical_json='{"name": "x"}'))])
    events = list(pool.events(lambda: 0.1))
    assert isinstance(events[-1], runner.RunDone)
    assert sum(isinstance(e, runner.Tick) for e in events) >= 2


# --- plots drawn while runs simulate -----------------------------------------------------


def _bianchi() -> list[experiments.Experiment]:
    return experiments.select(experiments.load_all(), ["validate-bianchi"])


def test_plots_drawn_in_workers_are_the_bytes_drawn_here(fake, tmp_path):
    pngs: dict[str, dict[str, bytes]] = {}
    for how, jobs in (("main", 1), ("serial", 1), ("workers", 2)):
        out = tmp_path / how
        timing = Timing(jobs=jobs)
        with ResultsStore(tmp_path / f"{how}.duckdb") as store:
            if how == "main":  # drawn by report.write, after the batch, as before
                results = reproduce(
                    _bianchi(), store, quick=True, seeds=2, jobs=1, simulate=fake_core.simulate
                )
                assert all(r.drawn is None for r in results)
                report.write(results, out)
            else:
                with report.plot_folder(out) as folder:
                    results = reproduce(
                        _bianchi(),
                        store,
                        quick=True,
                        seeds=2,
                        jobs=jobs,
                        simulate=fake_core.simulate,
                        draw_into=folder,
                        timing=timing,
                    )
                    assert [r.drawn for r in results] == [(True, True)]
                    report.write(results, out, drawn_in=folder, timing=timing)
                assert not list(out.glob(".plots-*"))
                plotted = timing.experiments[0]
                assert plotted.plot_s > 0 and plotted.runs == 24 and plotted.simulated == 24
        pngs[how] = {p.name: p.read_bytes() for p in sorted(out.glob("*.png"))}
    assert sorted(pngs["main"]) == ["validate-bianchi-topology.png", "validate-bianchi.png"]
    assert pngs["serial"] == pngs["main"]
    assert pngs["workers"] == pngs["main"]


def test_a_plot_that_fails_in_a_worker_fails_the_command(fake, tmp_path):
    exp = _bianchi()[0]
    exp.figure_spec = {**exp.figure_spec, "kind": "no-such-kind"}
    failed = pytest.raises(RuntimeError, match="validate-bianchi: drawing its plots failed")
    store = ResultsStore(tmp_path / "s.duckdb")
    with report.plot_folder(tmp_path) as folder, failed:
        reproduce(
            [exp], store, quick=True, seeds=1, jobs=2, simulate=fake_core.simulate,
            draw_into=folder,
        )  # fmt: skip


# --- where the time went -----------------------------------------------------------------


def test_timing_lands_in_the_footer_and_timing_json_only(tmp_path):
    out = tmp_path / "rep"
    args = ["reproduce", "validate-bianchi", "--quick", "--seeds", "2", "--jobs", "1"]
    args += ["--json", "--quiet", "--store", str(tmp_path / "s.duckdb"), "--out", str(out)]
    first = run_cli(args, fake=True, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    timing = json.loads((out / "timing.json").read_text())
    assert timing["jobs"] == 1 and timing["simulated"] == 24 and timing["runs"] == 24
    assert timing["reused"] == 0
    assert timing["sim_s"] == pytest.approx(24 * 15.0)
    assert timing["wall_s"] > 0 and 0 < timing["core_share"] <= 1
    assert 0 <= timing["core_cpu_s"] and 0 < timing["plots_cpu_s"]
    assert set(timing["phases"]) == {
        "expansion_s", "store_s", "claims_s", "plots_s", "report_s", "core_s"
    }  # fmt: skip
    (exp,) = timing["experiments"]
    assert exp["id"] == "validate-bianchi" and exp["simulated"] == 24
    assert exp["wall_s"] > 0 and exp["plot_s"] > 0
    for name in ("index.md", "index.html"):
        assert "Where the time went" in (out / name).read_text()
    # Nothing compared between runs carries it.
    for text in (first.stdout, (out / "validate-bianchi.json").read_text()):
        assert "core_s" not in text and "core_share" not in text

    again = run_cli(args, fake=True, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    timing = json.loads((out / "timing.json").read_text())
    assert timing["simulated"] == 0 and timing["runs"] == 24 and timing["core_s"] == 0
    assert timing["reused"] == 24
    strip = [{k: v for k, v in r.items() if k != "cached"} for e in
             json.loads(again.stdout)["experiments"] for r in e["runs"]]  # fmt: skip
    assert strip == [{k: v for k, v in r.items() if k != "cached"} for e in
                     json.loads(first.stdout)["experiments"] for r in e["runs"]]  # fmt: skip


def test_a_plot_folder_left_by_a_killed_command_is_removed(tmp_path):
    out = tmp_path / "rep"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    left = out / f".plots-{dead.pid}-abc"
    left.mkdir(parents=True)
    (left / "x.png").write_bytes(b"x")
    mine = out / f".plots-{os.getpid()}-def"  # a live process's: kept
    mine.mkdir()
    with report.plot_folder(out) as folder:
        assert folder.is_dir() and folder.name.startswith(f".plots-{os.getpid()}-")
        assert not left.exists() and mine.exists()
    assert not folder.exists()
