#!/usr/bin/env python3
"""Where fast-forward's TCP gain comes from, and whom it costs, with counters.

    python3 tools/ff_anatomy.py string --hops 18 [--platform ns2] [--seeds 3]
    python3 tools/ff_anatomy.py field --connections 12 25 [--platform ns2] [--seeds 3]

`string` runs selfcontention-fig5's string with 802.11 and with FF (p = 0.75) and
prints, per run averaged over the seeds: goodput, RTS frames sent and collided, the
TCP sender's timeouts and fast retransmits, drops by cause, FF's counters
(`mac.ff`) and how many hops in a row each data frame had been fast-forwarded
(`ff_run` of the packet-event trace). `field` runs selfcontention-fig6's random
fields and sums the flows' goodput by path length, 802.11 against FF, with the
number of flows that lose more than half or gain more than double: the paper's
account of FF's harm (longer flows gain, shorter flows lose) in numbers. Runs are
100 s, as in `--quick`.
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from manetfair import api, experiments
from manetfair.scenario import Scenario

ARMS = ("802.11", "ff")
DURATION_S = 100.0


def _scenario(exp_id: str, variant: dict[str, Any], platform: str, seed: int) -> Scenario:
    sc = experiments.get(exp_id).expand(variant)
    data = copy.deepcopy(sc.data)
    data["platform"] = platform
    return Scenario(data, f"{exp_id} {variant}").with_run(seed=seed, duration_s=DURATION_S)


def string(hops: int, platform: str, seeds: int) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for arm in ARMS:
        tot: Counter[str] = Counter()
        runs: Counter[int] = Counter()
        for seed in range(1, seeds + 1):
            sc = _scenario("selfcontention-fig5", {"hops": hops, "scheme": arm}, platform, seed)
            with tempfile.TemporaryDirectory() as tmp:
                trace = Path(tmp) / "tx.jsonl"
                s = api.run_prepared(sc, trace_path=str(trace), trace_events=["tx_start"]).summary
                for line in trace.read_text().splitlines():
                    e = json.loads(line)
                    if e.get("frame") == "data" and e.get("flow") is not None and e["bytes"] > 100:
                        runs[int(e.get("ff_run", 0))] += 1
            tot["goodput_kbps"] += s["aggregate_kbps"]
            tot["rts_sent"] += s["mac"]["frames_sent"]["rts"]
            tot["rts_collided"] += s["mac"]["collisions"]["rts"]
            for k in ("timeouts", "fast_retransmits"):
                tot[k] += s["flows"][0]["tcp"][k]
            for k, v in s["drops"].items():
                tot[f"drops.{k}"] += v
            for k, v in (s["mac"].get("ff") or {}).items():
                tot[f"ff.{k}"] += v
        row: dict[str, Any] = {k: round(v / seeds, 1) for k, v in sorted(tot.items())}
        frames = sum(runs.values())
        row["ff_run_share"] = {k: round(v / frames, 3) for k, v in sorted(runs.items()) if k <= 5}
        out[arm] = row
    return out


def field(connections: Sequence[int], platform: str, seeds: int) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0, 0, 0])
    for n in connections:
        for seed in range(1, seeds + 1):
            flows = {
                arm: api.run_prepared(
                    _scenario(
                        "selfcontention-fig6", {"connections": n, "scheme": arm}, platform, seed
                    )
                ).summary["flows"]
                for arm in ARMS
            }
            for a, f in zip(flows["802.11"], flows["ff"]):
                hops = int(a.get("hops") or 0)
                key = "1-2 hops" if hops <= 2 else "3-5 hops" if hops <= 5 else "6+ hops"
                g = groups[key]
                x, y = a["throughput_kbps"], f["throughput_kbps"]
                g[0] += x
                g[1] += y
                g[2] += 1
                g[3] += y < 0.5 * x
                g[4] += y > 2 * x
    return {
        key: {
            "flows": int(g[2]),
            "goodput_802.11_kbps": round(g[0] / seeds, 1),
            "goodput_ff_kbps": round(g[1] / seeds, 1),
            "change_pct": round(100 * (g[1] / g[0] - 1), 1) if g[0] else None,
            "flows_losing_half": int(g[3]),
            "flows_gaining_double": int(g[4]),
        }
        for key, g in sorted(groups.items())
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("what", choices=("string", "field"))
    ap.add_argument("--hops", type=int, default=18)
    ap.add_argument("--connections", type=int, nargs="+", default=[12, 25])
    ap.add_argument("--platform", choices=("standard", "ns2"), default="ns2")
    ap.add_argument("--seeds", type=int, default=3)
    args = ap.parse_args(argv)
    if args.what == "string":
        result = string(args.hops, args.platform, args.seeds)
    else:
        result = field(args.connections, args.platform, args.seeds)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
