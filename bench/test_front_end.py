"""Tests of the front-end timing driver.

Run with ``python3 -m pytest bench/test_front_end.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import front_end as fe

ROOT = Path(__file__).resolve().parent.parent


def test_the_front_end_is_run_minus_core_by_medians():
    times = {"interpreter": [0.05, 0.06, 0.07], "core": [0.40, 0.50, 0.45], "run": [0.9, 0.48, 0.5]}
    text = fe.table(times, {"interpreter": 10**8, "core": 3 * 10**8, "run": 3_250_000_00})
    assert "| core | 450.0 | 400.0 | 300.0 |" in text
    assert "front end (median of run - median of core): 50.0 ms" in text
    assert "front end in instructions: 25.0 M" in text


def test_one_round_times_the_three_commands(capsys):
    core = pytest.importorskip("manetfair._core")
    if not hasattr(core, "run_scenario"):
        pytest.skip("needs the native core")
    assert fe.main([str(ROOT / "examples" / "chain.toml"), "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    for name in ("interpreter", "core", "run"):
        assert f"| {name} |" in out
