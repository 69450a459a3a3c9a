"""bench/RESULTS.md is made from the measurements alone (bench/results.py)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import results  # the page's generator beside this file


def test_the_page_is_its_data_regenerated() -> None:
    assert results.RESULTS_MD.read_text() == results.render(), (
        "bench/RESULTS.md differs from its data: run python3 bench/results.py"
    )


def test_the_page_stays_short() -> None:
    assert len(results.RESULTS_MD.read_bytes()) <= 40_000


def test_a_new_record_replaces_its_row_and_the_old_one_stays(tmp_path: Path) -> None:
    old = {"date": "d1", "commit": "a", "command": "c", "target": "a10", "simulator": "ns3"}
    results.append("memory", [{**old, "process": "whole", "peak_rss_mb": 42.9}], tmp_path)
    results.append(
        "memory",
        [
            {**old, "simulator": "manetfair", "process": "core", "peak_rss_mb": 9.0},
            {**old, "simulator": "manetfair", "process": "core", "peak_rss_mb": 6.1, "date": "d2"},
        ],
        tmp_path,
    )
    assert len(results.read("memory", tmp_path)) == 3
    page = "\n".join(results.memory_section(tmp_path))
    assert "| a10 | manetfair | core | 6.1 |" in page and "| 9.0 |" not in page
    assert "| a10 | core | 7.0 |" in page  # ns-3 / manetfair, 42.9 / 6.1
