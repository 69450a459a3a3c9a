"""The packet-event trace and the pcap agree with the run summary: transmissions,
losses at the addressee (collisions) and drops by cause, counted three ways."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.core

# Two saturated UDP senders hidden from each other around one receiver, and a
# three-hop chain through a small queue: collisions, retry drops and overflows.
HIDDEN = """
name = "hidden-pair"
duration_s = 6.0
seed = 3

[mac]
queue_capacity_pkts = 5

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

[[node]]
id = 4
x_m = 600.0
y_m = 0.0

[[flow]]
src = 1
dst = 2
transport = "udp"
app = "cbr"
rate_kbps = 1500.0
packet_bytes = 1000
start_s = 0.5

[[flow]]
src = 3
dst = 2
transport = "udp"
app = "cbr"
rate_kbps = 1500.0
packet_bytes = 1000
start_s = 0.5

[[flow]]
src = 4
dst = 1
transport = "tcp-newreno"
app = "ftp"
packet_bytes = 1000
start_s = 1.0
"""

KINDS = {0xB4: "rts", 0xC4: "cts", 0xD4: "ack", 0x08: "data"}


def read_pcap(path: Path) -> list[tuple[str, bool, int | None]]:
    """(frame type, bad FCS, antenna signal dBm or None) of every record."""
    data = path.read_bytes()
    assert struct.unpack_from("<I", data, 0)[0] == 0xA1B23C4D
    out, at = [], 24
    while at < len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, at)
        rec = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        rt_len = struct.unpack_from("<H", rec, 2)[0]
        present = struct.unpack_from("<I", rec, 4)[0]
        flags = rec[8]
        signal = struct.unpack_from("<b", rec, 14)[0] if present & (1 << 5) else None
        out.append((KINDS[rec[rt_len]], bool(flags & 0x40), signal))
    return out


def test_trace_and_pcap_agree_with_the_summary(tmp_path):
    scenario = tmp_path / "hidden.toml"
    scenario.write_text(HIDDEN)
    trace, pcap = tmp_path / "trace.jsonl", tmp_path / "frames.pcap"
    proc = run_cli(
        ["run", str(scenario), "--json", "--trace", str(trace), "--pcap", str(pcap)],
        fake=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    sent = Counter(e["frame"] for e in events if e["event"] == "tx_start")
    ended = Counter(e["frame"] for e in events if e["event"] == "tx_end")
    lost = Counter(
        e["frame"] for e in events if e["event"] == "rx_lost" and e.get("ra") == e["node"]
    )
    drops = Counter(e["cause"] for e in events if e["event"] == "drop")
    mac = summary["mac"]
    assert {k: sent[k] for k in mac["frames_sent"]} == mac["frames_sent"]
    # Every transmission ends, but those still on the air when the run stops.
    assert 0 <= sum(sent.values()) - sum(ended.values()) <= 4
    assert {k: lost[k] for k in mac["collisions"]} == mac["collisions"]
    assert {k: drops[k] for k in summary["drops"]} == summary["drops"]
    # The run is one that tests something: it collides and drops.
    assert sum(mac["collisions"].values()) > 10
    assert summary["drops"]["queue_overflow"] > 0 and summary["drops"]["mac_retry"] > 0
    # Every decoded frame addressed to a node is a reception there.
    assert any(e["event"] == "rx_ok" and e.get("ra") == e["node"] for e in events)
    assert {e["node"] for e in events} == {1, 2, 3, 4}  # the file's ids

    records = read_pcap(pcap)
    assert Counter(k for k, _, _ in records) == Counter(mac["frames_sent"])
    bad = Counter(k for k, is_bad, _ in records if is_bad)
    assert {k: bad[k] for k in mac["collisions"]} == mac["collisions"]
    signals = [s for k, _, s in records if s is not None]
    assert signals and all(-100 < s < 0 for s in signals)

    # Every reception carries its power (docs/trace.md), which at the addressee is
    # the radiotap signal of the frame's record: records and tx_start events come in
    # the same order, and on a still field a pair of nodes has one power.
    received = [e for e in events if e["event"] in ("rx_ok", "rx_lost")]
    assert received and all(isinstance(e.get("power_dbm"), float) for e in received)
    power = {(e["peer"], e["node"]): e["power_dbm"] for e in received}
    starts = [e for e in events if e["event"] == "tx_start"]
    compared = 0
    for start, (_, _, signal) in zip(starts, records):
        pair = (start["node"], start.get("ra"))
        if signal is not None and pair in power:
            assert round(power[pair]) == signal, (start, signal, power[pair])
            compared += 1
    assert compared > 1000


def test_trace_filters_and_parquet(tmp_path):
    import pyarrow.parquet as pq

    scenario = tmp_path / "hidden.toml"
    scenario.write_text(HIDDEN)
    out = tmp_path / "drops.parquet"
    args = ["run", str(scenario), "--quiet", "--trace", str(out), "--trace-event", "drop"]
    proc = run_cli([*args, "--trace-node", "3", "--trace-flow", "1"], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(out)
    assert table.num_rows > 0
    rows = table.to_pylist()
    assert {r["event"] for r in rows} == {"drop"}
    assert {r["node"] for r in rows} == {3} and {r["flow"] for r in rows} == {1}
    assert {r["cause"] for r in rows} == {"queue_overflow"}
    bad = run_cli([*args[:-1], "nonsense"], fake=False, cwd=tmp_path)
    assert bad.returncode == 2 and "tx_start" in bad.stderr


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (apt-get install tshark)")
def test_wireshark_decodes_flows_as_plain_udp_and_tcp_and_sees_the_collisions(tmp_path):
    scenario = tmp_path / "hidden.toml"
    scenario.write_text(HIDDEN)
    pcap = tmp_path / "frames.pcap"
    proc = run_cli(["run", str(scenario), "--json", "--pcap", str(pcap)], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    fields = subprocess.run(
        ["tshark", "-r", str(pcap), "-T", "fields", "-e", "frame.protocols"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.split()
    data = [f for f in fields if ":ip:" in f]
    plain = (":ip:udp", ":ip:tcp", ":ip:udp:data", ":ip:tcp:data")
    assert data and all(f.endswith(plain) for f in data), set(data)
    bad = subprocess.run(
        ["tshark", "-r", str(pcap), "-Y", "radiotap.flags.badfcs == 1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.splitlines()
    assert len(bad) == sum(summary["mac"]["collisions"].values())
