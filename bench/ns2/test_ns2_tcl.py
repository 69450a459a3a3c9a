"""Tests of the ns-2.35 script generator (bench/ns2/ns2tcl.py).

The generator's tests need manetfair (its scenario validator) but not ns; the
last test runs ns-2.35 and is skipped without ``ns`` or the agent library.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ns2tcl
import ns2trace

pytest.importorskip("manetfair._core")

LIB = HERE / "build" / "static_route.so"


def scenario(tmp_path: Path, text: str) -> ns2tcl.Json:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return ns2tcl.canonical(path)


CHAIN = """
name = "t"
duration_s = 20.0
[topology]
kind = "chain"
nodes = 4
spacing_m = 200.0
[[flow]]
src = 0
dst = 3
start_s = 1.0
"""


def test_thresholds_are_ns2s_at_250_and_550_m() -> None:
    assert ns2tcl.threshold_w(250.0) == 3.652e-10
    assert ns2tcl.threshold_w(550.0) == 1.559e-11
    # Elsewhere: 4 digits, rounded down, so the range itself still reaches.
    for r in (100.0, 367.0, 653.0):
        t = ns2tcl.threshold_w(r)
        assert ns2tcl.received_power_w(r) >= t > ns2tcl.received_power_w(r * 1.001)
    # Friis below the 86 m crossover, two-ray ground above it.
    assert ns2tcl.received_power_w(50.0) == pytest.approx(
        0.28183815 * (299792458.0 / 914e6) ** 2 / (4 * 3.141592653589793 * 50.0) ** 2
    )


def test_chain_script(tmp_path: Path) -> None:
    sc = scenario(tmp_path, CHAIN)
    tcl = ns2tcl.script(sc, seed=7, agent_lib=Path("/lib/x.so"))
    assert "$defaultRNG seed 7" in tcl
    assert 'load "/lib/x.so" Staticroute' in tcl
    assert "Phy/WirelessPhy set RXThresh_ 3.652e-10" in tcl
    assert "Phy/WirelessPhy set CSThresh_ 1.559e-11" in tcl
    assert "Phy/WirelessPhy set CPThresh_ 10.0" in tcl
    assert "Mac/802_11 set RTSThreshold_ 0" in tcl
    assert "Mac/802_11 set dataRate_ 2Mb" in tcl
    assert "-ifqType Queue/DropTail/PriQueue -ifqLen 50" in tcl
    assert "$node_(3) set X_ 600; $node_(3) set Y_ 0" in tcl
    # Data towards 3 and ACKs towards 0, hop by hop.
    for node, dst, hop in [(0, 3, 1), (1, 3, 2), (2, 3, 3), (3, 0, 2), (2, 0, 1), (1, 0, 0)]:
        assert f"[$node_({node}) set ragent_] route {dst} {hop}" in tcl
    # manetfair's defaults reach ns-2 as they are: delayed ACKs, min RTO 1 s, IW 1.
    assert "[new Agent/TCP/Newreno]" in tcl and "[new Agent/TCPSink/DelAck]" in tcl
    assert "$src_(0) set minrto_ 1.0" in tcl and "$src_(0) set windowInit_ 1" in tcl
    assert '$ns at 1.0 "$app_(0) start"' in tcl
    assert '$ns at 20.0 "$ns flush-trace; $ns halt"' in tcl


def test_explicit_ids_shift_and_aodv(tmp_path: Path) -> None:
    sc = scenario(
        tmp_path,
        """
name = "x"
duration_s = 10.0
[routing]
protocol = "aodv"
[radio]
tx_range_m = 367.0
cs_range_m = 653.0
[topology]
kind = "explicit"
[[node]]
id = 7
x_m = -350.0
y_m = 5.0
[[node]]
id = 3
x_m = 0.0
y_m = 5.0
[[flow]]
src = 3
dst = 7
transport = "tcp-reno"
start_s = 2.0
stop_s = 8.0
""",
    )
    lay = ns2tcl.layout(sc)
    assert lay.ids == (7, 3)
    (f,) = ns2tcl.flows(sc, lay)
    assert (f.src, f.dst, f.stop_s) == (1, 0, 8.0)
    tcl = ns2tcl.script(sc, seed=1, agent_lib=Path("/x.so"))
    assert "-adhocRouting AODV" in tcl
    assert "$node_(0) set X_ 0; $node_(0) set Y_ 0" in tcl
    assert "$node_(1) set X_ 350; $node_(1) set Y_ 0" in tcl
    assert "$arpfill add [$node_(0) set arptable_] 1 1" in tcl
    assert f"Phy/WirelessPhy set RXThresh_ {ns2tcl.threshold_w(367.0)!r}" in tcl
    assert '$ns at 8.0 "$app_(0) stop"' in tcl
    assert "#flow 0 " in tcl and " 2.0 8.0" in tcl
    assert "arpfill" not in ns2tcl.script(sc, seed=1, agent_lib=None, arp="ns2")
    # The scenario's own `[ns2] arp` chooses ns-2's ARP when no option does.
    assert "arpfill" not in ns2tcl.script(dict(sc, ns2={"arp": True}), seed=1, agent_lib=None)


def test_shortest_paths_break_ties_by_lowest_index() -> None:
    # A square 0-1-3-2-0 plus 3-4: two shortest paths from 0 to 4.
    adj = [[1, 2], [0, 3], [0, 3], [1, 2, 4], [3]]
    assert ns2tcl.next_hops(adj, 4) == {3: 4, 1: 3, 2: 3, 0: 1}
    assert ns2tcl.next_hops(adj, 0)[3] == 1


def test_metrics_warmup_moves_the_window(tmp_path: Path) -> None:
    sc = scenario(tmp_path, CHAIN + "[metrics]\nwarmup_s = 4.0\n")
    (f,) = ns2tcl.flows(sc, ns2tcl.layout(sc))
    assert f.measure_from_s == 5.0


@pytest.mark.parametrize(
    ("extra", "key"),
    [
        ('[mac]\nqueue = "red"\n', "mac.queue"),
        ('[radio]\nreception = "sinr"\n', "radio.reception"),
        ("[mac.quick_exchange]\nenabled = true\n", "mac.quick_exchange.enabled"),
    ],
)
def test_what_ns2_cannot_run_is_refused_by_key(tmp_path: Path, extra: str, key: str) -> None:
    sc = scenario(tmp_path, CHAIN + extra)
    with pytest.raises(ns2tcl.Unsupported, match=f"key `{key}`"):
        ns2tcl.script(sc, seed=1, agent_lib=Path("/x.so"))


HANDOVER = """
name = "h"
duration_s = 30.0
[topology]
kind = "explicit"
[[node]]
id = 1
x_m = 0.0
y_m = 0.0
[[node]]
id = 2
x_m = 200.0
y_m = 0.0
[[node]]
id = 3
x_m = 400.0
y_m = 0.0
[[flow]]
src = 3
dst = 1
route = [3, 2, 1]
start_s = 1.0
route_changes = [{ at_s = 10.0, route = [3, 1] }]
[[mobility.node]]
id = 3
path = [[0.0, 400.0, 0.0], [9.0, 400.0, 0.0], [10.0, 100.0, -50.0]]
"""


def test_a_scripted_path_and_route_changes(tmp_path: Path) -> None:
    sc = scenario(tmp_path, HANDOVER)
    tcl = ns2tcl.script(sc, seed=1, agent_lib=Path("/x.so"))
    # 1 m of margin: a setdest destination on the field's edge is refused by ns-2.
    assert "$node_(0) set X_ 1; $node_(0) set Y_ 51" in tcl
    assert "$node_(2) set X_ 401; $node_(2) set Y_ 51" in tcl
    # One setdest per leg that moves, at the leg's speed: 300 m west, 50 m south in 1 s.
    assert tcl.count("setdest") == 1
    assert f'$ns at 9.0 "$node_(2) setdest 101 1 {(300.0**2 + 50.0**2) ** 0.5!r}"' in tcl
    # The new path from 10 s on, for data (towards 0) and ACKs (towards 2).
    assert '$ns at 10.0 "[$node_(2) set ragent_] route 0 0"' in tcl
    assert '$ns at 10.0 "[$node_(0) set ragent_] route 2 2"' in tcl
    assert "[$node_(2) set ragent_] route 0 1" in tcl.splitlines()  # until then


def test_moves_are_refused(tmp_path: Path) -> None:
    moves = HANDOVER.replace(
        "path = [[0.0, 400.0, 0.0], [9.0, 400.0, 0.0], [10.0, 100.0, -50.0]]",
        "moves = [[0.0, 100.0, 0.0, 1000.0]]",
    )
    sc = scenario(tmp_path, moves)
    with pytest.raises(ns2tcl.Unsupported, match=r"key `mobility.node\[0\]`"):
        ns2tcl.script(sc, seed=1, agent_lib=Path("/x.so"))


def test_tcp_variants_without_an_ns2_agent_are_refused(tmp_path: Path) -> None:
    sc = scenario(tmp_path, CHAIN.replace("start_s = 1.0", 'start_s = 1.0\ntransport = "tcp-ap"'))
    with pytest.raises(ns2tcl.Unsupported, match=r"key `flow\[0\].transport`"):
        ns2tcl.script(sc, seed=1, agent_lib=Path("/x.so"))


def test_every_case_has_a_script() -> None:
    for case in sorted((HERE / "cases").glob("*.toml")):
        tcl = ns2tcl.script(ns2tcl.canonical(case), seed=1, agent_lib=Path("/x.so"))
        assert tcl.count("#flow") >= 1, case


@pytest.mark.skipif(shutil.which("ns") is None or not LIB.exists(), reason="needs ns and the agent")
def test_ns2_runs_the_script(tmp_path: Path) -> None:
    sc = scenario(tmp_path, CHAIN.replace("20.0", "3.0"))
    script = tmp_path / "s.tcl"
    script.write_text(ns2tcl.script(sc, seed=1, agent_lib=LIB))
    trace = tmp_path / "s.tr"
    subprocess.run(["ns", str(script), str(trace)], check=True, capture_output=True, cwd=tmp_path)
    s = ns2trace.parse(trace.read_text().splitlines()).summary()
    assert s["flows"][0]["delivered_bytes"] > 50_000, json.dumps(s)
    assert s["mac"]["rts_sent"] > 0
