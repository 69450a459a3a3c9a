"""Runs batches of scenarios: served from the results store when already there,
otherwise simulated (in worker processes when `jobs` > 1) and stored one by one.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from multiprocessing import get_context
from typing import Any, Callable

from manetfair.scenario import Scenario, hash_canonical
from manetfair.store import ResultsStore

# (scenario JSON text, origin) -> (summary JSON, traces JSON)
Simulate = Callable[[str, str], tuple[str, str]]


def simulate_with_core(text: str, origin: str) -> tuple[str, str]:
    """Runs one scenario in the native core (in whichever process calls it)."""
    from manetfair import _core

    return _core.run_scenario(text, "json", origin)


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

    def prepare(self) -> RunSpec:
        """Validates the scenario in the core and computes its hash (raises ScenarioError)."""
        if not self.scenario_hash:
            self.canonical_json = self.scenario.canonical_json()
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
) -> list[RunOutcome]:
    """Obtains every spec's run, in the order given.

    Runs already in the store (same scenario hash, seed and code version) are not
    simulated again. Each simulated run is committed as soon as it returns, so an
    interrupted batch resumes where it stopped. `on_done(outcome, done, total)` is
    called in the calling process after each run, cached or not.
    """
    specs = _with_throttle_references(list(specs), store, jobs, simulate)
    specs = [s.prepare() for s in specs]
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
    for indices, result in _simulate_all(work, simulate, jobs):
        if isinstance(result, Exception):
            failures.append(RunFailure(specs[indices[0]], f"{type(result).__name__}: {result}"))
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
        spec = specs[i]
        out[i] = RunSpec(sc, spec.seed, spec.experiment_id, spec.variant, spec.parameters)
    return out


def _simulate_all(
    work: list[tuple[list[int], RunSpec]], simulate: Simulate, jobs: int
) -> Iterator[tuple[list[int], tuple[str, str] | Exception]]:
    """Yields each piece of work's (summary, traces), or the exception it raised, as it
    finishes: here when `jobs` is 1, else in `jobs` spawned worker processes."""
    if jobs <= 1 or len(work) <= 1:
        for indices, spec in work:
            try:
                result = simulate(spec.scenario.to_json(), spec.scenario.origin)
            except Exception as exc:  # noqa: BLE001 - a failed run must not lose the others
                yield indices, exc
            else:
                yield indices, result
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
        futures = {
            pool.submit(simulate, spec.scenario.to_json(), spec.scenario.origin): indices
            for indices, spec in work
        }
        try:
            for fut in as_completed(futures):
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - as above
                    yield futures[fut], exc
                else:
                    yield futures[fut], result
        finally:
            for fut in futures:
                fut.cancel()


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
