"""manetfair's reception models against ns-3 3.44, case by case, and the SINR model's
cost on the grid.

    python3 bench/reception.py                 every case, 5 seeds each
    python3 bench/reception.py --seeds 3 --cases link,pair
    python3 bench/reception.py --speed-only    only the grid cost (both models, one process)
    python3 bench/reception.py --report-only   RECEPTION.md from the stored runs and speed check

A run of every case also adds its rows (and the speed check) to bench/data's
reception tables, from which bench/RESULTS.md is remade (bench/results.py).

The cases (docs/models.md, "Validation against ns-3"): a single link at 250 m and at
251 m; two saturated UDP senders 500 m and 551 m apart, each with its receiver 200 m
outside; TCP over chains of 1 to 8 hops at 200 m; the two-flow hidden-terminal line of
Yahia and Bíró (paper 002, scenario 2). Both simulators get the settings of
docs/benchmark.md with ns-3's default preamble-detection threshold (4 dB, also
manetfair's `radio.sinr.preamble_detection_db`), and manetfair takes the MAC choices
ns-3 makes (`mac.ack_rate_mbps = 2`, `mac.eifs_after_sensed = false`, one retry limit of
7). TCP windows are capped at 20 segments on both sides (docs/benchmark.md).

ns-3 is built by `run.py` (bench/build/ns3bench); manetfair runs in this process
through its Python API. Runs are stored in bench/out/reception/ and reused when their
input is unchanged (`--fresh` reruns them).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import results  # the page's generator beside this file
import run as bench  # the benchmark driver: ns-3 build, grid scenario

OUT = bench.OUT_DIR / "reception"
REPORT = HERE / "RECEPTION.md"
DURATION_S = 60.0
START_S = 1.0
SPACING_M = 200.0
PREAMBLE_DB = 4.0
UDP_KBPS = 2000.0  # above what one link carries: saturated
MODELS = ("threshold", "sinr")


@dataclass
class Flow:
    src: int
    dst: int
    udp_kbps: float | None = None  # None: TCP bulk transfer
    path: list[int] = field(default_factory=list)


@dataclass
class Case:
    name: str
    group: str
    what: str
    positions: list[tuple[float, float]]
    flows: list[Flow]


def line(xs: Sequence[float]) -> list[tuple[float, float]]:
    return [(x, 0.0) for x in xs]


def cases() -> list[Case]:
    out = [
        Case(
            f"link-{d}",
            "link",
            f"one TCP flow over one hop of {d} m",
            line([0, d]),
            [Flow(0, 1, path=[0, 1])],
        )
        for d in (250, 251)
    ]
    for d in (500, 551):
        # Receivers 200 m outside: A' A ... B B'. The senders hear each other at
        # 500 m (carrier sense to 550 m) and not at 551 m.
        out.append(
            Case(
                f"pair-{d}",
                "pair",
                f"two saturated UDP senders {d} m apart",
                line([-200, 0, d, d + 200]),
                [Flow(1, 0, UDP_KBPS, [1, 0]), Flow(2, 3, UDP_KBPS, [2, 3])],
            )
        )
    for h in range(1, 9):
        out.append(
            Case(
                f"chain-{h}",
                "chain",
                f"one TCP flow over a {h}-hop chain at 200 m",
                line([i * SPACING_M for i in range(h + 1)]),
                [Flow(0, h, path=list(range(h + 1)))],
            )
        )
    out.append(
        Case(
            "hidden-002",
            "hidden",
            "paper 002 scenario 2: 250 m line, flows 1->2 and 4->5",
            line([0, 250, 500, 750, 1000]),
            [Flow(0, 1, path=[0, 1]), Flow(3, 4, path=[3, 4])],
        )
    )
    return out


def manetfair_scenario(c: Case, seed: int, reception: str = "sinr") -> dict[str, Any]:
    flows = []
    for f in c.flows:
        flow: dict[str, Any] = {
            "src": f.src,
            "dst": f.dst,
            "packet_bytes": 1000,
            "start_s": START_S,
            "stop_s": DURATION_S,
            "route": f.path,
        }
        if f.udp_kbps is None:
            flow.update(transport="tcp-newreno", app="ftp")
        else:
            flow.update(transport="udp", app="cbr", rate_kbps=f.udp_kbps)
        flows.append(flow)
    return {
        "name": f"reception-{c.name}",
        "duration_s": DURATION_S,
        "seed": seed,
        "radio": {"reception": reception, "sinr": {"preamble_detection_db": PREAMBLE_DB}},
        "mac": {"ack_rate_mbps": 2.0, "eifs_after_sensed": False, "long_retry_limit": 7},
        "topology": {"kind": "explicit"},
        "node": [{"id": i, "x_m": x, "y_m": y} for i, (x, y) in enumerate(c.positions)],
        "flow": flows,
    }


def ns3_input(c: Case, seed: int) -> str:
    lines = [
        f"name reception-{c.name}",
        f"duration {DURATION_S}",
        f"seed {seed}",
        "routing static",
        f"preamble_threshold {PREAMBLE_DB}",
    ]
    lines += [f"node {i} {x} {y}" for i, (x, y) in enumerate(c.positions)]
    routes: dict[tuple[int, int], int] = {}
    for f in c.flows:
        if f.udp_kbps is None:
            lines.append(f"flow {f.src} {f.dst} {START_S} {DURATION_S}")
        else:
            lines.append(f"udpflow {f.src} {f.dst} {START_S} {DURATION_S} {f.udp_kbps}")
        for path in (f.path, f.path[::-1]):
            for node, via in zip(path, path[1:]):
                routes[(node, path[-1])] = via
    lines += [f"nexthop {n} {d} {v}" for (n, d), v in sorted(routes.items())]
    return "\n".join(lines) + "\n"


def stored(path: Path, key: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    rec = json.loads(path.read_text())
    return rec if rec.get("input") == key else None


def run_ns3(binary: Path, c: Case, seed: int, fresh: bool) -> list[float]:
    text = ns3_input(c, seed)
    path = OUT / f"ns3-{c.name}-{seed}.json"
    rec = None if fresh else stored(path, text)
    if rec is None:
        scen = OUT / f"ns3-{c.name}-{seed}.txt"
        scen.write_text(text)
        done = subprocess.run(
            [str(binary), "run", str(scen)], capture_output=True, text=True, check=True
        )
        summary = bench.last_json_line(done.stdout)
        if summary is None:
            raise SystemExit(f"ns3bench printed no summary for {c.name} seed {seed}")
        rec = {"input": text, "flows": [f["throughput_kbps"] for f in summary["flows"]]}
        path.write_text(json.dumps(rec))
    return [float(x) for x in rec["flows"]]


def run_manetfair(c: Case, seed: int, fresh: bool) -> list[float]:
    import manetfair

    data = manetfair_scenario(c, seed)
    key = json.dumps(data, sort_keys=True) + manetfair.__version__
    path = OUT / f"manetfair-{c.name}-{seed}.json"
    rec = None if fresh else stored(path, key)
    if rec is None:
        try:
            result = manetfair.run(data)
            flows = [f["throughput_kbps"] for f in result.summary["flows"]]
        except manetfair.ScenarioError as e:
            # A hop beyond tx_range_m is refused before it runs (link-251): nothing
            # would be delivered; the radio's own 250/251 m edge is unit-tested.
            print(f"{c.name}: manetfair refuses the scenario ({e}); counted as 0", file=sys.stderr)
            flows = [0.0 for _ in c.flows]
        rec = {"input": key, "flows": flows}
        path.write_text(json.dumps(rec))
    return [float(x) for x in rec["flows"]]


@dataclass
class Row:
    case: Case
    flow: int
    ns3: list[float]
    mf: list[float]

    def verdict(self) -> tuple[str, bool]:
        """Inside ns-3's seed range, or within 5 % of its mean where the range is
        narrower than that (both zero counts as a match)."""
        lo, hi, mean = min(self.ns3), max(self.ns3), statistics.fmean(self.ns3)
        m = statistics.fmean(self.mf)
        if hi == 0.0:
            return ("both 0" if m == 0.0 else "ns-3 0"), m == 0.0
        if lo <= m <= hi:
            return "inside range", True
        rel = m / mean - 1.0
        return f"{rel:+.1%}", abs(rel) <= 0.05


def fmt_range(xs: Sequence[float]) -> str:
    return f"{statistics.fmean(xs):.1f} [{min(xs):.1f}–{max(xs):.1f}]"


def report(rows: Sequence[Row], seeds: int, speed: dict[str, Any] | None) -> str:
    out = [
        "# Reception models against ns-3",
        "",
        (
            "Written by `bench/reception.py` (docs/benchmark.md); the settings and the cases are "
            "in its head and in docs/models.md."
        ),
        (
            f"Per flow: goodput in kbit/s over {START_S:g}–{DURATION_S:g} s, mean [min–max] over "
            f'seeds 1..{seeds}; manetfair runs `radio.reception = "sinr"`.'
        ),
        "",
        "| case | flow | ns-3 3.44 | manetfair sinr | verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    held = 0
    for r in rows:
        word, ok = r.verdict()
        held += ok
        out.append(
            f"| {r.case.name} ({r.case.what}) | {r.flow} | {fmt_range(r.ns3)} | "
            f"{fmt_range(r.mf)} | {word}{'' if ok else ' (outside)'} |"
        )
    out += ["", f"{held} of {len(rows)} flows inside ns-3's seed range or within 5 %.", ""]
    if speed:
        out += [
            "## Cost of the SINR model",
            "",
            (
                f"The benchmark's grid (scenario a: 10 × 10 nodes, 16 TCP flows, "
                f"{speed['duration_s']:g} s), both models run one after the other in one process "
                f"({speed['machine']}):"
            ),
            "",
            "| reception | CPU s | events | CPU ns per event | aggregate kbit/s |",
            "| --- | --- | --- | --- | --- |",
        ]
        per_event = {m: speed[m]["cpu_s"] / max(speed[m]["events"], 1) * 1e9 for m in MODELS}
        for m in MODELS:
            s = speed[m]
            out.append(
                f"| {m} | {s['cpu_s']:.2f} | {s['events']} | {per_event[m]:.1f} | "
                f"{s['aggregate_kbps']:.1f} |"
            )
        out += [
            "",
            (
                f"sinr / threshold CPU time: {speed['ratio']:.2f} per run (bound: 2), "
                f"{per_event['sinr'] / per_event['threshold']:.2f} per event (sinr runs more "
                "events: more frames get through)."
            ),
            "",
        ]
    return "\n".join(out)


def data_records(
    rows: Sequence[Row], seeds: int, speed: dict[str, Any] | None
) -> dict[str, list[dict[str, Any]]]:
    """The rows (and the grid's speed check) as records of bench/data's reception
    tables, each with the command and when."""
    base = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": None,
        "command": f"python3 bench/reception.py --seeds {seeds}",
    }
    out: dict[str, list[dict[str, Any]]] = {
        "reception": [
            {
                **base,
                "case": f"{r.case.name} ({r.case.what})",
                "flow": r.flow,
                "ns3_kbps": fmt_range(r.ns3),
                "manetfair_sinr_kbps": fmt_range(r.mf),
                "verdict": r.verdict()[0],
            }
            for r in rows
        ]
    }
    if speed is not None:
        out["reception_cost"] = [
            {
                **base,
                "scenario": "a",
                "reception": m,
                "cpu_s": round(speed[m]["cpu_s"], 3),
                "events": speed[m]["events"],
                "aggregate_kbps": round(speed[m]["aggregate_kbps"], 1),
            }
            for m in MODELS
        ]
    return out


def speed_check(quick: bool) -> dict[str, Any]:
    """CPU time of the grid under both models, measured in this one process."""
    import manetfair

    sc = bench.grid_scenario(quick)
    text = bench.manetfair_toml(sc, 1, "reception-speed")
    out: dict[str, Any] = {"duration_s": sc.duration_s, "machine": bench.machine_text()}
    for model in MODELS:
        t0 = time.process_time()
        result = manetfair.run(text, radio__reception=model)
        cpu = time.process_time() - t0
        out[model] = {
            "cpu_s": cpu,
            "events": result.summary["events"],
            "aggregate_kbps": result.summary["aggregate_kbps"],
        }
    out["ratio"] = out["sinr"]["cpu_s"] / out["threshold"]["cpu_s"]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument(
        "--cases", default="link,pair,chain,hidden", help="groups: link, pair, chain, hidden"
    )
    ap.add_argument("--fresh", action="store_true", help="rerun stored runs")
    ap.add_argument("--speed-only", action="store_true")
    ap.add_argument("--quick", action="store_true", help="a shorter grid for the speed check")
    ap.add_argument(
        "--report-only",
        action="store_true",
        help="no speed check: the stored one goes into the report (runs are still reused)",
    )
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    speed_path = OUT / "speed.json"
    speed: dict[str, Any] | None
    if args.report_only:
        speed = json.loads(speed_path.read_text()) if speed_path.is_file() else None
    else:
        speed = speed_check(args.quick)
        speed_path.write_text(json.dumps(speed))
        print(f"grid: sinr/threshold CPU {speed['ratio']:.2f}", file=sys.stderr)
    if args.speed_only:
        return 0
    groups = set(args.cases.split(","))
    binary = bench.build_ns3()
    rows: list[Row] = []
    for c in cases():
        if c.group not in groups:
            continue
        ns3 = [run_ns3(binary, c, s, args.fresh) for s in range(1, args.seeds + 1)]
        mf = [run_manetfair(c, s, args.fresh) for s in range(1, args.seeds + 1)]
        for i in range(len(c.flows)):
            row = Row(c, i, [r[i] for r in ns3], [r[i] for r in mf])
            rows.append(row)
            print(
                f"{c.name} flow {i}: ns-3 {fmt_range(row.ns3)}  manetfair "
                f"{fmt_range(row.mf)}  {row.verdict()[0]}",
                file=sys.stderr,
            )
    text = report(rows, args.seeds, speed)
    REPORT.write_text(text)
    print(f"wrote {REPORT}", file=sys.stderr)
    if groups == {"link", "pair", "chain", "hidden"}:
        for table, records in data_records(rows, args.seeds, speed).items():
            results.append(table, records)
        print(f"updated {results.write()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
