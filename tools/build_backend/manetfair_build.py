"""The PEP 517 build backend of a source checkout: maturin's, with two changes.

1. Before anything is built, it checks that cargo and a recent enough rustc are on
   PATH. Without them maturin would try to download a Rust toolchain and, where it
   cannot, end in a long traceback; this stops with one sentence saying what to
   install instead.
2. A wheel (`pip install .`, `pip wheel .`) is built with the `dist` profile of
   Cargo.toml (no debug information, symbols stripped) and tagged with the oldest
   manylinux tag that the symbols it links allow (auditwheel's rule, which maturin
   applies), where maturin's own backend tags every wheel `linux_*`, a tag no
   package index accepts. Editable installs keep maturin's defaults (the `release`
   profile, with the line tables a profiler reads).

The release build for every glibc since 2.17 is tools/build_wheel.py.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

import maturin  # type: ignore[import-untyped]
from maturin import (  # noqa: F401  (re-exported hooks)
    build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

#: The oldest rustc that builds the locked crates (Cargo.toml `rust-version`).
MIN_RUST = (1, 85)


def toolchain_problem() -> str | None:
    """Why this machine cannot build the native module, in one sentence, or None."""
    cargo = shutil.which("cargo")
    rustc = os.environ.get("RUSTC") or shutil.which("rustc")
    want = ".".join(map(str, MIN_RUST))
    if cargo is None or rustc is None:
        return (
            f"manetfair: building from source needs Rust {want} or newer (cargo and rustc "
            "on PATH): install it with rustup (https://rustup.rs), or install a prebuilt "
            "wheel instead (docs/install.md)."
        )
    try:
        out = subprocess.run(
            [rustc, "--version"], capture_output=True, text=True, check=False, timeout=60
        ).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    found = re.match(r"rustc (\d+)\.(\d+)", out)
    if found and (int(found[1]), int(found[2])) < MIN_RUST:
        return (
            f"manetfair: building from source needs Rust {want} or newer, but {rustc} is "
            f"{found[1]}.{found[2]}: update it (`rustup update`, or rustup from "
            "https://rustup.rs where the system's package is older), or install a prebuilt "
            "wheel instead (docs/install.md)."
        )
    return None


def _require_toolchain() -> None:
    problem = toolchain_problem()
    if problem is not None:
        sys.stderr.write(problem + "\n")
        raise SystemExit(1)


def get_requires_for_build_wheel(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    _require_toolchain()
    return list(maturin.get_requires_for_build_wheel(config_settings))


def get_requires_for_build_sdist(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    _require_toolchain()
    return list(maturin.get_requires_for_build_sdist(config_settings))


def get_requires_for_build_editable(
    config_settings: Mapping[str, Any] | None = None,
) -> list[str]:
    _require_toolchain()
    return list(maturin.get_requires_for_build_editable(config_settings))


def _with_args(config_settings: Mapping[str, Any] | None, extra: list[str]) -> dict[str, Any]:
    """config_settings with `extra` put before the caller's own build arguments."""
    settings = dict(config_settings or {})
    given = maturin.get_maturin_pep517_args(config_settings)
    settings["maturin.build-args"] = shlex.join([*extra, *given])
    settings.pop("build-args", None)
    return settings


def build_wheel(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _require_toolchain()
    given = maturin.get_maturin_pep517_args(config_settings)
    extra = [] if "--profile" in given else ["--profile", "dist"]
    if "--compatibility" not in given and "--manylinux" not in given:
        # An empty list: the oldest manylinux tag the linked symbols allow, else
        # `linux` (maturin's backend would otherwise pass `off`, always `linux`).
        extra.append("--compatibility")
    settings = _with_args(config_settings, extra)
    return str(maturin.build_wheel(wheel_directory, settings, metadata_directory))


def build_editable(
    wheel_directory: str,
    config_settings: Mapping[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    _require_toolchain()
    return str(maturin.build_editable(wheel_directory, config_settings, metadata_directory))
