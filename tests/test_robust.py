"""Nothing a user types can crash, hang or silently corrupt a run.

One test (or more) per finding of the hostile-input campaign, each with the
campaign's own reproducer; docs/reliability.md lists them. Tests that need the
native core are marked `core`.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import manetfair
import pytest
from conftest import TESTS, UDP_PAIR, cli_command, no_traceback, run_cli
from manetfair import runner
from manetfair.errors import InputError

CHAIN = """
duration_s = 5.0
[topology]
kind = "chain"
nodes = 3
spacing_m = 200.0
[[flow]]
src = 0
dst = 2
transport = "udp"
app = "cbr"
rate_kbps = 100.0
"""

TCP_CHAIN = CHAIN.replace('transport = "udp"\napp = "cbr"\nrate_kbps = 100.0\n', "")


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    """Exit 2, one message on stderr naming `words`, no traceback or panic."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert no_traceback(proc), proc.stderr
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)


def timed_cli(args: list[str], tmp_path: Path, fake: bool = False, **kw: Any) -> Any:
    started = time.monotonic()
    proc = run_cli(args, fake=fake, cwd=tmp_path, timeout=60, **kw)
    took = time.monotonic() - started
    assert took < 20, f"{args} took {took:.1f} s"
    return proc


# --- 1. large durations -----------------------------------------------------------------


@pytest.mark.core
@pytest.mark.parametrize("duration", ["1e9", "1e13", "1.85e10"])
def test_large_durations_are_refused_by_check_and_run(tmp_path, duration):
    path = write(tmp_path, CHAIN.replace("duration_s = 5.0", f"duration_s = {duration}"))
    for command in ("check", "run"):
        refused(timed_cli([command, str(path)], tmp_path), "duration_s", "1e7 s")


@pytest.mark.core
def test_a_large_duration_from_python_raises_and_the_interpreter_lives_on(tmp_path):
    path = write(tmp_path, CHAIN)
    with pytest.raises(manetfair.ScenarioError, match="duration_s"):
        manetfair.run(path, duration_s=1e9)
    assert manetfair.run(path, duration_s=1.0).summary["duration_s"] == 1.0


@pytest.mark.core
def test_a_sweep_with_one_huge_duration_is_refused_before_any_run(tmp_path):
    path = write(tmp_path, CHAIN)
    proc = timed_cli(
        ["sweep", str(path), "--param", "duration_s=1,1e9", "--seeds", "2", "--jobs", "2"],
        tmp_path,
    )
    refused(proc, "duration_s", "1e9")
    assert "(simulated" not in proc.stderr


def _die_on_origin(text: str, origin: str) -> tuple[str, str]:
    """A simulate function for worker processes: dies outright on origin "die"."""
    if origin == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    return json.dumps({"origin": origin}), "{}"


def test_a_worker_that_dies_fails_only_its_run():
    pool = runner.WorkerPool(_die_on_origin, 2)
    tasks = [([i], "{}", "die" if i == 2 else f"run{i}") for i in range(6)]
    results = {indices[0]: result for indices, result in pool.run(tasks)}
    assert sorted(results) == list(range(6))
    assert isinstance(results[2], runner.WorkerDied)
    assert "signal 9" in str(results[2])
    for i in (0, 1, 3, 4, 5):
        assert json.loads(results[i][0]) == {"origin": f"run{i}"}


# --- 2. time steps that round to 0 ns ----------------------------------------------------

ZERO_STEPS = {
    "nred_t_interval": (CHAIN + "[nred]\nt_interval_s = 1e-10\n", "nred.t_interval_s"),
    "nred_t_ncn": (CHAIN + "[nred]\nt_ncn_s = 1e-10\n", "nred.t_ncn_s"),
    "mobility_update": (
        CHAIN + "[mobility]\nupdate_interval_s = 1e-10\n",
        "mobility.update_interval_s",
    ),
    "aodv_hello": (
        CHAIN + '[routing]\nprotocol = "aodv"\n[routing.aodv]\nhello_enabled = true\n'
        "hello_interval_ms = 1e-7\n",
        "routing.aodv.hello_interval_ms",
    ),
    "tcp_rto": (
        TCP_CHAIN + "[tcp]\ninitial_rto_s = 1e-10\nmax_rto_s = 1e-10\nmin_rto_s = 0.0\n",
        "tcp.initial_rto_s",
    ),
    "cbr_rate": (CHAIN.replace("rate_kbps = 100.0", "rate_kbps = 1e12"), "flow[0].rate_kbps"),
}


@pytest.mark.core
@pytest.mark.parametrize("case", sorted(ZERO_STEPS))
def test_time_steps_that_round_to_zero_are_refused(tmp_path, case):
    text, key = ZERO_STEPS[case]
    path = write(tmp_path, text)
    for command in ("check", "run"):
        refused(timed_cli([command, str(path)], tmp_path), key, "allowed")


# A run whose every simulated second takes seconds of wall time: 400 CBR flows of one
# packet every 2 µs, so Ctrl-C must act between events, not only between seconds.
# About 9 s of wall time per simulated second on this machine (40 flows took 1 s, so
# a faster core reached the first second before the signal), kept far from 1 s.
BUSY = CHAIN.replace("duration_s = 5.0", "duration_s = 1000.0").split("[[flow]]")[0] + "".join(
    '[[flow]]\nsrc = 0\ndst = 1\ntransport = "udp"\napp = "cbr"\nrate_kbps = 4e6\n'
    for _ in range(400)
)


@pytest.mark.core
def test_ctrl_c_stops_a_run_from_the_cli_and_leaves_no_pcap(tmp_path):
    path = write(tmp_path, BUSY)
    pcap = tmp_path / "frames.pcap"
    proc = subprocess.Popen(
        cli_command(["run", str(path), "--pcap", str(pcap), "--quiet"], fake=False),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(3.0)
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 5.0
    assert proc.returncode == 130, err
    assert "interrupted" in err and "of 1000 s simulated" in err, err
    assert "Traceback" not in err and "panicked" not in err
    assert out == ""
    assert list(tmp_path.glob("*pcap*")) == [], "a partial capture was left behind"


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """Python's own Ctrl-C handler for the test, even if the tests were started with
    SIGINT ignored (a background job of a non-interactive shell, or nohup): the
    interpreter then keeps it ignored, and a run waiting for Ctrl-C would go on."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.core
def test_ctrl_c_and_signal_handlers_stop_a_run_from_python(tmp_path, python_sigint):
    path = write(tmp_path, BUSY)
    # Ctrl-C: KeyboardInterrupt, saying how far the run got (less than a second:
    # the run gives the interpreter back between events, not only between seconds).
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    started = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt, match=r"run interrupted at 0\.\d+ s of 1000 s"):
        manetfair.run(path)
    assert time.monotonic() - started < 5.0

    # A handler of the caller's own that raises (a time limit) stops it the same way.
    def alarm(signum: int, frame: Any) -> None:
        raise TimeoutError("time limit")

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.5)
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="time limit"):
            manetfair.run(path)
        assert time.monotonic() - started < 5.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# --- 3. check itself exhausting memory ---------------------------------------------------

WAYPOINT = (
    'duration_s = 10.0\n[topology]\nkind = "random"\nnodes = 2\nwidth_m = 1.0\n'
    "height_m = 1.0\n[mobility.random_waypoint]\nspeed_max_mps = {speed}\n"
)
HEAPS = {
    # The campaign's 1e9 m/s is faster than light, refused as such (exit 2 in any case).
    "waypoint_1e9_mps": (WAYPOINT.format(speed="1e9"), "speed_max_mps"),
    "waypoint_3e8_mps": (WAYPOINT.format(speed="3e8"), "mobility"),
    "20000_nodes_in_1_m2": (
        (
            'duration_s = 10.0\n[topology]\nkind = "random"\nnodes = 20000\nwidth_m = 1.0\n'
            "height_m = 1.0\n"
        ),
        "topology",
    ),
}


@pytest.mark.core
@pytest.mark.parametrize("case", sorted(HEAPS))
def test_check_refuses_what_would_exhaust_memory_quickly(tmp_path, case):
    text, key = HEAPS[case]
    path = write(tmp_path, text)
    proc = timed_cli(["check", str(path)], tmp_path)
    words = ("3e8 m/s",) if key == "speed_max_mps" else ("memory limit of 2.0 GiB", "--max-memory")
    refused(proc, key, *words)


@pytest.mark.core
def test_max_memory_sets_the_budget(tmp_path):
    path = write(tmp_path, CHAIN)
    assert timed_cli(["check", str(path)], tmp_path).returncode == 0
    refused(timed_cli(["check", str(path), "--max-memory", "10K"], tmp_path), "10.0 KiB")
    refused(timed_cli(["check", str(path), "--max-memory", "lots"], tmp_path), "--max-memory")


# --- 4. workers outlive their parent -----------------------------------------------------


def _children(pid: int) -> set[int]:
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            pass
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _read_until(proc: subprocess.Popen[str], pattern: str, count: int, limit: float) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + limit
    assert proc.stderr is not None
    while len(seen) < count and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        if pattern in line:
            seen.append(line)
    return seen


@pytest.mark.core
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_sigkill_of_reproduce_leaves_no_worker_and_a_rerun_recomputes_nothing_finished(
    tmp_path,
):
    args = ["reproduce", "validate-chain", "--quick", "--seeds", "6", "--jobs", "2"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--out", str(tmp_path / "report")]
    # validate-chain is built in; a second copy of the built-in folder would clash with
    # an installed (non-editable) package.
    env = {k: v for k, v in os.environ.items() if k != "MANETFAIR_EXPERIMENTS"}
    proc = subprocess.Popen(
        cli_command(args, fake=False),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    finished = _read_until(proc, "(simulated", 3, 120)
    assert len(finished) == 3, "reproduce did not report three finished runs"
    workers = _children(proc.pid)
    assert len(workers) >= 2, workers
    proc.kill()
    proc.wait()
    # The workers die with their parent, and with them the last writer of the pipe
    # (`reproduce ... | tee log` ends).
    deadline = time.monotonic() + 5.0
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(w) for w in workers), "a worker outlived its parent by 5 s"
    assert proc.stdout is not None and proc.stdout.read() == ""

    again = subprocess.run(
        cli_command([*args, "--json", "--quiet"], fake=False),
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert again.returncode == 0, again.stderr
    runs = json.loads(again.stdout)["experiments"][0]["runs"]
    cached = {r["run_id"][:12] for r in runs if r["cached"]}
    done_before = {line.rsplit("run ", 1)[1].strip(" )\n") for line in finished}
    assert done_before <= cached, "a run finished before the kill was simulated again"


def test_a_stop_that_lands_in_a_finalizer_is_not_lost(capsys):
    """A signal's handler runs at whatever Python code runs when it arrives; in a
    finalizer (multiprocessing closes its pipes in weakref callbacks) the exception it
    raises cannot propagate and Python only prints it. The stop must still come."""
    import weakref

    from manetfair.cli import _stop_on_signals
    from manetfair.errors import Terminated

    stopped: list[int] = []
    hook = sys.unraisablehook
    restore = _stop_on_signals(stopped)
    try:

        class Pipe:
            pass

        def close() -> None:
            # The signal arrives while the finalizer runs, and its handler runs
            # at the loop's next turn, inside the finalizer.
            signal.raise_signal(signal.SIGTERM)
            for _ in range(1000):
                pass

        weakref.finalize(pipe := Pipe(), close)
        with pytest.raises(Terminated):
            del pipe  # the finalizer runs; the exception raised in it is swallowed
            assert stopped == [signal.SIGTERM]
            time.sleep(5)  # the main thread waits: the stop must interrupt it
        assert stopped == [signal.SIGTERM, signal.SIGTERM]
    finally:
        restore()
    assert sys.unraisablehook is hook
    assert "Traceback" not in capsys.readouterr().err


def test_sigterm_stops_a_sweep_with_its_workers_exit_143(tmp_path):
    path = write(tmp_path, UDP_PAIR, "pair.toml")
    args = ["sweep", str(path), "--param", "flow.0.rate_kbps=100,200", "--seeds", "6"]
    args += ["--jobs", "2", "--store", str(tmp_path / "s.duckdb")]
    env = {**os.environ, "FAKE_CORE_DELAY_S": "0.5"}
    env.pop("MANETFAIR_STORE", None)
    proc = subprocess.Popen(
        cli_command(args, fake=True),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert len(_read_until(proc, "(simulated", 2, 60)) == 2
    workers = _children(proc.pid)
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 143, err
    assert "terminated" in err and "kept in the results store" in err
    assert "Traceback" not in err
    time.sleep(1.0)
    assert not any(_alive(w) for w in workers)


# --- 5. exit 1 where 2 is promised --------------------------------------------------------


@pytest.mark.core
def test_deeply_nested_input_is_bad_input(tmp_path):
    deep = write(tmp_path, "a = " + "[" * 5000 + "]" * 5000 + "\n" + UDP_PAIR, "deep.toml")
    pair = write(tmp_path, UDP_PAIR, "pair.toml")
    for args in (
        ["check", str(deep)],
        ["check", str(deep), "--param", "seed=2"],  # parsed by Python too
        ["check", str(pair), "--param", ".".join(["a"] * 5000) + "=1"],
        ["check", str(pair), "--param", "a=" + "[" * 5000 + "]" * 5000],
    ):
        refused(timed_cli(args, tmp_path))


NUMBERS = [
    (["run", "{pair}", "--seed", str(2**64)], "--seed"),
    (["run", "{pair}", "--param", "seed=-1"], "seed"),
    (["run", "{pair}", "--param", "seed=18446744073709551616"], "seed"),
    (["run", "{nan_seed}"], "seed"),
    (["reproduce", "--seeds", str(2**70)], "--seeds"),
    (["sweep", "{pair}", "--param", "flow.0.rate_kbps=1", "--seeds", str(2**70)], "--seeds"),
    (
        ["sweep", "{pair}", "--param", "flow.0.rate_kbps=1", "--seeds", "1", "--jobs", "9999"],
        "--jobs",
    ),
]


@pytest.mark.core
@pytest.mark.parametrize("case", range(len(NUMBERS)), ids=lambda i: " ".join(NUMBERS[i][0])[:40])
def test_numbers_that_do_not_fit_are_bad_input(tmp_path, case):
    args, word = NUMBERS[case]
    pair = write(tmp_path, UDP_PAIR, "pair.toml")
    nan_seed = write(tmp_path, UDP_PAIR.replace("seed = 1", "seed = nan"), "nan.toml")
    argv = [a.format(pair=pair, nan_seed=nan_seed) for a in args]
    refused(timed_cli(argv, tmp_path), word)


def test_seeds_that_do_not_fit_are_refused_from_python(fake):
    sc = manetfair.Scenario.from_toml(UDP_PAIR)
    for bad in (2**64, -1, 1.5, True, float("nan")):
        with pytest.raises(InputError, match="seed"):
            sc.with_run(seed=bad)  # type: ignore[arg-type]


# --- 6. validation gaps -------------------------------------------------------------------


@pytest.mark.core
def test_aodv_table_is_checked_under_static_routing(tmp_path):
    path = write(tmp_path, CHAIN + "[routing.aodv]\nttl_start = 0\n")
    refused(timed_cli(["check", str(path)], tmp_path), "routing.aodv.ttl_start", "1..=35")


@pytest.mark.core
@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_nan_anywhere_gets_the_key_the_value_and_the_range(tmp_path, value):
    path = write(tmp_path, CHAIN)
    proc = timed_cli(["check", str(path), "--param", f"nred.t_ncn_s={value}"], tmp_path)
    shown = {"nan": "NaN", "inf": "inf", "-inf": "-inf"}[value]
    refused(proc, "nred.t_ncn_s", shown, "allowed: 1e-6 to 1e7 s")
    assert "expected value" not in proc.stderr and "line" not in proc.stderr


def test_empty_and_ambiguous_sweeps_are_refused(tmp_path):
    path = write(tmp_path, UDP_PAIR, "pair.toml")
    base = ["sweep", str(path), "--seeds", "2", "--store", str(tmp_path / "s.duckdb")]
    refused(timed_cli([*base, "--param", "flow.0.rate_kbps=,"], tmp_path, fake=True), "no values")
    refused(timed_cli([*base, "--param", "seed=1,2"], tmp_path, fake=True), "--seeds")
    refused(
        timed_cli([*base, "--param", "duration_s=1,2", "--duration", "3"], tmp_path, fake=True),
        "--duration",
    )
    huge = [*base[:3], "5000", "--param", "flow.0.rate_kbps=" + ",".join(["1"] * 100)]
    refused(timed_cli(huge, tmp_path, fake=True), "100000")


# --- 7. mobility.ns2_file -----------------------------------------------------------------

SETDEST = TESTS / "data" / "setdest-8-nodes.ns2"
NS2_SCENARIO = """
duration_s = 20.0
[topology]
kind = "random"
nodes = 8
width_m = 500.0
height_m = 500.0
[mobility]
ns2_file = "moves/setdest-8-nodes.ns2"
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 50.0
"""


@pytest.mark.core
def test_ns2_file_is_read_relative_to_the_scenario_file(tmp_path):
    folder = tmp_path / "scenarios"
    (folder / "moves").mkdir(parents=True)
    (folder / "moves" / SETDEST.name).write_text(SETDEST.read_text())
    path = write(folder, NS2_SCENARIO)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = timed_cli(["check", str(path)], elsewhere)
    assert proc.returncode == 0, proc.stderr
    proc = timed_cli(["run", str(path), "--json", "--quiet"], elsewhere)
    assert proc.returncode == 0, proc.stderr
    # The file's text is part of the scenario, so its hash changes with the file.
    sc = manetfair.Scenario.from_file(path)
    assert json.loads(sc.canonical_json())["mobility"]["ns2_movements"] == SETDEST.read_text()
    missing = write(folder, NS2_SCENARIO.replace("moves/", "nowhere/"), "missing.toml")
    refused(timed_cli(["check", str(missing)], elsewhere), "mobility.ns2_file", "nowhere")


# --- 8. disk errors -----------------------------------------------------------------------


def _small_files(limit: int) -> Any:
    def limit_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    return limit_files


def test_output_that_cannot_be_written_exits_1_naming_it(fake, tmp_path):
    path = write(tmp_path, UDP_PAIR, "pair.toml")
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            cli_command(["run", str(path), "--json", "--quiet"], fake=True),
            check=False,
            cwd=tmp_path,
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 1
    assert "cannot write standard output: No space left on device" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.core
def test_a_full_disk_leaves_no_truncated_file_and_names_the_file(tmp_path):
    path = write(tmp_path, UDP_PAIR, "pair.toml")
    # A capture larger than the file-size limit: the write fails part-way.
    proc = subprocess.run(
        cli_command(["run", str(path), "--pcap", "frames.pcap", "--quiet"], fake=False),
        check=False,
        cwd=tmp_path,
        preexec_fn=_small_files(50_000),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert "cannot write frames.pcap: File too large" in proc.stderr, proc.stderr
    assert list(tmp_path.glob("*frames*")) == []
    # Outputs of --out: each is whole or absent, never truncated.
    proc = subprocess.run(
        cli_command(["run", str(path), "--out", "out", "--quiet"], fake=False),
        check=False,
        cwd=tmp_path,
        preexec_fn=_small_files(500),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert "cannot write out/summary.json: File too large" in proc.stderr, proc.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == []


def test_a_full_disk_under_the_store_names_the_store_and_keeps_what_finished(tmp_path):
    path = write(tmp_path, UDP_PAIR, "pair.toml")
    args = ["sweep", str(path), "--param", "flow.0.rate_kbps=100,200", "--seeds", "10"]
    args += ["--duration", "300", "--jobs", "1", "--store", "s.duckdb"]
    env = {k: v for k, v in os.environ.items() if k != "MANETFAIR_STORE"}
    proc = subprocess.run(
        cli_command(args, fake=True),
        check=False,
        cwd=tmp_path,
        env=env,
        preexec_fn=_small_files(20_000),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    # Runs are committed in groups (one transaction each): the message names the store
    # and how many finished runs the failed transaction held.
    assert re.search(r"s\.duckdb: cannot store (a finished run|\d+ finished runs)", proc.stderr)
    assert "File too large" in proc.stderr
    assert "no transaction is active" not in proc.stderr and "Traceback" not in proc.stderr
    stored = proc.stderr.count("(simulated")
    again = subprocess.run(
        cli_command([*args, "--json", "--quiet"], fake=True),
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert again.returncode == 0, again.stderr
    runs = json.loads(again.stdout)["runs"]
    assert sum(r["cached"] for r in runs) >= stored


# --- 9. linear input handling -------------------------------------------------------------


@pytest.mark.core
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_scenario_is_parsed_once(tmp_path, monkeypatch, capsys, command):
    """`check` and `run` hand the file's text to the core and never parse it in Python
    (a file without a throttle table): its messages cite the file's lines, and the
    front end stays short (docs/benchmark.md, "The front end of one run")."""
    from manetfair import _core
    from manetfair import scenario as scenario_mod

    path = write(tmp_path, CHAIN)
    calls: list[str] = []
    tomllib = scenario_mod._tomllib()
    real_loads = tomllib.loads
    monkeypatch.setattr(tomllib, "loads", lambda t: calls.append("python") or real_loads(t))
    for name in ("check_scenario", "run_scenario"):
        real = getattr(_core, name)
        monkeypatch.setattr(
            _core, name, lambda *a, _n=name, _f=real, **k: calls.append(_n) or _f(*a, **k)
        )
    from manetfair.cli import main

    assert main([command, str(path), "--quiet"] if command == "run" else [command, str(path)]) == 0
    assert calls == (["check_scenario", "run_scenario"] if command == "run" else ["check_scenario"])
    capsys.readouterr()


@pytest.mark.core
def test_large_inputs_are_checked_in_linear_time(tmp_path):
    n = 100_000
    nodes = "".join(f"[[node]]\nid = {i}\nx_m = {i * 100.0}\ny_m = 0.0\n" for i in range(n))
    flows = "".join(
        f'[[flow]]\nsrc = {i}\ndst = {i + 1}\ntransport = "udp"\napp = "cbr"\nrate_kbps = 1.0\n'
        for i in range(0, 20_000, 2)
    )
    text = 'duration_s = 1.0\n[topology]\nkind = "explicit"\n[trace]\nnode_series = false\n'
    path = write(tmp_path, text + nodes + flows)
    proc = timed_cli(["check", str(path)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"{n} nodes" in proc.stdout
    # The same file with the duplicate id last.
    dup = write(tmp_path, text + nodes + "[[node]]\nid = 7\nx_m = 1.0\ny_m = 1.0\n", "dup.toml")
    refused(timed_cli(["check", str(dup)], tmp_path), f"node[{n}].id", "unique")
