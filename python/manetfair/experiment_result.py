"""What a reproduction holds of one experiment (kept apart from `reproduce`, so that
the figures and the report read results without importing the runner behind them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from manetfair import claims as claims_mod

if TYPE_CHECKING:
    from manetfair.experiments import Experiment
    from manetfair.runner import RunOutcome


@dataclass
class ExperimentResult:
    """One experiment of a reproduction: its runs, its claims' verdicts, and what was
    drawn of it (`reproduce.reproduce` fills it; `plots` and `report` read it)."""

    experiment: Experiment
    available: bool
    reason: str = ""
    quick: bool = False
    outcomes: list[RunOutcome] = field(default_factory=list)
    verdicts: list[claims_mod.Verdict] = field(default_factory=list)
    # run id -> traces, when the claims or figure use them: only the entries they read
    # (trace_roots), and only until the figure is drawn in a worker
    traces: dict[str, Any] = field(default_factory=dict)
    reception: str = "threshold"  # radio.reception of every run (docs/models.md)
    # `platform` of every run: the experiment's own (its paper's), unless --platform
    # chose the other one (docs/models.md)
    platform: str = ""
    # (figure, topology) drawn into the batch's plot folder; None: not drawn yet
    drawn: tuple[bool, ...] | None = None

    @property
    def file_stem(self) -> str:
        """The report's name for this experiment's files: its id, plus "-sinr" etc.
        for another reception model (report_reception.suffix)."""
        from manetfair.report_reception import suffix

        return self.experiment.id + suffix(self.reception) + self.platform_suffix

    @property
    def own_platform(self) -> bool:
        """Whether the runs follow the platform of the experiment's paper."""
        return self.platform in ("", self.experiment.platform)

    @property
    def platform_suffix(self) -> str:
        """ "-ns2" or "-standard" for runs on the other platform than the paper's."""
        return "" if self.own_platform else f"-{self.platform}"

    @property
    def runs(self) -> list[claims_mod.Run]:
        return [
            claims_mod.Run(o.spec.variant, o.spec.seed, o.summary, self.traces.get(o.run_id))
            for o in self.outcomes
        ]

    def holds_count(self) -> tuple[int, int]:
        """(claims holding, claims): the paper's claims only, never the controls."""
        counted = [v for v in self.verdicts if v.counted]
        return sum(v.holds for v in counted), len(counted)

    def controls_count(self) -> tuple[int, int]:
        """(controls holding, controls): checks that cannot fail by construction."""
        controls = [v for v in self.verdicts if not v.counted]
        return sum(v.holds for v in controls), len(controls)

    @property
    def other_platform(self) -> str:
        """The platform the runs did not follow: "standard" after "ns2" and back."""
        return "standard" if (self.platform or self.experiment.platform) == "ns2" else "ns2"
