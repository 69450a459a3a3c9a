#!/usr/bin/env python3
"""Runs ns-2.35 and manetfair side by side over the cases in ``cases/`` and seeds.

Each (case, simulator, model, seed) becomes one JSON line in
``results/<case>.jsonl``, with the measured values and the exact command; a
rerun replaces the lines it measures again and keeps the others. ns-2 gets the
script :mod:`ns2tcl` writes and its trace is read by :mod:`ns2trace` through a
named pipe, so no trace touches the disk. manetfair runs
``manetfair run CASE --json --seed N`` plus the arguments of ``--manetfair-arg``
(``--param platform=ns2``, or ``--platform ns2`` once the CLI has it), recorded
under the model name ``--model``.

``--timing`` measures CPU time (user + sys) and peak RSS instead, with
``/usr/bin/time -v``, in interleaved rounds, keeping each side's minimum
(``results/timing.jsonl``).

Examples (from bench/ns2):
  python3 run.py --sim ns2                       # every case, 10 seeds, ns-2.35
  python3 run.py --sim manetfair --model standard
  python3 run.py --sim manetfair --model ns2 --manetfair-arg=--platform --manetfair-arg=ns2
  python3 run.py --cases 'chain-*' --seeds 3
  python3 run.py --timing --cases chain-8-static opet-grid-static --rounds 3
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import ns2proc
import ns2tcl

CASES_DIR = HERE / "cases"
RESULTS_DIR = HERE / "results"
AGENT_LIB = HERE / "build" / "static_route.so"
NS2 = "ns-2.35"

Json = dict[str, Any]


@dataclass(frozen=True)
class Measured:
    """One process's outcome: what it printed or traced, its CPU time and peak RSS."""

    values: Json
    summary: Json
    cpu_s: float
    max_rss_kib: int


def values_of(summary: Json) -> Json:
    """The compared quantities, from either simulator's summary (same names)."""
    mac = summary.get("mac", {})
    out: Json = {
        "aggregate_kbps": summary["aggregate_kbps"],
        "jain_index": summary["jain_index"],
        "flow_kbps": [f["throughput_kbps"] for f in summary["flows"]],
    }
    if "rts_sent" in mac:  # ns-2's trace
        rts, no_cts = mac["rts_sent"], mac["rts_no_cts"]
    else:
        sent, lost = mac.get("frames_sent", {}), mac.get("collisions", {})
        rts = sent.get("rts", 0)
        no_cts = rts - sent.get("cts", 0) + lost.get("cts", 0)
    out["rts_sent"] = rts
    out["rts_no_cts_share"] = no_cts / rts if rts else None
    started = mac.get("msdus_started")
    if started:
        out["first_rts_share"] = mac["first_rts_failed"] / started
    return out


def ns2_model(args: argparse.Namespace) -> str:
    """The name ns-2 runs are stored under: ns-2.35, plus what departs from the defaults."""
    return (
        NS2
        + (" arp" if args.arp == "ns2" else "")
        + (" tcp-ip-header" if args.tcp_ip_header else "")
    )


def ns2_options(args: argparse.Namespace) -> str:
    arp = f" --arp {args.arp}" if args.arp else ""
    return f"{arp}{' --tcp-ip-header' if args.tcp_ip_header else ''}"


def run_ns2(case: Path, seed: int, args: argparse.Namespace) -> tuple[Measured, str]:
    """Runs ns-2.35 on ``case``."""
    lib = AGENT_LIB if AGENT_LIB.exists() else None
    text = ns2tcl.script(
        ns2tcl.canonical(case),
        seed=seed,
        agent_lib=lib,
        arp=args.arp,
        tcp_ip_header=args.tcp_ip_header,
    )
    stats, cpu, rss = ns2proc.run_script(text, f"{case.stem}-{seed}")
    summary = stats.summary()
    command = (
        f"python3 bench/ns2/ns2tcl.py {rel(case)} --seed {seed}{ns2_options(args)} > case.tcl && "
        "ns case.tcl TRACE"
    )
    return Measured(values_of(summary), summary, cpu, rss), command


def manetfair_command(case: Path, seed: int, extra: Sequence[str]) -> list[str]:
    return ["manetfair", "run", str(case), "--json", "--seed", str(seed), *extra]


def run_manetfair(case: Path, seed: int, extra: Sequence[str]) -> tuple[Measured, str]:
    cmd = manetfair_command(case, seed, extra)
    with tempfile.TemporaryFile() as errors:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errors)
        out = proc.stdout.read() if proc.stdout else b""
        code, cpu, rss = ns2proc.wait_usage(proc)
        errors.seek(0)
        err = errors.read()
    if code != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed (exit {code}):\n{err.decode()[-2000:]}")
    summary = json.loads(out)
    for f in summary.get("flows", []):
        f.pop("series_kbps", None)
    kept = {
        k: summary[k]
        for k in ("flows", "aggregate_kbps", "jain_index", "mac", "drops", "routing", "simulator")
        if k in summary
    }
    display = shlex.join(["manetfair", "run", rel(case), *cmd[3:]])
    return Measured(values_of(summary), kept, cpu, rss), display


def rel(path: Path) -> str:
    root = HERE.parent.parent
    try:
        return str(path.resolve().relative_to(root))
    except ValueError:
        return str(path)


def record(case: Path, sim: str, model: str, seed: int, m: Measured, command: str) -> Json:
    return {
        "case": case.stem,
        "simulator": sim,
        "model": model,
        "seed": seed,
        "command": command,
        "values": m.values,
        "cpu_s": round(m.cpu_s, 3),
        "max_rss_kib": m.max_rss_kib,
        "summary": m.summary,
    }


def _key(r: Json) -> tuple[str, str, str, int]:
    return (r["case"], r["simulator"], r["model"], r["seed"])


def store(path: Path, new: Sequence[Json]) -> None:
    """Replaces the lines of ``path`` that ``new`` measures again; keeps the rest, sorted."""
    old = [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else []
    merged = {_key(r): r for r in old}
    merged.update({_key(r): r for r in new})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(merged[k], sort_keys=True) + "\n" for k in sorted(merged)))
    tmp.replace(path)


def select(patterns: Sequence[str]) -> list[Path]:
    cases = sorted(CASES_DIR.glob("*.toml"))
    if not patterns:
        return cases
    chosen = [c for c in cases if any(fnmatch.fnmatch(c.stem, p) for p in patterns)]
    if not chosen:
        sys.exit(f"no case matches {patterns}; cases: {', '.join(c.stem for c in cases)}")
    return chosen


def side_by_side(args: argparse.Namespace) -> None:
    cases = select(args.cases)
    sims = args.sim.split(",")
    jobs: list[tuple[Path, str, int]] = [
        (c, s, seed) for c in cases for s in sims for seed in range(1, args.seeds + 1)
    ]

    def one(job: tuple[Path, str, int]) -> Json:
        case, sim, seed = job
        if sim == "ns2":
            m, cmd = run_ns2(case, seed, args)
            return record(case, NS2, ns2_model(args), seed, m, cmd)
        m, cmd = run_manetfair(case, seed, args.manetfair_arg)
        return record(case, "manetfair", args.model, seed, m, cmd)

    done: dict[str, list[Json]] = {}
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(one, jobs):
            done.setdefault(r["case"], []).append(r)
            v = r["values"]
            print(
                f"{r['case']:22} {r['simulator']:9} {r['model']:9} seed {r['seed']:2}: "
                f"{v['aggregate_kbps']:7.1f} kbit/s  {r['cpu_s']:6.2f} s CPU",
                flush=True,
            )
            if len(done[r["case"]]) == len(sims) * args.seeds:
                store(RESULTS_DIR / f"{r['case']}.jsonl", done[r["case"]])


_TIME_V = {
    "user": re.compile(r"User time \(seconds\): ([\d.]+)"),
    "sys": re.compile(r"System time \(seconds\): ([\d.]+)"),
    "rss": re.compile(r"Maximum resident set size \(kbytes\): (\d+)"),
}


def time_v(cmd: Sequence[str]) -> tuple[float, int]:
    """CPU seconds (user + sys) and peak RSS (KiB) of ``cmd`` by ``/usr/bin/time -v``."""
    proc = subprocess.run(
        ["/usr/bin/time", "-v", *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    found = {k: r.search(proc.stderr) for k, r in _TIME_V.items()}
    if not all(found.values()):
        raise RuntimeError(f"/usr/bin/time -v printed no usage for {cmd}")
    user, sys_, rss = (m.group(1) for m in found.values() if m)
    return float(user) + float(sys_), int(rss)


def timing(args: argparse.Namespace) -> None:
    """Interleaved rounds of ns-2.35 (drops traced only: the simulation alone) and manetfair."""
    cases = select(args.cases)
    rows: list[Json] = []
    with tempfile.TemporaryDirectory(prefix="ns2bench-") as tmp:
        for case in cases:
            sc = ns2tcl.canonical(case)
            lib = AGENT_LIB if AGENT_LIB.exists() else None
            script = Path(tmp) / f"{case.stem}.tcl"
            script.write_text(
                ns2tcl.script(
                    sc,
                    seed=1,
                    agent_lib=lib,
                    arp=args.arp,
                    tcp_ip_header=args.tcp_ip_header,
                    trace=False,
                )
            )
            cmds = {
                NS2: ["ns", str(script), str(Path(tmp) / "drops.tr")],
                args.model: manetfair_command(case, 1, args.manetfair_arg),
            }
            shown = {
                NS2: f"python3 bench/ns2/ns2tcl.py {rel(case)} --seed 1{ns2_options(args)} "
                "--no-trace > case.tcl && /usr/bin/time -v ns case.tcl drops.tr",
                args.model: "/usr/bin/time -v "
                + shlex.join(
                    ["manetfair", "run", rel(case), "--json", "--seed", "1", *args.manetfair_arg]
                ),
            }
            best: dict[str, tuple[float, int]] = {}
            for _ in range(args.rounds):
                for name, cmd in cmds.items():
                    cpu, rss = time_v(cmd)
                    prev = best.get(name)
                    best[name] = (min(cpu, prev[0]), min(rss, prev[1])) if prev else (cpu, rss)
            for name, (cpu, rss) in best.items():
                row = {
                    "case": case.stem,
                    "simulator": NS2 if name == NS2 else "manetfair",
                    "model": name,
                    "seed": 1,
                    "duration_s": sc["duration_s"],
                    "rounds": args.rounds,
                    "cpu_s_min": cpu,
                    "max_rss_kib_min": rss,
                    "command": shown[name],
                    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
    path = RESULTS_DIR / "timing.jsonl"
    old = [json.loads(x) for x in path.read_text().splitlines() if x] if path.exists() else []
    keep = [
        r for r in old if (r["case"], r["model"]) not in {(x["case"], x["model"]) for x in rows}
    ]
    path.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in keep + rows))


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--cases", nargs="*", default=[], help="case names or glob patterns")
    ap.add_argument("--seeds", type=int, default=10, help="seeds 1..N (default 10)")
    ap.add_argument("--sim", default="ns2,manetfair", help="ns2, manetfair or both (default)")
    ap.add_argument("--model", default="standard", help="name the manetfair runs are stored under")
    ap.add_argument(
        "--manetfair-arg",
        action="append",
        default=[],
        help="an argument added to `manetfair run` (repeatable)",
    )
    ap.add_argument(
        "--arp",
        choices=("filled", "ns2"),
        help="ns-2's ARP tables filled before the run, or ns-2's ARP as is (AODV only; "
        "default: ns-2's ARP if the case sets [ns2] arp, else filled)",
    )
    ap.add_argument(
        "--tcp-ip-header",
        action="store_true",
        help="static routes add the IP header to TCP segments too, as DSDV (stored as "
        "model 'ns-2.35 tcp-ip-header')",
    )
    ap.add_argument("--jobs", type=int, default=1, help="runs at once (default 1)")
    ap.add_argument("--timing", action="store_true", help="CPU time and peak RSS instead")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of --timing")
    args = ap.parse_args(argv)
    if shutil.which("ns") is None and ("ns2" in args.sim or args.timing):
        sys.exit("ns (ns-2.35) is not on PATH: apt-get install ns2 (README.md)")
    if args.timing:
        timing(args)
    else:
        side_by_side(args)


if __name__ == "__main__":
    main()
