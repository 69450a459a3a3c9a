"""tools/tcp_loss_anatomy.py: each timeout rebuilt from the sender's capture."""

from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest
from conftest import REPO

spec = importlib.util.spec_from_file_location(
    "tcp_loss_anatomy", REPO / "tools" / "tcp_loss_anatomy.py"
)
assert spec is not None and spec.loader is not None
tool = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = tool  # dataclasses look their module up
spec.loader.exec_module(tool)

MSS = 512


def data(t: float, n: int, ipid: int) -> object:
    return tool.Seg(t, ipid, n * MSS, 0, MSS, True)


def ack(t: float, n: int) -> object:
    return tool.Seg(t, 0, 0, n * MSS, 0, False)


def test_a_lost_segment_of_a_small_window_and_its_back_off():
    # Segments 0-2 sent, 0 acknowledged, 1 lost (IP id 11), 2 draws one dupack.
    segs = [data(0.00, 0, 10), data(0.01, 1, 11), data(0.02, 2, 12)]
    segs += [ack(0.05, 1), ack(0.07, 1)]
    expiries, backoffs = tool._expiries(segs, [1.05, 3.05], [], {11: "aqm at sink"})
    assert backoffs == 1, "the second expiry comes with no new ACK in between"
    (e,) = expiries
    assert (e.flight, e.dupacks, e.in_recovery, e.fate) == (2, 1, False, "aqm at sink")
    e.window = 3
    assert tool._class(e) == "window < 4"


def test_a_retransmission_lost_in_recovery_and_a_hole_never_on_the_air():
    segs = [data(0.01 * i, i, 20 + i) for i in range(1, 8)]  # segment 0 never on the air
    segs += [ack(0.1 + 0.01 * i, 0) for i in range(4)]  # 4 duplicate ACKs
    expiries, _ = tool._expiries(segs, [1.2], [0.14], {})
    (e,) = expiries
    assert (e.dupacks, e.in_recovery, e.fate) == (4, True, "never sent")
    assert tool._class(e) == "retransmission lost in recovery"


def test_recovery_ends_when_the_ack_passes_recover():
    segs = [data(0.01 * i, i, 30 + i) for i in range(6)]
    segs += [ack(0.1, 1), ack(0.11, 1), ack(0.12, 1), ack(0.13, 1)]
    segs += [ack(0.2, 6), data(0.21, 6, 40), data(0.22, 7, 41), ack(0.3, 7)]
    expiries, _ = tool._expiries(segs, [1.3], [0.125], {})
    (e,) = expiries
    assert not e.in_recovery, "the ACK of 6 covered everything sent at the fast retransmit"
    e.window = 8
    assert tool._class(e) == "< 3 dupacks from a window >= 4"


@pytest.mark.core
@pytest.mark.skipif(shutil.which("tshark") is None, reason="needs tshark")
def test_the_exposed_pair_under_nred_times_out_as_the_docs_say(tmp_path):
    flows, _ = tool.anatomy(
        REPO / "experiments" / "nred" / "scenarios" / "exposed.toml",
        1,
        {"mac.queue": "nred", "nred.max_p": 0.14},
        tmp_path,
    )
    # docs/nred.md, "Why so many drops end in a timeout": seed 1's two flows.
    assert [f.tcp["timeouts"] for f in flows] == [63, 75]
    assert [len(f.expiries) + f.backoffs for f in flows] == [63, 75]
    assert sum(e.fate == "never sent" for f in flows for e in f.expiries) == 77
