"""Shared test set-up.

Tests of the front door's own logic use `fake_core` (tests/fake_core.py) in place of
the native module, so they neither wait for nor depend on the simulator's numbers.
Tests marked `core` need the real native module with `run_scenario` and are skipped
without it. Tests marked `slow` run only with `--runslow`. Tests marked `papers` check
the experiments against the papers' texts and are collected only with `--papers=DIR`.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent


def mounted_tmpfs(mnt: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at the new folder `mnt` with `options` for the test's
    duration (a fixture's body: `yield from`); skipped where one cannot be mounted."""
    mnt.mkdir()
    proc = subprocess.run(  # noqa: PLW1510 - the return code is looked at
        ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(mnt)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


# A two-hop chain with one UDP flow for 2 s: the scenario of the tests that only need
# some valid input (exit codes, input bounds, output targets).
UDP_CHAIN = """
duration_s = 2.0
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
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))

import fake_core


def _real_core() -> ModuleType | None:
    try:
        core = importlib.import_module("manetfair._core")
    except ImportError:
        return None
    needed = ("run_scenario", "check_scenario", "ScenarioError")
    return core if all(hasattr(core, n) for n in needed) else None


REAL_CORE = _real_core()
if REAL_CORE is None:
    # Without a complete native module, `import manetfair` needs the stand-in.
    sys.modules.pop("manetfair", None)
    fake_core.install()

import manetfair
from manetfair import runner


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="also run tests marked slow")
    parser.addoption(
        "--papers",
        metavar="DIR",
        default=os.environ.get("MANETFAIR_PAPERS") or None,
        help="the folder of the papers' texts: runs the tests marked papers "
        "(default: $MANETFAIR_PAPERS)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long-running; run with --runslow")
    config.addinivalue_line("markers", "core: needs the native module's run_scenario")
    config.addinivalue_line(
        "markers",
        "papers: checks against the papers' texts, which the repository cannot hold; "
        "not collected unless --papers=DIR names them (docs/install.md)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "papers" in (config.getoption("markexpr") or "") and not config.getoption("--papers"):
        raise pytest.UsageError(
            "-m papers checks quotes against the papers' texts: name their folder with "
            "--papers=DIR (or MANETFAIR_PAPERS=DIR)"
        )
    skip_slow = pytest.mark.skip(reason="slow; run with --runslow")
    skip_core = pytest.mark.skip(reason="the native module has no run_scenario yet")
    if not config.getoption("--papers"):
        # Left out rather than skipped: without the papers' texts they cannot run
        # anywhere, so they belong to a command of their own (docs/install.md).
        papers = [item for item in items if "papers" in item.keywords]
        if papers:
            config.hook.pytest_deselected(items=papers)
            items[:] = [item for item in items if "papers" not in item.keywords]
    for item in items:
        if "slow" in item.keywords and not config.getoption("--runslow"):
            item.add_marker(skip_slow)
        if "core" in item.keywords and REAL_CORE is None:
            item.add_marker(skip_core)


@pytest.fixture
def papers_dir(request: pytest.FixtureRequest) -> Path:
    """The folder of the papers' texts (`--papers=DIR`)."""
    return Path(request.config.getoption("--papers"))


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ModuleType]:
    """Routes every `_core` call of the front door in this process to fake_core."""
    monkeypatch.setitem(sys.modules, "manetfair._core", fake_core)
    monkeypatch.setattr(manetfair, "_core", fake_core, raising=False)
    clear = runner.code_version.cache_clear
    clear()
    yield fake_core
    clear()


BOOT_FAKE = (
    "import sys; sys.path.insert(0, {tests!r}); import fake_core; fake_core.install(); "
    "from manetfair.cli import main; sys.exit(main())"
)


def cli_command(args: Sequence[str], fake: bool) -> list[str]:
    if fake:
        return [sys.executable, "-c", BOOT_FAKE.format(tests=str(TESTS)), *args]
    return [sys.executable, "-m", "manetfair.cli", *args]


def run_cli(
    args: Sequence[str],
    *,
    fake: bool,
    cwd: Path,
    env: dict[str, str] | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    full_env.pop("MANETFAIR_STORE", None)
    full_env.update(env or {})
    return subprocess.run(
        cli_command(args, fake),
        check=False,
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def no_traceback(proc: subprocess.CompletedProcess[Any]) -> bool:
    return "Traceback" not in proc.stderr and "panicked" not in proc.stderr


UDP_PAIR = """
name = "pair"
duration_s = 5.0
seed = 1

[topology]
kind = "explicit"

[[node]]
id = 1
x_m = 0.0
y_m = 0.0

[[node]]
id = 2
x_m = 100.0
y_m = 0.0

[[flow]]
src = 1
dst = 2
transport = "udp"
app = "cbr"
rate_kbps = 400.0
packet_bytes = 1000
start_s = 1.0
"""


@pytest.fixture
def pair_file(tmp_path: Path) -> Path:
    path = tmp_path / "pair.toml"
    path.write_text(UDP_PAIR, encoding="utf-8")
    return path
