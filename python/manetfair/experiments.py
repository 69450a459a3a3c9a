"""Built-in experiments, read from data files under `experiments/`.

An experiment file (`experiments/<paper>/<id>.toml`, or one file per paper with
an `[[experiment]]` array) gives the experiment's id, paper, figure or table and
one-line description; a scenario template (inline `[scenario]` or
`scenario_file`), optionally a `[layout]`; a `[sweep]` (axes, seeds and durations,
with shorter `[sweep.quick]` ones); a `[figure]` to draw; and `[[claim]]`s: the
paper's numbers, what each supports, and how to measure it from the runs. One
generic runner (`manetfair.reproduce`) serves every experiment. The format is
documented in docs/experiments.md.
"""

from __future__ import annotations

import copy
import itertools
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from manetfair import layouts, schema
from manetfair.errors import InputError
from manetfair.inputs import read_text
from manetfair.runner import RunSpec
from manetfair.scenario import Scenario, set_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXPERIMENTS_ENV = "MANETFAIR_EXPERIMENTS"
# The largest experiment file read (docs/reliability.md): the built-in ones are a few KiB.
MAX_EXPERIMENT_FILE_BYTES = 4 << 20


@dataclass
class Axis:
    """One dimension of a sweep: a name, its values, and how a value edits the scenario.

    Either `key` (a dotted scenario key, or `layout.<param>`) receives the value,
    or `sets[str(value)]` is a table of dotted keys to set for that value.
    `unavailable[str(value)]` says why a value (an arm: a scheme the core does not
    have yet) is not run; the report lists it as missing. `refused[str(value)]` is a
    value the stack will not build (a pairing of remedies its layers do not allow),
    with the core's reason: never run, listed as refused.
    """

    name: str
    values: list[Any]
    key: str | None = None
    sets: dict[str, dict[str, Any]] = field(default_factory=dict)
    label: str = ""
    unavailable: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    def runnable(self, values: Sequence[Any]) -> list[Any]:
        return [v for v in values if str(v) not in self.unavailable and str(v) not in self.refused]

    def overrides(self, value: Any) -> dict[str, Any]:
        if self.key is not None:
            return {self.key: value}
        return dict(self.sets.get(str(value), {}))


@dataclass
class Plan:
    """How many seeds, how long, and which axis values one mode (full or quick) runs."""

    seeds: int
    duration_s: float | None
    axis_values: dict[str, list[Any]] = field(default_factory=dict)


@dataclass
class Experiment:
    id: str
    paper: str
    figure: str
    description: str
    source: Path
    scenario: dict[str, Any] | None = None
    layout: dict[str, Any] | None = None
    axes: list[Axis] = field(default_factory=list)
    full: Plan = field(default_factory=lambda: Plan(1, None))
    quick: Plan = field(default_factory=lambda: Plan(1, None))
    figure_spec: dict[str, Any] = field(default_factory=dict)
    claims: list[dict[str, Any]] = field(default_factory=list)
    declared_unavailable: str | None = None
    reference: str = ""
    notes: str = ""
    paper_title: str = ""  # the paper's short title ("Xu et al. 2003, Neighborhood RED")
    # The platform of the paper's simulator (`platform` of every run unless its scenario
    # sets one): "ns2" for the papers that ran ns-2, "standard" otherwise.
    platform: str = "standard"
    flow_names: list[str] = field(default_factory=list)  # the paper's names of flows 0, 1, ...

    @property
    def title(self) -> str:
        """The paper's short title and the figure, as the report names the experiment."""
        return f"{self.paper_title or self.paper}, {self.figure}"

    def flow_name(self, index: int) -> str:
        """The paper's name of flow `index` (file order), or "flow <index + 1>"."""
        if 0 <= index < len(self.flow_names):
            return self.flow_names[index]
        return f"flow {index + 1}"

    def plan(self, quick: bool) -> Plan:
        return self.quick if quick else self.full

    @property
    def varies_platform(self) -> bool:
        """Whether an axis sets `platform` (the league runs both on one axis): then
        every run keeps its own, whatever `reproduce --platform` asks."""
        return any(
            a.key == "platform" or any("platform" in s for s in a.sets.values()) for a in self.axes
        )

    def variants(self, quick: bool) -> list[dict[str, Any]]:
        """Every combination of runnable axis values in this mode, in axis order."""
        plan = self.plan(quick)
        lists = [a.runnable(plan.axis_values.get(a.name, a.values)) for a in self.axes]
        return [
            dict(zip([a.name for a in self.axes], combo)) for combo in itertools.product(*lists)
        ]

    def overrides(self, variant: Mapping[str, Any]) -> dict[str, Any]:
        """The dotted keys (scenario or `layout.`) that one variant's axis values set."""
        out: dict[str, Any] = {}
        for axis in self.axes:
            out.update(axis.overrides(variant[axis.name]))
        return out

    def expand(self, variant: Mapping[str, Any]) -> Scenario:
        """The scenario of one variant: template, then axis overrides, then the layout."""
        if self.scenario is None:
            raise InputError(f"experiment {self.id} has no scenario template")
        data = copy.deepcopy(self.scenario)
        layout = copy.deepcopy(self.layout) if self.layout is not None else None
        origin = f"{self.source} (experiment {self.id})"
        for key, value in self.overrides(variant).items():
            if key.startswith("layout."):
                if layout is None:
                    raise InputError(f"{origin}: the sweep sets {key} but there is no [layout]")
                set_path(layout, key[len("layout.") :], value, origin)
            else:
                set_path(data, key, value, origin)
        if layout is not None:
            layouts.apply(data, layout, origin)
        data.setdefault("name", self.id)
        if self.platform != "standard":
            # Standard runs keep their scenario, and so their key in the results store.
            data.setdefault("platform", self.platform)
        return Scenario(data, origin)

    def specs(
        self, quick: bool, seeds: int | None = None, duration_s: float | None = None
    ) -> list[RunSpec]:
        """One RunSpec per variant and seed (seeds are 1..N)."""
        plan = self.plan(quick)
        n_seeds = seeds if seeds is not None else plan.seeds
        duration = duration_s if duration_s is not None else plan.duration_s
        out: list[RunSpec] = []
        for variant in self.variants(quick):
            base = self.expand(variant)
            parameters = self.overrides(variant)
            out.extend(
                RunSpec(
                    scenario=base.with_run(seed=seed, duration_s=duration),
                    seed=seed,
                    experiment_id=self.id,
                    variant=dict(variant),
                    parameters=parameters,
                )
                for seed in range(1, n_seeds + 1)
            )
        return out

    def missing_arms(self) -> list[tuple[str, Any, str]]:
        """(axis, value, reason) of every axis value marked unavailable, in file order."""
        return [
            (a.name, v, a.unavailable[str(v)])
            for a in self.axes
            for v in a.values
            if str(v) in a.unavailable
        ]

    def refused_arms(self) -> list[tuple[str, Any, str]]:
        """(axis, value, the core's reason) of every axis value the stack refuses."""
        return [
            (a.name, v, a.refused[str(v)])
            for a in self.axes
            for v in a.values
            if str(v) in a.refused
        ]

    def pending_claims(self) -> list[tuple[dict[str, Any], str]]:
        """Claims that select an unavailable or refused arm, each with the reason it
        cannot run (every claim of an experiment declared unavailable, with its reason)."""
        if self.declared_unavailable is not None:
            return [(c, self.declared_unavailable) for c in self.claims]
        # A claim about a refused arm can never be judged either.
        arms = self.missing_arms() + self.refused_arms()
        reasons = {(a, str(v)): why for a, v, why in arms}
        out = []
        for claim in self.claims:
            hit = [
                f"{name} = {value}: {reasons[(name, str(value))]}"
                for where in _wheres(claim)
                for name, value in where.items()
                if (name, str(value)) in reasons
            ]
            if hit:
                out.append((claim, "; ".join(dict.fromkeys(hit))))
        return out

    def runnable_claims(self) -> list[dict[str, Any]]:
        """The claims that select only arms that can run."""
        pending = [id(c) for c, _ in self.pending_claims()]
        return [c for c in self.claims if id(c) not in pending]

    def availability(self) -> tuple[bool, str]:
        """(available, why not): declared unavailable, every arm unavailable, or a
        variant the core rejects."""
        if self.declared_unavailable is not None:
            return False, self.declared_unavailable
        if self.scenario is None:
            return False, "no scenario template yet"
        if not self.variants(quick=True):
            return False, "; ".join(f"{a} = {v}: {why}" for a, v, why in self.missing_arms())
        from manetfair import _core

        for variant in self.variants(quick=True):
            try:
                self.expand(variant).canonical_json()
            except (_core.ScenarioError, InputError) as exc:
                return False, f"the core does not accept its scenario yet: {exc}"
        return True, ""


def _wheres(spec: Any) -> list[Mapping[str, Any]]:
    """Every `where` table in a claim or measure, at any depth."""
    found: list[Mapping[str, Any]] = []
    if isinstance(spec, Mapping):
        if isinstance(spec.get("where"), Mapping):
            found.append(spec["where"])
        if isinstance(spec.get("across"), str) and isinstance(spec.get("values"), list):
            found.extend({spec["across"]: v} for v in spec["values"])
        for key, value in spec.items():
            if key != "where":
                found.extend(_wheres(value))
    elif isinstance(spec, list):
        for value in spec:
            found.extend(_wheres(value))
    return found


def builtin_dir() -> Path:
    """The experiments that ship inside the package (importlib.resources), wherever
    pip put it: a wheel in site-packages or an editable source tree."""
    return Path(str(resources.files("manetfair") / "experiments"))


def experiments_dir() -> Path:
    """The built-in experiments directory (kept for callers that want one path)."""
    return builtin_dir()


def experiment_dirs() -> list[Path]:
    """The built-in experiments, then each directory listed in `$MANETFAIR_EXPERIMENTS`
    (separated by the platform's path separator, `:` on Unix): a user's own
    experiments beside the built-in ones. A listed directory that is the built-in one
    is read once."""
    dirs = [builtin_dir()]
    seen = {dirs[0].resolve()}
    for entry in os.environ.get(EXPERIMENTS_ENV, "").split(os.pathsep):
        if not entry:
            continue
        path = Path(entry)
        if not path.is_dir():
            raise InputError(
                f"{EXPERIMENTS_ENV}: {entry} is not a directory; it lists directories of "
                "experiment files to add to the built-in ones"
            )
        if path.resolve() not in seen:
            seen.add(path.resolve())
            dirs.append(path)
    return dirs


def load_all(directory: Path | None = None) -> list[Experiment]:
    """Every experiment under `directory` (default: the built-in ones and those of
    `$MANETFAIR_EXPERIMENTS`), sorted by id (ids must be unique)."""
    roots = [directory] if directory is not None else experiment_dirs()
    found: dict[str, Experiment] = {}
    for path in [p for root in roots for p in sorted(root.rglob("*.toml"))]:
        try:
            doc = tomllib.loads(read_text(path, "experiment file", MAX_EXPERIMENT_FILE_BYTES))
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{path}: not valid TOML: {exc}") from None
        if "id" not in doc and "experiment" not in doc:
            continue  # a scenario file referenced by an experiment
        entries = doc.get("experiment", [doc])
        defaults = (
            {k: v for k, v in doc.items() if k != "experiment"} if "experiment" in doc else {}
        )
        for entry in entries:
            merged = {**defaults, **entry}
            if isinstance(defaults.get("scenario"), dict) and isinstance(
                entry.get("scenario"), dict
            ):
                # The file's [scenario] holds the settings its experiments share; an
                # entry's own [experiment.scenario] adds to them and overrides key by
                # key, rather than replacing them whole.
                merged["scenario"] = merge_tables(defaults["scenario"], entry["scenario"])
            exp = parse(merged, path)
            if exp.id in found:
                raise InputError(
                    f"{path}: experiment id {exp.id} also defined in {found[exp.id].source}"
                )
            found[exp.id] = exp
    return [found[k] for k in sorted(found, key=_sort_key)]


def merge_tables(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `over` laid on it: tables are merged key by key, at every depth;
    any other value of `over` (a number, a string, an array) replaces `base`'s."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = merge_tables(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _sort_key(exp_id: str) -> tuple[str, int, str]:
    """Sorts validate-* first, then by paper prefix, figures before tables, by number."""
    prefix, _, rest = exp_id.partition("-")
    digits = "".join(ch for ch in rest if ch.isdigit())
    kind = rest.rstrip("0123456789")
    # The papers' own experiments first, the league that compares them last.
    order = "0" if prefix == "validate" else ("2" if prefix == "league" else "1" + prefix)
    return (order + kind, int(digits) if digits else 0, exp_id)


def get(exp_id: str, directory: Path | None = None) -> Experiment:
    """One experiment by id (InputError naming the id if there is none)."""
    return select(load_all(directory), [exp_id])[0]


def parse(doc: Mapping[str, Any], path: Path) -> Experiment:
    """Builds an Experiment from one experiment's table, checked against
    `manetfair.schema` (InputError naming the file, the key, the value and what is
    allowed)."""
    t = schema.check(doc, f"{path} (experiment {doc.get('id', '?')})")
    scenario: dict[str, Any] | None = None
    if t.scenario is not None:
        scenario = copy.deepcopy(t.scenario)
    elif t.scenario_file is not None:
        scenario = Scenario.from_file(path.parent / t.scenario_file).data
    axes = [
        Axis(
            a.name,
            list(a.values),
            a.key,
            dict(a.sets or {}),
            a.label,
            dict(a.unavailable),
            dict(a.refused),
        )
        for a in t.sweep.axis
    ]
    full = Plan(t.sweep.seeds or 1, t.sweep.duration_s, dict(t.sweep.axes))
    quick = Plan(
        t.sweep.quick.seeds or full.seeds,
        t.sweep.quick.duration_s if t.sweep.quick.duration_s is not None else full.duration_s,
        dict(t.sweep.quick.axes),
    )
    return Experiment(
        id=t.id,
        paper=t.paper,
        figure=t.figure,
        description=t.description,
        source=path,
        scenario=scenario,
        layout=t.layout,
        axes=axes,
        full=full,
        quick=quick,
        # The plot table as written (checked by schema._PlotTable): plots.py reads it.
        figure_spec=dict(doc.get("plot", {})),
        # Claims stay the tables they are: claims.py reads them (and their measures).
        claims=[dict(c) for c in doc.get("claim", [])],
        declared_unavailable=None if t.available else t.reason,
        reference=t.reference,
        notes=t.notes,
        paper_title=t.paper_title,
        platform=t.platform,
        flow_names=t.flow_names,
    )


def select(experiments: Sequence[Experiment], ids: Sequence[str]) -> list[Experiment]:
    """The experiments named by `ids` (in that order, each once however often it is
    named), or InputError for an unknown id. A name that is no id but the prefix of
    some (`league`, `nred`: the part before the first `-`) names all of them, in
    id order."""
    by_id = {e.id: e for e in experiments}
    expanded: list[str] = []
    for name in ids:
        group = [e.id for e in experiments if e.id.partition("-")[0] == name]
        expanded.extend(group if name not in by_id and group else [name])
    ids = list(dict.fromkeys(expanded))
    unknown = [i for i in ids if i not in by_id]
    if unknown:
        raise InputError(
            f"unknown experiment id(s): {', '.join(unknown)}; `manetfair experiments` lists "
            f"the {len(by_id)} known ids"
        )
    return [by_id[i] for i in ids]
