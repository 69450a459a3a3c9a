"""Scenarios as the front door sees them: loaded from TOML, edited as dicts, hashed.

A scenario crosses into the native core once, as JSON text; everything here is
about building that text: reading a file or a TOML string, applying dotted-key
overrides (`--param mac.queue=red`, `flow.*.rate_kbps=400`), fixing the seed and
duration, and naming the result by the SHA-256 of the core's canonical JSON.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Union

from manetfair.errors import InputError

if TYPE_CHECKING:
    from types import ModuleType


# Limits on what the front door accepts before the core sees a scenario (docs/reliability.md).
MAX_SEED = 2**64 - 1
MAX_DEPTH = 32  # nesting of tables and arrays, and segments of a dotted key


class Scenario:
    """A scenario: its TOML text as read, or nested dicts and lists of its keys.

    `origin` names where it came from (a path, or "<scenario>") so that the core's
    error messages can point at it; `base_dir` is the folder that relative paths in it
    (`mobility.ns2_file`) are resolved against. A scenario read from a file is parsed
    once, by the core, unless something asks for `data` (an override, a sweep): until
    then the core gets the text itself, so its messages cite the file's own lines.
    """

    def __init__(
        self,
        data: dict[str, Any] | None = None,
        origin: str = "<scenario>",
        source_text: str | None = None,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self.origin = origin
        self.source_text = source_text
        self.base_dir = os.fspath(base_dir) if base_dir is not None else None
        self._data = data if data is not None or source_text is not None else {}
        # seed / duration_s set on a scenario whose text has not been parsed.
        self._run: dict[str, Any] = {}

    @property
    def data(self) -> dict[str, Any]:
        """The scenario's keys as nested dicts and lists (parsed on first use).

        From then on the dicts, not the text, are what the core is given: a caller may
        change them in place.
        """
        if self._data is None:
            self._data = _parse_toml(self.source_text or "", self.origin)
            self._data.update(self._run)
            self._run = {}
        self.source_text = None
        return self._data

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Scenario):
            return NotImplemented
        return self.origin == other.origin and self.data == other.data

    def __repr__(self) -> str:
        return f"Scenario(origin={self.origin!r})"

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], max_memory: int | None = None) -> Scenario:
        """The scenario in the file `path`, read within the input-file limit of the
        memory budget `max_memory` (manetfair.inputs)."""
        from manetfair.inputs import max_input_bytes, read_text
        from manetfair.output import as_path

        p = as_path(path, "scenario")
        text = read_text(p, "scenario file", max_input_bytes(max_memory))
        return cls(None, str(p), text, base_dir=p.parent)

    def source_files(self) -> list[str]:
        """The files this scenario was read from: its own file (when it came from one)
        and its movement file; outputs must not overwrite them."""
        if self.base_dir is None:
            return []
        files = [self.origin]
        data: Any = self._data
        if data is None and "ns2_file" in (self.source_text or ""):
            try:  # parsed aside: the core keeps the text, and its messages its lines
                data = _parse_toml(self.source_text or "", self.origin)
            except InputError:
                data = None
        mobility = data.get("mobility") if isinstance(data, dict) else None
        ns2 = mobility.get("ns2_file") if isinstance(mobility, dict) else None
        if isinstance(ns2, str) and ns2:
            files.append(os.path.join(self.base_dir, ns2))
        return files

    @classmethod
    def from_toml(cls, text: str, origin: str = "<scenario>") -> Scenario:
        return cls(None, origin, text)

    def copy(self) -> Scenario:
        out = Scenario(copy.deepcopy(self._data), self.origin, self.source_text, self.base_dir)
        out._run = dict(self._run)
        return out

    def with_overrides(self, overrides: Mapping[str, Any]) -> Scenario:
        """A copy with each dotted key of `overrides` set (see `set_path`)."""
        out = self.copy()
        for key, value in overrides.items():
            set_path(out.data, key, value, origin=self.origin)
        return out

    def with_run(self, seed: int | None = None, duration_s: float | None = None) -> Scenario:
        """A copy with the top-level `seed` and `duration_s` replaced where given."""
        out = self.copy()
        run: dict[str, Any] = {}
        if seed is not None:
            run["seed"] = check_seed(seed, f"{self.origin}: key `seed`")
        if duration_s is not None:
            run["duration_s"] = _duration(duration_s, self.origin)
        if out._data is None:
            out._run.update(run)
        else:
            out._data.update(run)
        return out

    def to_json(self) -> str:
        _check_depth(self.data, self.origin)
        return json.dumps(self.data, sort_keys=True, default=str)

    def core_input(self) -> tuple[str, str, dict[str, Any]]:
        """(text, fmt, keyword arguments) to hand this scenario to the core.

        The source TOML while nothing has asked for `data` (seed and duration given
        as keyword arguments), else the data as JSON.
        """
        kwargs: dict[str, Any] = {}
        if self.base_dir is not None:
            kwargs["base_dir"] = self.base_dir
        if self._data is None:
            return self.source_text or "", "toml", {**kwargs, **self._run}
        text, fmt = _dumps(self.data, self.origin)
        return text, fmt, kwargs

    def canonical_json(self, max_memory: int | None = None) -> str:
        """The core's canonical JSON of this scenario with every default filled in.

        Raises the core's ScenarioError if the scenario is not valid.
        """
        return str(self._call_core("check_scenario", **_memory(max_memory)))

    def run_in_core(
        self,
        progress: Callable[..., None] | None = None,
        pcap: str | os.PathLike[str] | None = None,
        max_memory: int | None = None,
        progress_events: bool = False,
        **core_options: Any,
    ) -> tuple[str, str]:
        """Runs the scenario in the native core, in this process: (summary, traces) JSON.

        With `pcap`, every frame put on the air is written to that file.
        """
        extra: dict[str, Any] = {"progress": progress, **_memory(max_memory)}
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

        generated = self._data is not None
        text, fmt, kwargs = self.core_input()
        try:
            return getattr(_core, name)(text, fmt, self.origin, **kwargs, **extra)
        except _core.ScenarioError as exc:
            if not generated:
                raise
            # Positions in text this module generated would mislead: drop them.
            raise type(exc)(_JSON_POSITION.sub("", str(exc))) from None

    def scenario_hash(self) -> str:
        """SHA-256 (hex) of `canonical_json()`: two scenarios that run alike hash alike."""
        return hash_canonical(self.canonical_json())


def _memory(max_memory: int | None) -> dict[str, Any]:
    return {} if max_memory is None else {"max_memory": max_memory}


def check_seed(value: Any, what: str) -> int:
    """A seed: an integer from 0 to 2^64 - 1 (what the core's streams take)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SEED:
        raise InputError(f"{what}: {value!r} must be an integer from 0 to 2^64 - 1")
    return value


def _duration(value: Any, origin: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"{origin}: key `duration_s`: {value!r} must be a number of seconds")
    try:
        return float(value)
    except OverflowError:
        raise InputError(
            f"{origin}: key `duration_s`: {value} must be a number of seconds"
        ) from None


def _tomllib() -> ModuleType:
    """The TOML parser, imported when first needed: `manetfair run FILE` hands the
    file's text to the core and never parses it here (docs/benchmark.md, "The
    front end of one run")."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised only on Python < 3.11
        import tomli as tomllib
    return tomllib


def _parse_toml(text: str, origin: str) -> dict[str, Any]:
    tomllib = _tomllib()
    try:
        data: dict[str, Any] = tomllib.loads(text)
        return data
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{origin}: not valid TOML: {exc}") from None
    except RecursionError:
        raise InputError(f"{origin}: not valid TOML: nested too deeply") from None


_SCALARS = (str, int, float, bool, type(None))


def _check_depth(data: Any, origin: str) -> None:
    """Refuses tables and arrays nested deeper than MAX_DEPTH (no scenario key is),
    keys that are not strings, and values of types a scenario cannot hold (a set,
    bytes, an object): they used to be turned into strings without a word."""
    stack = [(data, 0, "")]
    while stack:
        node, depth, path = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(
                f"{origin}: key `{path}`: nested more than {MAX_DEPTH} levels deep; "
                "no scenario key is"
            )
        if isinstance(node, Mapping):
            for k, v in node.items():
                if not isinstance(k, str):
                    raise InputError(
                        f"{origin}: key {k!r:.40} in `{path or '(top level)'}`: keys are "
                        f"strings, not {type(k).__name__}"
                    )
                stack.append((v, depth + 1, f"{path}.{k}" if path else k))
        elif isinstance(node, (list, tuple)):
            stack.extend((v, depth + 1, f"{path}[{i}]") for i, v in enumerate(node))
        elif not isinstance(node, _SCALARS):
            raise InputError(
                f"{origin}: key `{path}`: {type(node).__name__} {node!r:.40} is not a "
                "scenario value; allowed: strings, numbers, booleans, tables and arrays"
            )


def _nonfinite(data: Any) -> bool:
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return True
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _dumps(data: dict[str, Any], origin: str) -> tuple[str, str]:
    """The scenario as text for the core: JSON, or TOML when a value is NaN or
    infinite (JSON cannot carry them, and the core's message about such a value must
    name the key, the value and the range)."""
    _check_depth(data, origin)
    if _nonfinite(data):
        lines = (f"{_toml_key(k)} = {_toml_value(v)}" for k, v in data.items())
        return "\n".join(lines), "toml"
    return json.dumps(data, sort_keys=True, default=str), "json"


def _toml_key(key: Any) -> str:
    return _toml_string(str(key))


def _toml_string(s: str) -> str:
    # JSON escapes are TOML basic-string escapes; TOML also wants DEL escaped.
    return json.dumps(s, ensure_ascii=False).replace("\x7f", "\\u007f")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, dict):
        return "{" + ", ".join(f"{_toml_key(k)} = {_toml_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return _toml_string(str(v))


_JSON_POSITION = re.compile(r" at line \d+ column \d+$| \(line \d+\)$")

ScenarioLike = Union[Scenario, Mapping[str, Any], str, "os.PathLike[str]"]


def hash_canonical(canonical_json: str) -> str:
    import hashlib

    return hashlib.sha256(canonical_json.encode("utf-8")).hexdigest()


def load(scenario: ScenarioLike, max_memory: int | None = None) -> Scenario:
    """Accepts a Scenario, a dict of scenario keys, a path, or TOML text.

    A string is TOML text when it holds a newline or an `=`; otherwise it is a path,
    read within the input-file limit of the memory budget `max_memory`.
    """
    if isinstance(scenario, Scenario):
        return scenario.copy()
    if isinstance(scenario, Mapping):
        data = dict(scenario)
        _check_depth(data, "<scenario>")
        return Scenario(copy.deepcopy(data))
    if isinstance(scenario, str) and ("\n" in scenario or "=" in scenario):
        return Scenario.from_toml(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.from_file(scenario, max_memory)
    raise InputError(
        f"a scenario must be a path, TOML text, a dict or a Scenario, not {type(scenario).__name__}"
    )


def parse_value(raw: str) -> Any:
    """Reads one parameter value as a TOML value (1, 2.5, true, "x", [1, 2]);
    anything that is not TOML is taken as a bare string (`red`, `tcp-newreno`)."""
    text = raw.strip()
    tomllib = _tomllib()
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
    except RecursionError:
        raise InputError(f"value {text[:40]!r}...: nested too deeply") from None
    _check_depth(value, f"value {text[:40]!r}")
    return value


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
    if not values:
        raise InputError(f"--param {spec!r}: no values; expected key.path=v1,v2,...")
    return key, values


def set_path(data: dict[str, Any], key: str, value: Any, origin: str = "<scenario>") -> None:
    """Sets a dotted key in nested tables, creating tables as needed.

    A segment that is an integer indexes an array of tables (`flow.0.rate_kbps`);
    `*` sets the key in every table of the array (`flow.*.rate_kbps`).
    """
    if not isinstance(key, str):
        raise InputError(f"{origin}: parameter key {key!r:.40}: must be a dotted string")
    parts = key.split(".")
    if any(not p for p in parts):
        raise InputError(f"{origin}: parameter key {key!r} has an empty segment")
    if len(parts) > MAX_DEPTH:
        raise InputError(
            f"{origin}: parameter key {key[:60]!r}...: more than {MAX_DEPTH} segments; "
            "no scenario key is that deep"
        )
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
