"""Runs ns-2.35 on a script and reads its trace while it runs (bench/ns2/README.md)."""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

import ns2trace


def wait_usage(proc: subprocess.Popen[Any]) -> tuple[int, float, int]:
    """Waits for ``proc``; returns its exit code, CPU seconds and peak RSS (KiB)."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def run_script(text: str, name: str) -> tuple[ns2trace.TraceStats, float, int]:
    """Runs ns-2.35 on the script ``text``; its trace is parsed while it runs (through a
    named pipe, so nothing large is written). Returns the trace's numbers, CPU seconds
    and peak RSS (KiB)."""
    with tempfile.TemporaryDirectory(prefix="ns2bench-") as tmp:
        script = Path(tmp) / f"{name}.tcl"
        script.write_text(text)
        fifo = Path(tmp) / "trace"
        os.mkfifo(fifo)
        errors = (Path(tmp) / "stderr").open("w+b")
        proc = subprocess.Popen(
            ["ns", str(script), str(fifo)], stdout=subprocess.DEVNULL, stderr=errors
        )
        outcome: list[tuple[int, float, int]] = []

        def reap() -> None:
            outcome.append(wait_usage(proc))
            # If ns died before opening the pipe, the reader still waits for a writer.
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass

        reaper = threading.Thread(target=reap)
        reaper.start()
        with open(fifo) as trace:
            stats = ns2trace.parse(trace)
        reaper.join()
        code, cpu, rss = outcome[0]
        errors.seek(0)
        err = errors.read().decode(errors="replace")
        errors.close()
        if code != 0 or stats.duration_s is None:
            raise RuntimeError(f"ns failed on {name} (exit {code}):\n{err[-2000:]}")
    return stats, cpu, rss
