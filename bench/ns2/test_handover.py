"""Tests of the handover counters (bench/ns2/handover.py); no ns binary needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

pytest.importorskip("manetfair._core")

import handover as ho

SCENARIO = {
    "duration_s": 120.0,
    "flow": [
        {"src": 1, "dst": 2, "route": [1, 9, 2], "start_s": 1.0},
        {
            "src": 6,
            "dst": 5,
            "route": [6, 8, 7, 5],
            "start_s": 7.0,
            "route_changes": [{"at_s": 15.0, "route": [6, 7, 5]}, {"at_s": 67.5, "route": [6, 5]}],
        },
    ],
}


def test_changes_name_the_sources_old_and_new_next_hops() -> None:
    (c,) = ho.changes(SCENARIO)
    assert c["flow"] == 1 and c["src"] == 6
    assert c["phases"] == [(7.0, 15.0), (15.0, 67.5), (67.5, 120.0)]
    assert c["changes"] == [(15.0, 8, 7), (67.5, 7, 5)]


def test_stuck_packets_and_the_stall_they_cause() -> None:
    # Before the change, 8 is the next hop; after it, packet 3 is tried twice more
    # towards 8 and packet 4 too; the first frame to 7 leaves at 21 s.
    sends = [(14.0, 1, 8), (15.5, 3, 8), (17.0, 3, 8), (19.0, 4, 8), (21.0, 5, 7), (22.0, 6, 7)]
    first, second = ho.handover_stats(sends, [(15.0, 8, 7), (67.5, 7, 5)], 120.0)
    assert first == {"at_s": 15.0, "stuck": 2, "stall_s": 6.0}
    # No frame to 5 ever: the stall lasts to the end of the run.
    assert second == {"at_s": 67.5, "stuck": 0, "stall_s": 52.5}


def test_ns2_sends_reads_the_next_hop_from_the_mac_header() -> None:
    lines = [
        "s 7.134879306 _5_ MAC  --- 2025 tcp 98 [13a 7 5 800] ------- [5:0 4:2 32 7] [0 0] 0 0",
        "r 7.135 _7_ MAC  --- 2025 tcp 40 [13a 7 5 800] ------- [5:0 4:2 32 7] [0 0] 1 0",
        "s 7.2 _5_ AGT  --- 2091 tcp 640 [0 0 0 0] ------- [5:0 4:2 32 0] [1 0] 0 0",
        "s 7.3 _5_ MAC  --- 0 ACK 38 [0 7 0 0] ",
        "s 58.2 _5_ MAC  --- 5081 tcp 698 [13a 1a 5 800] ------- [5:0 4:2 32 6] [328 0] 0 0",
        "s 58.3 _4_ MAC  --- 5082 tcp 698 [13a 6 4 800] ------- [4:0 5:2 32 6] [1 0] 0 0",
    ]
    assert ho.ns2_sends(lines, 5) == [(7.134879306, 2025, 7), (58.2, 5081, 26)]


def test_the_table_gives_means_per_simulator() -> None:
    def row(sim: str, seed: int, kbps: list[float], stuck: int, stall: float) -> dict[str, object]:
        ch = [{"at_s": 15.0, "stuck": stuck, "stall_s": stall}]
        return {"simulator": sim, "seed": seed, "flows": [{"flow": 3, "kbps": kbps, "changes": ch}]}

    rows = [
        row("ns-2.35", 1, [100.0, 200.0], 2, 10.0),
        row("ns-2.35", 2, [200.0, 300.0], 0, 1.0),
        row("manetfair ns2", 1, [150.0, 250.0], 1, 4.0),
    ]
    text = ho.table(json.loads(json.dumps(rows)))
    lines = text.splitlines()
    assert lines[2] == "| ns-2.35 (flow 3, 2) | 150 | 250 | 1.00, 5.5 / 5.5 s, 5.0 |"
    assert lines[3] == "| manetfair ns2 (flow 3, 1) | 150 | 250 | 1.00, 4.0 / 4.0 s, 4.0 |"


def test_the_table_command_prints_one_table_per_variant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def line(variant: str, sim: str) -> str:
        ch = [{"at_s": 15.0, "stuck": 1, "stall_s": 2.0}]
        row = {"variant": {"throttle": variant}, "simulator": sim, "seed": 1,
               "flows": [{"flow": 3, "kbps": [100.0], "changes": ch}]}  # fmt: skip
        return json.dumps(row) + "\n"

    path = tmp_path / "handover-x.jsonl"
    path.write_text(
        line("off", "ns-2.35") + line("off", "manetfair ns2") + line("on", "manetfair ns2")
    )
    monkeypatch.setattr(ho, "results_path", lambda exp_id: path)
    ho.main(["table", "x"])
    out = capsys.readouterr().out
    assert (
        out.index("throttle = off:")
        < out.index("| ns-2.35 (flow 3, 1) |")
        < out.index("throttle = on:")
    )
    assert out.count("| manetfair ns2 (flow 3, 1) | 100 | 1.00, 2.0 / 2.0 s, 2.0 |") == 2
