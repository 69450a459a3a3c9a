"""Tests of the instruction-count driver (no valgrind or ns-3 needed).

Run with ``python3 -m pytest bench/test_count.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import count


def test_splice_replaces_only_the_counts_section() -> None:
    text = "# head\n\n<!-- counts -->\nold\n<!-- /counts -->\n\n## tail\n"
    out = count.splice(text, "## Instruction counts\nnew\n")
    assert (
        out
        == "# head\n\n<!-- counts -->\n## Instruction counts\nnew\n<!-- /counts -->\n\n## tail\n"
    )
    appended = count.splice("# head\n", "new")
    assert appended == "# head\n\n<!-- counts -->\nnew\n<!-- /counts -->\n"


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
