#!/usr/bin/env python3
"""What a scripted handover (a flow's `route_changes`) costs, in ns-2.35 and in manetfair.

Both simulators give a packet its next hop when it enters the interface queue:
ns-2's routing agent writes it into the packet before LL and the IFQ
(agent/static_route.cc, as dsdv/dsdv.cc does), manetfair's static routes before
the queue (`net::static_routes`). At a route change the source's queue may
still hold packets for the old next hop. When that node is out of range, each
such packet is sent until its retries run out (ns-2's static routes have no
link-failure callback, `xmit_failure_ = 0`), and every packet behind it waits,
new route or not. This counts, per run and per change of the source's route:

- ``stuck``: packets the source still sends to the old next hop after the change;
- ``stall_s``: time from the change to the source's first frame to the new next hop;
- the flow's throughput in each phase (its start, the changes, the end), as the
  claims measure it (``manetfair.claims.trace_value``).

    python3 bench/ns2/handover.py run throttle-table1 [--variant throttle=off] [--seeds 40]
    python3 bench/ns2/handover.py table throttle-table1

``run`` writes ``results/handover-<experiment>.jsonl``: one line per variant,
simulator (ns-2.35, where it can run the variant; manetfair under each platform)
and seed, keeping the other variants' lines. ``table`` prints the means as a
Markdown table per variant.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import claim_values
import ns2tcl
import ns2trace
from manetfair import api, claims, experiments
from manetfair.experiments import Experiment

SIMULATORS = ("ns-2.35", "manetfair ns2", "manetfair standard")
Json = dict[str, Any]
# (time, packet, next hop) of each data frame a source puts on the air.
Send = tuple[float, int, int]


def changes(sc: Mapping[str, Any]) -> list[Json]:
    """Each flow with `route_changes`: its index, source, phases and (time, old next
    hop, new next hop) per change, in the scenario's node ids."""
    out: list[Json] = []
    for i, f in enumerate(sc.get("flow") or []):
        steps = f.get("route_changes") or []
        if not steps:
            continue
        paths = [f["route"]] + [c["route"] for c in steps]
        bounds = [f["start_s"]] + [c["at_s"] for c in steps] + [sc["duration_s"]]
        out.append(
            {
                "flow": i,
                "src": f["src"],
                "phases": list(zip(bounds, bounds[1:])),
                "changes": [
                    (c["at_s"], old[1], new[1]) for c, old, new in zip(steps, paths, paths[1:])
                ],
            }
        )
    return out


def handover_stats(
    sends: Sequence[Send], steps: Iterable[tuple[float, int, int]], end_s: float
) -> list[Json]:
    """Per change (at, old, new): the packets still sent to `old` from `at` on, and
    the time from `at` to the first frame to `new` (to `end_s` if none)."""
    out: list[Json] = []
    for at, old, new in steps:
        stuck = {p for t, p, nh in sends if t >= at and nh == old}
        first = min((t for t, _, nh in sends if t >= at and nh == new), default=end_s)
        out.append({"at_s": at, "stuck": len(stuck), "stall_s": round(first - at, 6)})
    return out


def ns2_sends(lines: Iterable[str], src: int) -> list[Send]:
    """The data frames node `src` (ns-2 index) sends, from an old-format wireless trace:
    ``s T _N_ MAC --- UID tcp SIZE [13a NEXTHOP SRC 800] ...`` (the MAC header's
    destination, in hex, is the next hop)."""
    tag = f"_{src}_"
    out: list[Send] = []
    for line in lines:
        p = line.split()
        if len(p) > 9 and p[0] == "s" and p[2] == tag and p[3] == "MAC" and p[6] in ("tcp", "cbr"):
            out.append((float(p[1]), int(p[5]), int(p[9], 16)))
    return out


def phase_kbps(
    traces: Mapping[str, Any], flow: int, phases: Sequence[tuple[float, float]]
) -> list[float]:
    run = claims.Run({}, 0, {}, dict(traces))
    return [
        round(
            claims.trace_value(
                run, {"trace": "flow_throughput_kbps", "series": [flow], "windows": [[a, b]]}
            ),
            1,
        )
        for a, b in phases
    ]


def run_ns2(sc: Json, seed: int) -> list[Json]:
    lay = ns2tcl.layout(sc)
    index = {node: i for i, node in enumerate(lay.ids)}
    text = ns2tcl.script(sc, seed=seed, agent_lib=claim_values.AGENT_LIB.resolve())
    with tempfile.TemporaryDirectory(prefix="ns2handover-") as tmp:
        script, trace = Path(tmp) / "case.tcl", Path(tmp) / "trace"
        script.write_text(text)
        subprocess.run(["ns", str(script), str(trace)], check=True, capture_output=True)
        with trace.open() as fh:
            stats = ns2trace.parse(fh)
        out = []
        for c in changes(sc):
            with trace.open() as fh:
                sends = ns2_sends(fh, index[c["src"]])
            ids = [(at, index[old], index[new]) for at, old, new in c["changes"]]
            out.append(
                {
                    "flow": c["flow"],
                    "kbps": phase_kbps(stats.traces(), c["flow"], c["phases"]),
                    "changes": handover_stats(sends, ids, sc["duration_s"]),
                }
            )
    return out


def run_manetfair(
    exp: Experiment, variant: Mapping[str, Any], sc: Json, seed: int, platform: str
) -> list[Json]:
    # `prepare` measures what a throttled arm needs (Thr_max), as `reproduce` does.
    scenario = api.prepare(exp.expand(variant), seed, sc["duration_s"], {"platform": platform})
    steps = changes(sc)
    with tempfile.TemporaryDirectory(prefix="mfhandover-") as tmp:
        path = Path(tmp) / "trace.jsonl"
        result = api.run_prepared(
            scenario,
            trace_path=str(path),
            trace_nodes=sorted({c["src"] for c in steps}),
            trace_events=["tx_start"],
        )
        events = [json.loads(line) for line in path.open()]
    out = []
    for c in steps:
        sends = [
            (e["t_ns"] / 1e9, e["packet"], e["ra"])
            for e in events
            if e["node"] == c["src"] and e.get("flow") == c["flow"] and e.get("frame") == "data"
        ]
        out.append(
            {
                "flow": c["flow"],
                "kbps": phase_kbps(result.traces, c["flow"], c["phases"]),
                "changes": handover_stats(sends, c["changes"], sc["duration_s"]),
            }
        )
    return out


def results_path(exp_id: str) -> Path:
    return claim_values.RESULTS_DIR / f"handover-{exp_id}.jsonl"


def find(exp_id: str) -> Experiment:
    for exp in experiments.load_all(claim_values.ROOT / "experiments"):
        if exp.id == exp_id:
            return exp
    sys.exit(f"no experiment {exp_id!r}")


def cmd_run(args: argparse.Namespace) -> None:
    exp = find(args.experiment)
    variant = dict(v.split("=", 1) for v in args.variant) if args.variant else {}
    chosen = [v for v in exp.variants(True) if {k: str(x) for k, x in v.items()} == variant]
    if len(chosen) != 1:
        sys.exit(f"{exp.id}: pick one quick variant with --variant; variants: {exp.variants(True)}")
    sc = claim_values.canonical(exp, chosen[0])
    if not changes(sc):
        sys.exit(f"{exp.id}: no flow has route_changes")
    sims = list(SIMULATORS)
    try:
        ns2tcl.script(sc, seed=1, agent_lib=claim_values.AGENT_LIB)
    except ns2tcl.Unsupported as exc:
        print(f"{exp.id} {chosen[0]}: not run in ns-2.35: {exc}", flush=True)
        sims.remove("ns-2.35")
    new = []
    for seed in range(1, args.seeds + 1):
        for sim in sims:
            if sim == "ns-2.35":
                flows = run_ns2(sc, seed)
            else:
                flows = run_manetfair(exp, chosen[0], sc, seed, sim.split()[1])
            line = {"experiment": exp.id, "variant": chosen[0], "simulator": sim, "seed": seed,
                    "scenario": claim_values.scenario_hash(sc), "flows": flows}  # fmt: skip
            new.append(line)
            print(json.dumps(line, sort_keys=True), flush=True)
    # The other variants' stored runs are kept.
    kept = [r for r in load(exp.id) if r["variant"] != chosen[0]]
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in kept + new)
    results_path(exp.id).write_text(text)


def load(exp_id: str) -> list[Json]:
    path = results_path(exp_id)
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def table(rows: Sequence[Json]) -> str:
    """Per simulator: the mean phase throughputs, and per change "stuck, stall mean /
    median, seconds per stuck packet" (the mean stuck packets per run; the stall's
    mean and median; the stalls of the runs that strand something over their stuck
    packets)."""
    out: list[str] = []
    for sim in SIMULATORS:
        mine = [r for r in rows if r["simulator"] == sim]
        if not mine:
            continue
        for k, flow in enumerate(mine[0]["flows"]):
            if not out:
                phases = " | ".join(f"phase {j + 1}" for j in range(len(flow["kbps"])))
                per = " | ".join(
                    f"change {j + 1} ({c['at_s']:g} s)" for j, c in enumerate(flow["changes"])
                )
                out.append(f"| simulator (flow, seeds) | {phases} | {per} |")
                out.append("|" + " --- |" * (1 + len(flow["kbps"]) + len(flow["changes"])))
            kbps = [
                statistics.mean(r["flows"][k]["kbps"][j] for r in mine)
                for j in range(len(flow["kbps"]))
            ]
            cells = [f"{v:.0f}" for v in kbps]
            for j in range(len(flow["changes"])):
                ch = [r["flows"][k]["changes"][j] for r in mine]
                stall = [c["stall_s"] for c in ch]
                stuck = sum(c["stuck"] for c in ch)
                lost = sum(c["stall_s"] for c in ch if c["stuck"])
                per = f"{lost / stuck:.1f}" if stuck else "-"
                cells.append(
                    f"{stuck / len(ch):.2f}, {statistics.mean(stall):.1f} / "
                    f"{statistics.median(stall):.1f} s, {per}"
                )
            out.append(f"| {sim} (flow {flow['flow']}, {len(mine)}) | " + " | ".join(cells) + " |")
    return "\n".join(out)


def cmd_table(args: argparse.Namespace) -> None:
    rows = load(args.experiment)
    variants: list[Json] = []
    for r in rows:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    for v in variants:
        print(", ".join(f"{k} = {x}" for k, x in v.items()) + ":\n")
        print(table([r for r in rows if r["variant"] == v]) + "\n")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    run = sub.add_parser("run", help="run ns-2.35 and manetfair over seeds")
    run.add_argument("experiment")
    run.add_argument("--variant", action="append", default=[], help="KEY=VALUE of a quick variant")
    run.add_argument("--seeds", type=int, default=40)
    run.set_defaults(func=cmd_run)
    tab = sub.add_parser("table", help="print the Markdown table of the stored runs")
    tab.add_argument("experiment")
    tab.set_defaults(func=cmd_table)
    args = ap.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
