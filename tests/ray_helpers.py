"""A run for the Ray test that takes long enough to be killed in the middle, and logs
its start and end (with the worker's pid) to the file in $RAY_TEST_LOG."""

from __future__ import annotations

import json
import os
import time


def logged_simulate(text: str, origin: str) -> tuple[str, str]:
    from manetfair.runner import simulate_with_core

    seed = json.loads(text)["seed"]
    log = os.environ["RAY_TEST_LOG"]
    with open(log, "a") as fh:
        fh.write(f"start {seed} {os.getpid()}\n")
    time.sleep(float(os.environ.get("RAY_TEST_DELAY_S", "1.0")))
    result = simulate_with_core(text, origin)
    with open(log, "a") as fh:
        fh.write(f"end {seed} {os.getpid()}\n")
    return result
