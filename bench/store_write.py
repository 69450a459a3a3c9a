#!/usr/bin/env python3
"""CPU time of storing a run, for the results store's share of a reproduction.

Runs one cell of selfcontention-table2 (the largest runs of a full reproduction:
100 nodes, AODV, 300 s, 1.3 MB of traces) through the core once, then stores it
as `--batch` runs under distinct keys in a fresh store, `--batches` times after
one batch not timed, each batch one `ResultsStore.insert_many` as a
reproduction's group commit, and prints the CPU time per run stored
(`time.process_time`: the process and DuckDB's threads). It measures the installed package; run it from two checkouts'
installs to compare them (bench/RESULTS.md at fe6291b, "Speed, sixteenth step").
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from pathlib import Path

from manetfair import experiments
from manetfair._core import run_scenario
from manetfair.store import NewRun, ResultsStore


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=40, help="runs per commit (default 40)")
    ap.add_argument("--batches", type=int, default=5, help="commits to time (default 5)")
    ap.add_argument("--duration", type=float, default=300.0, help="simulated seconds")
    args = ap.parse_args()

    exp = experiments.get("selfcontention-table2")
    variant = exp.variants(quick=False)[-1]
    scenario = exp.expand(variant).with_run(seed=1, duration_s=args.duration)
    text = scenario.canonical_json()
    summary, traces = run_scenario(text, "json", "store_write")
    print(f"one run of {variant}: traces {len(traces) / 1e6:.2f} MB")

    per_run: list[float] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = ResultsStore(Path(tmp) / "store.duckdb")
        # Batch 0 (not timed) creates the tables and imports DuckDB, pyarrow, orjson.
        for b in range(args.batches + 1):
            runs = [
                NewRun(
                    scenario_hash=hashlib.sha256(f"{b}-{i}".encode()).hexdigest(),
                    seed=i,
                    code_version="store_write",
                    scenario_json=text,
                    summary_json=summary,
                    traces_json=traces,
                    experiment_id=exp.id,
                    variant=variant,
                    parameters=exp.overrides(variant),
                    links=[(exp.id, variant, i, False)],
                )
                for i in range(args.batch)
            ]
            started = time.process_time()
            store.insert_many(runs)
            if b > 0:
                per_run.append((time.process_time() - started) / args.batch * 1000)
    print("ms of CPU per run stored, by batch:", ", ".join(f"{x:.1f}" for x in per_run))
    print(f"median {statistics.median(per_run):.1f} ms")


if __name__ == "__main__":
    main()
