"""The schema of an experiment file (docs/experiments.md, "File format"), checked
with pydantic: each table's keys, their types and ranges, an axis's arms, and the axis
names that quick plans and claims select. Claims' measures are checked where they are
evaluated (manetfair.claims).

Annotations here are evaluated at run time by pydantic, so they use `Optional`,
which every supported Python version evaluates.
"""

import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, Optional

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError
from typing_extensions import Self

from manetfair.errors import InputError


class _Table(BaseModel):
    """A table of an experiment file: TOML's own types (an integer is a valid float),
    and no key the format does not define (a misspelt key is an error, not ignored)."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


Text = Annotated[str, StringConstraints(min_length=1)]


class _PlanTable(_Table):
    seeds: Optional[Annotated[int, Field(ge=1)]] = None
    duration_s: Optional[Annotated[float, Field(gt=0)]] = None
    axes: dict[str, list[Any]] = {}


class _AxisTable(_Table):
    name: Text
    values: Annotated[list[Any], Field(min_length=1)]
    key: Optional[Text] = None
    sets: Optional[dict[str, dict[str, Any]]] = Field(None, alias="set")
    label: str = ""
    unavailable: dict[str, str] = {}
    # Values the stack refuses (a pairing of remedies the layers do not allow), with the
    # core's reason: never run, always listed.
    refused: dict[str, str] = {}

    @model_validator(mode="after")
    def _arms(self) -> Self:
        # An axis of arms whose runnable values set nothing may give `unavailable` alone.
        by_set = self.sets is not None or (self.key is None and bool(self.unavailable))
        if (self.key is not None) == by_set:
            raise ValueError(f"axis {self.name} needs exactly one of key or set")
        values = {str(v) for v in self.values}
        for word, names in (("unavailable", self.unavailable), ("refused", self.refused)):
            for name in names:
                if name not in values:
                    raise ValueError(
                        f"axis {self.name} marks {name!r} {word}, which is not one of its "
                        f"values {self.values}"
                    )
        for value in self.values:
            if by_set and str(value) not in (self.sets or {}) | self.unavailable:
                raise ValueError(f"axis {self.name} has no set table for value {value!r}")
        return self


class _SweepTable(_PlanTable):
    axis: list[_AxisTable] = []
    quick: _PlanTable = _PlanTable()


class _ClaimTable(_Table):
    what: Text
    quote: str = ""
    source: str = ""
    paraphrase: bool = False
    note: str = ""
    where: dict[str, Any] = {}
    for_each: list[str] = []
    for_values: dict[str, list[Any]] = {}
    measured: dict[str, Any]
    paper: Any
    test: Literal["within", "at_least", "at_most", "greater", "less"] = "within"
    rel_tol: Annotated[float, Field(ge=0)] = 0.0
    abs_tol: Annotated[float, Field(ge=0)] = 0.0
    direction_only: bool = False
    # "control": a check that cannot fail by construction, shown but not counted among
    # the paper's claims (docs/experiments.md, "How claims read their papers").
    kind: Literal["claim", "control"] = "claim"
    # Why the verdict holds through a setting chosen to fit the paper, if it does.
    calibrated: str = ""
    # The paper's headline result this claim carries, named as the report's index lists it.
    headline: str = ""

    @field_validator("paper")
    @classmethod
    def _paper(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float, dict)):
            raise PydanticCustomError(
                "paper", 'allowed: a number, or a table of a model { model = "..." }'
            )
        return value


class _PanelTable(_Table):
    """One subplot's keys over the plot's (plots._panels)."""

    y: Optional[dict[str, Any]] = None
    ylabel: Optional[str] = None
    xlabel: Optional[str] = None
    where: Optional[dict[str, Any]] = None


class _PlotTable(_Table):
    """An experiment's `[plot]`: the keys manetfair.plots reads, and no other (a key no
    code draws, as an `ideal` that never appears, is an error, not a silent omission)."""

    kind: Literal["line", "bar", "flows", "nodes", "timeseries", "trace"]
    title: Optional[str] = None
    x: Optional[str] = None
    x_values: Optional[list[Any]] = None
    y: Optional[dict[str, Any]] = None
    series: Optional[str] = None
    series_values: Optional[list[Any]] = None
    xlabel: Optional[str] = None
    ylabel: Optional[str] = None
    where: Optional[dict[str, Any]] = None
    panels: Optional[list[_PanelTable]] = None
    panels_where: Optional[list[dict[str, Any]]] = None
    reference_arm: Any = None
    reference_label: Optional[str] = None
    from_s: Optional[float] = None
    ideal: Optional[list[dict[str, Any]]] = None
    ideal_share: Optional[list[float]] = None
    seed: Optional[int] = None
    phases: Optional[list[Any]] = None
    label: Optional[str] = None
    labels: Optional[list[str]] = None
    trace: Optional[str] = None
    twin_trace: Optional[str] = None
    twin_label: Optional[str] = None
    twin_ylabel: Optional[str] = None
    topology_where: Optional[dict[str, Any]] = None

    @model_validator(mode="after")
    def _ideal(self) -> Self:
        if self.ideal_share is not None and (
            self.ideal is None or len(self.ideal) != len(self.ideal_share)
        ):
            raise ValueError("ideal_share needs ideal, one share per ideal entry")
        if self.ideal is not None and self.kind != "flows":
            raise ValueError(f'ideal bars are drawn by kind = "flows" only, not {self.kind!r}')
        return self


class ExperimentTable(_Table):
    """One experiment's table (docs/experiments.md, "File format")."""

    id: Text
    paper: Text
    paper_title: str = ""
    figure: Text
    flow_names: list[str] = []
    description: Text
    # The simulator the paper ran, whose rules its runs follow (docs/models.md).
    platform: Literal["standard", "ns2"] = "standard"
    reference: str = ""
    notes: str = ""
    available: bool = True
    reason: str = "not yet available"
    scenario: Optional[dict[str, Any]] = None
    scenario_file: Optional[Text] = None
    layout: Optional[dict[str, Any]] = None
    sweep: _SweepTable = _SweepTable()
    plot: Optional[_PlotTable] = None
    claim: list[_ClaimTable] = []

    @model_validator(mode="after")
    def _axis_names(self) -> Self:
        known = [a.name for a in self.sweep.axis]
        for mode, plan in (("sweep", self.sweep), ("sweep.quick", self.sweep.quick)):
            for name in plan.axes:
                if name not in known:
                    raise ValueError(f"{mode}.axes names unknown axis {name!r}; axes: {known}")
        for claim in self.claim:
            for name in [*claim.where, *claim.for_each, *claim.for_values]:
                if name not in known:
                    raise ValueError(
                        f"claim {claim.what!r} selects unknown axis {name!r}; axes: {known}"
                    )
        return self


def _key(loc: Sequence[Any]) -> str:
    """A pydantic error location as the file spells it: sweep.axis[1].values."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else f"{'.' if out else ''}{part}"
    return out


def _allowed(loc: Sequence[Any]) -> list[str]:
    """The keys the table at `loc` may have."""
    model: Any = ExperimentTable
    for part in loc:
        if isinstance(part, str):
            field = model.model_fields.get(part) or next(
                f for f in model.model_fields.values() if f.alias == part
            )
            model = next(
                (
                    t
                    for t in (field.annotation, *typing.get_args(field.annotation))
                    if isinstance(t, type) and issubclass(t, BaseModel)
                ),
                model,
            )
    return [f.alias or name for name, f in model.model_fields.items()]


def check(doc: Mapping[str, Any], where: str) -> ExperimentTable:
    """`doc` as an ExperimentTable, or InputError starting with `where` (the file and
    the experiment) naming each key that is wrong, its value and what is allowed."""
    try:
        return ExperimentTable.model_validate(doc)
    except ValidationError as exc:
        raise _error(exc, where) from None


def _error(exc: ValidationError, where: str) -> InputError:
    """Every problem pydantic found, each naming the key, the value and what is allowed."""
    lines = []
    for err in exc.errors(include_url=False):
        loc = list(err["loc"])
        key = _key(loc) or "the experiment table"
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            allowed = ", ".join(_allowed(loc[:-1]))
            lines.append(f"unknown key {key} = {err['input']!r}; allowed keys: {allowed}")
        elif err["type"] == "missing":
            lines.append(f"{key} is missing (a required key)")
        elif err["type"] == "value_error" and isinstance(err["input"], Mapping):
            lines.append(f"{key}: {msg}" if loc else msg)  # a check across a table's keys
        else:
            lines.append(f"{key} = {err['input']!r}: {msg}")
    return InputError(f"{where}: " + "; ".join(lines))
