"""Runs `manetfair` commands for the hostile-input fuzz test (test_fuzz.py), many in one
process so that each example costs no interpreter start-up.

Reads one JSON request per line on stdin: {"files": {name: text}, "argv": [...]}; writes
the files into a fresh folder, runs `manetfair.cli.main(argv)` there with stdout and
stderr captured, and answers one JSON line on stdout: the exit status, the captured
stderr, the wall time, the process's peak resident memory, and the type of any exception
that escaped `main` (there should be none).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    from manetfair.cli import main as cli_main

    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        with tempfile.TemporaryDirectory() as folder:
            for name, text in request["files"].items():
                Path(folder, name).write_text(text, encoding="utf-8", errors="surrogatepass")
            stdout, stderr = io.StringIO(), io.StringIO()
            escaped = None
            started = time.monotonic()
            cwd = os.getcwd()
            os.chdir(folder)
            try:
                with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
                    code = cli_main(request["argv"])
            except SystemExit as exc:  # argparse
                code = exc.code if isinstance(exc.code, int) else 2
            except BaseException as exc:  # noqa: BLE001 - reported to the test as a failure
                code = -1
                escaped = f"{type(exc).__name__}: {exc}"
            finally:
                os.chdir(cwd)
            answer = {
                "code": code,
                "stderr": stderr.getvalue()[-2000:],
                "wall_s": time.monotonic() - started,
                "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "escaped": escaped,
            }
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
