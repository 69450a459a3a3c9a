"""Scenarios as the front door sees them: loaded from TOML, edited as dicts, hashed.

A scenario crosses into the native core once, as JSON text; everything here is
about building that text: reading a file or a TOML string, applying dotted-key
overrides (`--param mac.queue=red`, `flow.*.rate_kbps=400`), fixing the seed and
duration, and naming the result by the SHA-256 of the core's canonical JSON.
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Union

from manetfair.errors import InputError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on Python < 3.11
    import tomli as tomllib


@dataclass
class Scenario:
    """A scenario as nested dicts and lists (the scenario file's keys), with its origin.

    `origin` names where it came from (a path, or "<scenario>") so that the core's
    error messages can point at it. `source_text` is the TOML it was read from: while
    `data` still says what that text says (apart from seed and duration), the core is
    given the text itself, so its messages cite the file's own lines and columns.
    """

    data: dict[str, Any]
    origin: str = "<scenario>"
    source_text: str | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> Scenario:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(f"{p}: no such scenario file") from None
        except IsADirectoryError:
            raise InputError(f"{p}: is a directory, not a scenario file") from None
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: not a TOML scenario file (not UTF-8 text: {exc})") from None
        except OSError as exc:
            raise InputError(f"{p}: cannot read the scenario file ({exc.strerror})") from None
        return cls.from_toml(text, origin=str(p))

    @classmethod
    def from_toml(cls, text: str, origin: str = "<scenario>") -> Scenario:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise InputError(f"{origin}: not valid TOML: {exc}") from None
        return cls(data, origin, text)

    def copy(self) -> Scenario:
        return Scenario(copy.deepcopy(self.data), self.origin, self.source_text)

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A copy with each dotted key of `overrides` set (see `set_path`)."""
        out = self.copy()
        for key, value in overrides.items():
            set_path(out.data, key, value, origin=self.origin)
        return out

    def with_run(self, seed: int | None = None, duration_s: float | None = None) -> Scenario:
        """A copy with the top-level `seed` and `duration_s` replaced where given."""
        out = self.copy()
        if seed is not None:
            out.data["seed"] = int(seed)
        if duration_s is not None:
            out.data["duration_s"] = float(duration_s)
        return out

    def to_json(self) -> str:
        return json.dumps(self.data, sort_keys=True)

    def core_input(self) -> tuple[str, str, dict[str, Any]]:
        """(text, fmt, seed/duration keyword arguments) to hand this scenario to the core.

        The source TOML when `data` differs from it at most in seed and duration (given
        as keyword arguments), else JSON of `data`.
        """
        if self.source_text is not None:
            base = tomllib.loads(self.source_text)
            run_keys = ("seed", "duration_s")
            rest = {k: v for k, v in self.data.items() if k not in run_keys}
            if rest == {k: v for k, v in base.items() if k not in run_keys} and all(
                k in self.data or k not in base for k in run_keys
            ):
                kwargs = {
                    k: self.data[k]
                    for k in run_keys
                    if k in self.data and self.data[k] != base.get(k)
                }
                return self.source_text, "toml", kwargs
        return self.to_json(), "json", {}

    def canonical_json(self) -> str:
        """The core's canonical JSON of this scenario with every default filled in.

        Raises the core's ScenarioError if the scenario is not valid.
        """
        return str(self._call_core("check_scenario"))

    def run_in_core(
        self,
        progress: Callable[..., None] | None = None,
        pcap: str | os.PathLike[str] | None = None,
        progress_events: bool = False,
        **core_options: Any,
    ) -> tuple[str, str]:
        """Runs the scenario in the native core, in this process: (summary, traces) JSON.

        With `pcap`, every frame put on the air is written to that file.
        """
        extra: dict[str, Any] = {"progress": progress}
        # trace_path, trace_nodes, ..., positions_path (crates/py): only those given.
        extra.update({k: v for k, v in core_options.items() if v is not None})
        if progress_events:
            extra["progress_events"] = True  # progress(now_s, duration_s, events)
        if pcap is not None:
            extra["pcap_path"] = os.fspath(pcap)
        summary_json, traces_json = self._call_core("run_scenario", **extra)
        return summary_json, traces_json

    def _call_core(self, name: str, **extra: Any) -> Any:
        from manetfair import _core

        text, fmt, kwargs = self.core_input()
        try:
            return getattr(_core, name)(text, fmt, self.origin, **kwargs, **extra)
        except _core.ScenarioError as exc:
            if fmt != "json":
                raise
            # Positions in JSON this module generated would mislead: drop them.
            raise type(exc)(_JSON_POSITION.sub("", str(exc))) from None

    def scenario_hash(self) -> str:
        """SHA-256 (hex) of `canonical_json()`: two scenarios that run alike hash alike."""
        return hash_canonical(self.canonical_json())


_JSON_POSITION = re.compile(r" at line \d+ column \d+$")

ScenarioLike = Union[Scenario, Mapping[str, Any], str, "os.PathLike[str]"]


def hash_canonical(canonical_json: str) -> str:
    return hashlib.sha256(canonical_json.encode("utf-8")).hexdigest()


def load(scenario: ScenarioLike) -> Scenario:
    """Accepts a Scenario, a dict of scenario keys, a path, or TOML text.

    A string is TOML text when it holds a newline or an `=`; otherwise it is a path.
    """
    if isinstance(scenario, Scenario):
        return scenario.copy()
    if isinstance(scenario, Mapping):
        return Scenario(copy.deepcopy(dict(scenario)))
    if isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        return Scenario.from_toml(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.from_file(scenario)
    raise InputError(
        f"a scenario must be a path, TOML text, a dict or a Scenario, not {type(scenario).__name__}"
    )


def parse_value(raw: str) -> Any:
    """Reads one parameter value as a TOML value (1, 2.5, true, "x", [1, 2]);
    anything that is not TOML is taken as a bare string (`red`, `tcp-newreno`)."""
    text = raw.strip()
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def split_values(raw: str) -> list[str]:
    """Splits `v1,v2,...` at the commas that are not inside brackets or quotes."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    current: list[str] = []
    for ch in raw:
        if quote:
            if ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        current.append(ch)
    parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def parse_param(spec: str, *, multi: bool = False) -> tuple[str, list[Any]]:
    """Parses `key.path=value` (or `key.path=v1,v2,...` when `multi`)."""
    key, sep, raw = spec.partition("=")
    key = key.strip()
    if not sep or not key or not raw.strip():
        form = "key.path=v1,v2,..." if multi else "key.path=value"
        raise InputError(f"--param {spec!r}: expected {form}")
    values = [parse_value(v) for v in split_values(raw)] if multi else [parse_value(raw)]
    return key, values


def set_path(data: dict[str, Any], key: str, value: Any, origin: str = "<scenario>") -> None:
    """Sets a dotted key in nested tables, creating tables as needed.

    A segment that is an integer indexes an array of tables (`flow.0.rate_kbps`);
    `*` sets the key in every table of the array (`flow.*.rate_kbps`).
    """
    parts = key.split(".")
    if any(not p for p in parts):
        raise InputError(f"{origin}: parameter key {key!r} has an empty segment")
    _set(data, parts, value, key, origin)


def _set(node: Any, parts: list[str], value: Any, key: str, origin: str) -> None:
    head, rest = parts[0], parts[1:]
    if isinstance(node, list):
        if head == "*":
            targets = list(range(len(node)))
        elif head.isdigit() and int(head) < len(node):
            targets = [int(head)]
        else:
            raise InputError(
                f"{origin}: parameter key {key!r}: {head!r} must be an index below "
                f"{len(node)} or '*' for an array of {len(node)} tables"
            )
        for i in targets:
            if rest:
                _set(node[i], rest, value, key, origin)
            else:
                node[i] = copy.deepcopy(value)
        return
    if not isinstance(node, dict):
        raise InputError(
            f"{origin}: parameter key {key!r}: {head!r} is inside a value, not a table"
        )
    if not rest:
        node[head] = copy.deepcopy(value)
        return
    if head not in node:
        node[head] = {}
    _set(node[head], rest, value, key, origin)
