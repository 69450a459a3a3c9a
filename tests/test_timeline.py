"""The channel timeline (`manetfair timeline`): for a 2-flow hidden-terminal run and a
50 ms window it draws every frame of the trace on the air in that window, and no
other; every loss at an addressee in the window is marked."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from conftest import run_cli

pytestmark = pytest.mark.core

# Nodes 1 and 3 cannot hear each other (400 m apart) and both send to node 2.
HIDDEN = """
name = "hidden-terminal"
duration_s = 3.0
seed = 5

[topology]
kind = "explicit"

[[node]]
id = 1
x_m = 0.0
y_m = 0.0

[[node]]
id = 2
x_m = 200.0
y_m = 0.0

[[node]]
id = 3
x_m = 400.0
y_m = 0.0

[[flow]]
src = 1
dst = 2
transport = "udp"
app = "cbr"
rate_kbps = 900.0
start_s = 0.5

[[flow]]
src = 3
dst = 2
transport = "tcp-newreno"
start_s = 0.5
"""


def _window(trace: Path) -> tuple[float, float]:
    """50 ms around the first collision after 1 s, so that the window has one to mark."""
    for line in trace.read_text().splitlines():
        e = json.loads(line)
        if e["event"] == "rx_lost" and e.get("ra") == e["node"] and e["t_ns"] > 1e9:
            start = round(e["t_ns"] / 1e9 - 0.02, 3)
            return start, round(start + 0.05, 3)
    raise AssertionError("the hidden terminals never collide")


def test_the_timeline_shows_exactly_the_frames_of_the_window(tmp_path: Path) -> None:
    scenario = tmp_path / "hidden.toml"
    scenario.write_text(HIDDEN)
    trace = tmp_path / "t.jsonl"
    proc = run_cli(
        ["run", str(scenario), "--quiet", "--trace", str(trace)], fake=False, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    stem = tmp_path / "tl"
    window = _window(trace)
    args = ["timeline", str(trace), "--from", str(window[0]), "--to", str(window[1])]
    proc = run_cli([*args, "--out", str(stem)], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(stem) + ext for ext in (".png", ".svg", ".csv")]

    # The trace's own account: each transmission from its start to its end.
    t0, t1 = (round(x * 1e9) for x in window)
    started: dict[int, tuple[int, str]] = {}
    expected, lost = set(), set()
    for line in trace.read_text().splitlines():
        e = json.loads(line)
        if e["event"] == "tx_start":
            started[e["node"]] = (e["t_ns"], e["frame"])
        elif e["event"] == "tx_end":
            start, kind = started.pop(e["node"])
            if start < t1 and e["t_ns"] > t0:
                expected.add((e["node"], start, e["t_ns"], kind))
        elif e["event"] == "rx_lost" and e.get("ra") == e["node"] and t0 <= e["t_ns"] < t1:
            lost.add((e["node"], e["t_ns"]))

    with (tmp_path / "tl.csv").open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    drawn = {
        (
            int(r["node"]),
            round(float(r["start_s"]) * 1e9),
            round(float(r["end_s"]) * 1e9),
            r["frame"],
        )
        for r in rows
        if r["mark"] == "frame"
    }
    assert drawn == expected
    assert len([r for r in rows if r["mark"] == "frame"]) == len(expected)
    # A busy window of a hidden-terminal pair: all four frame types, and collisions.
    assert {k for *_, k in expected} == {"rts", "cts", "data", "ack"}
    marked = {
        (int(r["node"]), round(float(r["start_s"]) * 1e9)) for r in rows if r["mark"] == "lost"
    }
    assert marked == lost and lost

    # The SVG holds one bar per frame, grouped by node and frame type.
    ns = {"svg": "http://www.w3.org/2000/svg"}
    root = ET.parse(tmp_path / "tl.svg").getroot()
    bars = Counter()
    for g in root.iter(f"{{{ns['svg']}}}g"):
        gid = g.get("id", "")
        if gid.startswith("frames-"):
            _, node, kind = gid.split("-", 2)
            bars[(int(node), kind)] += len(g.findall(".//svg:path", ns))
    assert bars == Counter((n, k) for n, _, _, k in expected)

    bad = run_cli(["timeline", str(trace), "--from", "2", "--to", "1"], fake=False, cwd=tmp_path)
    assert bad.returncode == 2 and "--from" in bad.stderr
