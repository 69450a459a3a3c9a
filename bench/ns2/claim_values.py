#!/usr/bin/env python3
"""ns-2.35's own values of the claims' measures (experiments/ns2-values.toml).

For every experiment on the ns2 platform, each quick-mode variant that ns-2.35 can
run as written (:mod:`ns2tcl` refuses the remedies: throttling's queue, M-TCP,
OPET, quick-exchange, fast-forward; and moving nodes and random placement) is run
in ns-2.35 over seeds; then each claim whose measure reads only such variants is
evaluated on ns-2.35's runs by manetfair's own claim code (``manetfair.claims``),
so that the paper's value, manetfair's and ns-2.35's are the same quantity.

    python3 bench/ns2/claim_values.py run [--experiments 'throttle-*'] [--seeds N] [--jobs N]
    python3 bench/ns2/claim_values.py write       # experiments/ns2-values.toml
    python3 bench/ns2/claim_values.py tcl EXPERIMENT --variant throttle=off --variant run=all

``run`` stores one JSON line per (experiment, variant, seed) in
``results/claims-<experiment>.jsonl``: the summary ns2trace reads, the per-flow 1 s
throughput series, the scenario's hash and the command; a rerun replaces the lines
it measures again. ``write`` recomputes every value from those files (lines whose
scenario no longer matches the experiment file are left out, and named) and
rewrites experiments/ns2-values.toml. ``tcl`` prints one variant's script.
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

import ns2proc
import ns2tcl
import ns2trace
from manetfair import claims, experiments
from manetfair.errors import InputError
from manetfair.experiments import Experiment

VALUES = ROOT / "experiments" / "ns2-values.toml"
RESULTS_DIR = HERE / "results"
AGENT_LIB = HERE / "build" / "static_route.so"
PREFIX = "claims-"
QUICK = True  # the values are measured as the committed verdicts are: in quick mode

Json = dict[str, Any]


def ns2_experiments(patterns: Sequence[str]) -> list[Experiment]:
    """The experiments judged on the ns2 platform, those matching ``patterns`` if given."""
    out = [e for e in experiments.load_all(ROOT / "experiments") if e.platform == "ns2"]
    if patterns:
        out = [e for e in out if any(fnmatch.fnmatch(e.id, p) for p in patterns)]
    return out


def canonical(exp: Experiment, variant: Mapping[str, Any]) -> Json:
    """The variant's scenario as manetfair reads it, with the quick mode's duration."""
    scenario = exp.expand(variant).with_run(duration_s=exp.plan(QUICK).duration_s)
    data: Json = json.loads(scenario.canonical_json())
    return data


def scenario_hash(sc: Mapping[str, Any]) -> str:
    """Names the scenario a stored run was made of (the seed left out)."""
    kept = {k: v for k, v in sc.items() if k != "seed"}
    return hashlib.sha256(json.dumps(kept, sort_keys=True).encode()).hexdigest()[:16]


def runnable(exp: Experiment) -> tuple[list[tuple[dict[str, Any], Json]], dict[str, list[Json]]]:
    """(variant, scenario) pairs ns-2.35 can run, and the refused ones by reason."""
    ok: list[tuple[dict[str, Any], Json]] = []
    refused: dict[str, list[Json]] = {}
    for variant in exp.variants(QUICK):
        sc = canonical(exp, variant)
        try:
            ns2tcl.script(sc, seed=1, agent_lib=AGENT_LIB)
            bin_s = (sc.get("trace") or {}).get("series_interval_s", ns2trace.BIN_S)
            if bin_s != ns2trace.BIN_S:
                raise ns2tcl.Unsupported("trace.series_interval_s", bin_s, f"{ns2trace.BIN_S}")
        except ns2tcl.Unsupported as exc:
            refused.setdefault(str(exc), []).append(dict(variant))
            continue
        ok.append((dict(variant), sc))
    return ok, refused


def variant_args(variant: Mapping[str, Any]) -> str:
    return " ".join(f"--variant {k}={v}" for k, v in variant.items())


def run_one(exp: Experiment, variant: Mapping[str, Any], sc: Json, seed: int) -> Json:
    text = ns2tcl.script(sc, seed=seed, agent_lib=AGENT_LIB.resolve())
    stats, cpu, _ = ns2proc.run_script(text, f"{exp.id}-{seed}")
    return {
        "experiment": exp.id,
        "variant": dict(variant),
        "seed": seed,
        "scenario": scenario_hash(sc),
        "duration_s": sc["duration_s"],
        "command": (
            f"python3 bench/ns2/claim_values.py tcl {exp.id} {variant_args(variant)} "
            f"--seed {seed} > case.tcl && ns case.tcl TRACE"
        ),
        "cpu_s": round(cpu, 3),
        "summary": stats.summary(),
        "traces": stats.traces(),
    }


def _key(r: Mapping[str, Any]) -> str:
    return json.dumps([r["variant"], r["seed"]], sort_keys=True)


def results_path(exp_id: str) -> Path:
    return RESULTS_DIR / f"{PREFIX}{exp_id}.jsonl"


def load(exp_id: str) -> list[Json]:
    path = results_path(exp_id)
    if not path.exists():
        return []
    return [json.loads(x) for x in path.read_text().splitlines() if x]


def store(exp_id: str, new: Sequence[Json]) -> None:
    """Replaces the lines of the experiment's file that ``new`` measures again."""
    merged = {_key(r): r for r in load(exp_id)}
    merged.update({_key(r): r for r in new})
    path = results_path(exp_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(json.dumps(merged[k], sort_keys=True) + "\n" for k in sorted(merged)))
    tmp.replace(path)


def cmd_run(args: argparse.Namespace) -> None:
    for exp in ns2_experiments(args.experiments):
        ok, refused = runnable(exp)
        for reason, variants in refused.items():
            print(f"{exp.id}: {len(variants)} variant(s) not run: {reason}", flush=True)
        if not ok:
            continue
        seeds = args.seeds or exp.plan(QUICK).seeds
        jobs = [(v, sc, seed) for v, sc in ok for seed in range(1, seeds + 1)]

        def one(job: tuple[dict[str, Any], Json, int], exp: Experiment = exp) -> Json:
            return run_one(exp, *job)

        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            done = []
            for r in pool.map(one, jobs):
                done.append(r)
                print(
                    f"{exp.id:22} {json.dumps(r['variant']):45} seed {r['seed']:2}: "
                    f"{r['summary']['aggregate_kbps']:7.1f} kbit/s  {r['cpu_s']:6.2f} s CPU",
                    flush=True,
                )
        store(exp.id, done)


class Unrunnable(Exception):
    """A claim's measure read a run of a variant that ns-2.35 did not run."""


class _NotRun(Mapping[str, Any]):
    """The summary and traces of a variant without ns-2.35 runs: any read raises."""

    def __getitem__(self, key: str) -> Any:
        raise Unrunnable(key)

    def __contains__(self, key: object) -> bool:
        raise Unrunnable(key)

    def __iter__(self) -> Iterator[str]:
        raise Unrunnable("")

    def __len__(self) -> int:
        raise Unrunnable("")


def value_of(
    claim: Mapping[str, Any], runs: Sequence[claims.Run], variants: Sequence[Mapping[str, Any]]
) -> tuple[float | None, str]:
    """ns-2.35's value of ``claim``'s measure from ``runs``, or (None, why not).

    Every quick variant without an ns-2.35 run stands in as a run whose summary and
    traces raise when read, so a measure that needs any of them (a remedy's arm)
    has no value, rather than a value from fewer arms than manetfair's."""
    have = {json.dumps(r.variant, sort_keys=True) for r in runs}
    missing = [
        claims.Run(dict(v), 0, _NotRun(), _NotRun())
        for v in variants
        if json.dumps(dict(v), sort_keys=True) not in have
    ]
    try:
        value = claims.measure_value(claim["measured"], [*runs, *missing], claim["where"])
    except Unrunnable:
        return None, "reads an arm ns-2.35 cannot run"
    except InputError as exc:
        return None, f"reads what ns-2.35's trace does not give ({exc})"
    if not math.isfinite(value):
        return None, "no value"
    return value, ""


def evaluate(exp: Experiment) -> tuple[list[Json], list[tuple[str, str]]]:
    """The ``[[value]]`` entries of ``exp`` from its stored runs, and (claim, why not)
    for each claim without one."""
    current = {json.dumps(v, sort_keys=True): scenario_hash(sc) for v, sc in runnable(exp)[0]}
    lines = load(exp.id)
    stale = [
        r for r in lines if current.get(json.dumps(r["variant"], sort_keys=True)) != r["scenario"]
    ]
    for r in stale:
        print(
            f"{exp.id}: stored run {r['variant']} seed {r['seed']} is of another scenario; left out"
        )
    lines = [r for r in lines if r not in stale]
    runs = [claims.Run(r["variant"], r["seed"], r["summary"], r["traces"]) for r in lines]
    seeds = sorted({r["seed"] for r in lines})
    variants = exp.variants(QUICK)
    out: list[Json] = []
    skipped: list[tuple[str, str]] = []
    for claim in claims.expand_claims(exp.runnable_claims(), variants):
        what = str(claim["what"]).format_map(
            claims._Fmt({k: str(v) for k, v in claim["where"].items()})
        )
        if not runs:
            skipped.append((what, "reads an arm ns-2.35 cannot run"))
            continue
        value, why = value_of(claim, runs, variants)
        if value is None:
            skipped.append((what, why))
            continue
        out.append(
            {
                "experiment": exp.id,
                "claim": what,
                "value": value,
                "seeds": f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else str(seeds[0]),
                "case": (
                    f"{exp.id}, quick mode ({lines[0]['duration_s']:g} s), its scenario run "
                    f"in ns-2.35 ({len(seeds)} seeds)"
                ),
                "source": f"bench/ns2/results/{PREFIX}{exp.id}.jsonl",
            }
        )
    return out, skipped


HEADER = """\
# ns-2.35's own values of claims' measures: the claim's scenario run in ns-2.35 itself
# (Debian's 2.35+dfsg), so that a miss ns-2.35 shares (the reconstructed scenario, or the
# paper, is off) is told from a miss that is manetfair's alone. One [[value]] per claim:
# the experiment, the claim's `what` as the report prints it, ns-2.35's value of its
# measure (computed by manetfair's own claim code from ns-2.35's runs), the seeds, the
# case, and the raw runs it comes from. Only measured values belong here.
# Generated, never edited by hand:
#   python3 bench/ns2/claim_values.py run      # ns-2.35, quick mode -> bench/ns2/results/claims-*.jsonl
#   python3 bench/ns2/claim_values.py write    # this file, from those runs
# `manetfair reproduce` judges each value by the claim's own test (docs/experiments.md,
# "Verdicts, per paper and platform").
"""


def toml_entries(entries: Sequence[Json]) -> str:
    out = [HEADER]
    for e in entries:
        out.append("\n[[value]]\n")
        for k in ("experiment", "claim", "value", "seeds", "case", "source"):
            v = e[k]
            out.append(
                f"{k} = {repr(float(v)) if k == 'value' else json.dumps(v, ensure_ascii=False)}\n"
            )
    return "".join(out)


def cmd_write(args: argparse.Namespace) -> None:
    entries: list[Json] = []
    for exp in ns2_experiments([]):
        found, skipped = evaluate(exp)
        entries.extend(found)
        print(f"{exp.id}: {len(found)} value(s); {len(skipped)} claim(s) without", flush=True)
        if args.verbose:
            for what, why in skipped:
                print(f"    - {what}: {why}")
    VALUES.write_text(toml_entries(entries), encoding="utf-8")


def cmd_tcl(args: argparse.Namespace) -> None:
    (exp,) = [e for e in ns2_experiments([args.experiment]) if e.id == args.experiment]
    given = dict(v.split("=", 1) for v in args.variant)
    chosen = [v for v in exp.variants(QUICK) if {k: str(x) for k, x in v.items()} == given]
    if not chosen:
        sys.exit(f"{exp.id} has no quick variant {given}; variants: {exp.variants(QUICK)}")
    sc = canonical(exp, chosen[0])
    print(ns2tcl.script(sc, seed=args.seed, agent_lib=AGENT_LIB.resolve()), end="")


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="run ns-2.35 on every variant it can run")
    r.add_argument("--experiments", nargs="*", default=[], help="ids or glob patterns")
    r.add_argument("--seeds", type=int, help="seeds 1..N (default: the quick mode's)")
    r.add_argument("--jobs", type=int, default=1)
    w = sub.add_parser("write", help="experiments/ns2-values.toml from the stored runs")
    w.add_argument("--verbose", action="store_true", help="name every claim without a value")
    t = sub.add_parser("tcl", help="print one variant's ns-2.35 script")
    t.add_argument("experiment")
    t.add_argument("--variant", action="append", default=[], help="axis=value (repeatable)")
    t.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    {"run": cmd_run, "write": cmd_write, "tcl": cmd_tcl}[args.command](args)


if __name__ == "__main__":
    main()
