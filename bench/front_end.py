"""What the Python front end adds to one `manetfair run`, measured from outside.

Three commands run in turn, in a fresh random order each round, so that a change
in the machine's load falls on all three alike:

- `interpreter`: the interpreter that runs manetfair, doing nothing (`-c pass`);
- `core`: that interpreter loading the native module alone and running the
  file's text in it;
- `run`: `manetfair run FILE --json`.

The medians of `run` minus `core` is what the front end adds (imports, argument
parsing, `prepare`, the core's check, the JSON out). With `--callgrind` each
command is also counted once under `valgrind --tool=callgrind` (instructions do
not move with the load). docs/benchmark.md, "The front end of one run".

    python3 bench/front_end.py bench/out/scenarios/bench-b-seed2.toml --rounds 21
    python3 bench/front_end.py FILE --python /path/to/python3 --callgrind
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import count  # the instruction counter beside this file: reads callgrind's totals

# The native module loaded from its file, without running the package's
# `__init__` (whose imports belong to the front end's share).
CORE_CALL = """
import importlib.machinery as m, importlib.util as u, os, sys
d = u.find_spec("manetfair").submodule_search_locations[0]
so = next(
    os.path.join(d, f)
    for f in os.listdir(d)
    if f.startswith("_core.") and f.endswith(tuple(m.EXTENSION_SUFFIXES))
)
core = u.module_from_spec(u.spec_from_loader("manetfair._core", m.ExtensionFileLoader("manetfair._core", so)))
p = sys.argv[1]
core.run_scenario(open(p, encoding="utf-8").read(), "toml", p)
"""


def commands(python: str, scenario: str) -> dict[str, list[str]]:
    return {
        "interpreter": [python, "-c", "pass"],
        "core": [python, "-c", CORE_CALL, scenario],
        "run": [python, "-m", "manetfair", "run", scenario, "--json"],
    }


def wall_rounds(cmds: dict[str, list[str]], rounds: int, seed: int) -> dict[str, list[float]]:
    """Wall seconds of each command over `rounds` shuffled rounds."""
    order = random.Random(seed)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(rounds):
        names = list(cmds)
        order.shuffle(names)
        for name in names:
            start = time.perf_counter()
            subprocess.run(cmds[name], check=True, stdout=subprocess.DEVNULL)
            times[name].append(time.perf_counter() - start)
    return times


def instructions(cmd: list[str]) -> int:
    """Instructions of one run of `cmd` under callgrind (PYTHONHASHSEED fixed)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *cmd],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        totals = count.callgrind_totals(out)
    if not totals:
        raise SystemExit(f"callgrind wrote no instruction count for {cmd}")
    return sum(totals)


def table(times: dict[str, list[float]], counts: dict[str, int]) -> str:
    head = "| command | median ms | fastest ms |" + (" instructions (M) |" if counts else "")
    rows = [head, "|" + " --- |" * (head.count("|") - 1)]
    for name, values in times.items():
        row = f"| {name} | {statistics.median(values) * 1e3:.1f} | {min(values) * 1e3:.1f} |"
        if counts:
            row += f" {counts[name] / 1e6:.1f} |"
        rows.append(row)
    added = statistics.median(times["run"]) - statistics.median(times["core"])
    rows.append("")
    rows.append(f"front end (median of run - median of core): {added * 1e3:.1f} ms")
    if counts:
        rows.append(f"front end in instructions: {(counts['run'] - counts['core']) / 1e6:.1f} M")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scenario", type=Path, help="a scenario file (TOML)")
    ap.add_argument("--rounds", type=int, default=21, help="shuffled rounds (default 21)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter to measure")
    ap.add_argument("--seed", type=int, default=1, help="seed of the rounds' order")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions")
    args = ap.parse_args(argv)
    if args.rounds < 1:
        ap.error("--rounds must be at least 1")
    cmds = commands(args.python, str(args.scenario.resolve()))
    times = wall_rounds(cmds, args.rounds, args.seed)
    counts = {name: instructions(cmd) for name, cmd in cmds.items()} if args.callgrind else {}
    print(f"{args.scenario}, {args.rounds} rounds, {args.python}")
    print(table(times, counts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
