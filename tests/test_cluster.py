"""The Ray backend on a real local Ray cluster: a head on the loopback address with two
worker processes. One worker is killed in the middle of a run; the sweep completes
with every run stored once and no finished run computed again."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'manetfair[cluster]')")

from conftest import REPO, TESTS, run_cli

pytestmark = pytest.mark.core


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def cluster() -> Iterator[tuple[str, Path]]:
    """A Ray head on 127.0.0.1 with two CPUs (two worker processes), in its own process
    group so that ending the group ends everything it started."""
    port = _free_port()
    temp = Path(tempfile.mkdtemp(prefix="/tmp/mfray"))  # Ray's socket paths must be short
    log = temp / "runs.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["RAY_TEST_LOG"] = str(log)
    env["RAY_USAGE_STATS_ENABLED"] = "0"
    head = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "ray"),
            "start",
            "--head",
            "--block",
            "--node-ip-address=127.0.0.1",
            f"--port={port}",
            "--num-cpus=2",
            "--include-dashboard=false",
            "--disable-usage-stats",
            f"--temp-dir={temp}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    address = f"127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            probe = subprocess.run(
                [str(Path(sys.executable).parent / "ray"), "status", f"--address={address}"],
                capture_output=True,
                text=True,
                env=env,
                check=False,
            )
            if probe.returncode == 0 and "2.0 CPU" in probe.stdout:
                break
            if head.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the Ray head did not come up:\n{probe.stdout}\n{probe.stderr}")
            time.sleep(1.0)
        yield address, log
    finally:
        for sig, wait in ((signal.SIGTERM, 3), (signal.SIGKILL, 10)):
            try:
                os.killpg(head.pid, sig)
            except ProcessLookupError:
                break
            try:
                head.wait(timeout=wait)
                break
            except subprocess.TimeoutExpired:
                continue


def _kill_one_worker_mid_run(log: Path, killed: list[tuple[int, int]], stop: threading.Event):
    """Once two runs have ended, kills the worker of a run that started and has not."""
    while not stop.is_set():
        lines = log.read_text().split("\n") if log.exists() else []
        events = [line.split() for line in lines if line]
        ended = {int(s) for kind, s, _ in events if kind == "end"}
        running = [
            (int(s), int(p)) for kind, s, p in events if kind == "start" and int(s) not in ended
        ]
        if len(ended) >= 2 and running:
            seed, pid = running[-1]
            os.kill(pid, signal.SIGKILL)
            killed.append((seed, pid))
            return
        time.sleep(0.05)


def test_sweep_on_ray_survives_a_killed_worker(cluster, tmp_path, pair_file):
    import ray_helpers
    from manetfair.cluster import RayBackend
    from manetfair.runner import RunSpec, execute
    from manetfair.scenario import load
    from manetfair.store import ResultsStore

    address, log = cluster
    log.write_text("")
    base = load(pair_file)
    specs = [RunSpec(base.with_run(seed=s, duration_s=3.0), s) for s in range(1, 9)]
    killed: list[tuple[int, int]] = []
    stop = threading.Event()
    killer = threading.Thread(target=_kill_one_worker_mid_run, args=(log, killed, stop))
    killer.start()
    try:
        with ResultsStore(tmp_path / "r.duckdb") as store:
            outcomes = execute(
                specs,
                store,
                backend=RayBackend(address),
                simulate=ray_helpers.logged_simulate,
            )
            stored = store.count()
    finally:
        stop.set()
        killer.join()
        ray.shutdown()
    assert killed, "no worker was killed: the runs ended too fast"
    assert [o.spec.seed for o in outcomes] == list(range(1, 9))
    assert not any(o.cached for o in outcomes)
    assert stored == 8 and len({o.run_id for o in outcomes}) == 8
    events = [line.split() for line in log.read_text().splitlines()]
    ends = Counter(int(s) for kind, s, _ in events if kind == "end")
    starts = Counter(int(s) for kind, s, _ in events if kind == "start")
    assert ends == Counter(range(1, 9)), "a finished run was computed again, or one is missing"
    seed, _ = killed[0]
    assert starts[seed] == 2  # the killed run was retried, once
    assert sum(starts.values()) == 9


def test_cli_sweep_with_ray_backend_matches_local(cluster, tmp_path, pair_file):
    address, _ = cluster
    args = ["sweep", str(pair_file), "--param", "flow.0.rate_kbps=200,400", "--seeds", "2"]
    args += ["--duration", "3", "--json", "--quiet"]
    on_ray = run_cli(
        [*args, "--store", str(tmp_path / "ray.duckdb"), "--backend", "ray", "--address", address],
        fake=False,
        cwd=tmp_path,
    )
    assert on_ray.returncode == 0, on_ray.stderr
    local = run_cli([*args, "--store", str(tmp_path / "local.duckdb")], fake=False, cwd=tmp_path)
    assert local.returncode == 0, local.stderr

    def numbers(doc: str) -> list[tuple[object, ...]]:
        runs = json.loads(doc)["runs"]
        return [
            (
                json.dumps(r["variant"]),
                r["seed"],
                json.dumps(
                    {k: v for k, v in r["summary"].items() if k != "wall_s"}, sort_keys=True
                ),
            )
            for r in runs
        ]

    assert numbers(on_ray.stdout) == numbers(local.stdout)
    assert REPO.is_dir()
