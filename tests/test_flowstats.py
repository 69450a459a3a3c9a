"""FlowMonitor-grade flow statistics of the summary, recomputed from the packet trace:
delays and their percentiles, RFC 3550 jitter, relays crossed, losses by cause."""

from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from conftest import run_cli

pytestmark = pytest.mark.core

# A three-hop UDP flow through small queues (overflows) against a three-hop TCP
# flow the other way (retry drops, so retransmissions and timeouts).
SCENARIO = """
name = "flowstats"
duration_s = 8.0
seed = 2

[mac]
queue_capacity_pkts = 8

[topology]
kind = "chain"
nodes = 5
spacing_m = 200.0

[[flow]]
src = 0
dst = 3
transport = "udp"
app = "cbr"
rate_kbps = 400.0
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


def bin_of(ns: int) -> int:
    """The core's histogram bin (metrics::flowstats::bin_of): 16 sub-bins per octave."""
    if ns < 16:
        return ns
    e = ns.bit_length() - 1
    return 16 + (e - 4) * 16 + ((ns >> (e - 4)) & 15)


def bin_lo(b: int) -> int:
    return b if b < 16 else (16 + (b - 16) % 16) << ((b - 16) // 16)


def from_histogram(delays: list[int], q: float) -> float:
    """The nearest-rank quantile as the core reports it: its bin's midpoint, clamped."""
    exact = sorted(delays)[max(1, math.ceil(q * len(delays))) - 1]
    b = bin_of(exact)
    mid = (bin_lo(b) + bin_lo(b + 1) - 1) // 2
    return min(max(mid, min(delays)), max(delays)) / 1e9


def test_flow_statistics_equal_those_computed_from_the_trace(tmp_path):
    scenario = tmp_path / "flows.toml"
    scenario.write_text(SCENARIO)
    trace = tmp_path / "trace.jsonl"
    proc = run_cli(
        ["run", str(scenario), "--json", "--trace", str(trace)], fake=False, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    events = [json.loads(line) for line in trace.read_text().splitlines()]

    for flow in summary["flows"]:
        src, dst = flow["src"], flow["dst"]
        mine = [e for e in events if e.get("flow") == flow["id"] and e.get("src") == src]
        created: dict[int, int] = {}
        relays: Counter[int] = Counter()
        delays: list[int] = []
        forwarded = 0
        for e in mine:
            uid = e["packet"]
            if e["event"] == "enqueue":
                created.setdefault(uid, e["t_ns"])
                relays[uid] += 1
            elif e["event"] == "rx_ok" and e["node"] == dst == e.get("ra") and uid in created:
                # The first decoding at the destination delivers; later ones are
                # retransmissions whose ACK was lost.
                delays.append(e["t_ns"] - created.pop(uid))
                forwarded += relays[uid] - 1
        assert len(delays) == flow["packets_delivered"] > 2
        assert flow["mean_delay_s"] == pytest.approx(sum(delays) / len(delays) / 1e9, rel=1e-12)
        assert flow["min_delay_s"] == min(delays) / 1e9
        assert flow["max_delay_s"] == max(delays) / 1e9
        for key, q in (("median_delay_s", 0.5), ("p95_delay_s", 0.95), ("p99_delay_s", 0.99)):
            assert flow[key] == pytest.approx(from_histogram(delays, q), abs=1e-15), key
            exact = sorted(delays)[math.ceil(q * len(delays)) - 1] / 1e9
            assert flow[key] == pytest.approx(exact, rel=0.032), key
        jitter = 0.0
        for a, b in zip(delays, delays[1:]):
            jitter += (abs(b - a) - jitter) / 16
        assert flow["jitter_s"] == pytest.approx(jitter / 1e9, rel=1e-12)
        diffs = [abs(b - a) for a, b in zip(delays, delays[1:])]
        assert flow["mean_jitter_s"] == pytest.approx(sum(diffs) / len(diffs) / 1e9, rel=1e-12)
        assert flow["times_forwarded"] == forwarded == (flow["hops"] - 1) * len(delays)
        hist = flow["delay_histogram"]
        assert sum(hist["count"]) == len(delays)
        per_bin = Counter(bin_of(d) for d in delays)
        assert hist["count"] == [per_bin[b] for b in sorted(per_bin)]
        assert hist["bin_lo_s"] == [bin_lo(b) / 1e9 for b in sorted(per_bin)]
        drops = Counter(e["cause"] for e in mine if e["event"] == "drop")
        assert flow["losses"] == {k: drops[k] for k in summary["drops"]}

    udp, tcp = summary["flows"]
    # The run tests something: both flows lose packets, for different causes.
    assert udp["losses"]["queue_overflow"] > 0 and tcp["losses"]["mac_retry"] > 0

    # The flows export carries the same numbers, nested tables flattened.
    from manetfair.export import flatten_flow

    row = flatten_flow(tcp)
    assert row["tcp_retransmitted_segments"] == tcp["tcp"]["retransmitted_segments"] > 0
    assert row["losses_mac_retry"] == tcp["losses"]["mac_retry"]
    assert row["p99_delay_s"] == tcp["p99_delay_s"]
    assert not any(k.startswith(("delay_histogram", "series")) for k in row)
