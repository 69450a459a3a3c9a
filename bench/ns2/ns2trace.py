"""Measurements from an ns-2.35 wireless trace, as manetfair's summary names them.

Reads the old wireless trace format (ns-2's default; ``trace/cmu-trace.cc``
``format_mac_common``, ``format_ip``, ``format_tcp``) and the new one
(``$ns use-newtrace``), plus the ``#flow`` and ``#duration`` lines the scripts
of :mod:`ns2tcl` write. Lines it does not know are skipped.

What is counted:

- **delivered bytes** of a flow: segments that reach the sink's agent and
  complete the in-order stream, at the time they complete it, inside the
  flow's measurement window (manetfair's ``delivered_bytes``); ns-2.35's
  first segment, seqno 0, is a SYN of header only (``Agent/TCP syn_``) and
  carries no data. A UDP (CBR) datagram counts once, when it arrives. The
  same bytes per 1 s bin make manetfair's ``flow_throughput_kbps`` trace.
- **RTS sent without a CTS back**: RTS frames sent (``s … MAC … RTS``) minus
  CTS frames received by their addressee (``r … MAC … CTS``).
- **first-RTS failures**: per node, the RTS frames sent since the last data
  frame belong to the next data frame it sends (or drops after its retries,
  ``D … MAC RET``); an MSDU (a packet uid at a node) whose first exchange
  needed more than one RTS, or never got a CTS, failed its first attempt.
  The frames sent without RTS (broadcasts) are not counted.
- **frames sent** per MAC frame type and **drops** per layer, reason and type.
- **the ledger** (static routes only): packets sent by an agent, and packets
  dropped by a queue, the routing layer or the MAC after its retries.
- **AODV messages** sent or forwarded, by type, when the script traces the
  routing layer (``router_trace``).

The new format names no type for RTS, CTS and ACK frames (``format_mac_common``
prints only the MAC header's fields), so from it only deliveries and drops are
read; the scripts write the old format.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

MAC_CONTROL = frozenset({"RTS", "CTS", "ACK"})
# The bin of the per-flow throughput series (manetfair's `trace.series_interval_s` default).
BIN_S = 1.0


@dataclass
class FlowTrace:
    """One flow's identity (ns-2 addresses) and measurement window, from a ``#flow`` line."""

    index: int
    saddr: int
    sport: int
    daddr: int
    dport: int
    packet_bytes: int
    measure_from_s: float
    stop_s: float
    next_seq: int = 0
    held: set[int] = field(default_factory=set)
    delivered_bytes: int = 0
    delivered_total_bytes: int = 0
    # Bytes delivered per bin of BIN_S seconds (bin index -> bytes), for the 1 s series.
    bins: Counter[int] = field(default_factory=Counter)

    def _deliver(self, t: float, data: int) -> None:
        self.delivered_total_bytes += data
        self.bins[int(t // BIN_S)] += data
        if self.measure_from_s <= t <= self.stop_s:
            self.delivered_bytes += data

    def receive(self, t: float, seq: int) -> None:
        """Segment ``seq`` reached the sink's agent at ``t``."""
        if seq < self.next_seq:
            return
        self.held.add(seq)
        while self.next_seq in self.held:
            self.held.discard(self.next_seq)
            self._deliver(t, self.packet_bytes if self.next_seq > 0 else 0)  # 0: the SYN
            self.next_seq += 1

    def receive_datagram(self, t: float, seq: int) -> None:
        """UDP datagram ``seq`` reached the sink's agent at ``t`` (each counted once)."""
        if seq not in self.held:
            self.held.add(seq)
            self._deliver(t, self.packet_bytes)

    def series_kbps(self, bins: int) -> list[float]:
        """kbit/s delivered in each of the first ``bins`` bins, as manetfair's
        ``flow_throughput_kbps`` trace (bytes of the bin * 8 / 1000 / BIN_S)."""
        return [self.bins.get(i, 0) * 8 / 1000 / BIN_S for i in range(bins)]

    def throughput_kbps(self) -> float:
        window = self.stop_s - self.measure_from_s
        return self.delivered_bytes * 8 / window / 1000 if window > 0 else 0.0


@dataclass
class _Node:
    pending_rts: int = 0
    seen: set[int] = field(default_factory=set)


@dataclass
class TraceStats:
    """What one ns-2 run measured; :meth:`summary` gives manetfair's names."""

    flows: dict[tuple[int, int, int, int], FlowTrace] = field(default_factory=dict)
    duration_s: float | None = None
    frames_sent: Counter[str] = field(default_factory=Counter)
    cts_received: int = 0
    msdus_started: int = 0
    first_rts_failed: int = 0
    drops: Counter[str] = field(default_factory=Counter)
    aodv_sent: Counter[str] = field(default_factory=Counter)
    # The script's routing protocol (its `#routing` line), None for a trace without it.
    routing: str | None = None
    # Packets (uids) made by an agent, and packets dropped, not frames lost.
    generated: set[int] = field(default_factory=set)
    dropped: set[int] = field(default_factory=set)
    _nodes: dict[int, _Node] = field(default_factory=dict)

    def _node(self, n: int) -> _Node:
        node = self._nodes.get(n)
        if node is None:
            node = self._nodes[n] = _Node()
        return node

    def add_flow(self, words: list[str]) -> None:
        i, sa, sp, da, dp, pb = (int(w) for w in words[1:7])
        f = FlowTrace(i, sa, sp, da, dp, pb, float(words[7]), float(words[8]))
        self.flows[(sa, sp, da, dp)] = f

    def _mac(self, ev: str, t: float, node: int, reason: str, uid: int, ptype: str) -> None:
        if ev == "s":
            self.frames_sent[ptype] += 1
            st = self._node(node)
            if ptype == "RTS":
                st.pending_rts += 1
            elif ptype not in MAC_CONTROL:
                self._close(st, uid, failed=st.pending_rts > 1)
        elif ev == "r":
            if ptype == "CTS":
                self.cts_received += 1
        elif ev == "D":
            self.drops[f"MAC {reason} {ptype}"] += 1
            if reason == "RET" and ptype not in MAC_CONTROL:
                self._close(self._node(node), uid, failed=True)
                self.dropped.add(uid)  # the packet itself, after its retries

    def _close(self, st: _Node, uid: int, *, failed: bool) -> None:
        if st.pending_rts > 0 and uid not in st.seen:
            self.msdus_started += 1
            self.first_rts_failed += failed
        st.seen.add(uid)
        st.pending_rts = 0

    def _agt_recv(
        self, t: float, addr: tuple[int, int, int, int], seq: int, datagram: bool = False
    ) -> None:
        f = self.flows.get(addr)
        if f is None:
            return
        if datagram:
            f.receive_datagram(t, seq)
        else:
            f.receive(t, seq)

    def traces(self) -> dict[str, Any]:
        """manetfair's ``bin_s``, ``time_s`` and ``flow_throughput_kbps`` traces: the
        bins from 0 to the run's duration, each flow's kbit/s delivered in each."""
        bins = math.ceil((self.duration_s or 0.0) / BIN_S - 1e-9)
        flows = sorted(self.flows.values(), key=lambda f: f.index)
        return {
            "bin_s": BIN_S,
            "time_s": [i * BIN_S for i in range(bins)],
            "flow_throughput_kbps": [f.series_kbps(bins) for f in flows],
        }

    def feed(self, line: str) -> None:
        if not line:
            return
        c = line[0]
        if c == "#":
            w = line[1:].split()
            if w and w[0] == "flow":
                self.add_flow(w)
            elif w and w[0] == "duration":
                self.duration_s = float(w[1])
            elif w and w[0] == "routing":
                self.routing = w[1]
            return
        if c not in "srfD" or len(line) < 2:
            return
        if line.startswith(" -t ", 1):
            self._new(line)
        elif line[1] == " ":
            self._old(line)

    def _old(self, line: str) -> None:
        # s 1.000115000 _0_ MAC  --- 0 RTS 44 [4b6 1 0 0] [...IP...] [seq ack] ...
        w = line.split()
        if len(w) < 8 or not w[2].startswith("_"):
            return
        ev, t, node, layer, reason, uid, ptype = w[:7]
        if layer == "MAC":
            self._mac(ev, float(t), int(node.strip("_")), reason, int(uid), ptype)
        elif ev == "D":
            self.drops[f"{layer} {reason} {ptype}"] += 1
            self.dropped.add(int(uid))  # a queue's or the routing layer's: a packet
        elif ev == "s" and layer == "AGT":
            self.generated.add(int(uid))
        elif ev in "sf" and layer == "RTR" and ptype == "AODV":
            # ... [0x2 1 1 [6 0] [0 4]] (REQUEST): sent or forwarded
            self.aodv_sent[w[-1].strip("()")] += 1
        elif ev == "r" and layer == "AGT" and ptype in ("tcp", "cbr"):
            # [src:sport dst:dport ttl nh] [seq ack] (tcp) or [seq] (cbr)
            try:
                i = w.index("-------")
            except ValueError:
                return
            s_addr, d_addr = w[i + 1].lstrip("["), w[i + 2]
            sa, sp = s_addr.split(":")
            da, dp = d_addr.split(":")
            seq = int(w[i + 5].lstrip("[").rstrip("]"))
            key = (int(sa), int(sp), int(da), int(dp))
            self._agt_recv(float(t), key, seq, datagram=ptype == "cbr")

    def _new(self, line: str) -> None:
        # r -t 1.0 -Hs 2 -Hd 2 -Ni 2 ... -Nl AGT -Nw --- ... -Is 0.0 -Id 2.0 -It tcp ... -Ps 0
        w = line.split()
        kv = dict(zip(w[1::2], w[2::2]))
        layer, ptype = kv.get("-Nl", ""), kv.get("-It", "")
        if w[0] == "D":
            self.drops[f"{layer} {kv.get('-Nw', '---')} {ptype or 'MAC'}"] += 1
        elif w[0] == "r" and layer == "AGT" and ptype == "tcp":
            sa, sp = kv["-Is"].split(".")
            da, dp = kv["-Id"].split(".")
            key = (int(sa), int(sp), int(da), int(dp))
            self._agt_recv(float(kv["-t"]), key, int(kv["-Ps"]))

    def summary(self) -> dict[str, Any]:
        """The run's numbers under manetfair's summary names (a subset of them)."""
        flows = sorted(self.flows.values(), key=lambda f: f.index)
        kbps = [f.throughput_kbps() for f in flows]
        total = sum(kbps)
        squares = sum(x * x for x in kbps)
        jain = total * total / (len(kbps) * squares) if squares > 0 else 0.0
        rts = self.frames_sent["RTS"]
        return {
            "flows": [
                {
                    "id": f.index,
                    "throughput_kbps": k,
                    "delivered_bytes": f.delivered_bytes,
                }
                for f, k in zip(flows, kbps)
            ],
            "aggregate_kbps": total,
            "jain_index": jain,
            "mac": {
                "frames_sent": dict(sorted(self.frames_sent.items())),
                "rts_sent": rts,
                "cts_received": self.cts_received,
                "rts_no_cts": rts - self.cts_received,
                "msdus_started": self.msdus_started,
                "first_rts_failed": self.first_rts_failed,
            },
            "drops": dict(sorted(self.drops.items())),
            "aodv_sent": dict(sorted(self.aodv_sent.items())),
            **self._ledger(),
        }

    def _ledger(self) -> dict[str, Any]:
        """manetfair's ``ledger.generated`` and ``ledger.dropped``: packets made by the
        agents (TCP segments and ACKs, datagrams) and packets dropped (by a queue, the
        routing layer, or the MAC after its retries; a frame lost to a collision is
        not a packet dropped). Only with static routes: they make no packets of their
        own, while AODV's are not all traced."""
        if self.routing != "static":
            return {}
        return {"ledger": {"generated": len(self.generated), "dropped": len(self.dropped)}}


def parse(lines: Iterable[str]) -> TraceStats:
    """Reads a whole trace (with the script's ``#flow`` lines first)."""
    stats = TraceStats()
    for line in lines:
        stats.feed(line.rstrip("\n"))
    return stats
