#!/usr/bin/env python3
"""Side-by-side speed and fidelity benchmark of manetfair against ns-3 3.44.

Generates the scenarios deterministically, writes each one both as a manetfair
scenario file and as an input of the ns-3 program in ``bench/ns3/``, runs both
simulators as separate processes (measuring wall time and peak RSS from
outside), writes the whole report to ``bench/out/report.md`` and
``bench/scaling.png``, and adds one record per scenario and simulator to
``bench/data/speed.jsonl``, from which ``bench/RESULTS.md`` is remade.

Settings and scenario definitions are documented in ``docs/benchmark.md``.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime
import functools
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import random
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import results  # the page's generator beside this file

BUILD_DIR = HERE / "build"
OUT_DIR = HERE / "out"
SOURCE = HERE / "ns3" / "ns3bench.cc"
BINARY = BUILD_DIR / "ns3bench"
RESULTS_MD = results.RESULTS_MD
# The whole report of the last run (every flow, every failure); the page keeps its
# speed rows as records (bench/data/speed.jsonl).
REPORT_MD = OUT_DIR / "report.md"
# GNU time: a small C program whose child is the simulator, so that the child's
# ru_maxrss is the simulator's own (see run_measured).
GNU_TIME = Path("/usr/bin/time")
WATCH_JSON = HERE / "watch.json"
SCALING_PNG = HERE / "scaling.png"

NS3_REQUIREMENT = "ns3>=3.44,<3.45"
NS3_MODULES = (
    "aodv",
    "applications",
    "internet",
    "wifi",
    "traffic-control",
    "propagation",
    "mobility",
    "network",
    "core",
)
# The compile definitions ns-3's exported cmake targets carry.
NS3_DEFINES = (
    "__LINUX__",
    "NS3_LOG_ENABLE",
    "NS3_ASSERT_ENABLE",
    "NS3_BUILD_PROFILE_RELEASE",
)

TX_RANGE_M = 250.0
CS_RANGE_M = 550.0
PACKET_BYTES = 1000
QUEUE_PKTS = 50
SCENARIO_SEED = 1  # placement and flows; the run seeds vary the simulation only
DENSITY_PER_KM2 = 50.0
SCALING_SIZES = (100, 1000, 10000)

Json = dict[str, Any]


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class Flow:
    src: int
    dst: int
    start_s: float
    stop_s: float
    route: tuple[int, ...] | None  # explicit path for static routing, None under AODV


@dataclass(frozen=True)
class Scenario:
    key: str
    title: str
    positions: list[tuple[float, float]]
    flows: list[Flow]
    routing: str  # "static" | "aodv"
    duration_s: float
    fidelity: bool  # compared flow by flow (a, b), or a speed point only (c, d, e)
    queue: str = "droptail"  # manetfair's interface queue discipline
    rwp_speed_mps: float | None = None  # random waypoint, maximum speed
    watch: bool = False  # manetfair only: its events per second tracked from run to run

    @property
    def nodes(self) -> int:
        return len(self.positions)


def neighbours(positions: Sequence[tuple[float, float]], reach_m: float) -> list[list[int]]:
    """Nodes within reach_m of each node, in increasing id order (grid buckets)."""
    cells: dict[tuple[int, int], list[int]] = collections.defaultdict(list)
    for i, (x, y) in enumerate(positions):
        cells[(int(x // reach_m), int(y // reach_m))].append(i)
    reach2 = reach_m * reach_m * (1.0 + 1e-9)
    out: list[list[int]] = []
    for i, (x, y) in enumerate(positions):
        cx, cy = int(x // reach_m), int(y // reach_m)
        near = []
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for j in cells.get((cx + dx, cy + dy), ()):
                    if j != i:
                        px, py = positions[j]
                        if (px - x) ** 2 + (py - y) ** 2 <= reach2:
                            near.append(j)
        out.append(sorted(near))
    return out


def hop_distances(adj: Sequence[Sequence[int]], origin: int, limit: int) -> dict[int, int]:
    """Breadth-first hop counts from origin, up to limit hops."""
    dist = {origin: 0}
    frontier = [origin]
    for hops in range(1, limit + 1):
        nxt = []
        for u in frontier:
            for v in adj[u]:
                if v not in dist:
                    dist[v] = hops
                    nxt.append(v)
        frontier = nxt
    return dist


def shortest_path(
    adj: Sequence[Sequence[int]], src: int, dst: int, limit: int | None = None
) -> tuple[int, ...] | None:
    """A hop-count shortest path; at every hop the lowest-id neighbour that stays
    on a shortest path is taken, so the choice is deterministic."""
    to_dst = hop_distances(adj, dst, len(adj) if limit is None else limit)
    if src not in to_dst:
        return None
    path = [src]
    while path[-1] != dst:
        here = path[-1]
        path.append(min(v for v in adj[here] if to_dst.get(v) == to_dst[here] - 1))
    return tuple(path)


def route_entries(path: Sequence[int]) -> list[tuple[int, int, int]]:
    """(node, destination, next hop) host routes for data along path and for the
    returning TCP ACKs along its reverse."""
    entries = [(path[i], path[-1], path[i + 1]) for i in range(len(path) - 1)]
    entries += [(path[i], path[0], path[i - 1]) for i in range(1, len(path))]
    return entries


def add_routes(table: dict[tuple[int, int], int], path: Sequence[int]) -> bool:
    """Adds the path's host routes unless one contradicts a route already there."""
    entries = route_entries(path)
    if any(table.get((n, d), v) != v for n, d, v in entries):
        return False
    for n, d, v in entries:
        table[(n, d)] = v
    return True


def is_connected(adj: Sequence[Sequence[int]]) -> bool:
    return len(hop_distances(adj, 0, len(adj))) == len(adj)


def grid_scenario(quick: bool) -> Scenario:
    """(a) 10 x 10 grid, 200 m spacing, id = row * 10 + col at (col * 200, row * 200).

    Row 0 is the northern edge. Eight flows run west to east along rows 1..8
    (node row*10 to row*10+9) and eight north to south along columns 1..8
    (node col to 90+col); each is 9 hops.
    """
    rng = random.Random(f"grid-{SCENARIO_SEED}")
    duration = 30.0 if quick else 300.0
    positions = [(col * 200.0, row * 200.0) for row in range(10) for col in range(10)]
    adj = neighbours(positions, TX_RANGE_M)
    pairs = [(r * 10, r * 10 + 9) for r in range(1, 9)] + [(c, 90 + c) for c in range(1, 9)]
    table: dict[tuple[int, int], int] = {}
    flows = []
    for src, dst in pairs:
        path = shortest_path(adj, src, dst)
        assert path is not None and add_routes(table, path)
        start = round(1.0 + rng.random(), 3)
        flows.append(Flow(src, dst, start, duration, path))
    return Scenario(
        "a", "10x10 grid, 16 TCP flows, static", positions, flows, "static", duration, True
    )


def random_field(rng: random.Random, n: int, side_m: float) -> list[tuple[float, float]]:
    return [(round(rng.uniform(0, side_m), 2), round(rng.uniform(0, side_m), 2)) for _ in range(n)]


def aodv_scenario(quick: bool) -> Scenario:
    """(b) 50 nodes uniform in 1000 m x 1000 m (redrawn until connected at 250 m),
    5 TCP flows between distinct random pairs, AODV."""
    rng = random.Random(f"aodv-{SCENARIO_SEED}")
    while True:
        positions = random_field(rng, 50, 1000.0)
        if is_connected(neighbours(positions, TX_RANGE_M)):
            break
    duration, start, stop = (40.0, 5.0, 35.0) if quick else (150.0, 10.0, 130.0)
    pairs: list[tuple[int, int]] = []
    while len(pairs) < 5:
        src, dst = rng.sample(range(50), 2)
        if (src, dst) not in pairs:
            pairs.append((src, dst))
    flows = [Flow(s, d, start, stop, None) for s, d in pairs]
    return Scenario(
        "b", "50 random nodes, 5 TCP flows, AODV", positions, flows, "aodv", duration, True
    )


def scaling_scenario(n: int, quick: bool) -> Scenario:
    """(c) n nodes uniform over a square at 50 nodes/km^2, n/10 TCP flows, each
    between a random pair 2..5 hops apart, static shortest-path routes."""
    rng = random.Random(f"scale-{n}-{SCENARIO_SEED}")
    side = 1000.0 * math.sqrt(n / DENSITY_PER_KM2)
    positions = random_field(rng, n, side)
    adj = neighbours(positions, TX_RANGE_M)
    duration = 10.0 if quick else 60.0
    table: dict[tuple[int, int], int] = {}
    flows: list[Flow] = []
    while len(flows) < n // 10:
        src = rng.randrange(n)
        near = hop_distances(adj, src, 5)
        candidates = sorted(v for v, h in near.items() if h >= 2)
        if not candidates:
            continue
        dst = rng.choice(candidates)
        path = shortest_path(adj, src, dst, limit=5)
        if path is None or not add_routes(table, path):
            continue
        flows.append(Flow(src, dst, round(1.0 + rng.random(), 3), duration, path))
    return Scenario(
        f"c{n}",
        f"{n} random nodes, {n // 10} TCP flows, static",
        positions,
        flows,
        "static",
        duration,
        False,
    )


def nred_grid_scenario(quick: bool) -> Scenario:
    """(d) scenario (a) with Neighborhood RED as every node's queue discipline:
    manetfair only (ns-3 has no NRED), to keep the cost of a remedy in view."""
    grid = grid_scenario(quick)
    return dataclasses.replace(
        grid,
        key="d",
        title="10x10 grid, 16 TCP flows, static, NRED",
        fidelity=False,
        queue="nred",
        watch=True,
    )


def mobile_aodv_scenario(quick: bool) -> Scenario:
    """(e) 100 nodes uniform at 50 nodes/km^2 (1414 m square), moving by random
    waypoint (up to 10 m/s, no pause), 10 TCP flows between distinct random
    pairs, AODV: manetfair only, to keep routing and mobility costs in view."""
    rng = random.Random(f"mobile-{SCENARIO_SEED}")
    n = 100
    positions = random_field(rng, n, 1000.0 * math.sqrt(n / DENSITY_PER_KM2))
    duration, start, stop = (40.0, 5.0, 35.0) if quick else (150.0, 10.0, 130.0)
    pairs: list[tuple[int, int]] = []
    while len(pairs) < n // 10:
        src, dst = rng.sample(range(n), 2)
        if (src, dst) not in pairs:
            pairs.append((src, dst))
    return Scenario(
        "e",
        "100 random nodes, random waypoint, 10 TCP flows, AODV",
        positions,
        [Flow(s, d, start, stop, None) for s, d in pairs],
        "aodv",
        duration,
        False,
        rwp_speed_mps=10.0,
        watch=True,
    )


def build_scenarios(selected: Iterable[str], quick: bool) -> list[Scenario]:
    out: list[Scenario] = []
    for name in selected:
        if name == "a":
            out.append(grid_scenario(quick))
        elif name == "b":
            out.append(aodv_scenario(quick))
        elif name == "c":
            out.extend(scaling_scenario(n, quick) for n in SCALING_SIZES)
        elif name == "d":
            out.append(nred_grid_scenario(quick))
        elif name == "e":
            out.append(mobile_aodv_scenario(quick))
        elif name.startswith("c") and name[1:].isdigit():
            out.append(scaling_scenario(int(name[1:]), quick))
        else:
            raise SystemExit(f"run.py: unknown scenario {name!r}: allowed a, b, c, c<nodes>, d, e")
    if quick:
        out = [dataclasses.replace(sc, key=f"{sc.key}-quick") for sc in out]
    return out


# --------------------------------------------------------------------------- writers


def manetfair_toml(sc: Scenario, seed: int, name: str) -> str:
    lines = [
        f'name = "{name}"',
        f"duration_s = {sc.duration_s!r}",
        f"seed = {seed}",
        "",
        "[radio]",
        "data_rate_mbps = 2.0",
        "basic_rate_mbps = 1.0",
        f"tx_range_m = {TX_RANGE_M!r}",
        f"cs_range_m = {CS_RANGE_M!r}",
        'propagation = "two-ray-ground"',
        "capture_threshold_db = 10.0",
        "",
        "[mac]",
        "rts_threshold_bytes = 0",
        "short_retry_limit = 7",
        "long_retry_limit = 4",
        f'queue = "{sc.queue}"',
        f"queue_capacity_pkts = {QUEUE_PKTS}",
        "",
        "[routing]",
        f'protocol = "{sc.routing}"',
        "",
    ]
    if sc.rwp_speed_mps is not None:
        lines += ["[mobility.random_waypoint]", f"speed_max_mps = {sc.rwp_speed_mps!r}", ""]
    lines += [
        "[topology]",
        'kind = "explicit"',
    ]
    for i, (x, y) in enumerate(sc.positions):
        lines += ["", "[[node]]", f"id = {i}", f"x_m = {x!r}", f"y_m = {y!r}"]
    for f in sc.flows:
        lines += [
            "",
            "[[flow]]",
            f"src = {f.src}",
            f"dst = {f.dst}",
            'transport = "tcp-newreno"',
            'app = "ftp"',
            f"packet_bytes = {PACKET_BYTES}",
            f"start_s = {f.start_s!r}",
            f"stop_s = {f.stop_s!r}",
        ]
        if f.route is not None:
            lines.append(f"route = [{', '.join(map(str, f.route))}]")
    return "\n".join(lines) + "\n"


def ns3_input(sc: Scenario, seed: int, name: str) -> str:
    lines = [
        "# ns3bench scenario, generated by bench/run.py",
        f"name {name}",
        f"duration {sc.duration_s!r}",
        f"seed {seed}",
        f"routing {sc.routing}",
    ]
    lines += [f"node {i} {x!r} {y!r}" for i, (x, y) in enumerate(sc.positions)]
    lines += [f"flow {f.src} {f.dst} {f.start_s!r} {f.stop_s!r}" for f in sc.flows]
    table: dict[tuple[int, int], int] = {}
    for f in sc.flows:
        if f.route is not None:
            table.update({(n, d): v for n, d, v in route_entries(f.route)})
    lines += [f"nexthop {n} {d} {v}" for (n, d), v in sorted(table.items())]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- ns-3 build


def ns3_prefix() -> Path:
    """site-packages/ns3 of the installed wheel (found through its metadata, since a
    bare ``import ns3`` from this folder would find bench/ns3 instead)."""
    try:
        dist = importlib.metadata.distribution("ns3")
    except importlib.metadata.PackageNotFoundError:
        print(f"installing {NS3_REQUIREMENT} from PyPI", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", NS3_REQUIREMENT], check=True)
        dist = importlib.metadata.distribution("ns3")
    if not dist.version.startswith("3.44"):
        raise SystemExit(f"run.py: ns3 {dist.version} is installed; this needs {NS3_REQUIREMENT}")
    return Path(str(dist.locate_file("ns3")))


def build_ns3() -> Path:
    prefix = ns3_prefix()
    if BINARY.exists() and BINARY.stat().st_mtime >= SOURCE.stat().st_mtime:
        return BINARY
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    cmd = ["g++", "-std=c++20", "-O2", f"-I{prefix / 'include'}"]
    cmd += [f"-D{d}" for d in NS3_DEFINES]
    cmd += [
        "-o",
        str(BINARY),
        str(SOURCE),
        f"-L{prefix / 'lib64'}",
        f"-Wl,-rpath,{prefix / 'lib64'}",
    ]
    cmd += [f"-lns3.44-{m}" for m in NS3_MODULES]
    print("building:", shlex.join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    return BINARY


# --------------------------------------------------------------------------- running


@dataclass
class Measured:
    status: str  # "ok" | "timeout" | "failed"; records add "skipped"
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    load_avg: float
    returncode: int
    stdout: str
    stderr: str
    rss_method: str = "own process"


def run_measured(cmd: list[str], timeout_s: float, log_stem: Path) -> Measured:
    """Runs cmd as its own process; wall time from fork to exit, CPU time from the
    kernel's rusage of that process and its children.

    Peak RSS is the simulator's own: cmd runs as the child of GNU time, which reports
    that child's ru_maxrss. Taken from `os.wait4` of a child forked from this driver,
    it would be at least the driver's own size, since Linux carries a process's
    high-water mark across exec (24-27 MB, more than manetfair's core needs). Without
    GNU time, the driver's figure is kept and marked so (`rss_method`)."""
    out_path = log_stem.with_suffix(".stdout")
    err_path = log_stem.with_suffix(".stderr")
    rss_path = log_stem.with_suffix(".maxrss")
    rss_path.unlink(missing_ok=True)
    launcher = [str(GNU_TIME), "-f", "%M", "-o", str(rss_path)] if GNU_TIME.exists() else []
    with open(out_path, "w") as out, open(err_path, "w") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*launcher, *cmd],
            stdout=out,
            stderr=err,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # a timeout ends the simulator too, not only the launcher
        )
        timed_out = threading.Event()
        exited = threading.Event()

        def kill() -> None:
            if not exited.is_set():
                timed_out.set()
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        exited.set()
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
    rc = proc.returncode
    state = "timeout" if timed_out.is_set() else ("ok" if rc == 0 else "failed")
    peak_mb, method = usage.ru_maxrss / 1024.0, "forked driver"
    reported = rss_path.read_text().split() if rss_path.exists() else []
    if reported and reported[-1].isdigit():  # GNU time's last line: %M, in KiB
        peak_mb, method = int(reported[-1]) / 1024.0, "own process"
    return Measured(
        state,
        wall,
        usage.ru_utime + usage.ru_stime,
        peak_mb,
        os.getloadavg()[0],
        rc,
        out_path.read_text(),
        err_path.read_text(),
        method,
    )


def last_json_line(text: str) -> Json | None:
    """The JSON object a run printed: the whole stdout, else its last line that is one."""
    candidates = [text, *reversed(text.strip().splitlines())]
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    return None


@dataclass
class RunRecord:
    sim: str
    scenario: str
    seed: int
    input_sha: str
    status: str
    note: str
    wall_s: float | None = None
    peak_rss_mb: float | None = None
    summary: Json = field(default_factory=dict)
    cpu_s: float | None = None  # user + system CPU seconds of the process
    load_avg: float | None = None  # machine's 1-minute load average when the run ended
    # How peak_rss_mb was taken (Measured.rss_method); runs stored before it was
    # recorded were the forked driver's.
    rss_method: str = "forked driver"

    def path(self) -> Path:
        return OUT_DIR / "runs" / f"{self.sim}-{self.scenario}-seed{self.seed}.json"


def load_record(sim: str, scenario: str, seed: int, sha: str) -> RunRecord | None:
    path = OUT_DIR / "runs" / f"{sim}-{scenario}-seed{seed}.json"
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if data.get("input_sha") != sha:
        return None
    return RunRecord(**data)


def save_record(rec: RunRecord) -> None:
    rec.path().parent.mkdir(parents=True, exist_ok=True)
    rec.path().write_text(json.dumps(rec.__dict__, indent=1) + "\n")


def run_one(
    sim: str, cmd: list[str], sc: Scenario, seed: int, sha: str, timeout_s: float
) -> RunRecord:
    stem = OUT_DIR / "logs" / f"{sim}-{sc.key}-seed{seed}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    print(
        f"[{time.strftime('%H:%M:%S')}] {sim} {sc.key} seed {seed}: {shlex.join(cmd)}",
        file=sys.stderr,
        flush=True,
    )
    m = run_measured(cmd, timeout_s, stem)
    rec = RunRecord(sim, sc.key, seed, sha, m.status, "", m.wall_s, m.peak_rss_mb)
    rec.cpu_s, rec.load_avg, rec.rss_method = m.cpu_s, m.load_avg, m.rss_method
    if m.status == "timeout":
        rec.note = f"did not finish in {timeout_s:.0f} s"
        rec.wall_s = None
        reached = [
            line.split()[1] for line in m.stderr.splitlines() if line.startswith("progress ")
        ]
        if reached:
            rec.summary = {"simulated_s_reached": float(reached[-1])}
            rec.note += f" (reached {float(reached[-1]):g} of {sc.duration_s:g} simulated s)"
    elif m.status == "failed":
        tail = " ".join(m.stderr.strip().splitlines()[-1:])[:300]
        tail = tail.replace(f"{HERE.parent}{os.sep}", "")  # paths relative to the repository
        rec.note = f"exit {m.returncode}: {tail}"
    else:
        summary = last_json_line(m.stdout)
        if summary is None:
            rec.status, rec.note = "failed", "no JSON summary on stdout"
        else:
            rec.summary = summary
    print(
        f"    -> {rec.status} {rec.note} wall {m.wall_s:.2f} s, peak RSS {m.peak_rss_mb:.1f} MB",
        file=sys.stderr,
        flush=True,
    )
    save_record(rec)
    return rec


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --------------------------------------------------------------------------- report


def mean(xs: Sequence[float]) -> float:
    return statistics.fmean(xs) if xs else math.nan


def fmt(x: float | None, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if abs(x) >= 1e5:
        return f"{x:,.0f}"
    return f"{x:,.{digits}f}"


def ok_runs(records: Sequence[RunRecord]) -> list[RunRecord]:
    return [r for r in records if r.status == "ok" and r.wall_s is not None]


def status_text(records: Sequence[RunRecord]) -> str:
    if not records:
        return "pending (not run)"
    ok = ok_runs(records)
    if len(ok) == len(records):
        return f"ok ({len(ok)} run{'s' if len(ok) > 1 else ''})"
    return f"{len(ok)}/{len(records)} ok; " + "; ".join(
        sorted({short_status(r) for r in records if r.status != "ok"})
    )


def short_status(rec: RunRecord) -> str:
    """A table-cell reason for a run without results; details go under the table."""
    if rec.status in ("timeout", "skipped"):
        return rec.note
    return "manetfair: not yet available" if rec.sim == "manetfair" else "failed"


def sim_stats(records: Sequence[RunRecord], sc: Scenario) -> dict[str, float]:
    ok = ok_runs(records)
    walls = [r.wall_s for r in ok if r.wall_s is not None]
    rss = [r.peak_rss_mb for r in ok if r.peak_rss_mb is not None]
    events = [float(r.summary.get("events", math.nan)) for r in ok]
    return {
        "wall_s": mean(walls),
        "wall_sd": statistics.stdev(walls) if len(walls) > 1 else math.nan,
        "rss_mb": mean(rss),
        "events": mean(events),
        "events_per_s": mean([e / w for e, w in zip(events, walls)]),
        "sim_per_wall": mean([sc.duration_s / w for w in walls]),
        "cpu_s": mean([r.cpu_s for r in ok if r.cpu_s is not None]),
        "load": mean([r.load_avg for r in ok if r.load_avg is not None]),
    }


def flow_kbps(records: Sequence[RunRecord], n_flows: int) -> list[list[float]]:
    per_flow: list[list[float]] = [[] for _ in range(n_flows)]
    for r in ok_runs(records):
        flows = r.summary.get("flows", [])
        for i in range(min(n_flows, len(flows))):
            per_flow[i].append(float(flows[i].get("throughput_kbps", math.nan)))
    return per_flow


def flow_hops(sc: Scenario, f: Flow) -> int:
    """Hops of the flow's static route, or of a shortest path when routes are found
    by the protocol (AODV finds shortest paths when nothing disturbs it)."""
    if f.route is not None:
        return len(f.route) - 1
    return hop_distances(neighbours(sc.positions, TX_RANGE_M), f.src, sc.nodes).get(f.dst, -1)


def spread_text(xs: Sequence[float]) -> str:
    if not xs:
        return "–"
    if len(xs) == 1:
        return fmt(xs[0], 1)
    return (
        f"{fmt(mean(xs), 1)} ± {fmt(statistics.stdev(xs), 1)} [{fmt(min(xs), 1)}–{fmt(max(xs), 1)}]"
    )


def machine_text() -> str:
    model = platform.processor() or "unknown"
    try:
        lscpu = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
        for line in lscpu.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{model}, {os.cpu_count()} logical cores, {mem_gb:.0f} GiB RAM, "
        f"{platform.system()} {platform.release()}, Python {platform.python_version()}"
    )


def version_of(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def manetfair_version(cmd: Sequence[str]) -> str:
    """`manetfair --version`, plus the git commit of its sources when the command runs
    a checkout of this repository (an editable install)."""
    try:
        res = subprocess.run(
            [*cmd, "--version"], check=False, capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return "not available"
    text = res.stdout.strip().removeprefix("manetfair ") or "not available"
    package = package_dir(cmd)
    commit = source_commit(package) if package is not None else None
    if commit is not None:
        text += f" (source commit {commit})"
    return text


def package_dir(cmd: Sequence[str]) -> Path | None:
    """The folder of the `manetfair` package that `cmd` runs, asked of the command's
    own interpreter (`python -m manetfair ...`, or the entry point's `#!` line), not
    of the one running this script: they may be different installations."""
    if len(cmd) >= 3 and list(cmd[1:3]) in (["-m", "manetfair"], ["-m", "manetfair.cli"]):
        python = [cmd[0]]
    else:
        exe = shutil.which(cmd[0])
        if exe is None:
            return None
        try:
            first = Path(exe).read_bytes()[:512].split(b"\n", 1)[0]
        except OSError:
            return None
        if not first.startswith(b"#!"):
            return None
        python = first[2:].decode(errors="replace").split()
    try:
        res = subprocess.run(
            [*python, "-c", "import manetfair, os; print(os.path.dirname(manetfair.__file__))"],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    out = res.stdout.strip()
    return Path(out) if res.returncode == 0 and out else None


def source_commit(package: Path) -> str | None:
    """`<hash> <date>` of the checkout of this repository holding `package`, or None
    when it lies anywhere else: a wheel in site-packages has no commit, even where
    site-packages itself sits in some other git work tree."""
    top = subprocess.run(
        ["git", "-C", str(package), "rev-parse", "--show-toplevel"],
        check=False,
        capture_output=True,
        text=True,
    )
    if top.returncode != 0 or not (Path(top.stdout.strip()) / "crates" / "core").is_dir():
        return None
    git = subprocess.run(
        ["git", "-C", str(package), "log", "-1", "--format=%h %cI"],
        check=False,
        capture_output=True,
        text=True,
    )
    if git.returncode != 0 or not git.stdout.strip():
        return None
    return git.stdout.strip()


def check_section(check: Json | None) -> list[str]:
    lines = ["## Range check (ns-3)", ""]
    if check is None:
        return lines + ["Not run.", ""]
    lines += [
        (
            "Two nodes at distance d; node 0 sends 100 UDP packets of 500 bytes (broadcast, "
            "then unicast with RTS/CTS); packets node 1's application received, and the "
            "frames each node put on the air during the unicast flow (RTS + DATA from the "
            "sender and CTS + ACK from the receiver per packet when RTS/CTS is on; 7 RTS "
            "attempts per packet when nothing answers):"
        ),
        "",
        (
            "| d (m) | broadcast received | unicast received | unicast: sender frames "
            "| unicast: receiver frames |"
        ),
        "| ---: | ---: | ---: | ---: | ---: |",
    ]
    decode_ok = True
    for row in check["decode"]:
        d = float(row["distance_m"])
        lines.append(
            f"| {d:g} | {row['broadcast_received']} | {row['unicast_received']} "
            f"| {row.get('unicast_frames_sender', '–')} | {row.get('unicast_frames_receiver', '–')} |"
        )
        expect = d <= TX_RANGE_M
        got = row["broadcast_received"] > 0 and row["unicast_received"] > 0
        decode_ok &= expect == got
        if expect and "unicast_frames_sender" in row:
            # RTS/CTS before every data frame: two frames each way per delivered packet.
            pairs = 2 * int(row["unicast_received"])
            decode_ok &= row["unicast_frames_sender"] == row["unicast_frames_receiver"] == pairs
    cs = check["carrier_sense"]
    alone = int(cs["one_sender_frames"])
    lines += [
        "",
        (
            "Two saturated broadcast senders at distance d, frames both put on the air in 2 s "
            f"(one sender alone: {alone}; about {alone} when they defer to each other, about "
            f"{2 * alone} when they do not):"
        ),
        "",
        "| d (m) | frames sent by both | share airtime |",
        "| ---: | ---: | --- |",
    ]
    cs_ok = True
    for row in cs["pairs"]:
        d = float(row["distance_m"])
        shared = row["both_senders_frames"] < 1.5 * alone
        cs_ok &= shared == (d <= CS_RANGE_M)
        lines.append(f"| {d:g} | {row['both_senders_frames']} | {'yes' if shared else 'no'} |")
    verdict = "PASS" if decode_ok and cs_ok else "FAIL"
    lines += [
        "",
        (
            f"**{verdict}**: frames decode up to {TX_RANGE_M:g} m and not beyond, with RTS/CTS "
            "before each unicast frame; "
            f"carrier sense reaches {CS_RANGE_M:g} m and not beyond."
        ),
        "",
    ]
    return lines


def speed_ratios(
    records: dict[tuple[str, str], list[RunRecord]],
    sc: Scenario,
    stats: dict[str, dict[str, float]],
    timeout_s: float,
) -> tuple[str, str, str]:
    """Wall, CPU and memory ratios ns-3 / manetfair as table cells."""
    ns3, mf = stats["ns3"], stats["manetfair"]
    wall = fmt(ns3["wall_s"] / mf["wall_s"])
    if math.isnan(ns3["wall_s"]) and not math.isnan(mf["wall_s"]):
        reached = [
            r.summary.get("simulated_s_reached", 0.0)
            for r in records.get(("ns3", sc.key), [])
            if r.status == "timeout"
        ]
        if reached:
            wall = f"> {fmt(timeout_s / mf['wall_s'])}"
            if max(reached) > 0:
                whole = timeout_s * sc.duration_s / max(reached)
                wall += f" (≈ {fmt(whole / mf['wall_s'], 0)})"
    return wall, fmt(ns3["cpu_s"] / mf["cpu_s"]), fmt(ns3["rss_mb"] / mf["rss_mb"])


def summary_lines(
    scenarios: Sequence[Scenario],
    records: dict[tuple[str, str], list[RunRecord]],
    timeout_s: float,
) -> list[str]:
    """One line per scenario: speed and memory ratios, aggregate goodput against ns-3."""
    out = []
    for sc in scenarios:
        stats = {sim: sim_stats(records.get((sim, sc.key), []), sc) for sim in ("ns3", "manetfair")}
        if math.isnan(stats["manetfair"]["wall_s"]):
            out.append(f"- {sc.key} ({sc.title}): manetfair has no result yet.")
            continue
        wall, cpu, mem = speed_ratios(records, sc, stats, timeout_s)
        mf_wall = fmt(stats["manetfair"]["wall_s"])
        if sc.watch:
            out.append(
                f"- {sc.key} ({sc.title}): manetfair {mf_wall} s, "
                f"{fmt(stats['manetfair']['events_per_s'], 0)} events/s (manetfair only)."
            )
            continue
        if wall == "–":
            ns3_status = status_text(records.get(("ns3", sc.key), []))
            out.append(f"- {sc.key} ({sc.title}): manetfair {mf_wall} s; ns-3 {ns3_status}.")
            continue
        if wall.startswith(">"):
            bound, _, about = wall[2:].partition(" (≈ ")
            wall = f"more than {bound}×" + (f" (about {about.rstrip(')')}×)" if about else "")
            wall += " faster in wall time, ns-3 not having finished"
        else:
            wall += "× faster in wall time"
        text = f"- {sc.key} ({sc.title}): manetfair ({mf_wall} s) {wall}"
        if cpu != "–":
            text += f" ({cpu}× in CPU time), {mem}× less peak memory"
        ns3_flows = flow_kbps(records.get(("ns3", sc.key), []), len(sc.flows))
        mf_flows = flow_kbps(records.get(("manetfair", sc.key), []), len(sc.flows))
        if all(ns3_flows) and all(mf_flows):
            ns3_agg = [sum(x) for x in zip(*ns3_flows)]
            mf_agg = mean([sum(x) for x in zip(*mf_flows)])
            text += (
                f"; aggregate goodput {fmt(mf_agg, 0)} kbit/s against ns-3's "
                f"{fmt(mean(ns3_agg), 0)} ({100 * (mf_agg / mean(ns3_agg) - 1):+.0f} %"
            )
            if len(ns3_agg) > 1:
                text += f"; ns-3's seeds span {fmt(min(ns3_agg), 0)}–{fmt(max(ns3_agg), 0)}"
            text += ")"
        out.append(text + ".")
    out.append(
        "- Throughput differences against ns-3 are to be read with the model differences "
        "listed in docs/benchmark.md (ns-3's SINR-based capture, ACKs at 2 Mbit/s, no EIFS "
        "after frames only sensed), all of which favour ns-3's throughput."
    )
    return out


def reproduce_command(args: argparse.Namespace) -> str:
    """The command that runs what this report shows (without --report-only/--reuse)."""
    cmd = ["python3", "bench/run.py", "--scenarios", args.scenarios]
    cmd += ["--seeds", str(args.seeds)]
    if args.scaling_seeds != 1:
        cmd += ["--scaling-seeds", str(args.scaling_seeds)]
    if args.timeout != 600.0:
        cmd += ["--timeout", f"{args.timeout:g}"]
    if args.fidelity_timeout != 3600.0:
        cmd += ["--fidelity-timeout", f"{args.fidelity_timeout:g}"]
    if args.quick:
        cmd.append("--quick")
    return shlex.join(cmd)


def write_report(
    scenarios: Sequence[Scenario],
    records: dict[tuple[str, str], list[RunRecord]],
    check: Json | None,
    args: argparse.Namespace,
    timeout_s: float,
    history: dict[str, list[Json]] | None = None,
) -> str:
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        "# manetfair vs ns-3: speed and fidelity",
        "",
        f"- Date: {now}",
        f"- Machine: {machine_text()}",
        (
            f"- ns-3: {version_of('ns3')} (PyPI wheel, program `bench/ns3/ns3bench.cc`, g++ -O2); "
            f"manetfair: {manetfair_version(shlex.split(args.manetfair))}"
        ),
        f"- Reproduce: `{reproduce_command(args)}`",
        (
            f"- Time limit per process: {timeout_s:.0f} s on the scaling fields (c), "
            f"{args.fidelity_timeout:.0f} s on a and b. Both simulators run one after the other, "
            "never side by side; wall time and peak RSS are those of the simulator's own "
            "process (manetfair's includes its Python front end), measured from outside."
        ),
        "- Settings of both sides and the scenario definitions: `docs/benchmark.md`.",
        "",
    ]
    if args.quick:
        lines += ["**Quick mode**: shortened durations; a smoke check, not a measurement.", ""]
    lines += ["## Summary", ""] + summary_lines(scenarios, records, timeout_s) + [""]
    lines += check_section(check)

    lines += [
        "## Speed",
        "",
        (
            "Means over the runs that finished. events/s = events executed / wall s; "
            "sim/wall = simulated seconds per wall-clock second; CPU s = user + system time "
            "of the process, less disturbed than wall time when the machine is shared; "
            "load = the machine's 1-minute load average as the run ended (a lone run "
            "adds about 1)."
        ),
        "",
        (
            "| scenario | nodes | flows | sim s | simulator | status | wall s | CPU s "
            "| peak RSS MB | events | events/s | sim/wall | load |"
        ),
        "| --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    ratios = []
    for sc in scenarios:
        stats: dict[str, dict[str, float]] = {}
        for sim in ("ns3", "manetfair"):
            recs = records.get((sim, sc.key), [])
            st = sim_stats(recs, sc)
            stats[sim] = st
            if sc.watch and sim == "ns3":
                continue
            label = "ns-3" if sim == "ns3" else "manetfair"
            lines.append(
                f"| {sc.key} | {sc.nodes:,} | {len(sc.flows):,} | {sc.duration_s:g} | {label} "
                f"| {status_text(recs)} | {fmt(st['wall_s'])} | {fmt(st['cpu_s'])} "
                f"| {fmt(st['rss_mb'], 1)} | {fmt(st['events'], 0)} "
                f"| {fmt(st['events_per_s'], 0)} | {fmt(st['sim_per_wall'])} "
                f"| {fmt(st['load'], 1)} |"
            )
        if not sc.watch:
            ratios.append((sc, *speed_ratios(records, sc, stats, timeout_s)))
    lines += [
        "",
        (
            "Ratios ns-3 / manetfair (above 1: manetfair is faster or smaller). Where ns-3 "
            "did not finish, the wall-time ratio is a bound: more than the limit over "
            "manetfair's time, and about the limit scaled to the whole run by the simulated "
            "time ns-3 had reached."
        ),
        "",
        "| scenario | wall-time ratio | CPU-time ratio | memory ratio |",
        "| --- | ---: | ---: | ---: |",
    ]
    for sc, wall_ratio, cpu_ratio, mem_ratio in ratios:
        lines.append(f"| {sc.key} | {wall_ratio} | {cpu_ratio} | {mem_ratio} |")
    lines += [
        "",
        (
            "Event counts do not compare across the simulators: ns-3's Yans channel "
            "schedules a reception event at every node of the channel for every frame. "
            "ns-3's peak memory grows with simulated time on fields where some nodes only "
            "ever sense frames without decoding one (see docs/benchmark.md), which is why "
            "it is larger on the random fields than on the grid."
        ),
        "",
    ]
    failures: dict[tuple[str, str], list[RunRecord]] = collections.defaultdict(list)
    for sc in scenarios:
        for sim in ("ns3", "manetfair"):
            for r in records.get((sim, sc.key), []):
                if r.status == "failed":
                    failures[(sim, sc.key)].append(r)
    if failures:
        lines += ["Runs without results (the first message of each):", ""]
        for (sim, key), recs in failures.items():
            seeds = ", ".join(str(r.seed) for r in recs)
            lines.append(f"- {sim} {key}, seeds {seeds}: {short_status(recs[0])} ({recs[0].note})")
        lines += [""]

    lines += [
        "## Flow throughputs",
        "",
        (
            "Goodput in kbit/s over each flow's window (application bytes received in order). "
            "With several seeds: mean ± sample standard deviation [min–max] over the seeds. "
            "ns-3's seed-to-seed spread is the yardstick for manetfair's fidelity."
        ),
        "",
    ]
    for sc in scenarios:
        if sc.watch:
            continue
        ns3_flows = flow_kbps(records.get(("ns3", sc.key), []), len(sc.flows))
        mf_flows = flow_kbps(records.get(("manetfair", sc.key), []), len(sc.flows))
        header = f"### {sc.key}: {sc.title}, {sc.duration_s:g} s"
        table = [
            (
                "| flow | src → dst | hops | window s | ns-3 kbit/s | manetfair kbit/s "
                "| manetfair vs ns-3 | in ns-3 range |"
            ),
            "| ---: | --- | ---: | --- | --- | --- | ---: | --- |",
        ]
        agg_ns3 = [sum(run) for run in zip(*ns3_flows)] if all(ns3_flows) else []
        agg_mf = [sum(run) for run in zip(*mf_flows)] if all(mf_flows) else []
        rows = [
            (
                str(i),
                f"{f.src} → {f.dst}",
                str(flow_hops(sc, f)),
                f"{f.start_s:g}–{f.stop_s:g}",
                ns3_flows[i],
                mf_flows[i],
            )
            for i, f in enumerate(sc.flows)
        ]
        rows.append(("all", "aggregate", "", "", agg_ns3, agg_mf))
        inside = 0
        compared = 0
        for flow_id, ends, hops, window, ns3_x, mf_x in rows:
            diff, in_range = "–", "–"
            if ns3_x and mf_x and mean(ns3_x) > 0:
                diff = f"{100 * (mean(mf_x) / mean(ns3_x) - 1):+.0f} %"
            if len(ns3_x) > 1 and mf_x:
                hit = min(ns3_x) <= mean(mf_x) <= max(ns3_x)
                in_range = "yes" if hit else "no"
                if flow_id != "all":
                    compared += 1
                    inside += hit
            table.append(
                f"| {flow_id} | {ends} | {hops} | {window} | {spread_text(ns3_x)} "
                f"| {spread_text(mf_x)} | {diff} | {in_range} |"
            )
        lines += [header, ""]
        if len(sc.flows) > 20:
            lines += ["<details><summary>per-flow table</summary>", ""] + table
            lines += ["", "</details>", ""]
        else:
            lines += table + [""]
        if sc.fidelity and any(len(x) > 1 for x in ns3_flows):
            cvs = [statistics.stdev(x) / mean(x) for x in ns3_flows if len(x) > 1 and mean(x) > 0]
            lines += [
                (
                    f"ns-3 seed-to-seed spread: median coefficient of variation of a flow's "
                    f"throughput {fmt(100 * statistics.median(cvs), 1)} % "
                    f"(max {fmt(100 * max(cvs), 1)} %) over "
                    f"{len(ok_runs(records.get(('ns3', sc.key), [])))} seeds."
                ),
                "",
            ]
        if compared:
            lines += [
                f"manetfair's mean lies within ns-3's seed range for {inside} of {compared} flows.",
                "",
            ]
    lines += ["![scaling](scaling.png)", ""]
    lines += watch_lines(scenarios, history or {})
    return "\n".join(lines)


def watch_entry(sc: Scenario, records: Sequence[RunRecord], version: str) -> Json | None:
    """One run-to-run record of manetfair's speed on a scenario: events (the
    same on every run of the same core and input), and events per CPU second
    (less disturbed than wall time on a shared machine)."""
    st = sim_stats(records, sc)
    if math.isnan(st["cpu_s"]) or math.isnan(st["events"]):
        return None
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "manetfair": version,
        "events": int(st["events"]),
        "cpu_s": round(st["cpu_s"], 3),
        "wall_s": round(st["wall_s"], 3),
        "events_per_cpu_s": round(st["events"] / st["cpu_s"]),
        "load": round(st["load"], 1),
    }


def read_watch() -> dict[str, list[Json]]:
    if not WATCH_JSON.exists():
        return {}
    data: dict[str, list[Json]] = json.loads(WATCH_JSON.read_text())
    return data


def update_watch(
    scenarios: Sequence[Scenario],
    records: dict[tuple[str, str], list[RunRecord]],
    version: str,
    history: dict[str, list[Json]],
) -> dict[str, list[Json]]:
    """history with this run's entry appended for every scenario manetfair ran."""
    out = {k: list(v) for k, v in history.items()}
    for sc in scenarios:
        entry = watch_entry(sc, records.get(("manetfair", sc.key), []), version)
        if entry is not None:
            out.setdefault(sc.key, []).append(entry)
    return out


def watch_lines(scenarios: Sequence[Scenario], history: dict[str, list[Json]]) -> list[str]:
    """The latest events per CPU second of each scenario against the entry before it."""
    lines = [
        "## Run to run",
        "",
        (
            "manetfair's events per CPU second on each scenario, against the run recorded "
            "before it in `bench/watch.json` (which every run of this script extends): a "
            "change to the core that slows it shows here. d and e run in manetfair only "
            "(ns-3 has no NRED; e keeps routing and mobility in view). A change in events "
            "means the model's behaviour changed, not only its speed. CPU time moves with "
            "the machine's load too (caches shared with other work): compare like loads, "
            "or use `bench/count.py` for instruction counts."
        ),
        "",
        (
            "| scenario | events | events/CPU s | load | before: events | before: events/CPU s "
            "| before: load | change in events/CPU s |"
        ),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for sc in scenarios:
        runs = history.get(sc.key, [])
        if not runs:
            continue
        now = runs[-1]
        row = f"| {sc.key} | {now['events']:,} | {now['events_per_cpu_s']:,} | {now['load']} "
        if len(runs) > 1:
            was = runs[-2]
            change = 100.0 * (now["events_per_cpu_s"] / was["events_per_cpu_s"] - 1.0)
            row += (
                f"| {was['events']:,} | {was['events_per_cpu_s']:,} | {was['load']} "
                f"| {change:+.1f} % |"
            )
        else:
            row += "| – | – | – | – |"
        lines.append(row)
    return lines + [""]


def plot_scaling(
    scenarios: Sequence[Scenario], records: dict[tuple[str, str], list[RunRecord]], timeout_s: float
) -> bool:
    scaling = [sc for sc in scenarios if not sc.fidelity and not sc.watch]
    if not scaling:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for sim, label, colour in (
        ("ns3", "ns-3 3.44", "tab:blue"),
        ("manetfair", "manetfair", "tab:orange"),
    ):
        xs, ys, dnf_x, dnf_y = [], [], [], []
        for sc in scaling:
            recs = records.get((sim, sc.key), [])
            st = sim_stats(recs, sc)
            if not math.isnan(st["wall_s"]):
                xs.append(sc.nodes)
                ys.append(st["wall_s"] / sc.duration_s)
            elif any(r.status == "timeout" for r in recs):
                # A lower bound: the limit over the simulated time reached by then.
                reached = max([r.summary.get("simulated_s_reached", 0.0) for r in recs] + [0.0])
                dnf_x.append(sc.nodes)
                dnf_y.append(timeout_s / (reached if reached > 0 else sc.duration_s))
        if xs:
            ax.plot(xs, ys, "o-", color=colour, label=label)
        if dnf_x:
            ax.plot(
                dnf_x,
                dnf_y,
                "^",
                color=colour,
                fillstyle="none",
                label=f"{label}: did not finish (limit / simulated s reached)",
            )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("nodes (50 per km², flows = nodes / 10)")
    ax.set_ylabel("wall seconds per simulated second")
    ax.set_title("Scaling: random fields, TCP, static routes")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(SCALING_PNG, dpi=120)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--scenarios",
        default="a,b,c,d,e",
        help="comma list of a, b, c (all scaling sizes), c<nodes>, d (NRED grid), "
        "e (mobile AODV field) (default a,b,c,d,e)",
    )
    p.add_argument("--sims", default="ns3,manetfair", help="comma list of ns3, manetfair")
    p.add_argument(
        "--seeds",
        type=int,
        default=3,
        help="run seeds 1..N for the fidelity scenarios a and b (default 3)",
    )
    p.add_argument(
        "--scaling-seeds",
        type=int,
        default=1,
        help="run seeds 1..N for the scaling scenarios (default 1)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds before a scaling run (c) is stopped and marked unfinished (default 600)",
    )
    p.add_argument(
        "--fidelity-timeout",
        type=float,
        default=3600.0,
        help="the same limit for the fidelity scenarios a and b (default 3600)",
    )
    p.add_argument("--quick", action="store_true", help="shortened durations: a smoke check")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="keep stored runs of identical inputs instead of running them again",
    )
    p.add_argument(
        "--report-only", action="store_true", help="run nothing; write the report from stored runs"
    )
    p.add_argument(
        "--manetfair",
        default="manetfair",
        help="command that starts manetfair (default: manetfair on PATH)",
    )
    p.add_argument("--build-only", action="store_true", help="only build the ns-3 program")
    p.add_argument("--check-only", action="store_true", help="only run the range check")
    return p.parse_args(argv)


def range_check(binary: Path) -> Json | None:
    res = subprocess.run(
        [str(binary), "check"], check=False, capture_output=True, text=True, timeout=300
    )
    if res.returncode != 0:
        print(res.stderr, file=sys.stderr)
        return None
    return last_json_line(res.stdout)


def rounded_stat(stats: dict[str, float], name: str, digits: int) -> float | None:
    value = stats.get(name)
    return None if value is None or math.isnan(value) else round(value, digits)


def speed_records(
    scenarios: Sequence[Scenario],
    records: dict[tuple[str, str], list[RunRecord]],
    args: argparse.Namespace,
    version: str,
) -> list[Json]:
    """One record per scenario and simulator run this time (bench/data/speed.jsonl):
    means over the runs that finished, the command, and what was measured."""
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    out: list[Json] = []
    for sc in scenarios:
        for sim in ("ns3", "manetfair"):
            recs = records.get((sim, sc.key), [])
            if not recs:
                continue
            ok = ok_runs(recs)
            stats = sim_stats(recs, sc) if ok else {}
            methods = sorted({r.rss_method for r in ok})
            fig = functools.partial(rounded_stat, stats)
            events = fig("events", 0)
            out.append(
                {
                    "date": when,
                    "commit": version if sim == "manetfair" else None,
                    "command": reproduce_command(args),
                    "scenario": sc.key,
                    "nodes": sc.nodes,
                    "flows": len(sc.flows),
                    "sim_s": sc.duration_s,
                    "simulator": sim,
                    "status": status_text(recs),
                    "wall_s": fig("wall_s", 3),
                    "cpu_s": fig("cpu_s", 3),
                    "peak_rss_mb": fig("rss_mb", 1),
                    "rss_method": ", ".join(methods) or None,
                    "events": None if events is None else int(events),
                    "load": fig("load", 1),
                }
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sims = [s.strip() for s in args.sims.split(",") if s.strip()]
    if any(s not in ("ns3", "manetfair") for s in sims):
        raise SystemExit("run.py: --sims takes ns3 and/or manetfair")
    binary = BINARY if args.report_only else build_ns3()
    if args.build_only:
        return 0
    check_path = OUT_DIR / "range-check.json"
    check: Json | None = None
    if args.report_only and check_path.exists():
        check = json.loads(check_path.read_text())
    elif not args.report_only:
        check = range_check(binary)
        if check is not None:
            OUT_DIR.mkdir(parents=True, exist_ok=True)
            check_path.write_text(json.dumps(check) + "\n")
    if args.check_only:
        print("\n".join(check_section(check)))
        return 0 if check is not None else 1

    scenarios = build_scenarios(
        [s.strip() for s in args.scenarios.split(",") if s.strip()], args.quick
    )
    mf_cmd = shlex.split(args.manetfair)
    mf_found = shutil.which(mf_cmd[0]) is not None
    records: dict[tuple[str, str], list[RunRecord]] = collections.defaultdict(list)
    # A simulator that overran the limit on a scaling field is not started on a larger one.
    overran: dict[str, int] = {}
    scen_dir = OUT_DIR / "scenarios"
    scen_dir.mkdir(parents=True, exist_ok=True)
    for sc in scenarios:
        n_seeds = args.seeds if sc.fidelity else args.scaling_seeds
        for seed in range(1, n_seeds + 1):
            name = f"bench-{sc.key}-seed{seed}"
            inputs = {
                "ns3": (scen_dir / f"{name}.ns3.txt", ns3_input(sc, seed, name)),
                "manetfair": (scen_dir / f"{name}.toml", manetfair_toml(sc, seed, name)),
            }
            if sc.watch:  # manetfair only: no ns-3 input for NRED or mobility
                del inputs["ns3"]
            for sim, (path, text) in inputs.items():
                path.write_text(text)
                digest = sha(text)
                old = load_record(sim, sc.key, seed, digest)
                if sim not in sims or args.report_only or (args.reuse and old is not None):
                    if old is not None:
                        records[(sim, sc.key)].append(old)
                    continue
                if not sc.watch and not sc.fidelity and overran.get(sim, sc.nodes + 1) < sc.nodes:
                    rec = RunRecord(
                        sim,
                        sc.key,
                        seed,
                        digest,
                        "skipped",
                        f"did not finish in {args.timeout:.0f} s (not started: "
                        f"{overran[sim]:,} nodes already did not)",
                    )
                    save_record(rec)
                elif sim == "manetfair" and not mf_found:
                    rec = RunRecord(
                        sim,
                        sc.key,
                        seed,
                        digest,
                        "failed",
                        f"{mf_cmd[0]} not found",
                    )
                    save_record(rec)
                else:
                    cmd = (
                        [str(binary), "run", str(path)]
                        if sim == "ns3"
                        else [*mf_cmd, "run", str(path), "--json"]
                    )
                    limit = args.fidelity_timeout if sc.fidelity or sc.watch else args.timeout
                    rec = run_one(sim, cmd, sc, seed, digest, limit)
                if rec.status == "timeout" and not sc.fidelity and not sc.watch:
                    overran[sim] = min(overran.get(sim, sc.nodes), sc.nodes)
                records[(sim, sc.key)].append(rec)
    if args.report_only and not any(records.values()):
        print(
            f"run.py: --report-only found no stored runs under {OUT_DIR}; "
            f"{RESULTS_MD} is left as it is",
            file=sys.stderr,
        )
        return 1
    plot_scaling(scenarios, records, args.timeout)
    history = read_watch()
    if not args.report_only:
        history = update_watch(scenarios, records, manetfair_version(mf_cmd), history)
        WATCH_JSON.write_text(json.dumps(history, indent=1) + "\n")
    report = write_report(scenarios, records, check, args, args.timeout, history)
    REPORT_MD.parent.mkdir(parents=True, exist_ok=True)
    REPORT_MD.write_text(report)
    if not args.report_only:
        version = manetfair_version(mf_cmd)
        results.append("speed", speed_records(scenarios, records, args, version))
        results.write(page=RESULTS_MD)
    print(report)
    return 0


if __name__ == "__main__":
    sys.exit(main())
