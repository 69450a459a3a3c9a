"""Tests of the reproduce timing driver (no simulation run).

Run with ``python3 -m pytest bench/test_reproduce_timing.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reproduce_timing as rt


def _measurement(jobs: int, wall: float, label: str = "after", timing: bool = True) -> Any:
    t = {
        "jobs": jobs,
        "wall_s": wall - 0.5,
        "sim_s": 1000.0,
        "core_s": 0.8 * wall * jobs,
        "core_cpu_s": 0.7 * wall * jobs,
        "commits": 7,
        "phases": {
            "expansion_s": 0.25,
            "store_s": 1.0,
            "claims_s": 0.05,
            "plots_s": 2.0,
            "report_s": 0.2,
            "core_s": 0.8 * wall * jobs,
        },
        "experiments": [
            {
                "id": "validate-chain",
                "runs": 24,
                "wall_s": wall - 1,
                "core_s": 1.0,
                "core_share": 0.5,
                "sim_s_per_wall_s": 100.0,
                "plot_s": 0.5,
            }
        ],
    }
    return {
        "label": label,
        "set": "quick",
        "jobs": jobs,
        "command": f"manetfair reproduce --quick --jobs {jobs}",
        "wall_s": wall,
        "cpu_s": wall * jobs,
        "load_before": 0.5,
        "load_after": 1.5,
        "timing": t if timing else None,
        "pngs": {"a.png": "x"},
        "stdout_sha256": "y",
        "date": "2026-01-01 00:00 UTC",
    }


def test_a_measurement_becomes_a_record_of_the_front_end_table() -> None:
    rec = rt.data_record({**_measurement(2, 52.0), "code_version": "0.1.0+abc"})
    assert rec["set"] == "quick" and rec["jobs"] == 2 and rec["wall_s"] == 52.0
    assert rec["commit"] == "0.1.0+abc" and rec["load"] == "0.5 → 1.5"
    assert rec["sim_s_per_wall_s"] == round(1000.0 / 52.0, 1)
    assert rec["core_s"] == "83.2 (72.8)" and rec["core_share"] == "80 %"
    outside = rt.data_record(_measurement(1, 130.0, label="before", timing=False))
    assert outside["core_s"] is None and outside["commits"] is None


def test_section_gives_speed_up_split_and_sameness() -> None:
    one, two = _measurement(1, 100.0), _measurement(2, 52.0)
    text = rt.section([one, two, _measurement(1, 130.0, label="before", timing=False)])
    assert (
        "| after | quick | 2 | 52.0 | 104.0 | 0.5 → 1.5 | 19.2 | 83.2 (72.8) | 80 % | 7 | 1.92× |"
        in text
    )
    assert "| before | quick | 1 | 130.0 |" in text and "PYTHONPATH=" in text
    # jobs 1: rest = own wall - (expansion + store + claims + pages) - core - plots
    assert (
        "| after | quick | 1 | 0.50 | 0.25 | 1.00 (7) | 0.05 | 2.00 | 0.20 | 80.0 | 16.00 |" in text
    )
    assert "the same bytes in all 3 runs" in text


def test_split_of_two_jobs_keeps_core_and_plots_out_of_the_main_process() -> None:
    s = rt.split(_measurement(2, 52.0))
    assert s is not None
    assert s["rest_s"] == 51.5 - (0.25 + 1.0 + 0.05 + 0.2)
    assert rt.split(_measurement(1, 10.0, timing=False)) is None


def test_speed_up_is_against_the_nearest_one_job_run_of_the_same_build() -> None:
    early, late = _measurement(1, 100.0), _measurement(1, 120.0)
    early["date"], late["date"] = "2026-01-01 00:00 UTC", "2026-01-01 02:00 UTC"
    other_build = _measurement(1, 50.0)
    other_build["date"], other_build["code_version"] = "2026-01-01 01:40 UTC", "0.1.0+other"
    two = _measurement(2, 60.0)
    two["date"] = "2026-01-01 01:45 UTC"
    assert rt.partner(two, [early, late, other_build, two]) is late
    assert rt.partner(early, [early, two]) is None
    text = rt.section([early, late, other_build, two])
    assert "| 60.0 |" in text and "| 2.00× |" in text
