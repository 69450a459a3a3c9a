"""The one generic runner behind `manetfair reproduce`: runs experiments' sweeps
through the results store, evaluates their claims and shapes docs/contract.md §4 JSON."""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from manetfair import claims as claims_mod
from manetfair import models, throttle
from manetfair.experiment_result import ExperimentResult
from manetfair.experiments import Experiment
from manetfair.runner import (
    BatchClock,
    RunOutcome,
    RunSpec,
    Simulate,
    Task,
    execute,
    simulate_with_core,
)
from manetfair.store import ResultsStore


def platform_specs(
    exp: Experiment, quick: bool, seeds: int | None, reception: str, platform: str
) -> list[RunSpec]:
    """The experiment's runs on `platform` under `reception` (its own settings otherwise)."""
    specs = exp.specs(quick, seeds=seeds)
    changes: dict[str, Any] = {}
    if reception != "threshold":
        changes["radio.reception"] = reception
    if platform != exp.platform:
        changes["platform"] = platform
    if changes:
        for spec in specs:
            spec.scenario = spec.scenario.with_overrides(changes)
            spec.parameters = {**spec.parameters, **changes}
    return specs


def model_evaluator(exp: Experiment, quick: bool) -> Callable[[str, Mapping[str, Any]], float]:
    """`(model, where) -> value`: the model's mean over the variants `where` selects."""
    variants = exp.variants(quick)

    def value(name: str, where: Mapping[str, Any]) -> float:
        chosen = [v for v in variants if claims_mod.matches(v, where)]
        if not chosen:
            return float("nan")
        return statistics.fmean(models.evaluate(name, exp.expand(v).data) for v in chosen)

    return value


def trace_roots(exp: Experiment) -> set[str]:
    """The top-level trace entries that the experiment's claims and figure read (with
    the bins' times): all that is read of its runs' traces. A run's traces are mostly
    per-node series (radio busy, NAV busy and queue shares of every node every second,
    0.8 MB of JSON for a 100-node run of 300 s); claims about TCP's RTT read only
    `tcp`, 6 % of that."""
    from manetfair import plots

    return {
        *claims_mod.TRACE_BINS,
        *claims_mod.trace_roots(exp.claims),
        *plots.trace_roots(exp.figure_spec),
    }


def reproduce(
    experiments: Sequence[Experiment],
    store: ResultsStore,
    *,
    quick: bool = False,
    seeds: int | None = None,
    jobs: int = 1,
    simulate: Simulate = simulate_with_core,
    on_done: Callable[[RunOutcome, int, int], None] | None = None,
    availability: Mapping[str, tuple[bool, str]] | None = None,
    max_memory: int | None = None,
    reception: str = "threshold",
    platform: str | None = None,
    both_platforms: bool = False,
    draw_into: Path | None = None,
    timing: Timing | None = None,
    **options: Any,
) -> list[ExperimentResult]:
    """Runs every available experiment's sweep as one batch (so `jobs` workers stay busy
    across experiments); as soon as all runs of an experiment are stored, evaluates its
    claims and, with `draw_into` (a folder), draws its figure and topology there in
    the same workers while the runs of the next experiments simulate (plots.draw;
    `ExperimentResult.drawn` says what was drawn).

    `reception` other than "threshold" runs every scenario under that reception model
    (`radio.reception`); the experiments' own settings are otherwise unchanged.
    `platform` ("standard" or "ns2") runs every experiment on that platform instead of
    its paper's (`Experiment.platform`). Each verdict also gets its value on the other
    platform when the store holds those runs; `both_platforms` simulates them first.
    `timing` (Timing) records where the time went. `options` (on_start, backend,
    commit) go to `runner.execute`."""
    timing = timing if timing is not None else Timing(jobs=jobs)
    results: list[ExperimentResult] = []
    batch: list[RunSpec] = []
    owners: list[int] = []
    t0 = time.perf_counter()
    for exp in experiments:
        ok, why = (
            availability[exp.id] if availability and exp.id in availability else exp.availability()
        )
        # An experiment that runs both platforms on an axis keeps them.
        on = exp.platform if exp.varies_platform else (platform or exp.platform)
        result = ExperimentResult(exp, ok, why, quick, reception=reception, platform=on)
        results.append(result)
        if ok:
            specs = platform_specs(exp, quick, seeds, reception, on)
            batch.extend(specs)
            owners.extend([len(results) - 1] * len(specs))
    timing.expansion_s += time.perf_counter() - t0
    if both_platforms:
        # The other platform's runs first, into the store, where the verdicts' second
        # values are read from below (their experiment links stay the paper platform's).
        others = [
            spec
            for r in results
            if r.available and not r.experiment.varies_platform
            for spec in platform_specs(r.experiment, quick, seeds, reception, r.other_platform)
        ]
        for spec in others:
            spec.experiment_id = None
        if others:
            execute(
                throttle.complete(others, store, jobs=jobs, simulate=simulate, clock=timing.clock),
                store,
                jobs=jobs,
                simulate=simulate,
                max_memory=max_memory,
                clock=timing.clock,
                backend=options.get("backend"),
            )
    pipeline = _Pipeline(results, owners, store, quick, draw_into, timing)
    execute(
        throttle.complete(batch, store, jobs=jobs, simulate=simulate, clock=timing.clock),
        store,
        jobs=jobs,
        simulate=simulate,
        on_done=on_done,
        experiment_quick=quick,
        max_memory=max_memory,
        follow_up=pipeline,
        clock=timing.clock,
        **options,
    )
    pipeline.check()
    t_other = time.perf_counter()
    known = ns2_values()
    for r in results:
        if r.available and not r.experiment.varies_platform:
            attach_other_platform(r, store, seeds=seeds, max_memory=max_memory)
            attach_ns2_values(r, known)
    timing.claims_s += time.perf_counter() - t_other
    return results


class _NotStored(RuntimeError):
    """A run the other platform's verdicts need is not in the results store."""


def _stored_only(scenario_json: str, origin: str) -> tuple[str, str]:
    raise _NotStored(f"not in the results store: {origin}")


def attach_other_platform(
    result: ExperimentResult,
    store: ResultsStore,
    *,
    seeds: int | None = None,
    max_memory: int | None = None,
) -> bool:
    """Gives each verdict its value on the other platform, from runs already in the
    store (`reproduce --platform <other>` or `--both-platforms` put them there): nothing
    is simulated, so a reproduction on one platform costs no more than before. Returns
    whether every run was found (if not, the verdicts keep `other = None`)."""
    from manetfair.runner import code_version

    exp = result.experiment
    other = result.other_platform
    specs = platform_specs(exp, result.quick, seeds, result.reception, other)
    try:
        # Throttled scenarios take their rate limits from reference runs: stored ones only.
        specs = throttle.complete(specs, store, simulate=_stored_only)
    except Exception:  # noqa: BLE001 - any failure means: the reference runs are not there
        return False
    specs = [s.prepare(max_memory) for s in specs]
    hits = store.lookup_many([(s.scenario_hash, s.seed) for s in specs], code_version())
    if any((s.scenario_hash, s.seed) not in hits for s in specs):
        return False
    runs = []
    needs_traces = claims_mod.uses_traces(exp.claims)
    keep = trace_roots(exp)
    with store.bounded():
        for s in specs:
            hit = hits[(s.scenario_hash, s.seed)]
            traces = store.traces(hit.run_id, keep) if needs_traces else None
            runs.append(claims_mod.Run(s.variant, s.seed, hit.summary, traces))
    verdicts = claims_mod.evaluate(
        exp.runnable_claims(),
        runs,
        exp.variants(result.quick),
        model_evaluator(exp, result.quick),
    )
    for mine, theirs in zip(result.verdicts, verdicts):
        mine.other = claims_mod.OtherPlatform(other, theirs.measured, theirs.holds)
    return True


NS2_VALUES = "ns2-values.toml"


def ns2_values(path: Path | None = None) -> list[dict[str, Any]]:
    """ns-2.35's own values of claims' measures (`experiments/ns2-values.toml`, one
    `[[value]]` per claim: experiment, claim (its `what` as evaluated), value, seeds,
    case, source; written by bench/ns2/claim_values.py); [] when there is no such file."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    from manetfair.experiments import builtin_dir

    path = path if path is not None else builtin_dir() / NS2_VALUES
    if not path.is_file():
        return []
    values = tomllib.loads(path.read_text(encoding="utf-8")).get("value", [])
    return [dict(v) for v in values]


def attach_ns2_values(result: ExperimentResult, known: Sequence[Mapping[str, Any]]) -> None:
    """Gives each verdict ns-2.35's own value where one is known, judged by the claim's
    own test, so that a miss ns-2.35 shares is told from one that is manetfair's alone."""
    exp = result.experiment
    claims = claims_mod.expand_claims(exp.runnable_claims(), exp.variants(result.quick))
    for verdict, claim in zip(result.verdicts, claims):
        for entry in known:
            if entry.get("experiment") == exp.id and entry.get("claim") == verdict.what:
                value = float(entry["value"])
                holds, _ = claims_mod.check(verdict.test, value, verdict.paper, claim)
                verdict.ns2 = claims_mod.Ns2Value(
                    value,
                    str(entry.get("case", "")),
                    str(entry.get("source", "")),
                    holds,
                    str(entry.get("seeds", "")),
                )


@dataclass
class ExperimentTiming:
    """Where one experiment's time went. `wall_s` runs from the start of its first run
    simulated (or, when every run came from the store, of its claims) to the end of its
    plots; `core_s` adds up its runs' time in the core where they ran; `core_share` is
    core_s over the workers' wall time in that span (core_s / wall_s with one worker)."""

    id: str
    runs: int = 0
    simulated: int = 0
    sim_s: float = 0.0
    core_s: float = 0.0
    claims_s: float = 0.0
    plot_s: float = 0.0
    wall_s: float = 0.0
    workers: int = 1
    start: float = 0.0  # time.time()

    @property
    def core_share(self) -> float:
        return self.core_s / (self.wall_s * self.workers) if self.wall_s > 0 else 0.0

    @property
    def sim_per_wall(self) -> float:
        return self.sim_s / self.wall_s if self.wall_s > 0 else 0.0

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "runs": self.runs,
            "simulated": self.simulated,
            "sim_s": round(self.sim_s, 3),
            "wall_s": round(self.wall_s, 3),
            "core_s": round(self.core_s, 3),
            "core_share": round(self.core_share, 4),
            "sim_s_per_wall_s": round(self.sim_per_wall, 2),
            "claims_s": round(self.claims_s, 4),
            "plot_s": round(self.plot_s, 3),
        }


@dataclass
class Timing:
    """Where a reproduction's time went, for the report's footer and `timing.json`
    (never for anything compared between runs: runs, summaries, verdicts, plots).

    Seconds: `expansion_s` (experiments read, variants expanded, scenarios checked
    by the core), `store_s` (look-ups, commits and traces read back, in the main
    process), `claims_s`, `plots_s` (summed where they were drawn), `report_s` (pages
    written), `core_s` (runs, summed where they ran; `core_cpu_s` their CPU time,
    which a loaded machine inflates less), and `wall_s` of the whole command from its
    start (the interpreter's start-up and imports excepted)."""

    jobs: int = 1
    started: float = field(default_factory=time.perf_counter)
    expansion_s: float = 0.0
    claims_s: float = 0.0
    report_s: float = 0.0
    wall_s: float = 0.0
    clock: BatchClock = field(default_factory=BatchClock)
    experiments: list[ExperimentTiming] = field(default_factory=list)

    def stop(self) -> None:
        self.wall_s = time.perf_counter() - self.started

    def as_json(self) -> dict[str, Any]:
        c = self.clock
        wall = self.wall_s
        return {
            "jobs": self.jobs,
            "wall_s": round(wall, 3),
            "runs": sum(e.runs for e in self.experiments),
            # every simulation, the throttle experiments' reference runs included
            "simulated": c.simulated,
            # the experiments' runs served from the store or by an identical run
            "reused": sum(e.runs - e.simulated for e in self.experiments),
            "sim_s": round(c.sim_s, 3),
            "sim_s_per_wall_s": round(c.sim_s / wall, 2) if wall > 0 else 0.0,
            "core_s": round(c.core_s, 3),
            "core_share": round(c.core_s / (wall * self.jobs), 4) if wall > 0 else 0.0,
            "core_cpu_s": round(c.core_cpu_s, 3),
            "plots_cpu_s": round(c.tasks_cpu_s, 3),
            "commits": c.commits,
            "phases": {
                "expansion_s": round(self.expansion_s + c.prepare_s, 3),
                "store_s": round(c.store_s, 3),
                "claims_s": round(self.claims_s, 3),
                "plots_s": round(c.tasks_s, 3),
                "report_s": round(self.report_s, 3),
                "core_s": round(c.core_s, 3),
            },
            "experiments": [e.as_json() for e in self.experiments],
        }


class _Pipeline:
    """The batch's FollowUp: gathers each experiment's runs as they are stored, and
    when the last one is, evaluates its claims and hands its plots to the workers."""

    def __init__(
        self,
        results: list[ExperimentResult],
        owners: list[int],
        store: ResultsStore,
        quick: bool,
        draw_into: Path | None,
        timing: Timing,
    ) -> None:
        self.results = results
        self.owners = owners
        self.store = store
        self.quick = quick
        self.draw_into = draw_into
        self.timing = timing
        self.slots: dict[int, list[RunOutcome | None]] = {}
        self.where: list[int] = []  # spec index -> its place among its experiment's runs
        self.specs_of: dict[int, list[int]] = {}
        for i, owner in enumerate(owners):
            self.specs_of.setdefault(owner, []).append(i)
            self.where.append(len(self.specs_of[owner]) - 1)
        for owner, indices in self.specs_of.items():
            self.slots[owner] = [None] * len(indices)
        self.left = {owner: len(indices) for owner, indices in self.specs_of.items()}
        self.errors: list[str] = []
        workers = max(1, timing.jobs)
        self.exp_timing = {
            owner: ExperimentTiming(results[owner].experiment.id, workers=workers)
            for owner in self.specs_of
        }
        timing.experiments = [self.exp_timing[o] for o in sorted(self.exp_timing)]

    def stored(self, outcomes: list[tuple[int, RunOutcome]]) -> list[Task]:
        tasks: list[Task] = []
        for i, outcome in outcomes:
            owner = self.owners[i]
            self.slots[owner][self.where[i]] = outcome
            self.left[owner] -= 1
            if self.left[owner] == 0:
                tasks += self._complete(owner)
        return tasks

    def _complete(self, owner: int) -> list[Task]:
        result = self.results[owner]
        result.outcomes = [o for o in self.slots[owner] if o is not None]
        et = self.exp_timing[owner]
        clock = self.timing.clock
        ran = [o for o in result.outcomes if not o.cached]
        et.runs = len(result.outcomes)
        et.simulated = len(ran)
        et.core_s = sum(o.core_s for o in ran)
        et.sim_s = sum(float(o.summary.get("duration_s", 0.0)) for o in ran)
        et.start = min((o.started for o in ran), default=time.time())
        t0 = time.perf_counter()
        exp = result.experiment
        if claims_mod.uses_traces([exp.claims, exp.figure_spec]):
            t_store = time.perf_counter()
            keep = trace_roots(exp)
            with self.store.bounded():
                result.traces = {
                    run_id: self.store.traces(run_id, keep)
                    for run_id in dict.fromkeys(o.run_id for o in result.outcomes)
                }
            clock.store_s += time.perf_counter() - t_store
            t0 += time.perf_counter() - t_store
        result.verdicts = claims_mod.evaluate(
            exp.runnable_claims(),
            result.runs,
            exp.variants(self.quick),
            model_evaluator(exp, self.quick),
        )
        for v in result.verdicts:
            v.platform = result.platform or exp.platform
        et.claims_s = time.perf_counter() - t0
        self.timing.claims_s += et.claims_s
        if self.draw_into is None:
            self._done(owner)
            return []
        from manetfair import plots

        return [Task(owner, plots.draw, (result, self.draw_into, result.file_stem))]

    def finished(self, task: Task, value: Any, seconds: float) -> list[Task]:
        owner = int(task.key)
        if isinstance(value, BaseException):
            self.errors.append(
                f"{self.results[owner].experiment.id}: drawing its plots failed: "
                f"{type(value).__name__}: {value}"
            )
        else:
            self.results[owner].drawn = tuple(value)
            # The report moves the plots drawn into place: nothing reads the traces again.
            self.results[owner].traces = {}
        self.exp_timing[owner].plot_s = seconds
        self._done(owner)
        return []

    def _done(self, owner: int) -> None:
        et = self.exp_timing[owner]
        et.wall_s = max(0.0, time.time() - et.start)

    def check(self) -> None:
        """Raises if a plot could not be drawn (as drawing it here would have)."""
        if self.errors:
            raise RuntimeError("; ".join(self.errors))


def to_json(results: Sequence[ExperimentResult]) -> dict[str, Any]:
    """docs/contract.md §4: every experiment with every run's whole summary and its claims.

    A run's `variant` is the scenario settings its variant changes (dotted keys, as
    `{"mac.queue": "nred", "nred.max_p": 0.14}`; `layout.*` keys are the experiment's
    layout parameters), so that the run can be rebuilt from the JSON alone; `axes` maps
    the experiment's axis names to the run's values (what claims' `where` select) and
    `label` says the same in words.

    Fields beyond the contract: title, figure, description, available, reason, quick,
    counts (claims holding and claims, controls excluded; controls; calibrated),
    and per claim the quote (the paper's sentence), test, tolerance, relative
    deviation, the axes it is about and whether it tests a direction only;
    `missing_arms` (axis values not run yet, with the reason), `refused_arms` (axis
    values the stack refuses, with the core's reason) and `pending_claims` (claims
    about the missing arms, not evaluated, with their quotes).
    """
    out = []
    for r in results:
        exp = r.experiment
        out.append(
            {
                "id": exp.id,
                "paper": exp.paper,
                "title": exp.title,
                "figure": exp.figure,
                "description": exp.description,
                "available": r.available,
                "reason": r.reason if not r.available else "",
                "quick": r.quick,
                "reception": r.reception,
                "platform": r.platform or exp.platform,
                "paper_platform": exp.platform,
                "runs": [
                    {
                        "variant": o.spec.parameters,
                        "axes": o.spec.variant,
                        "label": ", ".join(f"{k} = {v}" for k, v in o.spec.variant.items()),
                        "seed": o.spec.seed,
                        "run_id": o.run_id,
                        "cached": o.cached,
                        "summary": o.summary,
                    }
                    for o in r.outcomes
                ],
                "claims": [v.as_json() for v in r.verdicts],
                # claims holding and claims, controls excluded; controls apart
                "counts": {
                    "hold": r.holds_count()[0],
                    "claims": r.holds_count()[1],
                    "controls": r.controls_count()[1],
                    "calibrated": sum(bool(v.calibrated) for v in r.verdicts if v.counted),
                },
                "missing_arms": [
                    {"axis": a, "value": v, "reason": why} for a, v, why in exp.missing_arms()
                ],
                "refused_arms": [
                    {"axis": a, "value": v, "reason": why} for a, v, why in exp.refused_arms()
                ],
                "pending_claims": [
                    {
                        "what": str(c["what"]),
                        "quote": " ".join(str(c.get("quote", "")).split()),
                        "paper": c["paper"],
                        "reason": why,
                    }
                    for c, why in exp.pending_claims()
                ],
            }
        )
    return {"experiments": out}
