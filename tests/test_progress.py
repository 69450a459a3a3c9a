"""The batch progress display: an ETA weighted by each run's expected cost."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field
from typing import Any

import pytest
from manetfair import progress as progress_mod
from manetfair.progress import BatchProgress, expected_cost, node_count
from rich.console import Console


@dataclass
class Spec:
    duration_s: float
    nodes: int
    seed: int = 1
    experiment_id: str | None = "demo"
    variant: dict[str, Any] = field(default_factory=dict)

    @property
    def canonical_json(self) -> str:
        return json.dumps(
            {"duration_s": self.duration_s, "topology": {"kind": "chain", "nodes": self.nodes}}
        )


@dataclass
class Outcome:
    spec: Spec
    summary: dict[str, Any]
    cached: bool = False
    run_id: str = "0123456789abcdef"


def test_cost_is_simulated_seconds_times_nodes():
    assert expected_cost(Spec(50.0, 9).canonical_json) == 450.0
    assert node_count({"topology": {"kind": "grid", "rows": 3, "cols": 4}}) == 12
    assert node_count({"node": [{"id": 1}, {"id": 5}], "topology": {"kind": "explicit"}}) == 2


def test_eta_counts_work_not_runs(monkeypatch: pytest.MonkeyPatch):
    """Three short runs finish in 3 s; one long run, 97 % of the work, is left. Counting
    runs would say 1 s remains; weighting by cost says 97 s."""
    clock = [0.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: clock[0])
    out = io.StringIO()
    bar = BatchProgress(Console(file=out, width=200), bar=False)
    short = [Spec(10.0, 1, seed=s) for s in (1, 2, 3)]
    long = Spec(97.0, 10, seed=4)
    bar.begin([*short, long])
    for i, spec in enumerate(short, start=1):
        clock[0] = float(i)
        bar(Outcome(spec, {"events": 1000, "duration_s": 10.0, "wall_s": 1.0}), i, 4)
    assert bar.eta_s() == pytest.approx(97.0)
    text = bar.rates_text()
    assert "3/4 runs" in text and "1.0 k events/s" in text and "10.0 sim s/s" in text
    assert "ETA 0:01:37" in text
    assert out.getvalue().count("\n") == 3 and "[3/4] demo seed 3" in out.getvalue()


def test_cached_runs_cost_nothing(monkeypatch: pytest.MonkeyPatch):
    clock = [0.0]
    monkeypatch.setattr(progress_mod.time, "monotonic", lambda: clock[0])
    bar = BatchProgress(Console(file=io.StringIO()), bar=False)
    todo = [Spec(10.0, 1, seed=1), Spec(10.0, 1, seed=2)]
    bar.begin(todo)
    bar(Outcome(Spec(1000.0, 100, seed=9), {"events": 5}, cached=True), 1, 3)
    assert bar.total_cost == 20.0 and bar.done_cost == 0.0 and bar.eta_s() is None
    clock[0] = 2.0
    bar(Outcome(todo[0], {"events": 10, "duration_s": 10.0}), 2, 3)
    assert bar.eta_s() == pytest.approx(2.0)


def test_interrupted_runs_are_named():
    out = io.StringIO()
    bar = BatchProgress(Console(file=out), bar=False)
    bar.close(interrupted=[Spec(10.0, 1, seed=7, variant={"queue": "red"})])
    assert out.getvalue() == "interrupted: demo seed 7 queue=red\n"


def test_the_bar_draws_on_a_terminal():
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=160)
    bar = BatchProgress(console)
    spec = Spec(10.0, 2)
    bar.begin([spec])
    bar(Outcome(spec, {"events": 10, "duration_s": 10.0}), 1, 1)
    bar.close()
    assert "1/1 runs" in out.getvalue() and "[1/1] demo seed 1" in out.getvalue()
