"""tools/verdicts.py: the quick-versus-full table of docs/experiments.md."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import REPO

spec = importlib.util.spec_from_file_location("verdicts", REPO / "tools" / "verdicts.py")
assert spec is not None and spec.loader is not None
verdicts = importlib.util.module_from_spec(spec)
spec.loader.exec_module(verdicts)


def doc(claims: list[tuple[str, float, bool]]) -> dict:
    return {
        "experiments": [
            {
                "id": "demo-fig1",
                "claims": [
                    {"what": w, "paper": 0.5, "measured": m, "holds": h} for w, m, h in claims
                ],
            }
        ]
    }


def test_counts_rows_and_differences(tmp_path: Path):
    quick = doc([("a | b", 0.51, True), ("c", 0.2, False), ("only quick", 1.0, True)])
    full = doc([("a | b", 0.49, True), ("c", 0.6, True)])
    text = verdicts.table(quick, full)
    assert text.startswith("**Quick: 2 of 3 hold; full: 2 of 2**")
    assert "| demo-fig1 | a \\| b | 0.5 | 0.51 holds | 0.49 holds |" in text
    assert "| demo-fig1 | c | 0.5 | 0.2 **fails** | 0.6 holds |" in text
    assert "| demo-fig1 | only quick | 0.5 | 1 holds | - |" in text
    assert "differ between the modes: 1." in text and "- demo-fig1: c" in text
