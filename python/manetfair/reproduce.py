"""The one generic runner behind `manetfair reproduce`: runs experiments' sweeps
through the results store, evaluates their claims and shapes docs/contract.md §4 JSON."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from manetfair import claims as claims_mod
from manetfair import models
from manetfair.experiments import Experiment
from manetfair.runner import RunOutcome, RunSpec, Simulate, execute, simulate_with_core
from manetfair.store import ResultsStore


@dataclass
class ExperimentResult:
    experiment: Experiment
    available: bool
    reason: str = ""
    quick: bool = False
    outcomes: list[RunOutcome] = field(default_factory=list)
    verdicts: list[claims_mod.Verdict] = field(default_factory=list)
    traces: dict[str, Any] = field(default_factory=dict)  # run id -> traces, when used
    reception: str = "threshold"  # radio.reception of every run (docs/models.md)

    @property
    def runs(self) -> list[claims_mod.Run]:
        return [
            claims_mod.Run(o.spec.variant, o.spec.seed, o.summary, self.traces.get(o.run_id))
            for o in self.outcomes
        ]

    def holds_count(self) -> tuple[int, int]:
        return sum(v.holds for v in self.verdicts), len(self.verdicts)


def model_evaluator(exp: Experiment, quick: bool) -> Callable[[str, Mapping[str, Any]], float]:
    """`(model, where) -> value`: the model's mean over the variants `where` selects."""
    variants = exp.variants(quick)

    def value(name: str, where: Mapping[str, Any]) -> float:
        chosen = [v for v in variants if claims_mod.matches(v, where)]
        if not chosen:
            return float("nan")
        return statistics.fmean(models.evaluate(name, exp.expand(v).data) for v in chosen)

    return value


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
    **options: Any,
) -> list[ExperimentResult]:
    """Runs every available experiment's sweep as one batch (so `jobs` workers stay busy
    across experiments), then evaluates each experiment's claims on its runs.

    `reception` other than "threshold" runs every scenario under that reception model
    (`radio.reception`); the experiments' own settings are otherwise unchanged. `options`
    (on_start, backend) go to `runner.execute`."""
    results: list[ExperimentResult] = []
    batch: list[RunSpec] = []
    owners: list[int] = []
    for exp in experiments:
        ok, why = (
            availability[exp.id] if availability and exp.id in availability else exp.availability()
        )
        result = ExperimentResult(exp, ok, why, quick, reception=reception)
        results.append(result)
        if ok:
            specs = exp.specs(quick, seeds=seeds)
            if reception != "threshold":
                for spec in specs:
                    spec.scenario = spec.scenario.with_overrides({"radio.reception": reception})
                    spec.parameters = {**spec.parameters, "radio.reception": reception}
            batch.extend(specs)
            owners.extend([len(results) - 1] * len(specs))
    outcomes = execute(
        batch,
        store,
        jobs=jobs,
        simulate=simulate,
        on_done=on_done,
        experiment_quick=quick,
        max_memory=max_memory,
        **options,
    )
    for owner, outcome in zip(owners, outcomes):
        results[owner].outcomes.append(outcome)
    for result in results:
        if result.available:
            exp = result.experiment
            if claims_mod.uses_traces([exp.claims, exp.figure_spec]):
                result.traces = {o.run_id: store.traces(o.run_id) for o in result.outcomes}
            result.verdicts = claims_mod.evaluate(
                exp.runnable_claims(), result.runs, exp.variants(quick), model_evaluator(exp, quick)
            )
    return results


def to_json(results: Sequence[ExperimentResult]) -> dict[str, Any]:
    """docs/contract.md §4: every experiment with every run's whole summary and its claims.

    A run's `variant` is the scenario settings its variant changes (dotted keys, as
    `{"mac.queue": "nred", "nred.max_p": 0.14}`; `layout.*` keys are the experiment's
    layout parameters), so that the run can be rebuilt from the JSON alone; `axes` maps
    the experiment's axis names to the run's values (what claims' `where` select) and
    `label` says the same in words.

    Fields beyond the contract: title, figure, description, available, reason, quick,
    and per claim the quote (the paper's sentence), test, tolerance, relative
    deviation, the axes it is about and whether it tests a direction only;
    `missing_arms` (axis values not run yet, with the reason) and `pending_claims`
    (claims about those arms, not evaluated, with their quotes).
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
                "missing_arms": [
                    {"axis": a, "value": v, "reason": why} for a, v, why in exp.missing_arms()
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
