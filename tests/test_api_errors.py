"""Python API errors are the documented ones, naming the argument (docs/cli.md,
*Python API*): reproducers P1 and P2 of the 2026-11-29 hostile campaign, which got
TypeError, OverflowError and AttributeError, or values turned into strings."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import manetfair
import pytest
from manetfair.errors import InputError
from manetfair.scenario import Scenario

CHAIN: dict[str, Any] = {
    "duration_s": 1.0,
    "topology": {"kind": "chain", "nodes": 3, "spacing_m": 200.0},
    "flow": [{"src": 0, "dst": 2, "transport": "udp", "app": "cbr", "rate_kbps": 50.0}],
}


def with_key(path: str, value: Any) -> dict[str, Any]:
    import copy

    data = copy.deepcopy(CHAIN)
    node = data
    *heads, last = path.split(".")
    for h in heads:
        node = node.setdefault(h, {})
    node[last] = value
    return data


CALLS: dict[str, tuple[Callable[[], object], str]] = {
    "max_memory a string": (lambda: manetfair.run(CHAIN, max_memory="lots"), "max_memory"),
    "max_memory negative": (lambda: manetfair.run(CHAIN, max_memory=-1), "max_memory"),
    "max_memory a float": (lambda: manetfair.run(CHAIN, max_memory=1e99), "max_memory"),
    "max_memory too large": (lambda: manetfair.run(CHAIN, max_memory=10**30), "max_memory"),
    "pcap an int": (lambda: manetfair.run(CHAIN, pcap=3), "pcap"),
    "an int key": (lambda: manetfair.run({**CHAIN, 5: 1}), "keys are strings"),
    "mac None": (lambda: manetfair.run(with_key("mac", None)), "mac"),
    "override key an int": (lambda: Scenario(dict(CHAIN)).with_overrides({5: 3}), "parameter key"),
    "name a set": (lambda: manetfair.run(with_key("name", {1, 2})), "`name`"),
    "name bytes": (lambda: manetfair.run(with_key("name", b"x")), "`name`"),
    "seed an object": (lambda: manetfair.run(CHAIN, seed=object()), "seed"),
    "ns2_movements bytes": (
        lambda: manetfair.run(with_key("mobility.ns2_movements", b"x")),
        "mobility.ns2_movements",
    ),
    "progress not callable": (lambda: manetfair.run(CHAIN, progress=3), "progress"),
    "shares store an int": (lambda: manetfair.shares(CHAIN, measure=True, store=123), "store"),
    "shares store a folder": (lambda: manetfair.shares(CHAIN, measure=True, store="."), "."),
    "shares jobs a string": (lambda: manetfair.shares(CHAIN, jobs="2"), "jobs"),
    "scenario path an int": (lambda: Scenario.from_file(3), "scenario"),  # type: ignore[arg-type]
}


@pytest.mark.core
@pytest.mark.parametrize("case", sorted(CALLS))
def test_bad_arguments_raise_the_documented_errors(case: str) -> None:
    call, words = CALLS[case]
    with pytest.raises((InputError, manetfair.ScenarioError)) as info:
        call()
    assert words in str(info.value), str(info.value)


@pytest.mark.core
def test_paths_are_str_or_pathlike(tmp_path: Path) -> None:
    result = manetfair.run(CHAIN)
    for out in (str(tmp_path / "a"), tmp_path / "b"):
        written = result.write(out)
        assert [p.name for p in written] == ["summary.json", "series.parquet", "series.csv"]
        assert all(p.is_file() for p in written)
    sc = tmp_path / "c.toml"
    sc.write_text('duration_s = 1.0\n[topology]\nkind = "chain"\nnodes = 2\nspacing_m = 100.0\n')
    assert manetfair.run(str(sc)).summary["duration_s"] == 1.0
    assert manetfair.run(sc, pcap=str(tmp_path / "f.pcap")).summary["duration_s"] == 1.0
    assert (tmp_path / "f.pcap").stat().st_size > 0
