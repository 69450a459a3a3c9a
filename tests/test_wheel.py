"""The built wheel works wherever pip puts it: built from this tree, installed into a
fresh virtual environment, and used from an empty directory (no source tree, no
MANETFAIR_EXPERIMENTS).

Building reuses the tree's target/ directory, so after `pip install .` it costs a
re-link at most. The environment sees the base interpreter's site-packages, so that
dependencies already installed there (as in CI, which installs into the base
interpreter) are not downloaded again; manetfair itself comes from the wheel, which
the last assertion checks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.core


def _run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> str:
    proc = subprocess.run(
        cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert proc.returncode == 0, f"{cmd} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def test_wheel_installs_and_runs_from_an_empty_directory(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANETFAIR_")}
    env.pop("VIRTUAL_ENV", None)
    dist = tmp_path / "dist"
    _run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(REPO)],
        REPO,
        env,
    )
    (wheel,) = dist.glob("manetfair-*.whl")

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=True).create(env_dir)
    py = env_dir / "bin" / "python"
    # --force-reinstall: a manetfair of the same version in the base interpreter (CI
    # installs one) must not stand in for the wheel; then pip resolves the rest.
    pip = [str(py), "-m", "pip", "install", "-q", "--no-compile"]
    _run([*pip, "--no-deps", "--force-reinstall", str(wheel)], tmp_path, env)
    _run([*pip, str(wheel)], tmp_path, env)
    manetfair = str(env_dir / "bin" / "manetfair")

    empty = tmp_path / "empty"
    empty.mkdir()
    listing = json.loads(_run([manetfair, "experiments", "--json"], empty, env))
    ids = {e["id"] for e in listing["experiments"]}
    assert {"validate-bianchi", "nred-fig10", "mtcp-fig3"} <= ids

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

    copied = _run([manetfair, "examples"], empty, env).split()
    assert "examples/chain.toml" in copied
    summary = json.loads(
        _run([manetfair, "run", "examples/chain.toml", "--duration", "5", "--json"], empty, env)
    )
    assert summary["duration_s"] == 5.0 and summary["flows"]
    # Nothing came from the source tree: the package's files are under the venv.
    files = _run(
        [str(py), "-c", "import manetfair.experiments as e; print(e.builtin_dir())"], empty, env
    )
    assert Path(files.strip()).is_relative_to(env_dir)
