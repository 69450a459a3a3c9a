#!/usr/bin/env python3
"""TCP Westwood+ in manetfair beside ns-3's TcpWestwoodPlus on a 1-hop and a 4-hop chain.

Both simulators get the same chain (200 m spacing, static routes, one FTP flow
from the first to the last node) and the benchmark's radio, MAC and TCP
settings (docs/benchmark.md): 2 Mbit/s data, RTS/CTS, 50-packet queues, MSS
1000 B, initial window 1, a 20-segment window cap, delayed ACKs, minimum and
initial RTO 1 s, no SACK, no timestamps on the ns-3 side. NewReno runs beside
Westwood+ on both, so that the Westwood+ ratio can be read against the ratio
the two stacks already have without it. Results: docs/tcp.md.

    python3 bench/westwood.py [--seeds 10] [--duration 100] [--queue 50] [--ns3 PATH]

The ns-3 program is bench/ns3/ns3bench.cc, built as bench/run.py builds it
(``--ns3`` takes an already built binary). manetfair runs through its Python
package in this interpreter.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
SPACING_M = 200.0
START_S = 1.0
VARIANTS = {"newreno": "tcp-newreno", "westwood-plus": "tcp-westwood-plus"}


def chain(hops: int) -> list[tuple[float, float]]:
    return [(SPACING_M * i, 0.0) for i in range(hops + 1)]


def ns3_text(hops: int, tcp: str, seed: int, duration: float, queue: int = 50) -> str:
    lines = [
        f"name chain{hops}-{tcp}",
        f"duration {duration!r}",
        f"seed {seed}",
        "routing static",
        f"tcp {tcp}",
        f"queue {queue}",
    ]
    lines += [f"node {i} {x!r} {y!r}" for i, (x, y) in enumerate(chain(hops))]
    lines.append(f"flow 0 {hops} {START_S!r} {duration!r}")
    # Host routes along the chain, both directions (data and ACKs).
    for node in range(hops + 1):
        if node < hops:
            lines.append(f"nexthop {node} {hops} {node + 1}")
        if node > 0:
            lines.append(f"nexthop {node} 0 {node - 1}")
    return "\n".join(lines) + "\n"


def manetfair_text(hops: int, tcp: str, seed: int, duration: float, queue: int = 50) -> str:
    nodes = "\n".join(
        f"[[node]]\nid = {i}\nx_m = {x!r}\ny_m = {y!r}\n" for i, (x, y) in enumerate(chain(hops))
    )
    route = ", ".join(str(i) for i in range(hops + 1))
    return f"""name = "chain{hops}-{tcp}"
duration_s = {duration!r}
seed = {seed}

[radio]
data_rate_mbps = 2.0
basic_rate_mbps = 1.0
tx_range_m = 250.0
cs_range_m = 550.0

[mac]
rts_threshold_bytes = 0
queue_capacity_pkts = {queue}

[routing]
protocol = "static"

[tcp]
max_window_pkts = 20

[topology]
kind = "explicit"

{nodes}
[[flow]]
src = 0
dst = {hops}
transport = "{VARIANTS[tcp]}"
app = "ftp"
packet_bytes = 1000
start_s = {START_S!r}
stop_s = {duration!r}
route = [{route}]
"""


def run_ns3(binary: Path, text: str) -> float:
    with tempfile.NamedTemporaryFile("w", suffix=".txt") as f:
        f.write(text)
        f.flush()
        out = subprocess.run(
            [str(binary), "run", f.name], capture_output=True, text=True, check=True
        )
    return float(json.loads(out.stdout.strip().splitlines()[-1])["flows"][0]["throughput_kbps"])


def run_manetfair(text: str) -> float:
    import manetfair

    result = manetfair.run(manetfair.Scenario.from_toml(text))
    return float(result.summary["flows"][0]["throughput_kbps"])


def spread(xs: Sequence[float]) -> str:
    sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
    return f"{statistics.fmean(xs):.1f} (sd {sd:.1f}, {min(xs):.1f}-{max(xs):.1f})"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--duration", type=float, default=100.0)
    p.add_argument("--hops", default="1,4", help="comma list of chain lengths (default 1,4)")
    p.add_argument(
        "--queue",
        type=int,
        default=50,
        help="interface queue in packets; below the 20-segment window it overflows (default 50)",
    )
    p.add_argument("--ns3", type=Path, help="an ns3bench binary already built")
    args = p.parse_args(argv)
    if args.ns3 is not None:
        binary = args.ns3
    else:
        sys.path.insert(0, str(HERE))
        import run

        binary = run.build_ns3()
    print(
        "| chain | TCP | ns-3 kbit/s, mean (sd, range) | manetfair kbit/s, mean (sd, range) | ratio |"
    )
    print("| --- | --- | --- | --- | --- |")
    for hops in (int(h) for h in args.hops.split(",")):
        for tcp in VARIANTS:
            seeds = range(1, args.seeds + 1)
            ns3 = [
                run_ns3(binary, ns3_text(hops, tcp, s, args.duration, args.queue)) for s in seeds
            ]
            mf = [
                run_manetfair(manetfair_text(hops, tcp, s, args.duration, args.queue))
                for s in seeds
            ]
            ratio = statistics.fmean(mf) / statistics.fmean(ns3)
            print(
                f"| {hops} hop(s), queue {args.queue} | {tcp} | {spread(ns3)} | {spread(mf)} | {ratio:.3f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
