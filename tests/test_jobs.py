"""Results do not depend on the number of worker processes: a sweep run with one job
and with two gives the same summaries and traces, byte for byte (wall time aside)."""

from __future__ import annotations

import json

import pytest
from manetfair.runner import RunSpec, execute
from manetfair.scenario import load
from manetfair.store import ResultsStore

pytestmark = pytest.mark.core

CHAIN = """
name = "jobs"
duration_s = 4.0
[topology]
kind = "chain"
nodes = 4
spacing_m = 200.0
[[flow]]
src = 0
dst = 3
transport = "tcp-newreno"
app = "ftp"
packet_bytes = 1000
start_s = 0.5
"""


def _batch(tmp_path, jobs: int) -> list[tuple[str, str]]:
    base = load(CHAIN)
    specs = [
        RunSpec(base.with_overrides({"mac.queue_capacity_pkts": q}).with_run(seed=s), s)
        for q in (5, 50)
        for s in (1, 2, 3)
    ]
    out = []
    with ResultsStore(tmp_path / f"jobs{jobs}.duckdb") as store:
        for o in execute(specs, store, jobs=jobs):
            summary = {k: v for k, v in o.summary.items() if k != "wall_s"}
            out.append((json.dumps(summary, sort_keys=True), json.dumps(store.traces(o.run_id))))
    return out


def test_one_job_and_two_jobs_give_identical_results(tmp_path):
    one, two = _batch(tmp_path, 1), _batch(tmp_path, 2)
    assert len(one) == 6
    assert one == two
    assert len({s for s, _ in one}) == 6  # the seeds and queue sizes do differ
