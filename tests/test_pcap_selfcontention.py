"""The quick-exchange and fast-forward frames in a pcap capture (docs/selfcontention.md).

Our own reading of the bytes checks the encodings Wireshark does not show: the CTS's
τ field and the ACK-RTS's second receiver address. tshark, where installed (CI
installs it), checks that every frame dissects without a malformed frame or a
warning.
"""

from __future__ import annotations

import shutil
import struct
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.core

# One TCP connection over a 3-hop chain with both schemes on (2 Mbit/s data,
# 1 Mbit/s control frames, RTS/CTS before every data frame).
CHAIN = """
name = "qe-ff-pcap"
duration_s = 3.0
seed = 1
[mac]
rts_threshold_bytes = 0
[mac.quick_exchange]
enabled = true
[mac.fast_forward]
enabled = true
p = 0.75
[topology]
kind = "chain"
nodes = 4
spacing_m = 200.0
[[flow]]
src = 0
dst = 3
start_s = 0.2
"""

# Airtimes in µs (802.11b DSSS, long preamble): PLCP 192, control frames at 1 Mbit/s,
# data at 2 Mbit/s (4 µs a byte).
SIFS, ACK, CTS_QE = 10, 304, 320


def data_airtime(frame_bytes: int) -> int:
    return 192 + 4 * frame_bytes


@dataclass
class Frame:
    t_ns: int
    fc: int
    duration: int
    body: bytes  # the 802.11 frame after frame control and duration


def read_pcap(path: Path) -> list[Frame]:
    """A pcap of link type 127 with nanosecond timestamps: radiotap, then 802.11."""
    data = path.read_bytes()
    magic, _, _, _, _, _, linktype = struct.unpack_from("<IHHiIII", data, 0)
    assert magic == 0xA1B23C4D and linktype == 127
    frames, at = [], 24
    while at < len(data):
        sec, nsec, incl, _orig = struct.unpack_from("<IIII", data, at)
        record = data[at + 16 : at + 16 + incl]
        at += 16 + incl
        rt_len = struct.unpack_from("<H", record, 2)[0]
        mac = record[rt_len:]
        frames.append(
            Frame(sec * 10**9 + nsec, mac[0], struct.unpack_from("<H", mac, 2)[0], mac[4:])
        )
    return frames


@pytest.fixture(scope="module")
def capture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from manetfair import api

    path = tmp_path_factory.mktemp("pcap") / "qe-ff.pcap"
    api.run(CHAIN, pcap=path)
    return path


def test_cts_carries_tau_and_data_cf_ack_fits_it(capture: Path) -> None:
    frames = read_pcap(capture)
    # A CTS with the τ field: frame control 0xc4, Duration, RA, τ (16 bytes on the air
    # with the FCS, 12 in the capture).
    taus = {}  # (CTS transmitter's peer = RA) -> last τ
    checked = 0
    for i, f in enumerate(frames):
        if f.fc == 0xC4:
            assert len(f.body) == 8, "every CTS carries τ when quick-exchange is on"
            ra, tau = f.body[:6], struct.unpack_from("<H", f.body, 6)[0]
            taus[ra] = tau
        elif f.fc == 0x18:
            # Data+CF-Ack: DATA2 with ACK1, addressed to the RTS sender, who is the
            # RA of the CTS(τ) that announced it: τ = T(DATA2+ACK1) − T(ACK) + SIFS +
            # T(ACK2), with DATA2+ACK1 32 bytes over the IP packet.
            ra = f.body[:6]
            ip_total = struct.unpack_from(">H", f.body, 20 + 8 + 2)[0]
            expected = data_airtime(ip_total + 32) - ACK + SIFS + ACK
            assert taus.get(ra) == expected, (i, taus.get(ra), expected)
            # Its Duration covers SIFS + ACK2.
            assert f.duration == SIFS + ACK
            checked += 1
    assert checked > 0, "no DATA2+ACK1 in the capture"
    assert any(t > 0 for t in taus.values())


def test_ack_rts_carries_the_next_hop_and_is_answered(capture: Path) -> None:
    frames = read_pcap(capture)
    answered = seen = 0
    for i, f in enumerate(frames):
        if f.fc != 0xD4 or len(f.body) == 6:
            continue  # a plain ACK: RA only
        # ACK-RTS: RA of the ACK, RA of the RTS, TA (26 bytes with the FCS).
        assert len(f.body) == 18
        ra_ack, ra_rts, ta = f.body[:6], f.body[6:12], f.body[12:18]
        assert len({ra_ack, ra_rts, ta}) == 3
        # Duration = 3·SIFS + CTS + DATA_f + ACK, with DATA_f a whole data frame.
        data_f = f.duration - 3 * SIFS - CTS_QE - ACK
        assert data_f > 192 and (data_f - 192) % 4 == 0, f.duration
        seen += 1
        # The next hop answers SIFS (and a propagation delay under 2 µs) after the
        # ACK-RTS's 400 µs with a CTS to its TA, unless the ACK-RTS was lost there.
        answer = [
            g
            for g in frames[i + 1 : i + 6]
            if g.fc == 0xC4 and 0 <= g.t_ns - f.t_ns - (400 + SIFS) * 1000 < 2000
        ]
        if answer and answer[0].body[:6] == ta:
            answered += 1
    assert seen > 0, "no ACK-RTS in the capture"
    assert answered > 0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark (apt-get install tshark)")
def test_tshark_dissects_every_frame_without_a_complaint(capture: Path) -> None:
    def tshark(*args: str) -> str:
        proc = subprocess.run(
            ["tshark", "-r", str(capture), *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    # Warning severity and above (Wireshark's PI_WARN = 0x00600000).
    bad = tshark("-Y", "_ws.malformed || _ws.expert.severity >= 0x00600000")
    assert bad.strip() == "", bad[:2000]
    kinds = tshark("-T", "fields", "-e", "wlan.fc.type_subtype").split()
    # Data+CF-Ack (0x0021), CTS (0x001c) and ACK (0x001d) are among them.
    assert {"0x0021", "0x001c", "0x001d"} <= set(kinds), sorted(set(kinds))
