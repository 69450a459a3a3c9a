"""A source build states what it needs: without cargo, or with a rustc older than
Cargo.toml's `rust-version`, `pip install .` stops with one sentence saying what to
install (tools/build_backend/manetfair_build.py), and README.md, Cargo.toml and the
backend name the same minimum Rust."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import venv
from pathlib import Path
from types import ModuleType

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parent.parent


def _backend() -> ModuleType:
    path = REPO / "tools" / "build_backend" / "manetfair_build.py"
    spec = importlib.util.spec_from_file_location("manetfair_build", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


backend = _backend() if importlib.util.find_spec("maturin") else None
needs_maturin = pytest.mark.skipif(backend is None, reason="pip install maturin")


def _no_rust_path() -> str:
    return os.pathsep.join(
        d
        for d in os.environ.get("PATH", "").split(os.pathsep)
        if d and not (Path(d) / "cargo").exists() and not (Path(d) / "rustc").exists()
    )


def test_cargo_toml_readme_and_backend_name_one_minimum_rust() -> None:
    cargo = tomllib.loads((REPO / "Cargo.toml").read_text(encoding="utf-8"))
    minimum = cargo["workspace"]["package"]["rust-version"]
    for crate in ("core", "py"):
        pkg = tomllib.loads((REPO / "crates" / crate / "Cargo.toml").read_text("utf-8"))
        assert pkg["package"]["rust-version"] == {"workspace": True}, crate
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert f"Rust ≥ {minimum}" in readme
    text = (REPO / "tools" / "build_backend" / "manetfair_build.py").read_text("utf-8")
    found = re.search(r"MIN_RUST = \((\d+), (\d+)\)", text)
    assert found and f"{found[1]}.{found[2]}" == minimum
    assert (REPO / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


@needs_maturin
def test_without_cargo_the_backend_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert backend is not None
    monkeypatch.setenv("PATH", _no_rust_path())
    monkeypatch.delenv("RUSTC", raising=False)
    problem = backend.toolchain_problem()
    assert problem is not None and "\n" not in problem
    assert "Rust 1.85 or newer" in problem and "rustup" in problem and "wheel" in problem


@needs_maturin
def test_an_old_rustc_is_named_with_its_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert backend is not None
    for tool, says in (("cargo", "cargo 1.65.0"), ("rustc", "rustc 1.63.0")):
        exe = tmp_path / tool
        exe.write_text(f"#!/bin/sh\necho '{says}'\n", encoding="utf-8")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), _no_rust_path()]))
    monkeypatch.delenv("RUSTC", raising=False)
    problem = backend.toolchain_problem()
    assert problem is not None and "is 1.63" in problem and "rustup update" in problem


@needs_maturin
def test_this_machines_toolchain_passes() -> None:
    assert backend is not None
    assert backend.toolchain_problem() is None


def test_pip_install_without_rust_stops_with_one_sentence(tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "RUSTC")}
    env["PATH"] = os.pathsep.join([str(env_dir / "bin"), _no_rust_path()])
    proc = subprocess.run(
        [str(env_dir / "bin" / "python"), "-m", "pip", "install", "--no-deps", str(REPO)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "manetfair: building from source needs Rust 1.85 or newer" in out, out
    assert "Traceback" not in out and "rustup-init" not in out, out
