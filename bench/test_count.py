"""Tests of the instruction-count driver (no valgrind or ns-3 needed).

Run with ``python3 -m pytest bench/test_count.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import count


def test_callgrind_totals_reads_dumps_in_order(tmp_path: Path) -> None:
    out = tmp_path / "x.out"
    for name, total in [("x.out.2", 20), ("x.out.10", 100), ("x.out.1", 10), ("x.out", 7)]:
        (tmp_path / name).write_text(f"version: 1\ncmd: x\nsummary: {total}\n")
    assert count.callgrind_totals(out) == [10, 20, 100, 7]


def test_targets_cut_the_benchmark_scenarios() -> None:
    targets = count.targets()
    a10 = count.scenario_of(targets["a10"])
    assert a10.duration_s == 10.0 and all(f.stop_s == 10.0 for f in a10.flows)
    assert count.scenario_of(targets["ns3-a10"]).positions == a10.positions
    bq = count.scenario_of(targets["b-quick"])
    assert bq.duration_s == 40.0 and all((f.start_s, f.stop_s) == (5.0, 35.0) for f in bq.flows)
    c = count.scenario_of(targets["c1000"])
    assert c.nodes == 1000 and c.duration_s == 5.0 and targets["c1000"].from_s == 3.0


def _a10_record() -> dict[str, object]:
    return {
        "key": "a10",
        "sim": "manetfair",
        "scenario": "a",
        "seed": 1,
        "duration_s": 10.0,
        "from_s": 2,
        "wall_s": 0.1,
        "cpu_s": 0.1,
        "peak_rss_mb": 24.0,
        "load": 1.0,
        "command": "run_scenario count-a10-seed1.toml --from 2.0",
        "source": "abc1234",
        "events": 1942689,
        "frames": 49646,
        "deliveries": 842185,
        "measured_events": 1820032,
        "measured_deliveries": 788026,
        "measured_walk_steps_queued": 7348,
        "measured_wall_s": 0.086,
        "measured_cpu_s": 0.084,
        "callgrind_command": "valgrind --tool=callgrind run_scenario count-a10-seed1.toml",
        "instructions": 320088981,
        "measured_instructions": 294696954,
        "date": "2026-11-28 05:24 UTC",
    }


def test_the_report_refuses_to_drop_targets_it_has_no_json_for(tmp_path: Path, monkeypatch) -> None:
    out = tmp_path / "count"
    out.mkdir()
    (out / "a10-seed1.json").write_text(json.dumps(_a10_record()))
    counts = tmp_path / "COUNTS.md"
    shown = "## Instruction counts\n\n- a10 (source commit x): `...`\n- ns3-a10: `...`\n"
    counts.write_text(shown)
    monkeypatch.setattr(count, "COUNT_DIR", out)
    monkeypatch.setattr(count, "COUNTS_MD", counts)
    monkeypatch.setattr(count.run, "RESULTS_MD", tmp_path / "RESULTS.md")
    assert count.listed_targets(shown) == {"a10", "ns3-a10"}
    assert count.main(["--report-only"]) == 1
    assert counts.read_text() == shown
    assert count.main(["--report-only", "--replace"]) == 0
    assert count.listed_targets(counts.read_text()) == {"a10"}


def test_records_come_in_the_order_of_the_targets(tmp_path: Path, monkeypatch) -> None:
    # By file name c10000 would sort before c300, and ns3-a10 before a10.
    for key in ("ns3-a10", "c10000", "c300", "a10"):
        rec = {**_a10_record(), "key": key}
        (tmp_path / f"{key}-seed1.json").write_text(json.dumps(rec))
    monkeypatch.setattr(count, "COUNT_DIR", tmp_path)
    assert list(count.load_records()) == ["a10", "ns3-a10", "c300", "c10000"]
