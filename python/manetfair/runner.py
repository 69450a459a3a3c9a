"""Runs batches of scenarios: served from the results store when already there,
otherwise simulated (in worker processes when `jobs` > 1) and stored one by one.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Protocol

from manetfair.errors import InputError
from manetfair.scenario import Scenario, hash_canonical
from manetfair.store import ResultsStore

# (scenario JSON text, origin) -> (summary JSON, traces JSON)
Simulate = Callable[[str, str], tuple[str, str]]


class Backend(Protocol):
    """Somewhere else to run simulations (manetfair.cluster.RayBackend)."""

    def simulate_all(
        self, work: list[tuple[list[int], RunSpec]], simulate: Simulate
    ) -> Iterator[tuple[list[int], tuple[str, str] | Exception]]: ...


def simulate_with_core(text: str, origin: str, max_memory: int | None = None) -> tuple[str, str]:
    """Runs one scenario in the native core (in whichever process calls it)."""
    from manetfair import _core

    if max_memory is None:
        return _core.run_scenario(text, "json", origin)
    return _core.run_scenario(text, "json", origin, max_memory=max_memory)


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """The package version plus the first 12 hex digits of the native module's SHA-256,
    so that a rebuilt core never serves runs stored by an older build."""
    import manetfair
    from manetfair import _core

    digest = "unknown"
    module_file = getattr(_core, "__file__", None)
    if module_file and os.path.isfile(module_file):
        h = hashlib.sha256()
        with open(module_file, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()[:12]
    return f"{manetfair.__version__}+{digest}"


@dataclass
class RunSpec:
    """One simulation to obtain: a scenario with its seed and duration already applied."""

    scenario: Scenario
    seed: int
    experiment_id: str | None = None
    variant: dict[str, Any] = field(default_factory=dict)
    parameters: dict[str, Any] = field(default_factory=dict)
    canonical_json: str = ""
    scenario_hash: str = ""

    def prepare(self, max_memory: int | None = None) -> RunSpec:
        """Validates the scenario in the core and computes its hash (raises ScenarioError)."""
        if not self.scenario_hash:
            self.canonical_json = self.scenario.canonical_json(max_memory)
            self.scenario_hash = hash_canonical(self.canonical_json)
        return self


@dataclass
class RunOutcome:
    spec: RunSpec
    run_id: str
    summary: dict[str, Any]
    cached: bool


@dataclass
class RunFailure:
    spec: RunSpec
    error: str


class BatchError(RuntimeError):
    """Some runs of a batch failed; the others are stored."""

    def __init__(self, failures: list[RunFailure], outcomes: list[RunOutcome]) -> None:
        lines = [f"{len(failures)} run(s) failed:"]
        for f in failures[:5]:
            lines.append(
                f"  {f.spec.scenario.origin} seed {f.spec.seed} {f.spec.variant}: {f.error}"
            )
        super().__init__("\n".join(lines))
        self.failures = failures
        self.outcomes = outcomes


def execute(
    specs: Iterable[RunSpec],
    store: ResultsStore,
    *,
    jobs: int = 1,
    simulate: Simulate = simulate_with_core,
    on_done: Callable[[RunOutcome, int, int], None] | None = None,
    experiment_quick: bool = False,
    on_start: Callable[[list[RunSpec]], None] | None = None,
    backend: Backend | None = None,
    max_memory: int | None = None,
) -> list[RunOutcome]:
    """Obtains every spec's run, in the order given.

    Runs already in the store (same scenario hash, seed and code version) are not
    simulated again. Each simulated run is committed as soon as it returns, so an
    interrupted batch resumes where it stopped. `on_done(outcome, done, total)` is
    called in the calling process after each run, cached or not; `on_start(specs)`
    once with the runs that will be simulated. `backend` (e.g. a Ray cluster) runs
    them instead of local worker processes. A batch of no runs is refused: it is
    always a mistake in the sweep that made it.
    """
    specs = _with_throttle_references(list(specs), store, jobs, simulate)
    specs = [s.prepare(max_memory) for s in specs]
    if not specs:
        raise InputError("the batch has no runs: every sweep axis needs at least one value")
    if max_memory is not None and simulate is simulate_with_core:
        simulate = functools.partial(simulate_with_core, max_memory=max_memory)
    version = code_version()
    total = len(specs)
    results: list[RunOutcome | None] = [None] * total
    done = 0

    def finish(i: int, outcome: RunOutcome) -> None:
        nonlocal done
        results[i] = outcome
        spec = outcome.spec
        if spec.experiment_id is not None:
            store.link(
                spec.experiment_id, spec.variant, spec.seed, outcome.run_id, experiment_quick
            )
        done += 1
        if on_done is not None:
            on_done(outcome, done, total)

    pending: dict[tuple[str, int], list[int]] = {}
    with store.session():
        for i, spec in enumerate(specs):
            hit = store.lookup(spec.scenario_hash, spec.seed, version)
            if hit is not None:
                finish(i, RunOutcome(spec, hit.run_id, hit.summary, cached=True))
            else:
                pending.setdefault((spec.scenario_hash, spec.seed), []).append(i)

    failures: list[RunFailure] = []

    def store_result(indices: list[int], summary_json: str, traces_json: str) -> None:
        first = specs[indices[0]]
        run_id = store.insert(
            scenario_hash=first.scenario_hash,
            seed=first.seed,
            code_version=version,
            scenario_json=first.canonical_json,
            summary_json=summary_json,
            traces_json=traces_json,
            experiment_id=first.experiment_id,
            variant=first.variant if first.experiment_id is not None else None,
            parameters=first.parameters,
        )
        summary = json.loads(summary_json)
        for n, i in enumerate(indices):
            finish(i, RunOutcome(specs[i], run_id, summary, cached=n > 0))

    work = [(indices, specs[indices[0]]) for indices in pending.values()]
    if on_start is not None:
        on_start([spec for _, spec in work])
    stream = (
        backend.simulate_all(work, simulate)
        if backend is not None
        else _simulate_all(work, simulate, jobs)
    )
    for indices, result in stream:
        if isinstance(result, Exception):
            why = (
                str(result)
                if isinstance(result, WorkerError)
                else f"{type(result).__name__}: {result}"
            )
            failures.append(RunFailure(specs[indices[0]], why))
        else:
            store_result(indices, *result)
    outcomes = [r for r in results if r is not None]
    if failures:
        raise BatchError(failures, outcomes)
    return outcomes


def _with_throttle_references(
    specs: list[RunSpec], store: ResultsStore, jobs: int, simulate: Simulate
) -> list[RunSpec]:
    """Specs of ingress-throttling scenarios with their reference throughputs (Thr_max,
    Thr_alone) measured through the same store and filled in (manetfair.throttle)."""
    from manetfair import throttle

    chosen = [
        i for i, s in enumerate(specs) if throttle.throttle_table(s.scenario.data) is not None
    ]
    if not chosen:
        return specs
    done, _ = throttle.measure_references(
        [specs[i].scenario for i in chosen], store, jobs=jobs, simulate=simulate
    )
    out = list(specs)
    for i, sc in zip(chosen, done):
        out[i] = dataclasses.replace(specs[i], scenario=sc, canonical_json="", scenario_hash="")
    return out


def _simulate_all(
    work: list[tuple[list[int], RunSpec]], simulate: Simulate, jobs: int
) -> Iterator[tuple[list[int], tuple[str, str] | Exception]]:
    """Yields each piece of work's (summary, traces), or the exception it raised, as it
    finishes: here when `jobs` is 1, else in `jobs` spawned worker processes.

    The canonical JSON the core checked is what runs, so a run is exactly the scenario
    its hash names (and files it read, such as an ns-2 movement file, are inside it).
    """
    if jobs <= 1 or len(work) <= 1:
        for indices, spec in work:
            try:
                result = simulate(spec.canonical_json, spec.scenario.origin)
            except Exception as exc:  # noqa: BLE001 - a failed run must not lose the others
                yield indices, exc
            else:
                yield indices, result
        return
    yield from WorkerPool(simulate, min(jobs, len(work))).run(
        [(indices, spec.canonical_json, spec.scenario.origin) for indices, spec in work]
    )


class WorkerDied(RuntimeError):
    """A worker process ended while it was running a scenario."""


class WorkerError(RuntimeError):
    """A run failed in a worker; the message is "ErrorType: what happened"."""


class WorkerPool:
    """Worker processes that each run one scenario at a time.

    The parent knows which run every worker holds, so a worker that dies (killed, out
    of memory) fails only that run and is replaced. Workers ignore Ctrl-C: the parent
    stops them when it is interrupted. They also die with the parent, even when it is
    killed outright (SIGKILL): Linux's parent-death signal, and a thread in each worker
    that watches the parent for platforms without it.
    """

    def __init__(self, simulate: Simulate, size: int) -> None:
        self.simulate = simulate
        self.size = size
        self.ctx = get_context("spawn")

    def _start(self) -> tuple[Any, Connection]:
        ours, theirs = self.ctx.Pipe()
        proc = self.ctx.Process(
            target=_worker_main, args=(theirs, self.simulate, os.getpid()), daemon=True
        )
        proc.start()
        theirs.close()
        return proc, ours

    def run(
        self, tasks: list[tuple[list[int], str, str]]
    ) -> Iterator[tuple[list[int], tuple[str, str] | Exception]]:
        queue = list(reversed(tasks))
        workers = [self._start() for _ in range(min(self.size, len(tasks)))]
        busy: dict[int, list[int]] = {}  # worker slot -> indices of the run it holds
        try:
            while queue or busy:
                for slot, (proc, conn) in enumerate(workers):
                    if slot not in busy and queue:
                        indices, text, origin = queue.pop()
                        conn.send((text, origin))
                        busy[slot] = indices
                ready = set(
                    wait([workers[s][1] for s in busy] + [workers[s][0].sentinel for s in busy])
                )
                for slot in list(busy):
                    proc, conn = workers[slot]
                    if conn in ready:
                        try:
                            ok, value = conn.recv()
                        except (EOFError, OSError):
                            pass  # the worker died: its sentinel tells how
                        else:
                            indices = busy.pop(slot)
                            yield indices, (value if ok else WorkerError(value))
                            continue
                    if proc.sentinel in ready or not proc.is_alive():
                        proc.join(1)
                        indices = busy.pop(slot)
                        code = proc.exitcode
                        how = (
                            f"signal {-code}" if code is not None and code < 0 else f"status {code}"
                        )
                        yield (
                            indices,
                            WorkerDied(f"the worker process died ({how}) during this run"),
                        )
                        conn.close()
                        workers[slot] = self._start()
        finally:
            for proc, conn in workers:
                if proc.is_alive():
                    proc.kill()
            for proc, conn in workers:
                proc.join(5)
                conn.close()


def _worker_main(conn: Connection, simulate: Simulate, parent: int) -> None:
    """A worker: runs (text, origin) messages until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    while True:
        try:
            text, origin = conn.recv()
        except (EOFError, OSError):
            return
        try:
            message: tuple[bool, Any] = (True, simulate(text, origin))
        except Exception as exc:  # noqa: BLE001 - the parent reports it with the run
            message = (False, f"{type(exc).__name__}: {exc}")
        try:
            conn.send(message)
        except (BrokenPipeError, OSError):
            return


def _die_with_parent(parent: int) -> None:
    """Ends this process when `parent` does, however the parent ends."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent ended before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, name="watch-parent", daemon=True).start()


def default_jobs() -> int:
    return max(1, os.cpu_count() or 1)


def describe(outcome: RunOutcome) -> str:
    """One log line for a finished run: seed, variant, headline numbers, cached or simulated."""
    s = outcome.summary
    variant = " ".join(f"{k}={v}" for k, v in outcome.spec.variant.items())
    how = "cached" if outcome.cached else f"simulated in {s.get('wall_s', 0.0):.2f} s"
    agg = s.get("aggregate_kbps")
    agg_text = f"aggregate {agg:.1f} kbit/s" if isinstance(agg, (int, float)) else ""
    text = f"seed {outcome.spec.seed} {variant} {agg_text} ({how}, run {outcome.run_id[:12]})"
    return " ".join(text.split())
