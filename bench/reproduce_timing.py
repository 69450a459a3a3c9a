#!/usr/bin/env python3
"""Wall time of `manetfair reproduce` with one and with two worker processes.

Each measurement runs the command as users do (`manetfair reproduce --quick --jobs N`,
or the experiments named with `--full`), from an empty results store in a fresh
folder, and reads from outside the process: wall time, CPU time of the command and
its workers, and the machine's 1-minute load average before and after. From inside,
the report's `timing.json` (docs/cli.md) gives where the time went: seconds in the
core, scenario expansion, the results store, claims, plots and pages, and per
experiment its wall time and the core's share. Start-up (the interpreter and the
imports) is the outside wall time less the command's own.

Results go to `bench/out/reproduce/` (one JSON per measurement, and the whole
section of every measurement there in `report.md`) and, with `--write`, the
measurements of this invocation to `bench/data/front_end.jsonl`, from which
`bench/RESULTS.md` is remade (bench/results.py). The machine is shared: every
timing carries its load.

    python3 bench/reproduce_timing.py --jobs 1,2 --write           # the quick set
    python3 bench/reproduce_timing.py --full nred-fig10 opet-fig10 throttle-table2 --write

Another front end (an older checkout's `python/` folder with the same native module)
is measured the same way with `PYTHONPATH=that/python` and `--label before`; it
leaves no `timing.json`, so only its outside numbers are kept.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import results  # the page's generator beside this file

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "out" / "reproduce"

Json = dict[str, Any]


def command(ids: Sequence[str], quick: bool, jobs: int, folder: Path) -> list[str]:
    """The command measured: README's command 1 with a job count, a store and a report
    folder of its own (`python -m manetfair.cli` is what the `manetfair` script runs)."""
    cmd = [sys.executable, "-m", "manetfair.cli", "reproduce", *ids]
    if quick:
        cmd.append("--quick")
    cmd += ["--jobs", str(jobs), "--store", str(folder / "s.duckdb")]
    return cmd + ["--out", str(folder / "report")]


def shown(cmd: Sequence[str]) -> str:
    """The command as a user types it."""
    args = list(cmd[3:])
    for flag in ("--store", "--out"):
        if flag in args:
            i = args.index(flag)
            del args[i : i + 2]
    return "manetfair " + " ".join(args)


def code_version() -> str:
    """The code version (package and native module digest) the command runs with."""
    probe = "from manetfair.runner import code_version; print(code_version())"
    proc = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    return proc.stdout.strip() or "unknown"


def measure(ids: Sequence[str], quick: bool, jobs: int, label: str, keep: Path | None) -> Json:
    """One run of the command from an empty store; its numbers from outside and inside."""
    version = code_version()
    folder = Path(tempfile.mkdtemp(prefix="reproduce-timing-"))
    try:
        cmd = command(ids, quick, jobs, folder)
        load_before = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        with open(folder / "stderr.txt", "w") as err:
            proc = subprocess.run(
                cmd, cwd=folder, stdout=subprocess.PIPE, stderr=err, text=True, check=False
            )
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        load_after = os.getloadavg()[0]
        if proc.returncode != 0:
            tail = (folder / "stderr.txt").read_text()[-2000:]
            raise SystemExit(f"{shown(cmd)} failed ({proc.returncode}):\n{tail}")
        report = folder / "report"
        timing_path = report / "timing.json"
        timing = json.loads(timing_path.read_text()) if timing_path.exists() else None
        pngs = {
            p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(report.glob("*.png"))
        }
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            (keep / "stdout.txt").write_text(proc.stdout)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return {
            "label": label,
            "set": "quick" if quick else "full " + " ".join(ids),
            "jobs": jobs,
            "command": shown(cmd),
            "code_version": version,
            "wall_s": round(wall, 3),
            "cpu_s": round(cpu, 3),
            "load_before": load_before,
            "load_after": load_after,
            "timing": timing,
            "pngs": pngs,
            "stdout_sha256": hashlib.sha256(proc.stdout.encode()).hexdigest(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        }
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def split(m: Json) -> Json | None:
    """The Python split of one measurement: start-up and imports, scenario expansion,
    results store, claims, plots (summed where drawn), pages, core (summed where run),
    and the rest of the command's own wall time."""
    t = m.get("timing")
    if not t:
        return None
    p = t["phases"]
    startup = m["wall_s"] - t["wall_s"]
    main_known = p["expansion_s"] + p["store_s"] + p["claims_s"] + p["report_s"]
    rest = t["wall_s"] - main_known
    if t["jobs"] == 1:  # the core and the plots ran in this process too
        rest -= p["core_s"] + p["plots_s"]
    return {
        "startup_s": startup,
        "expansion_s": p["expansion_s"],
        "store_s": p["store_s"],
        "commits": t.get("commits", 0),
        "claims_s": p["claims_s"],
        "plots_s": p["plots_s"],
        "report_s": p["report_s"],
        "core_s": p["core_s"],
        "rest_s": rest,
    }


def _f(x: float, digits: int = 1) -> str:
    return f"{x:,.{digits}f}"


def section(measurements: Sequence[Json]) -> str:
    """The RESULTS.md section: speed-up per set, the Python split, per experiment."""
    lines = [
        "## The front end's time: `reproduce` with one and two workers",
        "",
        (
            "Produced by `python3 bench/reproduce_timing.py` (commands below). Each row is "
            "one run of the command from an empty results store in a fresh folder; when = the "
            "end of the run. Wall and CPU time (user + system, the command and its workers) "
            "are measured from outside; load = the machine's 1-minute load average before → "
            "after the run (the run's own workers add 1 or 2 to the second). **The machine is "
            "shared (2 cores)**: other people's builds, tests and benchmarks ran at the same "
            "time, so wall times and speed-ups carry that load. sim s/wall s = simulated "
            "seconds of the runs simulated per wall second (the same runs whichever front "
            "end). core s = the runs' wall seconds in the core, summed over workers, with "
            "their CPU seconds in brackets: the difference is time a worker waited for a "
            "core. core share = core s / (wall × workers). native module = the first hex "
            "digits of the core's build digest (the code version), which changed between the "
            "early and the late measurements as others' work on the core landed; a speed-up "
            "is against the one-job run measured back to back with it."
        ),
        "",
        (
            "| when (UTC) | native module | front end | set | jobs | wall s | CPU s | load | sim s/wall s | "
            "core s (CPU s) | "
            "core share | commits | speed-up vs 1 job |"
        ),
        "| --- | --- | --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    sim_s = {m["set"]: m["timing"]["sim_s"] for m in measurements if m.get("timing")}
    for m in measurements:
        t = m.get("timing") or {}
        base = partner(m, measurements)
        speed = f"{base['wall_s'] / m['wall_s']:.2f}×" if base is not None else ""
        rate = _f(sim_s[m["set"]] / m["wall_s"]) if m["set"] in sim_s else "–"
        cpu = f" ({_f(t['core_cpu_s'])})" if "core_cpu_s" in t else ""
        core = f"{_f(t['core_s'])}{cpu}" if t else "–"
        share = f"{100 * t['core_s'] / (m['wall_s'] * m['jobs']):.0f} %" if t else "–"
        commits = t.get("commits", "–") if t else "–"
        lines.append(
            f"| {m['date'][11:16]} | {m.get('code_version', '?').split('+')[-1][:6]} | "
            f"{m['label']} | {m['set']} | {m['jobs']} | {_f(m['wall_s'])} | "
            f"{_f(m['cpu_s'])} | "
            f"{m['load_before']:.1f} → {m['load_after']:.1f} | {rate} | {core} | {share} | "
            f"{commits} | {speed} |"
        )
    lines += ["", "Commands, as run:", ""]
    seen = set()
    for m in measurements:
        key = (m["label"], m["command"])
        if key not in seen:
            seen.add(key)
            prefix = "PYTHONPATH=<older checkout>/python " if m["label"] != "after" else ""
            lines.append(f"- {m['label']}: `{prefix}{m['command']}`")
    lines += [
        "",
        "### Where the front end's time goes",
        "",
        (
            "Seconds per measurement. start-up = the interpreter and the imports (outside "
            "wall time less the command's own); expansion = experiments read, variants "
            "expanded, every scenario checked and made canonical by the core; store = look-"
            "ups, commits (in groups, one transaction each) and traces read back, in the main "
            "process; claims; plots (figure and topology, summed where drawn: in the workers "
            "with 2 jobs, beside the runs); pages (Markdown, HTML, JSON); core = the runs, "
            "summed where they ran; rest = what is left of the command's own wall time in "
            "its main process (the progress log, process start of the workers, waiting for "
            "the workers with 2 jobs)."
        ),
        "",
        (
            "| front end | set | jobs | start-up | expansion | store (commits) | claims | plots | "
            "pages | core | rest |"
        ),
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for m in measurements:
        s = split(m)
        if s is None:
            continue
        lines.append(
            f"| {m['label']} | {m['set']} | {m['jobs']} | {_f(s['startup_s'], 2)} | "
            f"{_f(s['expansion_s'], 2)} | {_f(s['store_s'], 2)} ({s['commits']}) | "
            f"{_f(s['claims_s'], 2)} | {_f(s['plots_s'], 2)} | {_f(s['report_s'], 2)} | "
            f"{_f(s['core_s'], 1)} | {_f(s['rest_s'], 2)} |"
        )
    per = _latest_pairs(measurements)
    if per:
        lines += [
            "",
            "### Per experiment",
            "",
            (
                "Wall time from the start of an experiment's first run to the end of its plots, "
                "which wait for the group commit of its last runs (experiments overlap, more so "
                "with two workers), its runs' seconds in the core, and the "
                "core's share of the workers' time in that span; the same table ends the "
                "report's index (and `timing.json`)."
            ),
            "",
        ]
        for m in per:
            lines += [
                f"{m['label']}, {m['set']}, {m['jobs']} job(s), {m['date']}:",
                "",
                "| experiment | runs | wall s | core s | core share | sim s/wall s | plots s |",
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            ]
            for e in m["timing"]["experiments"]:
                lines.append(
                    f"| `{e['id']}` | {e['runs']} | {_f(e['wall_s'], 2)} | {_f(e['core_s'], 2)}"
                    f" | {100 * e['core_share']:.0f} % | {_f(e['sim_s_per_wall_s'])} | "
                    f"{_f(e['plot_s'], 2)} |"
                )
            lines.append("")
    same = _same_outputs(measurements)
    if same:
        lines += ["", same]
    return "\n".join(lines).rstrip() + "\n"


def partner(m: Json, measurements: Sequence[Json]) -> Json | None:
    """For a run with more than one job: the one-job run measured back to back with it
    (the same call of this script), else the one of the same front end, set and code
    version measured closest in time. Its speed-up is against that one."""
    if m["jobs"] == 1:
        return None
    if m.get("invocation"):  # measured back to back by the same call of this script
        paired = [
            o for o in measurements if o["jobs"] == 1 and o.get("invocation") == m["invocation"]
        ]
        if paired:
            return paired[0]
    same = [
        o
        for o in measurements
        if o["jobs"] == 1
        and (o["label"], o["set"], o.get("code_version"))
        == (m["label"], m["set"], m.get("code_version"))
    ]
    when = _when(m)
    return min(same, key=lambda o: abs(_when(o) - when), default=None)


def _when(m: Json) -> float:
    return datetime.datetime.strptime(m["date"], "%Y-%m-%d %H:%M UTC").timestamp()


def _latest_pairs(measurements: Sequence[Json]) -> list[Json]:
    """Per set: the latest measurement with more than one job that has a timing record,
    and its one-job partner."""
    chosen: dict[str, Json] = {}
    for m in measurements:
        wanted = m["jobs"] > 1 and m.get("timing") and partner(m, measurements) is not None
        if wanted and (m["set"] not in chosen or _when(m) >= _when(chosen[m["set"]])):
            chosen[m["set"]] = m
    out: list[Json] = []
    for m in chosen.values():
        base = partner(m, measurements)
        out += [base, m] if base is not None and base.get("timing") else [m]
    return out


def _same_outputs(measurements: Sequence[Json]) -> str:
    """Whether the plots and printed tables were the same bytes at every job count."""
    by_set: dict[str, list[Json]] = {}
    for m in measurements:
        by_set.setdefault(m["set"], []).append(m)
    notes = []
    for name, ms in by_set.items():
        if len(ms) < 2:
            continue
        pngs = {json.dumps(m["pngs"], sort_keys=True) for m in ms}
        out = {m["stdout_sha256"] for m in ms}
        notes.append(
            f"{name}: the {len(ms[0]['pngs'])} PNG files are "
            f"{'the same bytes' if len(pngs) == 1 else 'NOT the same bytes'} in all "
            f"{len(ms)} runs; the printed tables are "
            f"{'the same' if len(out) == 1 else 'NOT the same'}."
        )
    return " ".join(notes)


def data_record(m: Json) -> Json:
    """A measurement as a record of bench/data/front_end.jsonl."""
    t = m.get("timing") or {}
    core = f"{_f(t['core_s'])} ({_f(t['core_cpu_s'])})" if "core_cpu_s" in t else None
    return {
        "date": m["date"],
        "commit": m.get("code_version"),
        "command": m["command"],
        "front_end": m["label"],
        "set": m["set"],
        "jobs": m["jobs"],
        "wall_s": m["wall_s"],
        "cpu_s": m["cpu_s"],
        "load": f"{m['load_before']:.1f} → {m['load_after']:.1f}",
        "sim_s_per_wall_s": round(t["sim_s"] / m["wall_s"], 1) if t else None,
        "core_s": core,
        "core_share": f"{100 * t['core_s'] / (m['wall_s'] * m['jobs']):.0f} %" if t else None,
        "commits": t.get("commits") if t else None,
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", default="1,2", help="job counts to measure (default 1,2)")
    ap.add_argument("--full", nargs="+", metavar="ID", help="these experiments in full mode")
    ap.add_argument("--repeat", type=int, default=1, help="measurements per job count")
    ap.add_argument("--label", default="after", help="name of the front end measured")
    ap.add_argument(
        "--write", action="store_true", help="add these measurements to bench/data and the page"
    )
    ap.add_argument(
        "--from-json", action="store_true", help="only rewrite bench/out's report.md from its JSON"
    )
    args = ap.parse_args(argv)
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    measured: list[Json] = []
    if not args.from_json:
        invocation = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
        jobs = [int(j) for j in args.jobs.split(",")]
        ids = args.full or []
        for _ in range(args.repeat):
            for j in jobs:
                stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
                name = f"{args.label}-{'full' if ids else 'quick'}-jobs{j}-{stamp}"
                print(f"measuring {name} (load {os.getloadavg()[0]:.1f})", file=sys.stderr)
                m = measure(ids, not ids, j, args.label, None)
                m["machine"] = f"{platform.machine()}, {os.cpu_count()} logical cores"
                m["invocation"] = invocation
                (OUT_DIR / f"{name}.json").write_text(json.dumps(m, indent=1))
                measured.append(m)
                print(
                    f"  {m['wall_s']:.1f} s wall, {m['cpu_s']:.1f} s CPU, load "
                    f"{m['load_before']:.1f} -> {m['load_after']:.1f}",
                    file=sys.stderr,
                )
    found = [json.loads(p.read_text()) for p in sorted(OUT_DIR.glob("*.json"))]
    order = {"before": 0, "after": 1}
    found.sort(key=lambda m: (m["set"] != "quick", m["set"], order.get(m["label"], 2),
                              m["date"], m["jobs"]))  # fmt: skip
    if found:
        (OUT_DIR / "report.md").write_text(section(found))
    if args.write and measured:
        results.append("front_end", [data_record(m) for m in measured if m["label"] == "after"])
        results.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
