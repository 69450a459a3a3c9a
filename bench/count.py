#!/usr/bin/env python3
"""Instruction counts of both simulators under callgrind, beside wall and CPU time.

Instruction counts do not depend on the machine's load; wall time does. For
each target this runs the simulator once natively (wall and CPU time measured
from outside, peak RSS) and once under ``valgrind --tool=callgrind``.

manetfair runs as the core alone (``examples/run_scenario.rs``): it splits the
run at ``--from`` simulated seconds, and callgrind dumps its count at that
point, so that the per-event and per-delivery figures are those of the steady
state, without set-up and warm-up. A delivery is one (frame, receiver) pair:
the signal start and end one receiver gets of one frame. ns-3 runs as
``bench/build/ns3bench`` and is counted whole.

Results go to ``bench/out/count/`` (one JSON per target), ``bench/COUNTS.md``,
and, for the targets counted this time, records in ``bench/data/`` (counts,
counts_whole, memory) from which ``bench/RESULTS.md`` is remade. The report is made from the
JSON in ``bench/out/count/`` alone: when ``bench/COUNTS.md`` lists a target
that folder has no JSON for (ns-3's, which take half an hour under callgrind,
counted in another checkout), writing refuses (exit 1) rather than drop its
rows; ``--replace`` writes anyway. Documented in
``docs/benchmark.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import results  # the page's generator beside this file
import run  # the benchmark driver beside this file

HERE = run.HERE
REPO = HERE.parent
COUNT_DIR = run.OUT_DIR / "count"
COUNTS_MD = HERE / "COUNTS.md"
EXAMPLE = REPO / "target" / "release" / "examples" / "run_scenario"

Json = dict[str, Any]


@dataclass(frozen=True)
class Target:
    """One counted run: a benchmark scenario cut to `duration_s`, measured from `from_s`."""

    key: str
    sim: str  # "manetfair" | "ns3"
    scenario: str  # run.py's scenario name: a, b, c<nodes>
    duration_s: float
    from_s: float
    quick: bool = False  # run.py's quick variant (b: 40 s with flows 5-35 s)


def targets() -> dict[str, Target]:
    out: dict[str, Target] = {}
    for sim in ("manetfair", "ns3"):
        prefix = "" if sim == "manetfair" else "ns3-"
        out[f"{prefix}a10"] = Target(f"{prefix}a10", sim, "a", 10.0, 2.0)
        out[f"{prefix}b-quick"] = Target(f"{prefix}b-quick", sim, "b", 40.0, 5.0, quick=True)
    for n in (100, 300, 1000, 3000, 10000):
        out[f"c{n}"] = Target(f"c{n}", "manetfair", f"c{n}", 5.0, 3.0)
    return out


DEFAULT = "a10,b-quick,c1000,c10000"


def scenario_of(t: Target) -> run.Scenario:
    (sc,) = run.build_scenarios([t.scenario], t.quick)
    if t.quick or sc.duration_s == t.duration_s:
        return sc
    flows = [dataclasses.replace(f, stop_s=min(f.stop_s, t.duration_s)) for f in sc.flows]
    return dataclasses.replace(sc, duration_s=t.duration_s, flows=flows)


def input_file(t: Target, seed: int) -> Path:
    sc = scenario_of(t)
    name = f"count-{t.key}-seed{seed}"
    d = COUNT_DIR / "scenarios"
    d.mkdir(parents=True, exist_ok=True)
    if t.sim == "manetfair":
        path, text = d / f"{name}.toml", run.manetfair_toml(sc, seed, name)
    else:
        path, text = d / f"{name}.ns3.txt", run.ns3_input(sc, seed, name)
    path.write_text(text)
    return path


def command(t: Target, path: Path, binary: Path, example: Path) -> list[str]:
    if t.sim == "manetfair":
        return [str(example), str(path), "--from", repr(t.from_s)]
    return [str(binary), "run", str(path)]


def git_commit() -> str:
    res = subprocess.run(
        ["git", "-C", str(REPO), "log", "-1", "--format=%h"],
        capture_output=True,
        text=True,
        check=False,
    )
    return res.stdout.strip()


def counts_line(stderr: str) -> Json:
    for line in stderr.splitlines():
        if line.startswith("counts "):
            value: Json = json.loads(line[len("counts ") :])
            return value
    return {}


def callgrind_totals(out_file: Path) -> list[int]:
    """Instructions of each dump callgrind wrote for out_file, in order
    (out_file.1, .2, ... for dumps during the run, then out_file itself)."""
    parts = sorted(
        out_file.parent.glob(out_file.name + ".*"), key=lambda p: int(p.suffix.lstrip("."))
    )
    totals = []
    for p in [*parts, out_file]:
        if not p.exists():
            continue
        for line in p.read_text(errors="replace").splitlines():
            if line.startswith(("summary:", "totals:")):
                totals.append(int(line.split()[1]))
                break
    return totals


def count(t: Target, binary: Path, example: Path, seed: int, callgrind: bool) -> Json:
    path = input_file(t, seed)
    cmd = command(t, path, binary, example)
    log = COUNT_DIR / "logs" / f"{t.key}-seed{seed}"
    log.parent.mkdir(parents=True, exist_ok=True)
    print(f"[{time.strftime('%H:%M:%S')}] {t.key}: {shlex.join(cmd)}", file=sys.stderr, flush=True)
    m = run.run_measured(cmd, 7200.0, log)
    if m.status != "ok":
        raise SystemExit(f"count.py: {t.key} {m.status}: {m.stderr.strip()[-300:]}")
    rec: Json = {
        "key": t.key,
        "sim": t.sim,
        "scenario": t.scenario,
        "seed": seed,
        "duration_s": t.duration_s,
        "from_s": t.from_s if t.sim == "manetfair" else 0.0,
        "wall_s": m.wall_s,
        "cpu_s": m.cpu_s,
        "peak_rss_mb": m.peak_rss_mb,
        "rss_method": m.rss_method,
        "load": m.load_avg,
        "command": shlex.join(cmd),
        "source": git_commit() if t.sim == "manetfair" else "",
    }
    summary = run.last_json_line(m.stdout) or {}
    rec["events"] = summary.get("events")
    sent = summary.get("mac", {}).get("frames_sent")
    rec["frames"] = sum(sent.values()) if isinstance(sent, dict) else None
    if t.sim == "manetfair":
        rec.update(counts_line(m.stderr))
    if callgrind:
        cg_dir = COUNT_DIR / "callgrind"
        cg_dir.mkdir(parents=True, exist_ok=True)
        out_file = cg_dir / f"{t.key}-seed{seed}.out"
        for old in cg_dir.glob(out_file.name + "*"):
            old.unlink()
        vg = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"]
        if t.sim == "manetfair":
            vg += [f"--dump-before={f}" for f in ("run_scenario::measured", "run_scenario::report")]
        print(f"    callgrind: {shlex.join(vg + cmd)}", file=sys.stderr, flush=True)
        started = time.perf_counter()
        res = subprocess.run(vg + cmd, capture_output=True, text=True, check=False)
        if res.returncode != 0:
            raise SystemExit(f"count.py: callgrind on {t.key} failed: {res.stderr[-500:]}")
        totals = callgrind_totals(out_file)
        # Shown with the checkout's example path, whichever copy of it ran.
        shown = [str(EXAMPLE), *cmd[1:]] if t.sim == "manetfair" else cmd
        rec["callgrind_command"] = shlex.join(vg + shown)
        rec["callgrind_wall_s"] = time.perf_counter() - started
        rec["instructions"] = sum(totals)
        if t.sim == "manetfair":
            # Dumps: before `measured` (set-up and warm-up), inside it, after it.
            if len(totals) != 3:
                raise SystemExit(f"count.py: {t.key}: expected 3 callgrind dumps, got {totals}")
            rec["measured_instructions"] = totals[1]
            # The counts are the same on every run of the same input.
            cg_counts = counts_line(res.stderr)
            if cg_counts.get("measured_events") != rec.get("measured_events"):
                raise SystemExit(f"count.py: {t.key}: events differ under callgrind")
    rec["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    (COUNT_DIR / f"{t.key}-seed{seed}.json").write_text(json.dumps(rec, indent=1) + "\n")
    print(f"    -> {json.dumps(rec)}", file=sys.stderr, flush=True)
    return rec


# --------------------------------------------------------------------------- report


def per(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def g(x: float | None, digits: int = 0) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def load_records() -> dict[str, Json]:
    """The stored counts by target, in the order of `targets()` (the scaling
    rows by nodes, not by file name), unknown keys last."""
    out: dict[str, Json] = {}
    for p in sorted(COUNT_DIR.glob("*-seed*.json")):
        rec = json.loads(p.read_text())
        out.setdefault(rec["key"], rec)
    order = {k: i for i, k in enumerate(targets())}
    return dict(sorted(out.items(), key=lambda kv: order.get(kv[0], len(order))))


def listed_targets(text: str) -> set[str]:
    """The targets a report gives commands for ("Commands, as run")."""
    known = targets()
    found = set()
    for line in text.splitlines():
        key = line[2:].split(" ", 1)[0].rstrip(":") if line.startswith("- ") else ""
        if key in known:
            found.add(key)
    return found


def core_rows(recs: dict[str, Json]) -> list[str]:
    lines = [
        (
            "| target | nodes | measured window s | events | deliveries | receivers/frame "
            "| walk steps queued | instructions | instr./event | instr./delivery | instr./sim s "
            "| CPU s/sim s | wall s/sim s | load |"
        ),
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for key, r in recs.items():
        if r["sim"] != "manetfair" or "measured_events" not in r:
            continue
        window = r["duration_s"] - r["from_s"]
        ev, dl, ins = r["measured_events"], r["measured_deliveries"], r.get("measured_instructions")
        nodes = len(scenario_of(targets()[key]).positions) if key in targets() else None
        queued = r.get("measured_walk_steps_queued")
        queued_pct = None if queued is None or not dl else 100.0 * queued / (2 * dl)
        lines.append(
            f"| {key} | {g(nodes)} | {g(r['from_s'], 0)}–{g(r['duration_s'], 0)} | {g(ev)} "
            f"| {g(dl)} | {g(per(r.get('deliveries'), r.get('frames')), 1)} "
            f"| {g(queued_pct, 1)}{'' if queued_pct is None else ' %'} | {g(ins)} "
            f"| {g(per(ins, ev))} | {g(per(ins, dl))} | {g(per(ins, window))} "
            f"| {g(per(r.get('measured_cpu_s'), window), 3)} "
            f"| {g(per(r.get('measured_wall_s'), window), 3)} | {g(r['load'], 1)} |"
        )
    return lines


def report(recs: dict[str, Json]) -> str:
    lines = [
        "## Instruction counts",
        "",
        (
            "Counted with `valgrind --tool=callgrind`: the same on every run of the same "
            "input, whatever the machine's load (this machine is shared: wall times below "
            "carry the 1-minute load average at the end of the run; 2 cores). Produced by "
            "`python3 bench/count.py` (see docs/benchmark.md)."
        ),
        "",
        "### manetfair's core, steady state",
        "",
        (
            "The core alone (`cargo build --release --examples`, then "
            "`target/release/examples/run_scenario FILE --from S`), counted over the "
            "measured window only (callgrind `--dump-before` at `run_scenario::measured` "
            "and `run_scenario::report`): set-up, and flows' start-up before S, excluded. "
            "A delivery is one (frame, receiver) pair: a signal start and a signal end "
            "event at that receiver. receivers/frame = deliveries / frames sent, over the whole run. "
            "Walk steps queued: of the signal edges (two per delivery), the share that went "
            "through the event queue because another event came between two receivers of a "
            "frame (`Simulator::walk_steps_queued`); it grows with the transmissions on the "
            "air at once across the field, and each costs a queue insertion, a pop and a "
            "walk set up again. CPU and wall s per simulated s are "
            "those of the native run's measured window."
        ),
        "",
        *core_rows(recs),
        "",
    ]
    pairs = [
        (k, recs[k], recs.get(f"ns3-{k}"))
        for k in ("a10", "b-quick")
        if k in recs and f"ns3-{k}" in recs
    ]
    if pairs:
        lines += [
            "### Against ns-3, whole process",
            "",
            (
                "The same scenario on both sides, counted from start to exit (ns-3's "
                "`ns3bench run`, manetfair's core example: no Python front end). "
                "a10 is scenario (a) cut to 10 simulated seconds; b-quick is (b)'s quick "
                "variant (40 s, flows 5–35 s). Wall and CPU time are native runs, "
                "one each, with the load as they ended."
            ),
            "",
            (
                "| scenario | ns-3 instructions | manetfair instructions | ratio "
                "| ns-3 wall s (load) | manetfair wall s (load) | wall ratio | CPU ratio "
                "| ns-3 peak RSS MB | manetfair peak RSS MB |"
            ),
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for k, mf, ns in pairs:
            assert ns is not None
            lines.append(
                f"| {k} | {g(ns.get('instructions'))} | {g(mf.get('instructions'))} "
                f"| {g(per(ns.get('instructions'), mf.get('instructions')), 1)} "
                f"| {g(ns['wall_s'], 2)} ({g(ns['load'], 1)}) "
                f"| {g(mf['wall_s'], 3)} ({g(mf['load'], 1)}) "
                f"| {g(per(ns['wall_s'], mf['wall_s']), 1)} "
                f"| {g(per(ns['cpu_s'], mf['cpu_s']), 1)} "
                f"| {g(ns['peak_rss_mb'], 1)} | {g(mf['peak_rss_mb'], 1)} |"
            )
        lines += [""]
    lines += ["Commands, as run:", ""]
    for k, r in recs.items():
        cmd = r.get("callgrind_command", r["command"]).replace(f"{REPO}{os.sep}", "")
        source = f" (source commit {r['source']})" if r.get("source") else ""
        lines.append(f"- {k}{source}: `{cmd}`")
    lines += [""]
    return "\n".join(lines)


def rounded(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


def data_records(t: Target, rec: Json) -> dict[str, list[Json]]:
    """A counted target as records of bench/data's tables: its peak memory (the
    simulator's own process, run.run_measured), its whole-process count, and for
    manetfair its steady-state figures over the measured window."""
    target = t.key.removeprefix("ns3-")
    base: Json = {"date": rec["date"], "commit": rec.get("source") or None, "target": target}
    process = "core" if t.sim == "manetfair" else "whole"
    out: dict[str, list[Json]] = {
        "memory": [
            {
                **base,
                "command": rec["command"].replace(f"{REPO}{os.sep}", ""),
                "simulator": t.sim,
                "process": process,
                "peak_rss_mb": round(rec["peak_rss_mb"], 1),
                "cpu_s": round(rec["cpu_s"], 3),
                "rss_method": rec.get("rss_method", "forked driver"),
            }
        ]
    }
    if rec.get("instructions") is None:
        return out
    command = rec["callgrind_command"].replace(f"{REPO}{os.sep}", "")
    out["counts_whole"] = [
        {
            **base,
            "command": command,
            "simulator": t.sim,
            "instructions": rec["instructions"],
            "wall_s": rounded(rec.get("wall_s"), 3),
            "load": rounded(rec.get("load"), 1),
            "scope": "whole process",
        }
    ]
    measured = rec.get("measured_instructions")
    if t.sim == "manetfair" and measured is not None:
        window = t.duration_s - t.from_s
        deliveries = rec["measured_deliveries"]
        queued = rec.get("measured_walk_steps_queued")
        out["counts"] = [
            {
                **base,
                "command": command,
                "nodes": scenario_of(t).nodes,
                "window_s": f"{t.from_s:g}–{t.duration_s:g}",
                "events": rec["measured_events"],
                "deliveries": deliveries,
                "receivers_per_frame": rounded(per(rec.get("deliveries"), rec.get("frames")), 1),
                "walk_steps_queued_pct": rounded(per(queued, 2 * deliveries / 100), 1),
                "instructions": measured,
                "cpu_s_per_sim_s": rounded(per(rec.get("measured_cpu_s"), window), 3),
                "wall_s_per_sim_s": rounded(per(rec.get("measured_wall_s"), window), 3),
                "load": rounded(rec.get("load"), 1),
                "scope": "measured window",
            }
        ]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--targets",
        default=DEFAULT,
        help=f"comma list of {', '.join(targets())} (default {DEFAULT}); "
        "ns3-* are ns-3's runs of the same scenarios",
    )
    p.add_argument("--seed", type=int, default=1, help="run seed (default 1)")
    p.add_argument("--no-callgrind", action="store_true", help="native runs only")
    p.add_argument(
        "--example",
        type=Path,
        help="a built run_scenario example to count (default: build the checkout's)",
    )
    p.add_argument("--report-only", action="store_true", help="rebuild the report only")
    p.add_argument(
        "--replace",
        action="store_true",
        help="write the report even if it drops targets the current one lists",
    )
    args = p.parse_args(argv)
    known = targets()
    chosen = [k.strip() for k in args.targets.split(",") if k.strip()]
    for k in chosen:
        if k not in known:
            raise SystemExit(f"count.py: unknown target {k!r}: allowed {', '.join(known)}")
    if not args.report_only:
        example = args.example or EXAMPLE
        if args.example is None and any(known[k].sim == "manetfair" for k in chosen):
            subprocess.run(
                ["cargo", "build", "--release", "-p", "manetfair-core", "--examples"],
                cwd=REPO,
                check=True,
            )
        binary = run.build_ns3() if any(known[k].sim == "ns3" for k in chosen) else run.BINARY
        for k in chosen:
            rec = count(known[k], binary, example, args.seed, not args.no_callgrind)
            for table, rows in data_records(known[k], rec).items():
                results.append(table, rows)
        results.write()
    recs = load_records()
    text = report(recs)
    shown = listed_targets(COUNTS_MD.read_text()) if COUNTS_MD.exists() else set()
    dropped = sorted(shown - recs.keys())
    if dropped and not args.replace:
        print(text)
        print(
            f"count.py: {COUNTS_MD.name} lists {', '.join(dropped)}, which "
            f"{COUNT_DIR} has no JSON for: not written, as the report would drop "
            "them. Count them too, or pass --replace.",
            file=sys.stderr,
        )
        return 1
    COUNTS_MD.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
