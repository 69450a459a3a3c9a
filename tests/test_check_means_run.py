"""`check` runs everything `run` validates (docs/cli.md, `check`).

Reproducers S1, S2, S3 and the throttle cases of S5 of the 2026-11-29 hostile
campaign: throttling's reference runs (Thr_max calibration, each flow alone) were
validated only when `run` built them, so `check` said valid and `run` refused,
naming a key of an internal scenario (`metrics.warmup_s`) or crashing (`KeyError:
'flow'`), or ran out of memory (`thr_max_seeds = 4294967295`).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import no_traceback, run_cli

THR = """
duration_s = {duration}
[mac]
queue = "throttle"
[throttle]
{throttle}
[topology]
kind = "chain"
nodes = 4
spacing_m = 126.0
[[flow]]
src = 0
dst = 3
"""

TABLE = "thr_max_kbps = { 1 = 1044.8, 2 = 534.4, 3 = 359.9 }"

RANDOM_PAIRS = """
duration_s = 2.0
[mac]
queue = "throttle"
[topology]
kind = "random"
nodes = 30
width_m = 600.0
height_m = 600.0
[traffic.random_pairs]
count = 3
"""

# (scenario text, words the refusal must contain)
CASES = {
    "S1 default warm-up of the flow-alone runs": (
        THR.format(duration=10.0, throttle=TABLE),
        ["throttle.thr_max_warmup_s", "12", "(the default)", "flow 0 alone"],
    ),
    "S1 calibration spacing beyond the range": (
        THR.format(duration=20.0, throttle="thr_max_seeds = 1\nthr_max_spacing_m = 300.0"),
        ["throttle.thr_max_spacing_m", "300", "calibration"],
    ),
    "S1 calibration warm-up longer than the run": (
        THR.format(duration=5.0, throttle="thr_max_seeds = 1\nthr_max_warmup_s = 6.0"),
        ["throttle.thr_max_warmup_s", "6"],
    ),
    "S2 thr_max_seeds without bound": (
        THR.format(duration=2.0, throttle="thr_max_seeds = 4294967295\nthr_max_warmup_s = 0.5"),
        ["thr_max_seeds", "4294967295", "10000"],
    ),
    "S3 random pairs measured alone": (
        RANDOM_PAIRS,
        ["throttle.u_reference", "random_pairs"],
    ),
    "S5 warm-up beyond the time bound": (
        THR.format(duration=20.0, throttle="thr_max_warmup_s = 1e308"),
        ["thr_max_warmup_s", "above the longest allowed"],
    ),
    "S5 spacing beyond the length bound": (
        THR.format(duration=20.0, throttle="thr_max_spacing_m = 1e308"),
        ["thr_max_spacing_m", "1e308"],
    ),
    "S5 L-region beyond the length bound": (
        THR.format(duration=20.0, throttle=TABLE + "\nl_region_range_m = 1e308"),
        ["l_region_range_m", "1e308"],
    ),
    "S5 one hop count spelt twice": (
        THR.format(duration=20.0, throttle='thr_max_kbps = { 1 = 1044.8, "01" = 2.0 }'),
        ["thr_max_kbps", "01", "leading zeros"],
    ),
    "S5 thr_alone of the wrong length": (
        THR.format(duration=20.0, throttle=TABLE + "\nthr_alone_kbps = [100.0, 90.0]"),
        ["throttle.thr_alone_kbps", "2 values for 1 flows"],
    ),
    "S5 a zero thr_alone": (
        THR.format(duration=20.0, throttle=TABLE + "\nthr_alone_kbps = [0.0]"),
        ["thr_alone_kbps", "0.001"],
    ),
    "S5 a tiny Thr_max": (
        THR.format(duration=20.0, throttle="thr_max_kbps = { 1 = 1e-300 }"),
        ["thr_max_kbps", "1e-300"],
    ),
}


@pytest.mark.core
@pytest.mark.parametrize("case", sorted(CASES))
def test_check_refuses_what_run_refuses_naming_the_users_key(tmp_path: Path, case: str) -> None:
    text, words = CASES[case]
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    for command in ("check", "run"):
        proc = run_cli(
            [command, str(path), "--quiet"] if command == "run" else [command, str(path)],
            fake=False,
            cwd=tmp_path,
            timeout=120,
        )
        assert proc.returncode == 2, (command, proc.returncode, proc.stderr)
        assert no_traceback(proc), proc.stderr
        assert "metrics.warmup_s" not in proc.stderr and "node[" not in proc.stderr, proc.stderr
        for w in words:
            assert w in proc.stderr, (command, w, proc.stderr)


@pytest.mark.core
def test_a_short_throttle_run_with_a_fitting_warm_up_passes_check_and_runs(tmp_path: Path) -> None:
    """The fix the S1 message suggests works: `check` and `run` agree on exit 0."""
    path = tmp_path / "t.toml"
    path.write_text(
        THR.format(duration=4.0, throttle=TABLE + "\nthr_max_warmup_s = 1.0\nthr_max_seeds = 1"),
        encoding="utf-8",
    )
    for command in ("check", "run"):
        proc = run_cli([command, str(path)], fake=False, cwd=tmp_path, timeout=120)
        assert proc.returncode == 0, (command, proc.stderr)
