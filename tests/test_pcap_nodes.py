"""Per-node captures (`run --pcap-node N`): what node N's own interface sees, so that
Wireshark's TCP analysis of the sender's capture counts exactly the run's
retransmitted segments; TCP and UDP checksums are real and validate."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import REPO, run_cli

pytestmark = pytest.mark.core

needs_tshark = pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")


def _count(pcap: Path, display_filter: str, *prefs: str) -> int:
    out = subprocess.run(
        ["tshark", "-r", str(pcap), *prefs, "-Y", display_filter],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout
    return len(out.splitlines())


@needs_tshark
def test_wireshark_counts_the_senders_retransmissions_and_checksums_validate(tmp_path):
    pcap = tmp_path / "air.pcap"
    args = ["run", str(REPO / "examples" / "chain.toml"), "--json", "--duration", "30"]
    proc = run_cli(
        [*args, "--pcap", str(pcap), "--pcap-node", "0", "--pcap-node", "4"],
        fake=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    tcp = json.loads(proc.stdout)["flows"][0]["tcp"]
    sender, receiver = tmp_path / "air-node0.pcap", tmp_path / "air-node4.pcap"
    assert sender.is_file() and receiver.is_file()
    # Flow 0's data segments leave from port 50000 (docs/trace.md).
    retransmitted = _count(sender, "tcp.analysis.retransmission && tcp.srcport == 50000")
    assert retransmitted == tcp["retransmitted_segments"] > 0
    # The air capture holds every hop's copy and every MAC retry: far more.
    assert _count(pcap, "tcp.analysis.retransmission && tcp.srcport == 50000") > retransmitted
    checks = ("-o", "tcp.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE")
    for capture in (pcap, sender, receiver):
        bad = "tcp.checksum.status == 0 || udp.checksum.status == 0"
        assert _count(capture, bad, *checks) == 0, capture.name
        # TCP ACKs fit the 256 bytes kept of each frame whole: those are checked.
        assert _count(capture, "tcp.checksum.status == 1", *checks) > 100, capture.name


def test_an_unknown_node_is_bad_input(tmp_path):
    args = ["run", str(REPO / "examples" / "chain.toml"), "--duration", "2"]
    proc = run_cli([*args, "--pcap-node", "99"], fake=False, cwd=tmp_path)
    assert proc.returncode == 2 and "--pcap-node 99" in proc.stderr
    assert not list(tmp_path.glob("*.pcap"))
