"""OPET (Zhai et al., docs/opet.md) seen from outside: its frames in the trace, in
the pcap and in Wireshark agree with the summary's counters."""

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

# Two TCP connections over a 5-hop chain: relays refuse, block and resume.
CHAIN = """
name = "opet-small-chain"
duration_s = 8.0
seed = 2

[mac.opet]
enabled = true

[tcp]
delayed_ack = false

[topology]
kind = "chain"
nodes = 6
spacing_m = 200.0

[[flow]]
src = 0
dst = 5
transport = "tcp-newreno"
app = "ftp"
start_s = 0.5

[[flow]]
src = 0
dst = 5
transport = "tcp-newreno"
app = "ftp"
start_s = 0.6
"""


def classify(mac: bytes) -> str:
    """A frame's kind from its MAC bytes (FCS excluded), as docs/opet.md writes them:
    the negative CTS is a CTS with the More Data flag, the ready-to-receive frame a
    CTS with a 4-byte flow label (14 bytes instead of 10)."""
    fc, flags = mac[0], mac[1]
    if fc == 0xC4:
        if flags & 0x20:
            return "ncts"
        return "rtr" if len(mac) == 14 else "cts"
    return {0xB4: "rts", 0xD4: "ack", 0x08: "data"}[fc]


def read_pcap(path: Path) -> list[tuple[str, bytes]]:
    data = path.read_bytes()
    out, at = [], 24
    while at < len(data):
        _, _, incl, _ = struct.unpack_from("<IIII", data, at)
        rec = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        rt_len = struct.unpack_from("<H", rec, 2)[0]
        mac = rec[rt_len:]
        out.append((classify(mac), mac))
    return out


def run_chain(tmp_path: Path) -> tuple[dict, Path, Path]:
    scenario = tmp_path / "chain.toml"
    scenario.write_text(CHAIN)
    trace, pcap = tmp_path / "trace.jsonl", tmp_path / "frames.pcap"
    proc = run_cli(
        ["run", str(scenario), "--json", "--trace", str(trace), "--pcap", str(pcap)],
        fake=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout), trace, pcap


def test_opet_frames_in_the_trace_and_the_pcap_match_the_summary(tmp_path):
    summary, trace, pcap = run_chain(tmp_path)
    mac = summary["mac"]
    opet = mac["opet"]
    assert opet["ncts_sent"] > 0 and opet["rtr_sent"] > 0 and opet["resumes"] > 0
    assert mac["frames_sent"]["ncts"] == opet["ncts_sent"]
    assert mac["frames_sent"]["rtr"] == opet["rtr_sent"]
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    sent = Counter(e["frame"] for e in events if e["event"] == "tx_start")
    assert {k: sent[k] for k in mac["frames_sent"]} == mac["frames_sent"]

    records = read_pcap(pcap)
    assert Counter(k for k, _ in records) == Counter(mac["frames_sent"])
    for kind, b in records:
        if kind == "rts":
            # RTS(f): FC, Duration, RA, TA, then the flow label (flow 2k or 2k + 1).
            assert len(b) == 20 and struct.unpack(">I", b[16:20])[0] in range(4)
        elif kind == "ncts":
            assert len(b) == 10 and b[2:4] == b"\x00\x00", "Duration 0"
        elif kind == "rtr":
            assert struct.unpack(">I", b[10:14])[0] in range(4)
            # SIFS + DATA + SIFS + ACK 304: a 1040-byte TCP segment (4464 us) or a
            # 40-byte TCP ACK (464 us).
            assert struct.unpack("<H", b[2:4])[0] in (4788, 788)


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (apt-get install tshark)")
def test_wireshark_reads_opet_frames_as_cts_without_complaint(tmp_path):
    summary, _, pcap = run_chain(tmp_path)
    opet = summary["mac"]["opet"]

    def tshark(*args: str) -> str:
        return subprocess.run(
            ["tshark", "-r", str(pcap), *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout

    # TCP's own analysis warns about segments seen at every hop (out of order);
    # no control frame may be malformed or draw a warning.
    assert tshark("-Y", "_ws.malformed").strip() == ""
    assert tshark("-Y", "wlan.fc.type == 1 && _ws.expert.severity >= warning").strip() == ""
    rows = tshark(
        "-T",
        "fields",
        "-E",
        "separator=,",
        "-e",
        "frame.len",
        "-e",
        "radiotap.length",
        "-e",
        "wlan.fc.type_subtype",
        "-e",
        "wlan.fc.moredata",
    ).splitlines()
    kinds: Counter[str] = Counter()
    for row in rows:
        length, rt, subtype, more = row.split(",")
        if int(subtype, 0) == 0x1C:  # CTS
            mac = int(length) - int(rt)
            kinds["ncts" if more in ("1", "True") else "rtr" if mac == 14 else "cts"] += 1
    assert kinds["ncts"] == opet["ncts_sent"]
    assert kinds["rtr"] == opet["rtr_sent"]
    assert kinds["cts"] == summary["mac"]["frames_sent"]["cts"]
