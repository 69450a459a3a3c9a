"""Progress on stderr, as ns-3's ShowProgress and OMNeT++'s Cmdenv give it: simulated
time, events per wall second and simulated seconds per wall second, for one run and
for batches.

A batch's bar and ETA count work, not runs: each run is expected to cost its
simulated seconds × nodes, and the wall time per unit of that cost is learned from
the runs that finish. Runs served from the store cost nothing and leave the total.
On a terminal the display is a rich progress bar; elsewhere one line per finished run.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskProgressColumn,
    TextColumn,
)
from rich.text import Text

CoreProgress = Callable[[float, float, int], None]


def stderr_console() -> Console:
    return Console(file=sys.stderr, highlight=False)


def node_count(canonical: Mapping[str, Any]) -> int:
    """Nodes of a canonical scenario: the explicit list, a chain's or field's count, or
    a grid's rows × cols."""
    nodes = canonical.get("node")
    if isinstance(nodes, list) and nodes:
        return len(nodes)
    topo = canonical.get("topology", {})
    if "nodes" in topo:
        return int(topo["nodes"])
    return int(topo.get("rows", 1)) * int(topo.get("cols", 1))


def expected_cost(canonical_json: str) -> float:
    """The cost model of a run before it runs: simulated seconds × nodes."""
    try:
        canonical = json.loads(canonical_json)
    except ValueError:
        return 1.0
    return max(1e-9, float(canonical.get("duration_s", 1.0)) * max(1, node_count(canonical)))


def _rate(value: float, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= scale:
            return f"{value / scale:.1f} {prefix} {unit}"
    return f"{value:.0f} {unit}"


def _clock(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "-:--:--"
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


class _Fields(ProgressColumn):
    """The task's `text` field (rates, counts), recomputed by the owner."""

    def render(self, task: Task) -> Text:
        text = task.fields.get("text", "")
        return Text(str(text() if callable(text) else text), style="progress.data.speed")


@contextmanager
def run_progress(console: Console | None = None) -> Iterator[CoreProgress]:
    """A bar of one run's simulated time with events/s, simulated s per wall s and the
    time left; yields the core's callback `(now_s, duration_s, events)`."""
    console = console or stderr_console()
    bar = Progress(
        TextColumn("simulating"),
        BarColumn(),
        TaskProgressColumn(),
        _Fields(),
        console=console,
        transient=True,
    )
    task = bar.add_task("run", total=None, text="")
    started = time.monotonic()

    def update(now_s: float, duration_s: float, events: int) -> None:
        wall = max(time.monotonic() - started, 1e-9)
        speed = now_s / wall
        left = (duration_s - now_s) / speed if speed > 0 else None
        bar.update(
            task,
            total=duration_s,
            completed=min(now_s, duration_s),
            text=(
                f"{now_s:.0f}/{duration_s:.0f} s  {_rate(events / wall, 'events/s')}  "
                f"{speed:.1f} sim s/s  ETA {_clock(left)}"
            ),
        )

    with bar:
        yield update


class BatchProgress:
    """Progress of a batch of runs; pass `begin` and the instance itself (as `on_done`)
    to the runner."""

    def __init__(self, console: Console | None = None, *, bar: bool | None = None) -> None:
        self.console = console or stderr_console()
        self.bar = self.console.is_terminal if bar is None else bar
        self.costs: dict[int, float] = {}
        self.total_cost = 0.0
        self.done_cost = 0.0
        self.events = 0
        self.sim_s = 0.0
        self.simulated = 0
        self.to_simulate = 0
        self.started = time.monotonic()
        self.progress: Progress | None = None
        self.task: Any = None

    def begin(self, to_simulate: Sequence[Any]) -> None:
        """Called once with the runs that will be simulated (RunSpecs)."""
        self.to_simulate = len(to_simulate)
        self.costs = {id(s): expected_cost(s.canonical_json) for s in to_simulate}
        self.total_cost = sum(self.costs.values())
        self.started = time.monotonic()
        if self.bar and self.to_simulate:
            self.progress = Progress(
                TextColumn("runs"),
                BarColumn(),
                TaskProgressColumn(),
                _Fields(),
                console=self.console,
            )
            self.task = self.progress.add_task("runs", total=self.total_cost, text=self.rates_text)
            self.progress.start()
            self._refresh()

    def __call__(self, outcome: Any, done: int, total: int) -> None:
        from manetfair.runner import describe

        label = outcome.spec.experiment_id or Path(outcome.spec.scenario.origin).name
        line = f"[{done}/{total}] {label} {describe(outcome)}"
        if not outcome.cached and id(outcome.spec) in self.costs:
            self.done_cost += self.costs.pop(id(outcome.spec))
            self.simulated += 1
            self.events += int(outcome.summary.get("events", 0) or 0)
            self.sim_s += float(outcome.summary.get("duration_s", 0.0) or 0.0)
        if self.progress is not None:
            self.progress.console.print(line, highlight=False, markup=False)
            self._refresh()
        else:
            print(line, file=self.console.file, flush=True)

    def eta_s(self) -> float | None:
        """Wall seconds left: the cost still to run at the rate learned so far."""
        wall = time.monotonic() - self.started
        if self.done_cost <= 0 or wall <= 0:
            return None
        return (self.total_cost - self.done_cost) * wall / self.done_cost

    def rates_text(self) -> str:
        wall = max(time.monotonic() - self.started, 1e-9)
        return (
            f"{self.simulated}/{self.to_simulate} runs  "
            f"{_rate(self.events / wall, 'events/s')}  {self.sim_s / wall:.1f} sim s/s  "
            f"ETA {_clock(self.eta_s())}"
        )

    def _refresh(self) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=self.done_cost)

    def close(self, interrupted: Sequence[Any] = ()) -> None:
        """Stops the bar; names the runs that were in flight when the batch stopped."""
        if self.progress is not None:
            self.progress.stop()
            self.progress = None
        for spec in interrupted:
            label = spec.experiment_id or Path(spec.scenario.origin).name
            variant = " ".join(f"{k}={v}" for k, v in spec.variant.items())
            print(
                f"interrupted: {label} seed {spec.seed} {variant}".rstrip(),
                file=self.console.file,
                flush=True,
            )
