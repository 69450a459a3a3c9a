"""Tests of the ns-2.35 trace reader (bench/ns2/ns2trace.py); no ns binary needed.

``testdata/chain-2-old.tr`` and ``chain-2-new.tr`` are ns-2.35's traces of
``testdata/chain-2.toml`` (seed 1), written by::

    python3 ns2tcl.py testdata/chain-2.toml --seed 1 > s.tcl && ns s.tcl testdata/chain-2-old.tr

and the same script with ``$ns use-newtrace`` before ``trace-all``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import ns2trace

DATA = Path(__file__).resolve().parent / "testdata"


def lines(name: str) -> list[str]:
    return (DATA / name).read_text().splitlines()


def test_sample_counts_agree_with_the_raw_lines() -> None:
    raw = lines("chain-2-old.tr")
    s = ns2trace.parse(raw).summary()
    words = [w.split() for w in raw if not w.startswith("#")]
    rts = sum(1 for w in words if w[0] == "s" and w[3] == "MAC" and w[6] == "RTS")
    cts_in = sum(1 for w in words if w[0] == "r" and w[3] == "MAC" and w[6] == "CTS")
    assert s["mac"]["rts_sent"] == rts > 0
    assert s["mac"]["cts_received"] == cts_in
    assert s["mac"]["rts_no_cts"] == rts - cts_in
    # Segments 1.. reach node 2 in order here; seqno 0 is ns-2's SYN (no data).
    seqs = {
        int(w[w.index("-------") + 5].lstrip("["))
        for w in words
        if w[0] == "r" and w[2] == "_2_" and w[3] == "AGT" and w[6] == "tcp"
    }
    assert seqs == set(range(len(seqs)))
    assert s["flows"][0]["delivered_bytes"] == 1000 * max(seqs)
    assert s["aggregate_kbps"] == pytest.approx(1000 * max(seqs) * 8 / 0.3 / 1000)


def test_new_format_gives_the_same_deliveries() -> None:
    old = ns2trace.parse(lines("chain-2-old.tr")).summary()
    new = ns2trace.parse(lines("chain-2-new.tr")).summary()
    assert new["flows"] == old["flows"]
    assert old["flows"][0]["delivered_bytes"] > 0


FLOW = "#flow 0 0 0 3 0 1000 2.0 10.0"


def agt(t: float, seq: int) -> str:
    return f"r {t:.9f} _3_ AGT  --- 7 tcp 1040 [13a 3 2 800] ------- [0:0 3:0 29 3] [{seq} 0] 3 0"


def test_delivery_counts_in_order_bytes_inside_the_window() -> None:
    trace = [FLOW, agt(1.0, 0), agt(1.5, 1), agt(2.5, 3), agt(3.0, 2), agt(3.1, 2), agt(11.0, 4)]
    f = ns2trace.parse(trace).flows[(0, 0, 3, 0)]
    # seq 1 completes at 1.5 s (before the window), 2 and 3 together at 3.0 s,
    # the duplicate 2 adds nothing, 4 completes after the window's end.
    assert f.delivered_total_bytes == 4000
    assert f.delivered_bytes == 2000
    assert f.throughput_kbps() == 2000 * 8 / 8.0 / 1000


def mac(ev: str, t: float, node: int, ptype: str, uid: int = 0, reason: str = "---") -> str:
    return f"{ev} {t:.9f} _{node}_ MAC  {reason} {uid} {ptype} 44 [0 1 0 0] "


def test_first_rts_failures_follow_each_msdu() -> None:
    trace = [
        # uid 5: first RTS answered.
        mac("s", 1.0, 0, "RTS"),
        mac("r", 1.1, 0, "CTS"),
        mac("s", 1.2, 0, "tcp", 5),
        # uid 6: two RTSs before its DATA: its first failed.
        mac("s", 2.0, 0, "RTS"),
        mac("s", 2.1, 0, "RTS"),
        mac("r", 2.2, 0, "CTS"),
        mac("s", 2.3, 0, "tcp", 6),
        # uid 6 again (its ACK was lost): a retry, not a new MSDU.
        mac("s", 3.0, 0, "RTS"),
        mac("s", 3.1, 0, "RTS"),
        mac("r", 3.2, 0, "CTS"),
        mac("s", 3.3, 0, "tcp", 6),
        # uid 9 at node 1: never got a CTS, dropped after its retries.
        mac("s", 4.0, 1, "RTS"),
        mac("D", 4.1, 1, "RTS", 0, "RET"),
        mac("D", 4.1, 1, "ack", 9, "RET"),
    ]
    s = ns2trace.parse(trace).summary()["mac"]
    assert (s["msdus_started"], s["first_rts_failed"]) == (3, 2)
    assert s["rts_sent"] == 6
    assert s["rts_no_cts"] == 3


def test_drops_and_unknown_lines() -> None:
    trace = [
        "num_nodes is set 4",
        "D 5.000000000 _1_ IFQ  --- 12 tcp 1040 [0 0 0 0] ------- [0:0 3:0 30 2] [9 0] 0 0",
        "D 6.0 _2_ RTR  NRTE 13 ack 40 [0 0 0 0] ------- [3:0 0:0 30 1] [0 9] 0 0",
        "",
    ]
    s = ns2trace.parse(trace).summary()
    assert s["drops"] == {"IFQ --- tcp": 1, "RTR NRTE ack": 1}


def test_series_and_udp_deliveries() -> None:
    cbr = "#flow 1 0 1 3 1 500 0.0 10.0"

    def udp(t: float, seq: int) -> str:
        return f"r {t:.9f} _3_ AGT  --- 9 cbr 520 [13a 3 2 800] ------- [0:1 3:1 29 3] [{seq}] 3 0"

    s = ns2trace.parse(
        [
            FLOW,
            cbr,
            "#duration 4.5",
            agt(2.5, 0),
            agt(2.6, 1),
            agt(3.1, 2),
            udp(0.5, 0),
            udp(0.7, 0),
        ]
    )
    t = s.traces()
    assert t["time_s"] == [0.0, 1.0, 2.0, 3.0, 4.0]
    # TCP: the SYN carries nothing; 1000 bytes in [2, 3) and 1000 in [3, 4).
    assert t["flow_throughput_kbps"][0] == [0.0, 0.0, 8.0, 8.0, 0.0]
    # UDP: a datagram counts once, even if traced twice.
    assert t["flow_throughput_kbps"][1] == [4.0, 0.0, 0.0, 0.0, 0.0]
    assert s.summary()["flows"][1]["delivered_bytes"] == 500


def test_the_ledger_counts_packets_not_frames() -> None:
    def line(ev: str, layer: str, reason: str, uid: int, ptype: str) -> str:
        return f"{ev} 1.000000000 _1_ {layer}  {reason} {uid} {ptype} 1040 [0 0 0 0] -------"

    trace = [
        line("s", "AGT", "---", 1, "tcp"),
        line("s", "AGT", "---", 2, "ack"),
        line("s", "AGT", "---", 3, "tcp"),
        line("D", "MAC", "COL", 1, "tcp"),  # a frame lost: sent again
        line("D", "MAC", "RET", 9, "RTS"),  # the RTS of packet 3 ...
        line("D", "MAC", "RET", 3, "tcp"),  # ... and packet 3 after its retries
        line("D", "IFQ", "END", 2, "ack"),
    ]
    assert "ledger" not in ns2trace.parse(trace).summary()
    ledger = ns2trace.parse(["#routing static", *trace]).summary()["ledger"]
    assert ledger == {"generated": 3, "dropped": 2}
