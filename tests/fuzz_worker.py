"""Runs `manetfair` commands for the hostile-input fuzz test (test_fuzz.py), many in one
process so that each example costs no interpreter start-up.

Reads one JSON request per line on stdin: {"files": {name: text}, "argv": [...]}, and
optionally "special": {name: kind} for files of other kinds (a private "device" node made
with mknod, a "fifo", a "symlink" to a regular file, a "dir"), "sizes": {name: bytes} for
large files of zeros and comments (made sparse), and "mount": a folder name to create;
writes them into a fresh folder, runs `manetfair.cli.main(argv)` there with stdout and
stderr captured, and answers one JSON line on stdout: the exit status, the captured
stderr, the wall time, the process's peak resident memory, the type of any exception
that escaped `main` (there should be none), what every special file was before and
after, and the temporary files (`*.part`) left in the folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import stat
import sys
import tempfile
import time
from pathlib import Path


def make_special(folder: str, name: str, kind: str) -> bool:
    """Creates `name` as a file of `kind` in `folder`; False where this process cannot
    (mknod needs privileges)."""
    path = Path(folder, name)
    if kind == "device":
        try:
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        except OSError:
            return False
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "symlink":
        Path(folder, name + ".target").write_text("keep\n", encoding="utf-8")
        path.symlink_to(Path(folder, name + ".target"))
    elif kind == "dir":
        path.mkdir(exist_ok=True)
    elif kind == "existing":  # a file the request wrote (the scenario): watched only
        return path.exists()
    return True


def fingerprint(path: Path) -> list[object]:
    try:
        st = os.lstat(path)
    except OSError:
        return []
    data = path.read_bytes().hex() if stat.S_ISREG(st.st_mode) else ""
    return [st.st_mode, st.st_ino, st.st_rdev, data]


def main() -> None:
    from manetfair.cli import main as cli_main

    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        with tempfile.TemporaryDirectory() as folder:
            for name, text in request["files"].items():
                Path(folder, name).parent.mkdir(parents=True, exist_ok=True)
                Path(folder, name).write_text(text, encoding="utf-8", errors="surrogatepass")
            for name, size in request.get("sizes", {}).items():
                with open(Path(folder, name), "wb") as fh:
                    fh.write(b"# padding\n")
                    fh.truncate(size)
            special = {
                name: kind
                for name, kind in request.get("special", {}).items()
                if make_special(folder, name, kind)
            }
            before = {name: fingerprint(Path(folder, name)) for name in special}
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
                "special": special,
                "before": before,
                "after": {name: fingerprint(Path(folder, name)) for name in special},
                "parts": [str(p) for p in Path(folder).rglob("*.part")],
            }
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
