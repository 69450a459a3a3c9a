#!/usr/bin/env python3
"""Why a TCP flow's losses end in a fast retransmit or a retransmission timeout.

    python3 tools/tcp_loss_anatomy.py experiments/nred/scenarios/exposed.toml \\
        --seed 1 --param mac.queue=nred --param nred.max_p=0.14 [--platform ns2]

Runs the scenario once with a packet-event trace of drops, an air capture and a
capture at every TCP source (docs/trace.md), reads the captures with tshark, and
prints per TCP flow:

- the data segments and pure ACKs lost, by cause and by where (the source's or the
  sink's node, or a relay), from the trace;
- the sender's fast retransmits and timeouts (the summary's `tcp` counters), and the
  timeouts split into first expiries and back-offs (an expiry with no new ACK since
  the previous one);
- for each first expiry: the sender's window just before it (min(cwnd, advertised
  window) from the 1 ms series: what a backlogged sender has outstanding, segments
  its own queue dropped included), and, rebuilt from the source's capture, the
  duplicate ACKs it received for the hole before the timer fired and whether it was
  in fast recovery (a retransmission of a hole was lost again);
- for each hole that timed out, where its last transmission died (trace cause and
  node; "never sent": every copy was dropped in the source's own queue, before the
  air; "delivered": the segment arrived and its ACKs were lost or late).

Each first expiry gets one cause, the first that applies: in fast recovery; a window
below 4 segments (too few to return 3 duplicate ACKs); 3 or more duplicate ACKs
that RFC 6582's `recover` guard ignored; fewer than 3 from a larger window (several
of its segments, or their ACKs, lost). Needs tshark on the PATH.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from manetfair import api
from manetfair.scenario import parse_param

SERIES_S = 0.001  # bins of the TCP series: a flow's timeouts are >= min RTO apart


@dataclass
class Seg:
    """One TCP segment seen in a capture."""

    t: float
    ipid: int
    seq: int
    ack: int
    length: int
    from_src: bool


@dataclass
class Expiry:
    """One first expiry of the retransmission timer, rebuilt from the source's capture."""

    t: float
    flight: int
    dupacks: int
    in_recovery: bool
    fate: str
    snd_una: int
    una_since: float
    window: int = 0


@dataclass
class FlowAnatomy:
    """The counters this tool prints for one TCP flow."""

    flow: int
    src: int
    dst: int
    tcp: dict[str, int]
    data_drops: Counter[str] = field(default_factory=Counter)
    ack_drops: Counter[str] = field(default_factory=Counter)
    backoffs: int = 0
    expiries: list[Expiry] = field(default_factory=list)


FIELDS = "frame.time_epoch ip.id tcp.srcport tcp.dstport tcp.seq_raw tcp.ack_raw tcp.len"


def _tshark(pcap: Path) -> list[list[str]]:
    """TCP segments of a capture: epoch time, IP id, ports, raw seq/ack, payload length."""
    fields = [arg for name in FIELDS.split() for arg in ("-e", name)]
    cmd = ["tshark", "-r", str(pcap), "-Y", "tcp", "-T", "fields", "-E", "separator=,"]
    out = subprocess.run([*cmd, *fields], check=True, capture_output=True, text=True).stdout
    return [line.split(",") for line in out.splitlines() if line]


def _segments(rows: list[list[str]], flow: int) -> list[Seg]:
    data_port, src_port = 40000 + flow, 50000 + flow
    segs = []
    for t, ipid, sport, dport, seq, ack, length in rows:
        if {int(sport), int(dport)} != {data_port, src_port}:
            continue
        segs.append(
            Seg(float(t), int(ipid, 16), int(seq), int(ack), int(length), int(sport) == src_port)
        )
    return segs


def _where(drop: dict[str, Any], src: int, dst: int) -> str:
    node = drop["node"]
    place = "source" if node == src else "sink" if node == dst else f"relay {node}"
    return f"{drop['cause']} at {place}"


def _expiries(
    segs: Sequence[Seg],
    rto_times: Sequence[float],
    fr_times: Sequence[float],
    fate_of: dict[int, str],
) -> tuple[list[Expiry], int]:
    """The first expiries (and the count of back-offs) among `rto_times`, each with the
    sender's state rebuilt from its own capture just before it. A fast retransmit
    (from the counter's bins: one the source's own queue dropped never reaches the
    air) opens a recovery that lasts until snd_una reaches the snd_max of that
    moment (RFC 6582's `recover`) or a timeout ends it."""
    out: list[Expiry] = []
    backoffs = 0
    snd_una = snd_max = 0
    una_since = 0.0  # when snd_una last advanced
    dups = 0
    recover: int | None = None
    last_rto = -1.0
    mss = max((s.length for s in segs if s.from_src), default=1)
    sent_ids: dict[int, int] = {}  # seq -> ip id of its latest transmission
    # Time-ordered: segments, fast retransmits (1) and expiries (2) of one instant in
    # that order.
    events: list[tuple[float, int, Seg | None]] = [(s.t, 0, s) for s in segs]
    events += [(t, 1, None) for t in fr_times] + [(t, 2, None) for t in rto_times]
    events.sort(key=lambda e: (e[0], e[1]))
    for t, kind, s in events:
        if s is not None:
            if s.from_src and s.length > 0:
                sent_ids[s.seq] = s.ipid
                snd_max = max(snd_max, s.seq + s.length)
            elif s.ack > snd_una:
                snd_una, una_since, dups = s.ack, s.t, 0
                if recover is not None and snd_una >= recover:
                    recover = None
            elif s.ack == snd_una and s.length == 0 and snd_max > snd_una:
                dups += 1
        elif kind == 1:
            recover = snd_max
        else:
            if last_rto >= una_since and last_rto >= 0:
                backoffs += 1
            else:
                ipid = sent_ids.get(snd_una)
                fate = fate_of.get(ipid, "delivered") if ipid is not None else "never sent"
                flight = -(-(snd_max - snd_una) // mss)
                out.append(Expiry(t, flight, dups, recover is not None, fate, snd_una, una_since))
            recover = None
            last_rto = t
    return out, backoffs


def anatomy(
    file: Path, seed: int, overrides: dict[str, Any], workdir: Path
) -> tuple[list[FlowAnatomy], dict[str, Any]]:
    overrides = {**overrides, "trace.series_interval_s": SERIES_S}
    sc = api.prepare(str(file), seed=seed, overrides=overrides)
    flows = [
        (i, int(f["src"]), int(f["dst"]))
        for i, f in enumerate(sc.data["flow"])
        if str(f.get("transport", "tcp-newreno")).startswith("tcp")
    ]
    sources = sorted({src for _, src, _ in flows})
    node_paths = [str(workdir / f"node{n}.pcap") for n in sources]
    drops_path = workdir / "drops.jsonl"
    res = api.run_prepared(
        sc,
        pcap=workdir / "air.pcap",
        trace_path=str(drops_path),
        trace_events=["drop"],
        pcap_nodes=sources,
        pcap_node_paths=node_paths,
    )
    drops = [json.loads(line) for line in drops_path.read_text().splitlines()]
    res.summary["series_s"] = SERIES_S
    air = _tshark(workdir / "air.pcap")
    out = []
    for flow, src, dst in flows:
        fs = res.summary["flows"][flow]
        fa = FlowAnatomy(flow, src, dst, dict(fs["tcp"]))
        fate_of: dict[int, str] = {}
        for d in drops:
            if d.get("flow") != flow:
                continue
            where = _where(d, src, dst)
            # A pure ACK travels from the sink: its size is the 40-byte TCP/IP header.
            is_ack = d["src"] == dst
            (fa.ack_drops if is_ack else fa.data_drops)[where] += 1
            if not is_ack:
                fate_of[int(d["packet"]) & 0xFFFF] = where
        bins = res.traces["tcp"][flow]["timeouts"]
        # A timeout counted in bin k fired in [k, k + 1) bins: the state at the
        # bin's start is the state it saw, within a millisecond.
        rto_times = [k * SERIES_S for k, n in enumerate(bins) for _ in range(int(n))]
        frs = res.traces["tcp"][flow]["fast_retransmits"]
        fr_times = [k * SERIES_S for k, n in enumerate(frs) if n]
        segs = _segments(_tshark(Path(node_paths[sources.index(src)])), flow)
        # The air capture also holds transmissions the source's own capture leaves out
        # (a data frame the MAC gave up on): take the latest IP id of every seq from it.
        segs += [s for s in _segments(air, flow) if s.from_src and s.length > 0]
        segs.sort(key=lambda s: s.t)
        fa.expiries, fa.backoffs = _expiries(segs, rto_times, fr_times, fate_of)
        # The sender's window just before the expiry, from the series (the sample at
        # the end of the bin before): a backlogged sender has that much outstanding,
        # segments its own queue dropped included, outside fast recovery.
        cwnd = res.traces["tcp"][flow]["cwnd_pkts"]
        max_window = int(sc.data.get("tcp", {}).get("max_window_pkts", 20))
        for e in fa.expiries:
            k = round(e.t / SERIES_S)
            e.window = min(int(cwnd[max(k - 1, 0)]), max_window)
        out.append(fa)
    return out, res.summary


def _class(e: Expiry) -> str:
    """Why a first expiry was not a fast retransmit, the first that applies."""
    if e.in_recovery:
        return "retransmission lost in recovery"
    if e.window < 4:
        return "window < 4"
    if e.dupacks >= 3:
        return ">= 3 dupacks below recover"
    return "< 3 dupacks from a window >= 4"


def _render(flows: Sequence[FlowAnatomy]) -> str:
    lines = []
    for fa in flows:
        tcp = fa.tcp
        first = len(fa.expiries)
        small = sum(e.window < 4 for e in fa.expiries)
        after_fr = sum(e.in_recovery for e in fa.expiries)
        lines.append(
            f"flow {fa.flow} ({fa.src} -> {fa.dst}): {tcp['data_segments']} segments, "
            f"{tcp['fast_retransmits']} fast retransmits, {tcp['timeouts']} timeouts "
            f"= {first} first expiries + {fa.backoffs} back-offs"
        )
        lines.append(f"  data lost: {dict(fa.data_drops.most_common())}")
        lines.append(f"  ACKs lost: {dict(fa.ack_drops.most_common())}")
        if not first:
            continue
        cls = Counter(_class(e) for e in fa.expiries)
        lines.append(f"  first expiries by cause: {dict(cls.most_common())}")
        flights = Counter(e.window for e in fa.expiries)
        dups = Counter(min(e.dupacks, 3) for e in fa.expiries)
        lines.append(
            f"  first expiries: window < 4 in {small}, "
            f"in recovery in {after_fr}; "
            f"window {dict(sorted(flights.items()))}; "
            f"dupacks seen (3 = 3 or more) {dict(sorted(dups.items()))}"
        )
        fates = Counter(e.fate for e in fa.expiries)
        lines.append(f"  the timed-out hole's last copy: {dict(fates.most_common())}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--platform", choices=("standard", "ns2"))
    ap.add_argument("--json", action="store_true", help="print the counters as JSON")
    args = ap.parse_args(argv)
    if shutil.which("tshark") is None:
        print("tcp_loss_anatomy: tshark is not on the PATH", file=sys.stderr)
        return 2
    overrides: dict[str, Any] = {}
    for spec in args.param:
        key, values = parse_param(spec)
        overrides[key] = values[0]
    if args.platform:
        overrides["platform"] = args.platform
    with tempfile.TemporaryDirectory() as tmp:
        flows, _ = anatomy(args.scenario, args.seed, overrides, Path(tmp))
    if args.json:
        print(
            json.dumps(
                [fa.__dict__ | {"expiries": [e.__dict__ for e in fa.expiries]} for fa in flows],
                default=dict,
                indent=1,
            )
        )
    else:
        print(_render(flows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
