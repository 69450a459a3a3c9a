"""Exit codes as docs/cli.md promises them, and scenario values refused by `check`.

Reproducers C3, C4, C5, D3, D4 and S5 of the 2026-11-29 hostile campaign: bad input
that exited 1 with a raw Python exception or 0 without a word, a store that was not a
store reported as locked by another process, a truncated store served by one command
and failing in another, and scenario values outside the documented domain accepted.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import UDP_CHAIN, mounted_tmpfs, no_traceback, run_cli

CHAIN = UDP_CHAIN

THR = """
duration_s = 4.0
[mac]
queue = "throttle"
[throttle]
thr_max_kbps = { 1 = 1044.8, 2 = 534.4, 3 = 359.9 }
thr_alone_kbps = [300.0]
[topology]
kind = "chain"
nodes = 4
spacing_m = 126.0
[[flow]]
src = 0
dst = 3
"""

RANDOM = """
duration_s = 2.0
[topology]
kind = "random"
nodes = 20
width_m = 500.0
height_m = 500.0
[traffic.random_pairs]
count = 2
transport = "udp"
app = "cbr"
rate_kbps = 10.0
"""


def write(tmp_path: Path, text: str, name: str = "s.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert no_traceback(proc), proc.stderr
    assert "Error:" not in proc.stderr, proc.stderr  # no raw exception name
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)


# --- S5: values outside the documented domain -------------------------------------

S5 = {
    "tcp.ap.delaybound_s tiny": (
        CHAIN + "[tcp.ap]\ndelaybound_s = 5e-324\n",
        ["tcp.ap.delaybound_s", "rounds to 0 ns"],
    ),
    "onoff.think_time_mean_s tiny": (
        CHAIN + "[onoff]\nthink_time_mean_s = 1e-300\n",
        ["onoff.think_time_mean_s", "rounds to 0 ns"],
    ),
    "radio.interference_range_m huge": (
        CHAIN + "[radio]\ninterference_range_m = 4294967295.0\n",
        ["radio.interference_range_m", "1e9"],
    ),
    "random_pairs.start_s three values": (
        RANDOM.replace("count = 2", "count = 2\nstart_s = [0.0, 0.5, 1.0]"),
        ["start_s", "3 values"],
    ),
    "two scripts for one node": (
        CHAIN
        + "[[mobility.node]]\nid = 1\npath = [[0.0, 200.0, 0.0]]\n"
        + "[[mobility.node]]\nid = 1\nmoves = [[0.0, 210.0, 0.0, 1.0]]\n",
        ["mobility.node[1].id", "scripted already"],
    ),
    "radio.card unused by its profile": (
        CHAIN + '[radio]\nprofile = "osipov-ranges"\ncard = ""\n',
        ["radio.card", "sensitivity"],
    ),
}


@pytest.mark.core
@pytest.mark.parametrize("case", sorted(S5))
def test_values_outside_the_domain_are_refused_by_check(tmp_path: Path, case: str) -> None:
    text, words = S5[case]
    proc = run_cli(["check", str(write(tmp_path, text))], fake=False, cwd=tmp_path)
    refused(proc, *words)


@pytest.mark.core
def test_ns2_coordinates_beyond_the_length_bound_are_refused(tmp_path: Path) -> None:
    write(tmp_path, '$ns_ at 1.0 "$node_(0) setdest 2e9 0 5.0"\n', "m.ns2")
    sc = write(tmp_path, CHAIN + '[mobility]\nns2_file = "m.ns2"\n')
    refused(run_cli(["check", str(sc)], fake=False, cwd=tmp_path), "mobility.ns2_file", "2e9")


# --- C3, C4: command lines ------------------------------------------------------------


@pytest.mark.core
@pytest.mark.parametrize(
    "dev", ["", "wlan0; touch X", "wlan0\nqdisc del dev eth0 root", "a" * 16, "..", "a/b"]
)
def test_shares_refuses_a_device_that_is_no_interface_name(tmp_path: Path, dev: str) -> None:
    sc = write(tmp_path, THR)
    proc = run_cli(
        ["shares", str(sc), "--tc", "--no-measure", "--dev", dev], fake=False, cwd=tmp_path
    )
    refused(proc, "--dev", "interface name")
    assert "qdisc del" not in proc.stdout


@pytest.mark.core
@pytest.mark.parametrize("subnet", ["abc", "10.0.0.0/33", "fd00::/120"])
def test_shares_takes_an_ipv4_subnet_only(tmp_path: Path, subnet: str) -> None:
    sc = write(tmp_path, THR)
    proc = run_cli(
        ["shares", str(sc), "--tc", "--no-measure", "--subnet", subnet], fake=False, cwd=tmp_path
    )
    refused(proc, "--subnet", "IPv4")


@pytest.mark.core
def test_shares_with_a_valid_device_and_subnet_prints_tc_lines(tmp_path: Path) -> None:
    sc = write(tmp_path, THR)
    proc = run_cli(
        [
            "shares",
            str(sc),
            "--tc",
            "--no-measure",
            "--dev",
            "wlp2s0",
            "--subnet",
            "192.168.7.0/24",
        ],
        fake=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "dev wlp2s0" in proc.stdout and "192.168.7." in proc.stdout


@pytest.mark.core
@pytest.mark.parametrize(
    "flags, words",
    [
        (["--trace-node", "99"], ["--trace-node 99", "no such node"]),
        (["--trace-node", "-1"], ["--trace-node -1", "no such node"]),
        (["--trace-flow", "7"], ["--trace-flow 7", "no such flow"]),
    ],
)
def test_trace_filters_naming_nothing_are_refused(
    tmp_path: Path, flags: list[str], words: list[str]
) -> None:
    sc = write(tmp_path, CHAIN)
    trace = tmp_path / "t.jsonl"
    proc = run_cli(
        ["run", str(sc), "--quiet", "--trace", str(trace), *flags], fake=False, cwd=tmp_path
    )
    refused(proc, *words)
    assert not trace.exists()


@pytest.mark.core
def test_trace_filters_of_generated_flows_and_nodes_are_accepted(tmp_path: Path) -> None:
    sc = write(tmp_path, RANDOM)
    trace = tmp_path / "t.jsonl"
    proc = run_cli(
        [
            "run",
            str(sc),
            "--quiet",
            "--trace",
            str(trace),
            "--trace-flow",
            "1",
            "--trace-node",
            "19",
        ],
        fake=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr


@pytest.mark.core
@pytest.mark.parametrize(
    "flags", [["--seed", "1", "--param", "seed=2"], ["--duration", "1", "--param", "duration_s=2"]]
)
def test_run_refuses_the_same_key_twice_as_sweep_does(tmp_path: Path, flags: list[str]) -> None:
    sc = write(tmp_path, CHAIN)
    refused(run_cli(["run", str(sc), "--quiet", *flags], fake=False, cwd=tmp_path), "give one")


@pytest.mark.core
def test_run_with_standard_output_closed_says_so(tmp_path: Path) -> None:
    sc = write(tmp_path, CHAIN)
    proc = subprocess.run(
        [sys.executable, "-m", "manetfair.cli", "run", str(sc), "--quiet"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 1, proc.stderr
    assert "cannot write standard output" in proc.stderr and "Error:" not in proc.stderr


def test_an_experiment_file_that_is_not_text_is_bad_input(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "bin.toml").write_bytes(b"\x89PNG\r\n\x1a\n\xb2\xff")
    proc = run_cli(
        ["experiments"], fake=True, cwd=tmp_path, env={"MANETFAIR_EXPERIMENTS": str(extra)}
    )
    refused(proc, "bin.toml", "UTF-8")


@pytest.mark.core
def test_reproduce_x_x_runs_x_once(tmp_path: Path) -> None:
    proc = run_cli(
        [
            "reproduce",
            "validate-chain",
            "validate-chain",
            "--quick",
            "--seeds",
            "1",
            "--jobs",
            "1",
            "--store",
            "r.duckdb",
            "--out",
            "rep",
            "--quiet",
            "--json",
        ],
        fake=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    import json

    assert [e["id"] for e in json.loads(proc.stdout)["experiments"]] == ["validate-chain"]
    assert (tmp_path / "rep" / "validate-chain.png").exists()


# --- C5, D3, D4: the results store ----------------------------------------------------


def _sweep(tmp_path: Path, store: Path) -> subprocess.CompletedProcess[str]:
    sc = write(tmp_path, CHAIN)
    return run_cli(
        ["sweep", str(sc), "--seeds", "2", "--store", str(store), "--jobs", "1", "--quiet"],
        fake=False,
        cwd=tmp_path,
    )


@pytest.mark.core
@pytest.mark.parametrize("kind", ["random bytes", "a TOML file", "a directory"])
def test_a_store_that_is_not_a_store_is_named_as_such(tmp_path: Path, kind: str) -> None:
    store = tmp_path / "s.duckdb"
    if kind == "random bytes":
        store.write_bytes(os.urandom(50_000))
    elif kind == "a TOML file":
        store.write_text(CHAIN, encoding="utf-8")
    else:
        store.mkdir()
    for args in (["export", "--store", str(store), "--out", "ex"],):
        proc = run_cli(args, fake=False, cwd=tmp_path)
        refused(proc, "s.duckdb", "not a results store")
        assert "held it" not in proc.stderr
    proc = _sweep(tmp_path, store)
    refused(proc, "not a results store")


@pytest.mark.core
def test_a_truncated_store_is_refused_by_every_command(tmp_path: Path) -> None:
    store = tmp_path / "s.duckdb"
    assert _sweep(tmp_path, store).returncode == 0
    size = store.stat().st_size
    with open(store, "r+b") as fh:
        fh.truncate(int(size * 0.75))
    commands = [
        ["export", "--store", str(store), "--out", "ex"],
        ["sweep", str(write(tmp_path, CHAIN)), "--seeds", "2", "--store", str(store), "--quiet"],
        [
            "reproduce",
            "validate-chain",
            "--quick",
            "--seeds",
            "1",
            "--jobs",
            "1",
            "--store",
            str(store),
            "--out",
            "rep",
            "--quiet",
        ],
    ]
    for args in commands:
        proc = run_cli(args, fake=False, cwd=tmp_path)
        assert proc.returncode == 1, (args, proc.stderr)
        assert "s.duckdb" in proc.stderr and "damaged" in proc.stderr, proc.stderr
        assert "held it" not in proc.stderr and no_traceback(proc)


@pytest.mark.core
@pytest.mark.parametrize("what", ["a 200,000-hop route", "a 1 MB key"])
def test_messages_that_echo_a_huge_value_stay_short(tmp_path: Path, what: str) -> None:
    """S6: a refusal printed the whole route (600 KB) or key (1 MB) on one line."""
    if what == "a 1 MB key":
        text = CHAIN + "[radio]\n" + "k" * (1 << 20) + " = 1\n"
    else:
        route = ", ".join(["0", *(["1", "0"] * 100_000), "1", "2"])
        text = CHAIN.replace("rate_kbps = 100.0", f"rate_kbps = 100.0\nroute = [{route}]")
    proc = run_cli(["check", str(write(tmp_path, text))], fake=False, cwd=tmp_path)
    refused(proc, "more bytes")
    assert len(proc.stderr) < 2500, len(proc.stderr)


@pytest.fixture
def read_only_folder(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A read-only tmpfs in the test's folder (root ignores permission bits, so a
    mount stands in); skipped where one cannot be mounted."""
    yield from mounted_tmpfs(tmp_path / "ro", "size=1m,ro")


@pytest.mark.core
def test_a_store_in_a_read_only_folder_says_so(tmp_path: Path, read_only_folder: Path) -> None:
    """D3: reported as held by another process for 60 s, after 0.2 s."""
    proc = _sweep(tmp_path, read_only_folder / "s.duckdb")
    assert proc.returncode == 1, proc.stderr
    assert "s.duckdb" in proc.stderr and "cannot be written here" in proc.stderr, proc.stderr
    assert "held it" not in proc.stderr and no_traceback(proc)
