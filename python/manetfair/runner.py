"""Runs batches of scenarios: served from the results store when already there,
otherwise simulated (in worker processes when `jobs` > 1) and stored in groups, one
transaction per group of runs that finished close together (CommitPolicy).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Protocol

from manetfair.errors import InputError
from manetfair.scenario import Scenario, hash_canonical
from manetfair.store import Link, NewRun, ResultsStore

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
    from manetfair import _core

    digest = "unknown"
    module_file = getattr(_core, "__file__", None)
    if module_file and os.path.isfile(module_file):
        h = hashlib.sha256()
        with open(module_file, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        digest = h.hexdigest()[:12]
    return f"{_core.version()}+{digest}"


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
    # Where the run was simulated now: when it started (time.time()) and its seconds in
    # the core. Timing only: never part of a result.
    started: float = 0.0
    core_s: float = 0.0


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


@dataclass
class Task:
    """Work other than a simulation that a batch runs in its workers, beside the runs
    (a reproduction's plots): `fn(*args)`, where `fn` is a module-level function and
    `args` can be pickled; `key` tells the caller which task finished."""

    key: Any
    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()


class FollowUp(Protocol):
    """What a batch does with its runs as they are stored: `stored` gets the (spec
    index, outcome) pairs of each committed group (first the runs served from the
    store) and returns tasks to run; `finished` gets each task's value (or the error
    it raised) and the seconds it took, and may return more tasks."""

    def stored(self, outcomes: list[tuple[int, RunOutcome]]) -> list[Task]: ...

    def finished(self, task: Task, value: Any, seconds: float) -> list[Task]: ...


@dataclass
class CommitPolicy:
    """When the finished runs a batch holds are committed to the store, all in one
    transaction.

    A run is committed at most `delay` seconds after it finished, where `delay` is
    `min_delay_s`, or `cost_factor` times as long as the last commit took when that is
    longer (a large store takes longer to write), capped at `max_delay_s`; also once
    `max_runs` are waiting, and at once after a run that took `delay` or longer (the
    next ones are likely as long). Only committed runs are reported finished, so a
    batch that is killed outright (SIGKILL, power loss) loses at most the runs that
    finished in the last `delay` seconds, and never one it reported; Ctrl-C and
    SIGTERM commit them before stopping.

    The cap is a minute, not seconds: DuckDB's checkpoint at each commit rewrites the
    `series` table's last row group, which in a store of schema 2 holds every run
    until 122,880 are stored, so a commit's cost grows with the store (schema 3
    stores a row per series: a row group is 122,880 series, some 400 runs of 100
    nodes). With a 5 s cap a full reproduction's
    commits reached 4.5 s each and took 1,345 s of its 47 minutes (bench/RESULTS.md at fe6291b,
    "A full reproduction, timed end to end"); letting the delay follow `cost_factor`
    keeps the commits near a tenth of the time.
    """

    min_delay_s: float = 1.0
    max_delay_s: float = 60.0
    cost_factor: float = 10.0
    max_runs: int = 200


@dataclass
class BatchClock:
    """Where a batch's time went, in seconds: the core (measured around each run where
    it ran, summed), the simulated seconds of those runs, the results store (look-ups
    and commits, in this process), the scenarios' expansion and validation, and the
    follow-up tasks (summed where they ran). Shared by the batches of one command."""

    core_s: float = 0.0
    core_cpu_s: float = 0.0  # the same runs' CPU time, which the machine's load inflates less
    sim_s: float = 0.0
    simulated: int = 0
    store_s: float = 0.0
    commits: int = 0
    prepare_s: float = 0.0
    tasks_s: float = 0.0
    tasks_cpu_s: float = 0.0


class _Pending:
    """Finished runs not yet committed, and when to commit them (CommitPolicy)."""

    def __init__(self, policy: CommitPolicy) -> None:
        self.policy = policy
        # (indices, summary JSON, traces JSON, started, core seconds)
        self.items: list[tuple[list[int], str, str, float, float]] = []
        self.oldest = 0.0
        self.last_commit_s = 0.0
        self.last_run_s = 0.0

    def delay(self) -> float:
        p = self.policy
        return min(p.max_delay_s, max(p.min_delay_s, p.cost_factor * self.last_commit_s))

    def add(
        self, indices: list[int], result: tuple[str, str], started: float, seconds: float
    ) -> None:
        if not self.items:
            self.oldest = time.monotonic()
        self.items.append((indices, result[0], result[1], started, seconds))
        self.last_run_s = seconds

    def due(self) -> bool:
        if not self.items:
            return False
        delay = self.delay()
        return (
            len(self.items) >= self.policy.max_runs
            or time.monotonic() - self.oldest >= delay
            or self.last_run_s >= delay
        )

    def wait_s(self) -> float | None:
        """Seconds until the waiting runs are due (None: nothing waits)."""
        if not self.items:
            return None
        return max(0.0, self.oldest + self.delay() - time.monotonic())


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
    follow_up: FollowUp | None = None,
    commit: CommitPolicy | None = None,
    clock: BatchClock | None = None,
) -> list[RunOutcome]:
    """Obtains every spec's run, in the order given.

    Runs already in the store (same scenario hash, seed and code version) are not
    simulated again. Simulated runs are committed in groups, one transaction per group
    (`commit`, CommitPolicy), so an interrupted batch resumes where it stopped.
    `on_done(outcome, done, total)` is called in the calling process after each run is
    stored or found, cached or not; `on_start(specs)` once with the runs that will be
    simulated. `backend` (e.g. a Ray cluster) runs them instead of local worker
    processes. `follow_up` (FollowUp) receives the runs as they are stored and gives
    tasks to run in the same workers, before the runs still waiting; the batch ends
    when they are done too. `clock` (BatchClock) adds up where the time went. A batch
    of no runs is refused: it is always a mistake in the sweep that made it.

    The runner knows no remedy: specs of ingress-throttled scenarios get their
    reference throughputs from `throttle.complete` before they come here.
    """
    clock = clock if clock is not None else BatchClock()
    started = time.perf_counter()
    specs = [s.prepare(max_memory) for s in specs]
    clock.prepare_s += time.perf_counter() - started
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
        done += 1
        if on_done is not None:
            on_done(outcome, done, total)

    def link_of(spec: RunSpec) -> list[tuple[str, Mapping[str, Any], int, bool]]:
        if spec.experiment_id is None:
            return []
        return [(spec.experiment_id, spec.variant, spec.seed, experiment_quick)]

    pending: dict[tuple[str, int], list[int]] = {}
    cached: list[tuple[int, RunOutcome]] = []
    t0 = time.perf_counter()
    with store.session():
        hits = store.lookup_many([(s.scenario_hash, s.seed) for s in specs], version)
        links: list[Link] = []
        for i, spec in enumerate(specs):
            hit = hits.get((spec.scenario_hash, spec.seed))
            if hit is not None:
                cached.append((i, RunOutcome(spec, hit.run_id, hit.summary, cached=True)))
                links += [(e, v, s, hit.run_id, q) for e, v, s, q in link_of(spec)]
            else:
                pending.setdefault((spec.scenario_hash, spec.seed), []).append(i)
        store.link_missing(links)
    clock.store_s += time.perf_counter() - t0
    for i, outcome in cached:
        finish(i, outcome)

    failures: list[RunFailure] = []
    waiting = _Pending(commit or CommitPolicy())

    def flush(follow: bool = True) -> list[Task]:
        """Commits the waiting runs; reports them; returns the follow-up's tasks."""
        if not waiting.items:
            return []
        t0 = time.perf_counter()
        items, waiting.items = waiting.items, []
        rows = []
        for indices, summary_json, traces_json, _, _ in items:
            first = specs[indices[0]]
            rows.append(
                NewRun(
                    scenario_hash=first.scenario_hash,
                    seed=first.seed,
                    code_version=version,
                    scenario_json=first.canonical_json,
                    summary_json=summary_json,
                    traces_json=traces_json,
                    experiment_id=first.experiment_id,
                    variant=first.variant if first.experiment_id is not None else None,
                    parameters=first.parameters,
                    links=[link for i in indices for link in link_of(specs[i])],
                )
            )
        try:
            ids = store.insert_many(rows)
        except BaseException:
            waiting.items = items + waiting.items  # not stored: not reported either
            raise
        finally:
            waiting.last_commit_s = time.perf_counter() - t0
            clock.store_s += waiting.last_commit_s
            clock.commits += 1
        stored: list[tuple[int, RunOutcome]] = []
        for (indices, summary_json, _, started, seconds), run_id in zip(items, ids):
            summary = json.loads(summary_json)
            duration = summary.get("duration_s")
            clock.sim_s += float(duration) if isinstance(duration, (int, float)) else 0.0
            for n, i in enumerate(indices):
                outcome = RunOutcome(specs[i], run_id, summary, cached=n > 0)
                if n == 0:
                    outcome.started, outcome.core_s = started, seconds
                finish(i, outcome)
                stored.append((i, outcome))
        return follow_up.stored(stored) if follow_up is not None and follow else []

    work = [(indices, specs[indices[0]]) for indices in pending.values()]
    if on_start is not None:
        on_start([spec for _, spec in work])
    source: _Source
    if backend is not None:
        source = _BackendSource(backend, work, simulate)
    elif jobs > 1 and (len(work) > 1 or follow_up is not None):
        source = WorkerPool(simulate, jobs if follow_up is not None else min(jobs, len(work)))
        source.add_runs(work)
    else:
        source = _SerialSource(work, simulate)
    if follow_up is not None:
        source.add_tasks(follow_up.stored(cached))
    finished_cleanly = False
    try:
        while True:
            with contextlib.closing(source.events(waiting.wait_s)) as events:
                for event in events:
                    if isinstance(event, RunDone):
                        if isinstance(event.result, Exception):
                            why = (
                                str(event.result)
                                if isinstance(event.result, WorkerError)
                                else f"{type(event.result).__name__}: {event.result}"
                            )
                            failures.append(RunFailure(specs[event.indices[0]], why))
                        else:
                            clock.core_s += event.seconds
                            clock.core_cpu_s += event.cpu_s
                            clock.simulated += 1
                            waiting.add(event.indices, event.result, event.started, event.seconds)
                    elif isinstance(event, TaskDone):
                        clock.tasks_s += event.seconds
                        clock.tasks_cpu_s += event.cpu_s
                        assert follow_up is not None
                        source.add_tasks(follow_up.finished(event.task, event.value, event.seconds))
                    if waiting.due() or (waiting.items and source.idle()):
                        source.add_tasks(flush())
            if not waiting.items:
                break
            source.add_tasks(flush())
        finished_cleanly = True
    finally:
        if not finished_cleanly and waiting.items:
            # Interrupted (Ctrl-C, SIGTERM, a failing follow-up): keep what finished.
            with contextlib.suppress(Exception):
                flush(follow=False)
    outcomes = [r for r in results if r is not None]
    if failures:
        raise BatchError(failures, outcomes)
    return outcomes


@dataclass
class RunDone:
    """A run came back: (summary JSON, traces JSON) or the error; when it started
    (time.time() where it ran) and how long the core took."""

    indices: list[int]
    result: tuple[str, str] | Exception
    started: float = 0.0
    seconds: float = 0.0
    cpu_s: float = 0.0


@dataclass
class TaskDone:
    task: Task
    value: Any
    seconds: float = 0.0
    cpu_s: float = 0.0


@dataclass
class Tick:
    """Nothing finished for a while: a chance to commit what waits."""


class _Source(Protocol):
    def add_tasks(self, tasks: list[Task]) -> None: ...

    def idle(self) -> bool: ...

    def events(self, wait_s: Callable[[], float | None]) -> Generator[Any, None, None]:
        """RunDone, TaskDone and Tick events as they come: a generator, which the batch
        closes when it stops early (an error, Ctrl-C) so the source lets go of its work."""
        ...


def _timed(fn: Callable[..., Any], *args: Any) -> tuple[bool, Any, float, float, float]:
    """(ok, value or error, start time.time(), wall seconds, CPU seconds of this process)
    of `fn(*args)`."""
    started = time.time()
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        value = fn(*args)
    except Exception as exc:  # noqa: BLE001 - the caller reports it with the run
        return False, exc, started, time.perf_counter() - t0, time.process_time() - c0
    return True, value, started, time.perf_counter() - t0, time.process_time() - c0


class _SerialSource:
    """Runs and tasks one after the other in this process; tasks first."""

    def __init__(self, work: list[tuple[list[int], RunSpec]], simulate: Simulate) -> None:
        self.work = deque(work)
        self.tasks: deque[Task] = deque()
        self.simulate = simulate

    def add_tasks(self, tasks: list[Task]) -> None:
        self.tasks.extendleft(reversed(tasks))

    def idle(self) -> bool:
        return not self.work and not self.tasks

    def events(self, wait_s: Callable[[], float | None]) -> Generator[Any, None, None]:
        while self.tasks or self.work:
            if self.tasks:
                task = self.tasks.popleft()
                _, value, _, seconds, cpu = _timed(task.fn, *task.args)
                yield TaskDone(task, value, seconds, cpu)
                continue
            indices, spec = self.work.popleft()
            _, value, started, seconds, cpu = _timed(
                self.simulate, spec.canonical_json, spec.scenario.origin
            )
            yield RunDone(indices, value, started, seconds, cpu)


class _BackendSource(_SerialSource):
    """Runs on a Backend (a cluster); tasks in this process between its results."""

    def __init__(
        self, backend: Backend, work: list[tuple[list[int], RunSpec]], simulate: Simulate
    ) -> None:
        super().__init__([], simulate)
        self.backend = backend
        self.remote = work
        self.running = False

    def idle(self) -> bool:
        return not self.running and not self.tasks

    def events(self, wait_s: Callable[[], float | None]) -> Generator[Any, None, None]:
        self.running = bool(self.remote)
        stream = self.backend.simulate_all(self.remote, self.simulate) if self.remote else None
        try:
            if stream is not None:
                for indices, result in stream:
                    started = time.time()
                    seconds = 0.0
                    if not isinstance(result, Exception):
                        wall = json.loads(result[0]).get("wall_s", 0.0)
                        seconds = float(wall) if isinstance(wall, (int, float)) else 0.0
                    yield RunDone(indices, result, started - seconds, seconds)
                    while self.tasks:
                        yield from super().events(wait_s)
        finally:
            self.running = False
            self.remote = []
        yield from super().events(wait_s)


class WorkerDied(RuntimeError):
    """A worker process ended while it was running a scenario."""


class WorkerError(RuntimeError):
    """A run failed in a worker; the message is "ErrorType: what happened"."""


class WorkerPool:
    """Worker processes that each run one scenario (or one task) at a time.

    The parent knows what every worker holds, so a worker that dies (killed, out of
    memory) fails only that run and is replaced. Workers ignore Ctrl-C: the parent
    stops them when it is interrupted. They also die with the parent, even when it is
    killed outright (SIGKILL): Linux's parent-death signal, and a thread in each worker
    that watches the parent for platforms without it. Tasks added while the pool runs
    go before the runs still waiting. Workers start when there is work for them.

    The canonical JSON the core checked is what runs, so a run is exactly the scenario
    its hash names (and files it read, such as an ns-2 movement file, are inside it).
    """

    def __init__(self, simulate: Simulate, size: int) -> None:
        self.simulate = simulate
        self.size = max(1, size)
        self.ctx = get_context("spawn")
        # ("run", indices, text, origin) or ("task", Task), taken from the left
        self.queue: deque[tuple[Any, ...]] = deque()
        self._busy: dict[int, tuple[Any, ...]] = {}  # worker slot -> the item it holds

    def add_runs(self, work: list[tuple[list[int], RunSpec]]) -> None:
        self.queue.extend(
            ("run", indices, spec.canonical_json, spec.scenario.origin) for indices, spec in work
        )

    def add_tasks(self, tasks: list[Task]) -> None:
        self.queue.extendleft(("task", t) for t in reversed(tasks))

    def idle(self) -> bool:
        return not self.queue and not self._busy

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
        """Runs (indices, scenario text, origin) items; yields (indices, result or error)."""
        self.queue.extend(("run", indices, text, origin) for indices, text, origin in tasks)
        for event in self.events(lambda: None):
            if isinstance(event, RunDone):
                yield event.indices, event.result

    def events(self, wait_s: Callable[[], float | None]) -> Generator[Any, None, None]:
        """Yields RunDone and TaskDone as work finishes, and Tick when nothing did
        within `wait_s()` seconds (None: wait as long as it takes)."""
        workers: list[tuple[Any, Connection]] = []
        busy = self._busy
        try:
            while self.queue or busy:
                for slot in range(self.size):
                    if not self.queue:
                        break
                    if slot >= len(workers):
                        workers.append(self._start())
                    if slot in busy:
                        continue
                    item = self.queue.popleft()
                    conn = workers[slot][1]
                    if item[0] == "run":
                        conn.send(("run", item[2], item[3]))
                    else:
                        conn.send(("task", item[1].fn, item[1].args))
                    busy[slot] = item
                handles = [workers[s][1] for s in busy] + [workers[s][0].sentinel for s in busy]
                ready = set(wait(handles, timeout=wait_s()))
                if not ready:
                    yield Tick()
                    continue
                for slot in list(busy):
                    proc, conn = workers[slot]
                    if conn in ready:
                        try:
                            ok, value, started, seconds, cpu = conn.recv()
                        except (EOFError, OSError):
                            pass  # the worker died: its sentinel tells how
                        else:
                            item = busy.pop(slot)
                            if item[0] == "run":
                                result = value if ok else WorkerError(value)
                                yield RunDone(item[1], result, started, seconds, cpu)
                            else:
                                yield TaskDone(item[1], value, seconds, cpu)
                            continue
                    if proc.sentinel in ready or not proc.is_alive():
                        proc.join(1)
                        item = busy.pop(slot)
                        code = proc.exitcode
                        how = (
                            f"signal {-code}" if code is not None and code < 0 else f"status {code}"
                        )
                        died = WorkerDied(f"the worker process died ({how}) during this run")
                        conn.close()
                        workers[slot] = self._start()
                        if item[0] == "run":
                            yield RunDone(item[1], died)
                        else:
                            yield TaskDone(item[1], died)
        finally:
            busy.clear()
            for proc, conn in workers:
                if proc.is_alive():
                    proc.kill()
            for proc, conn in workers:
                proc.join(5)
                conn.close()


def _worker_main(conn: Connection, simulate: Simulate, parent: int) -> None:
    """A worker: runs ("run", text, origin) and ("task", fn, args) messages until the
    pipe closes; answers (ok, value or error, start time.time(), seconds, CPU seconds)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _die_with_parent(parent)
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message[0] == "run":
            ok, value, started, seconds, cpu = _timed(simulate, message[1], message[2])
            if not ok:
                value = f"{type(value).__name__}: {value}"
        else:
            ok, value, started, seconds, cpu = _timed(message[1], *message[2])
        try:
            conn.send((ok, value, started, seconds, cpu))
        except (BrokenPipeError, OSError):
            return
        except Exception as exc:  # noqa: BLE001 - a value that cannot be pickled
            error = RuntimeError(f"{type(exc).__name__}: {exc}")
            conn.send((False, error, started, seconds, cpu))


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


def describe(outcome: RunOutcome) -> str:
    """One log line for a finished run: seed, variant, headline numbers, cached or simulated."""
    s = outcome.summary
    variant = " ".join(f"{k}={v}" for k, v in outcome.spec.variant.items())
    how = "cached" if outcome.cached else f"simulated in {s.get('wall_s', 0.0):.2f} s"
    agg = s.get("aggregate_kbps")
    agg_text = f"aggregate {agg:.1f} kbit/s" if isinstance(agg, (int, float)) else ""
    text = f"seed {outcome.spec.seed} {variant} {agg_text} ({how}, run {outcome.run_id[:12]})"
    return " ".join(text.split())
