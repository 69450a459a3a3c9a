#!/usr/bin/env python3
"""bench/RESULTS.md, made from the measurements alone.

Every measurement is one JSON record in ``bench/data/<table>.jsonl`` (and, for
ns-2.35, ``bench/ns2/results/timing.jsonl``): the command as run, the commit it
measured (``null`` where the record does not say), when, and the figures. The
benchmark scripts append records (``append``) and rewrite the page (``write``);
the page shows the latest record of each row, so a new measurement replaces the
old one on the page while the data files and git keep every earlier one.

    python3 bench/results.py            # rewrite bench/RESULTS.md from the data
    python3 bench/results.py --check    # exit 1 if the page is not its data's
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
NS2_TIMING = HERE / "ns2" / "results" / "timing.jsonl"
RESULTS_MD = HERE / "RESULTS.md"
# The last commit whose RESULTS.md kept every step's prose (the speed steps, the
# tries that did not pay); other documents cite its sections.
DIARY = "fe6291b"

Json = dict[str, Any]


def read(table: str, data: Path = DATA) -> list[Json]:
    """The records of one table, oldest first ([] when it has none yet)."""
    path = data / f"{table}.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def append(table: str, records: Iterable[Json], data: Path = DATA) -> None:
    """Adds measurements to a table, one line each, keys sorted (stable diffs)."""
    data.mkdir(parents=True, exist_ok=True)
    with open(data / f"{table}.jsonl", "a") as out:
        out.writelines(
            json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n" for rec in records
        )


def latest(records: Sequence[Json], *key: str) -> list[Json]:
    """The last record of each key, in the order the keys first appeared."""
    rows: dict[tuple[Any, ...], Json] = {}
    for rec in records:
        rows[tuple(rec.get(k) for k in key)] = rec
    return list(rows.values())


def cell(value: Any, digits: int | None = None) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.{2 if digits is None else digits}f}"
    return str(value)


Column = tuple[str, Callable[[Json], Any], "int | None"]


def ns3_pairs(rows: list[Json], key: str) -> list[tuple[Json, Json]]:
    """(ns-3's record, manetfair's) for each `key` both simulators have, in first-seen order."""
    by = {(r[key], r["simulator"]): r for r in rows}
    return [
        (by[(k, "ns3")], by[(k, "manetfair")])
        for k in dict.fromkeys(r[key] for r in rows)
        if (k, "ns3") in by and (k, "manetfair") in by
    ]


def table(columns: Sequence[Column], rows: Iterable[Json]) -> list[str]:
    """A Markdown table: numbers right-aligned (by the first row), '–' for none."""
    rows = list(rows)
    heads = [c[0] for c in columns]
    first = rows[0] if rows else {}
    align = ["---:" if isinstance(get(first), (int, float)) else "---" for _, get, _ in columns]
    out = ["| " + " | ".join(heads) + " |", "| " + " | ".join(align) + " |"]
    for row in rows:
        out.append("| " + " | ".join(cell(get(row), d) for _, get, d in columns) + " |")
    return out


def ratio(a: Any, b: Any) -> float | None:
    ok = isinstance(a, (int, float)) and isinstance(b, (int, float)) and b
    return a / b if ok else None


def when(rec: Json) -> str:
    commit = rec.get("commit")
    return f"{rec.get('date', '?')}" + (f", {commit}" if commit else "")


SIM = {"ns3": "ns-3", "manetfair": "manetfair", "ns-2.35": "ns-2.35"}


def speed_section(data: Path) -> list[str]:
    rows = latest(read("speed", data), "scenario", "simulator")
    out = [
        "## Speed against ns-3",
        "",
        (
            "Each simulator runs the scenario alone, one after the other (`bench/run.py`, settings "
            "and scenarios in docs/benchmark.md): a, the 10×10 grid with 16 TCP flows, static "
            "routes; b, 50 random nodes with 5 TCP flows and AODV; c<n>, n random nodes, static. "
            "Wall and CPU time (user + system) of the simulator's process; load = the machine's "
            "1-minute load average as the run ended (the machine is shared, 2 cores). Peak RSS: "
            "see the next section for how it is taken and which records carry the old method."
        ),
        "",
    ]
    out += table(
        [
            ("scenario", lambda r: r["scenario"], None),
            ("nodes", lambda r: r.get("nodes"), None),
            ("sim s", lambda r: r.get("sim_s"), None),
            ("simulator", lambda r: SIM.get(r["simulator"], r["simulator"]), None),
            ("status", lambda r: r.get("status"), None),
            ("wall s", lambda r: r.get("wall_s"), None),
            ("CPU s", lambda r: r.get("cpu_s"), None),
            ("peak RSS MB", lambda r: r.get("peak_rss_mb"), 1),
            ("RSS taken as", lambda r: r.get("rss_method"), None),
            ("events", lambda r: r.get("events"), None),
            ("load", lambda r: r.get("load"), 1),
            ("measured", when, None),
        ],
        rows,
    )
    pairs = ns3_pairs(rows, "scenario")
    out += [
        "",
        "Ratios ns-3 / manetfair where both finished (above 1: manetfair is faster or smaller):",
        "",
    ]
    out += table(
        [
            ("scenario", lambda p: p[0]["scenario"], None),
            ("wall time", lambda p: ratio(p[0].get("wall_s"), p[1].get("wall_s")), 1),
            ("CPU time", lambda p: ratio(p[0].get("cpu_s"), p[1].get("cpu_s")), 1),
            ("peak RSS", lambda p: ratio(p[0].get("peak_rss_mb"), p[1].get("peak_rss_mb")), 1),
            ("manetfair's RSS taken as", lambda p: p[1].get("rss_method"), None),
        ],
        [p for p in pairs if p[0].get("wall_s") and p[1].get("wall_s")],
    )
    out += ["", f"Commands: {commands(rows)}."]
    return out


def commands(rows: Iterable[Json]) -> str:
    return "; ".join(f"`{c}`" for c in dict.fromkeys(r["command"] for r in rows))


def memory_section(data: Path) -> list[str]:
    rows = latest(read("memory", data), "target", "simulator", "process")
    out = [
        "## Peak memory of the simulating process",
        "",
        (
            "Peak RSS is the high-water mark of the process that runs the simulation, and of no "
            "other. `bench/run.py` and `bench/count.py` start each run under `/usr/bin/time` (a "
            "small C program) and take the `%M` it reports: the `ru_maxrss` of its child, the "
            "simulator. Records marked *forked driver* were taken the earlier way, `os.wait4` of a "
            "child forked from the Python driver: Linux carries a process's high-water mark across "
            "`exec`, so they are at least the driver's 24–27 MB: manetfair's were the driver's, "
            "ns-3's (larger) its own. *core* is "
            "manetfair's core alone (`target/release/examples/run_scenario`), *CLI* the "
            "`manetfair run` a user starts (Python front end and core in one process)."
        ),
        "",
    ]
    if not rows:
        return [*out, "No measurement yet."]
    out += table(
        [
            ("target", lambda r: r["target"], None),
            ("simulator", lambda r: SIM.get(r["simulator"], r["simulator"]), None),
            ("process", lambda r: r["process"], None),
            ("peak RSS MB", lambda r: r["peak_rss_mb"], 1),
            ("CPU s", lambda r: r.get("cpu_s"), 2),
            ("measured", when, None),
        ],
        rows,
    )
    ns3 = {r["target"]: r for r in rows if r["simulator"] == "ns3"}
    pairs = [(ns3[r["target"]], r) for r in rows if r["simulator"] != "ns3" and r["target"] in ns3]
    if pairs:
        out += ["", "ns-3 / manetfair, peak RSS:", ""]
        out += table(
            [
                ("target", lambda p: p[1]["target"], None),
                ("manetfair process", lambda p: p[1]["process"], None),
                ("ratio", lambda p: ratio(p[0]["peak_rss_mb"], p[1]["peak_rss_mb"]), 1),
            ],
            pairs,
        )
    out += ["", "Commands:", ""]
    out += [f"- {r['target']}, {r['process']}: `{r['command']}`" for r in rows]
    return out


def counts_section(data: Path) -> list[str]:
    core = latest(read("counts", data), "target")
    whole = latest(read("counts_whole", data), "target", "simulator")
    out = [
        "## Instruction counts",
        "",
        (
            "Counted with `valgrind --tool=callgrind` by `python3 bench/count.py` (docs/benchmark.md): "
            "the same on every run of the same input, whatever the machine's load."
        ),
        "",
        "### manetfair's core, steady state",
        "",
        (
            "The core alone, over the measured window only (callgrind `--dump-before` at "
            "`run_scenario::measured` and `run_scenario::report`): set-up and the flows' start-up "
            "excluded. A delivery is one (frame, receiver) pair; walk steps queued: the share of "
            "signal edges that went through the event queue."
        ),
        "",
    ]
    out += table(
        [
            ("target", lambda r: r["target"], None),
            ("nodes", lambda r: r["nodes"], None),
            ("window s", lambda r: r["window_s"], None),
            ("events", lambda r: r["events"], None),
            ("deliveries", lambda r: r["deliveries"], None),
            ("receivers/frame", lambda r: r["receivers_per_frame"], 1),
            ("walk steps queued %", lambda r: r["walk_steps_queued_pct"], 1),
            ("instructions", lambda r: r["instructions"], None),
            ("instr./event", lambda r: round(r["instructions"] / r["events"]), None),
            ("instr./delivery", lambda r: round(r["instructions"] / r["deliveries"]), None),
            ("CPU s/sim s", lambda r: r.get("cpu_s_per_sim_s"), 3),
            ("load", lambda r: r.get("load"), 1),
            ("measured", when, None),
        ],
        core,
    )
    pairs = ns3_pairs(whole, "target")
    out += [
        "",
        "### Against ns-3, whole process",
        "",
        (
            "The same scenario on both sides, counted from start to exit (ns-3's `ns3bench run`, "
            "manetfair's core example: no Python front end). a10 is scenario a cut to 10 simulated "
            "seconds; b-quick is b's quick variant (40 s, flows 5–35 s). Wall time: one native run "
            "each, with the load as it ended."
        ),
        "",
    ]
    out += table(
        [
            ("scenario", lambda p: p[0]["target"], None),
            ("ns-3 instructions", lambda p: p[0]["instructions"], None),
            ("manetfair instructions", lambda p: p[1]["instructions"], None),
            ("ratio", lambda p: ratio(p[0]["instructions"], p[1]["instructions"]), 1),
            ("ns-3 wall s", lambda p: p[0].get("wall_s"), 2),
            ("manetfair wall s", lambda p: p[1].get("wall_s"), 3),
            ("measured", lambda p: when(p[1]), None),
        ],
        pairs,
    )
    out += ["", "Commands:", ""]
    out += [f"- {r['target']}: `{r['command']}`" for r in core]
    out += [f"- {r['target']}, {SIM[r['simulator']]}: `{r['command']}`" for r in whole]
    return out


def reception_section(data: Path) -> list[str]:
    rows = latest(read("reception", data), "case", "flow")
    cost = latest(read("reception_cost", data), "reception")
    out = [
        "## Reception models against ns-3",
        "",
        (
            "Per flow: goodput in kbit/s over 1–60 s, mean [min–max] over seeds 1..5; manetfair runs "
            '`radio.reception = "sinr"`. Written by `python3 bench/reception.py`; the cases are in '
            "its head and in docs/models.md."
        ),
        "",
    ]
    out += table(
        [
            ("case", lambda r: r["case"], None),
            ("flow", lambda r: str(r["flow"]), None),
            ("ns-3 3.44", lambda r: r["ns3_kbps"], None),
            ("manetfair sinr", lambda r: r["manetfair_sinr_kbps"], None),
            ("verdict", lambda r: r["verdict"], None),
        ],
        rows,
    )
    if rows:
        out += ["", f"Measured {when(rows[-1])}."]
    if cost:
        out += [
            "",
            "### Cost of the SINR model",
            "",
            (
                "Scenario a (10 × 10 nodes, 16 TCP flows, 300 s), both models one after the other "
                "in one process:"
            ),
            "",
        ]
        out += table(
            [
                ("reception", lambda r: r["reception"], None),
                ("CPU s", lambda r: r["cpu_s"], 2),
                ("events", lambda r: r["events"], None),
                ("CPU ns per event", lambda r: r["cpu_s"] / r["events"] * 1e9, 1),
                ("aggregate kbit/s", lambda r: r["aggregate_kbps"], 1),
                ("measured", when, None),
            ],
            cost,
        )
    return out


def front_end_section(data: Path) -> list[str]:
    rows = latest(read("front_end", data), "set", "jobs")
    out = [
        "## The front end's time: `reproduce` with one and two workers",
        "",
        (
            "`python3 bench/reproduce_timing.py`: one run of `manetfair reproduce` from an empty "
            "results store; wall and CPU time (the command and its workers) from outside; load "
            "before → after; core s = the core's wall time over the workers (its CPU time)."
        ),
        "",
    ]
    return out + table(
        [
            ("set", lambda r: r["set"], None),
            ("jobs", lambda r: r["jobs"], None),
            ("wall s", lambda r: r["wall_s"], 1),
            ("CPU s", lambda r: r["cpu_s"], 1),
            ("load", lambda r: r["load"], None),
            ("sim s/wall s", lambda r: r["sim_s_per_wall_s"], 1),
            ("core s (CPU s)", lambda r: r["core_s"], None),
            ("core share", lambda r: r["core_share"], None),
            ("commits", lambda r: r["commits"], None),
            ("measured", when, None),
        ],
        rows,
    )


def reproduction_section(data: Path) -> list[str]:
    rows = read("reproduction", data)
    out = ["## A full reproduction, timed end to end", ""]
    if not rows:
        return [*out, "No measurement yet."]
    r = rows[-1]
    out += [
        (
            f"`{r['command']}` in an empty folder, {when(r)}, {r['load']}: "
            f"{r['claims_hold']} of {r['claims']} evaluated claims hold over {r['runs']:,} runs "
            f"({r['simulated']:,} simulated, {r['reused']:,} reused, "
            f"{r['simulated_s'] / 1e6:.2f} M simulated seconds)."
        ),
        "",
    ]
    return out + table(
        [
            ("wall s", lambda r: r["wall_s"], None),
            ("CPU s", lambda r: r["cpu_s"], None),
            ("core s", lambda r: r["core_s"], 1),
            ("store s (commits)", lambda r: f"{r['store_s']:.1f} ({r['store_commits']})", None),
            ("plots s", lambda r: r["plots_s"], 1),
            ("sim s/wall s", lambda r: r["sim_s_per_wall_s"], 1),
            ("peak RSS GB", lambda r: r["peak_rss_gb"], 2),
        ],
        [r],
    )


def ns2_section(timing: Path) -> list[str]:
    rows = [json.loads(line) for line in timing.read_text().splitlines()] if timing.exists() else []
    rows = latest(rows, "case", "simulator", "model")
    ns2 = {r["case"]: r for r in rows if r["simulator"] == "ns-2.35"}
    mine = {r["case"]: r for r in rows if r["simulator"] == "manetfair" and r["model"] == "ns2"}
    std = {r["case"]: r for r in rows if r["simulator"] == "manetfair" and r["model"] != "ns2"}
    out = [
        "## Against ns-2.35: the ns2 platform",
        "",
        (
            'manetfair with `platform = "ns2"` (docs/models.md) against ns-2.35 itself (Debian\'s '
            "`ns2`, the same scenario turned into a Tcl script by `bench/ns2/ns2tcl.py`). CPU time "
            "(user + system) and peak RSS of the whole process, each the minimum over interleaved "
            "rounds, seed 1, from `bench/ns2/results/timing.jsonl` (`python3 bench/ns2/run.py "
            "--timing`); manetfair's figures include its Python front end. The fidelity of the "
            'same cases is in docs/models.md ("Side by side with ns-2.35").'
        ),
        "",
    ]
    cases = [c for c in ns2 if c in mine]
    return out + table(
        [
            ("case", lambda c: c, None),
            ("simulated s", lambda c: ns2[c]["duration_s"], 0),
            ("ns-2.35 CPU s", lambda c: ns2[c]["cpu_s_min"], 2),
            ("manetfair ns2 CPU s", lambda c: mine[c]["cpu_s_min"], 2),
            ("ratio", lambda c: ratio(ns2[c]["cpu_s_min"], mine[c]["cpu_s_min"]), 1),
            ("manetfair standard CPU s", lambda c: std.get(c, {}).get("cpu_s_min"), 2),
            ("ns-2.35 peak MB", lambda c: ns2[c]["max_rss_kib_min"] / 1024, 1),
            ("manetfair ns2 peak MB", lambda c: mine[c]["max_rss_kib_min"] / 1024, 1),
            ("measured", lambda c: mine[c]["when"], None),
        ],
        cases,
    )


def range_section(data: Path) -> list[str]:
    rows = read("range_check", data)
    if not rows:
        return []
    r = rows[-1]
    out = [
        "## Range check (ns-3)",
        "",
        "`ns3bench check` (docs/benchmark.md), "
        + when(r)
        + ": two nodes at distance d, 100 UDP packets of 500 bytes, broadcast then unicast "
        "with RTS/CTS; then two saturated broadcast senders at distance d.",
        "",
        "| d (m) | broadcast received | unicast received | sender frames | receiver frames |",
        "| ---: | ---: | ---: | ---: | ---: |",
        *("| " + " | ".join(cell(x) for x in row) + " |" for row in r["decode"]),
        "",
        "| d (m) | frames sent by both in 2 s | share airtime |",
        "| ---: | ---: | --- |",
        *("| " + " | ".join(cell(x) for x in row) + " |" for row in r["sense"]),
        "",
        "**PASS**: frames decode up to 250 m and not beyond; carrier sense reaches 550 m and "
        "not beyond."
        if r["passed"]
        else "**FAIL**: the ranges are not ns-3's 250 m and 550 m.",
    ]
    return out


def render(data: Path = DATA, timing: Path = NS2_TIMING) -> str:
    parts = [
        [
            "# manetfair: speed, memory and fidelity, measured",
            "",
            (
                "Generated by `python3 bench/results.py` from `bench/data/*.jsonl` and "
                "`bench/ns2/results/timing.jsonl`, one JSON record per measurement (the command, "
                "the commit measured, when, the figures); do not edit by hand. Each table shows "
                "the latest record of each row; the earlier ones stay in the data files and in "
                "git (`git log -p bench/data`). The account of every speed step and of the ideas "
                f"that did not pay, up to 2026-11-29, is `git show {DIARY}:bench/RESULTS.md`; "
                "bench/TARGETS.md says where the targets stand."
            ),
        ],
        speed_section(data),
        memory_section(data),
        counts_section(data),
        reproduction_section(data),
        front_end_section(data),
        ns2_section(timing),
        reception_section(data),
        range_section(data),
    ]
    return "\n\n".join("\n".join(p) for p in parts if p) + "\n"


def write(data: Path = DATA, page: Path = RESULTS_MD) -> Path:
    page.write_text(render(data))
    return page


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if the page is out of date")
    args = ap.parse_args(argv)
    if args.check:
        if RESULTS_MD.read_text() != render():
            print(f"{RESULTS_MD} is not its data's: run python3 bench/results.py", file=sys.stderr)
            return 1
        return 0
    print(write())
    return 0


if __name__ == "__main__":
    sys.exit(main())
