"""Tests of the claims' ns-2.35 values (bench/ns2/claim_values.py); no ns binary needed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytest.importorskip("manetfair._core")

import claim_values as cv
from manetfair import claims


def run(variant: dict[str, str], seed: int, kbps: float) -> claims.Run:
    return claims.Run(variant, seed, {"aggregate_kbps": kbps, "flows": []}, None)


VARIANTS = [{"throttle": "off"}, {"throttle": "on"}]
OFF = [run({"throttle": "off"}, s, 600.0 + s) for s in (1, 2)]


def claim(measured: dict[str, object], where: dict[str, str] | None = None) -> dict[str, object]:
    return {"what": "x", "measured": measured, "where": where or {}, "paper": 1.0}


def test_a_claim_on_the_baseline_arm_gets_its_value() -> None:
    c = claim({"field": "aggregate_kbps"}, {"throttle": "off"})
    assert cv.value_of(c, OFF, VARIANTS) == (601.5, "")


def test_a_claim_reading_an_arm_without_ns2_runs_gets_none() -> None:
    # The remedy's arm enters the measure: no value, not one from the baseline alone.
    ratio = {
        "ratio": [
            {"field": "aggregate_kbps", "where": {"throttle": "on"}},
            {"field": "aggregate_kbps", "where": {"throttle": "off"}},
        ]
    }
    value, why = cv.value_of(claim(ratio), OFF, VARIANTS)
    assert value is None and "cannot run" in why
    # A mean over both arms would silently drop the missing one: refused too.
    value, _ = cv.value_of(claim({"field": "aggregate_kbps"}), OFF, VARIANTS)
    assert value is None


def test_a_claim_reading_what_the_trace_lacks_gets_none() -> None:
    c = claim({"field": "mac.retries", "reduce": "sum"}, {"throttle": "off"})
    value, why = cv.value_of(c, OFF, VARIANTS)
    assert value is None and "does not give" in why


def test_the_committed_values_are_those_the_stored_runs_give() -> None:
    entries = [e for exp in cv.ns2_experiments([]) for e in cv.evaluate(exp)[0]]
    assert entries
    assert cv.toml_entries(entries) == cv.VALUES.read_text(encoding="utf-8")
