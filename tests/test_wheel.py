"""The built wheel works wherever pip puts it: built from this tree, checked as a
package index would check it, installed into a fresh virtual environment on a PATH
without Rust, and used from an empty directory (no source tree, no
MANETFAIR_EXPERIMENTS).

Building reuses the tree's target/ directory, so after `pip install .` it costs a
re-link at most. The environment sees the base interpreter's site-packages, so that
dependencies already installed there (as in CI, which installs into the base
interpreter) are not downloaded again; manetfair itself comes from the wheel, which
the last assertion checks."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import time
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _load(path: Path, name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_wheel = _load(REPO / "tools" / "build_wheel.py", "build_wheel")

pytestmark = pytest.mark.core


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _without_cargo(env: dict[str, str]) -> dict[str, str]:
    """`env` with a PATH holding neither cargo nor rustc: a machine without Rust."""
    keep = [
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "cargo").exists() and not (Path(d) / "rustc").exists()
    ]
    return {**env, "PATH": os.pathsep.join(keep)}


def test_wheel_installs_and_runs_from_an_empty_directory(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANETFAIR_")}
    env.pop("VIRTUAL_ENV", None)
    dist = tmp_path / "dist"
    # As README.md says: `pip wheel . -w dist` (here without the dependencies' wheels).
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        REPO,
        env,
    )
    (wheel,) = dist.glob("manetfair-*.whl")

    # What a package index asks of it: a manylinux tag that auditwheel confirms,
    # abi3 from CPython 3.9, stripped, at most 12 MB (tools/build_wheel.py).
    tag = re.search(r"-cp39-abi3-(manylinux_\d+_\d+_x86_64)\.whl$", wheel.name)
    assert tag, wheel.name
    assert build_wheel.problems(wheel, policy=tag[1]) == []

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # No Rust from here on. --force-reinstall: a manetfair of the same version in the
    # base interpreter (CI installs one) must not stand in for the wheel; then pip
    # resolves the rest.
    env = _without_cargo(env)
    pip = [str(py), "-m", "pip", "install", "-q", "--no-compile"]
    start = time.monotonic()
    _run([*pip, "--no-deps", "--force-reinstall", str(wheel)], tmp_path, env)
    _run([*pip, str(wheel)], tmp_path, env)
    took = time.monotonic() - start
    assert took < 30, f"installing the wheel took {took:.1f} s"
    manetfair = str(env_dir / "bin" / "manetfair")

    # README.md's commands, from an empty directory.
    empty = tmp_path / "empty"
    empty.mkdir()
    listing = _run([manetfair, "experiments"], empty, env)
    assert "Yahia and Bíró 2007, M-TCP" in listing and ".txt" not in listing, listing
    listing_json = json.loads(_run([manetfair, "experiments", "--json"], empty, env))
    ids = {e["id"] for e in listing_json["experiments"]}
    assert {"validate-bianchi", "nred-fig10", "mtcp-fig3"} <= ids

    copied = _run([manetfair, "examples", "ex"], empty, env).split()
    assert "ex/chain.toml" in copied
    table = _run([manetfair, "run", "ex/chain.toml", "--duration", "5"], empty, env)
    assert "kbit/s" in table, table
    summary = json.loads(
        _run([manetfair, "run", "ex/chain.toml", "--duration", "5", "--json"], empty, env)
    )
    assert summary["duration_s"] == 5.0 and summary["flows"]

    doc = json.loads(
        _run(
            [manetfair, "reproduce", "validate-bianchi", "--quick", "--json", "--quiet"],
            empty,
            env,
        )
    )
    (exp,) = doc["experiments"]
    assert exp["id"] == "validate-bianchi" and exp["runs"] and exp["claims"]
    assert (empty / "manetfair-report" / "index.html").is_file()
    assert (empty / "manetfair-results.duckdb").is_file()

    # Nothing came from the source tree: the package's files are under the venv.
    files = _run(
        [str(py), "-c", "import manetfair.experiments as e; print(e.builtin_dir())"], empty, env
    )
    assert Path(files.strip()).is_relative_to(env_dir)
