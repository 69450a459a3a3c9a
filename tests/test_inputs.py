"""Inputs bounded before they are read (docs/reliability.md, *Limits*).

Reproducers S7 and S4 of the 2026-11-29 hostile campaign: a 93 MB scenario aborted
the process inside the TOML parser (SIGABRT, exit 134), and `/dev/zero` as the
scenario or as its movement file was read until memory ran out, deaf to Ctrl-C.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import manetfair
import pytest
from conftest import UDP_CHAIN, no_traceback, run_cli
from manetfair.errors import InputError
from manetfair.scenario import Scenario

CHAIN = UDP_CHAIN

# Runs a command and prints its exit status, wall time, CPU time (user + system) and
# the peak resident memory of the children (ru_maxrss, KiB), as JSON. The bound is on
# CPU time: the process's own work, which other load on the machine does not stretch
# as it stretches wall time.
MEASURE = """
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.run(sys.argv[1:], capture_output=True, text=True)
wall = time.perf_counter() - t0
use = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = use.ru_utime + use.ru_stime
print(json.dumps({"code": p.returncode, "wall_s": wall, "cpu_s": cpu,
                  "peak_kib": use.ru_maxrss, "stderr": p.stderr}))
"""


def measured(args: list[str], cwd: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", MEASURE, sys.executable, "-m", "manetfair.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dict(json.loads(proc.stdout))


def big_scenario(tmp_path: Path, size: int) -> Path:
    """A real scenario of `size` bytes: valid TOML, a comment padding it out."""
    path = tmp_path / "big.toml"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(CHAIN)
        line = "# " + "x" * 1021 + "\n"
        fh.writelines(line for _ in range((size - len(CHAIN)) // len(line)))
    return path


@pytest.mark.core
@pytest.mark.parametrize("command", ["check", "run"])
@pytest.mark.parametrize("source", ["100 MB file", "/dev/zero"])
def test_huge_inputs_are_refused_fast_and_small(tmp_path: Path, command: str, source: str) -> None:
    """S7, S4: refused in under 1 s of CPU time with exit 2, using under 200 MB."""
    path = str(big_scenario(tmp_path, 100 << 20)) if source == "100 MB file" else source
    got = measured([command, path], tmp_path)
    assert got["code"] == 2, got
    assert "above the limit of 33554432 bytes" in str(got["stderr"]), got
    assert "--max-memory" in str(got["stderr"])
    assert float(str(got["cpu_s"])) < 1.0, got
    assert int(str(got["peak_kib"])) < 200 * 1024, got


@pytest.mark.core
def test_the_limit_rises_with_the_memory_budget(tmp_path: Path) -> None:
    path = big_scenario(tmp_path, 40 << 20)
    proc = run_cli(["check", str(path)], fake=False, cwd=tmp_path)
    assert proc.returncode == 2 and "above the limit" in proc.stderr, proc.stderr
    proc = run_cli(["check", str(path), "--max-memory", "4G"], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.core
@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "dir"])
def test_a_movement_file_that_is_not_a_regular_file_is_refused(tmp_path: Path, target: str) -> None:
    """S4: `mobility.ns2_file = "/dev/zero"` read 3.7 GB before failing."""
    if target == "fifo":
        os.mkfifo(tmp_path / "fifo")
    elif target == "dir":
        (tmp_path / "dir").mkdir()
    sc = tmp_path / "m.toml"
    sc.write_text(CHAIN + f'[mobility]\nns2_file = "{target}"\n', encoding="utf-8")
    t0 = time.perf_counter()
    proc = run_cli(["check", str(sc)], fake=False, cwd=tmp_path, timeout=20)
    assert time.perf_counter() - t0 < 10
    assert proc.returncode == 2, proc.stderr
    assert "mobility.ns2_file" in proc.stderr and no_traceback(proc)


@pytest.mark.core
def test_a_large_movement_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    moves = tmp_path / "moves.ns2"
    with open(moves, "wb") as fh:
        fh.truncate(40 << 20)
    sc = tmp_path / "m.toml"
    sc.write_text(CHAIN + '[mobility]\nns2_file = "moves.ns2"\n', encoding="utf-8")
    proc = run_cli(["check", str(sc)], fake=False, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert "mobility.ns2_file" in proc.stderr and "above the limit" in proc.stderr


@pytest.mark.core
def test_ctrl_c_stops_a_read_that_waits(tmp_path: Path) -> None:
    """S4: SIGINT was not acted on while a scenario was read; a FIFO with no writer
    waits forever, and Ctrl-C must end it."""
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    env = dict(os.environ)
    proc = subprocess.Popen(
        [sys.executable, "-m", "manetfair.cli", "check", str(fifo)],
        cwd=tmp_path,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    time.sleep(1.5)
    proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=5)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err


def test_from_python_the_bound_holds_too(tmp_path: Path) -> None:
    """S4 from Python: `Scenario.from_file('/dev/zero')` raised MemoryError after 16 s."""
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="above the limit"):
        Scenario.from_file("/dev/zero")
    assert time.perf_counter() - t0 < 2
    big = big_scenario(tmp_path, 40 << 20)
    with pytest.raises(InputError, match="above the limit"):
        manetfair.run(big)


@pytest.mark.core
def test_scenario_text_given_from_python_is_bounded_by_the_core() -> None:
    """TOML text handed to the core directly is held to the same limit."""
    from manetfair import _core

    text = CHAIN + "#" * (33 << 20)
    with pytest.raises(_core.ScenarioError, match="above the limit"):
        _core.check_scenario(text)
    assert json.loads(_core.check_scenario(text, max_memory=4 << 30))["duration_s"] == 2.0
