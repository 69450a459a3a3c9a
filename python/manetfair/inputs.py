"""Reading the files a user names (scenarios, experiment files) within a bound
(docs/reliability.md, *Limits*).

Parsing TOML takes about 40 bytes of memory per byte of text (a 75 MB scenario took
2.97 GB, a 93 MB one aborted the process), so a file larger than the memory budget
/ 64 (32 MiB for the default 2 GiB) is refused before it is parsed: its size is
checked before reading when it has one, and the read stops at the limit when it has
none (`/dev/zero`, a pipe). The read goes in chunks, so Ctrl-C stops it at once.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from manetfair.errors import InputError

# Bytes of memory budget per byte of input file (crates/py: BUDGET_BYTES_PER_INPUT_BYTE).
BUDGET_BYTES_PER_INPUT_BYTE = 64
_CHUNK = 1 << 20


def max_input_bytes(max_memory: int | None = None) -> int:
    """The largest input file a memory budget allows: the budget / 64."""
    from manetfair import _core

    return int(_core.max_input_bytes(max_memory))


def too_large(what: str, size: int | None, limit: int) -> InputError:
    """The refusal of an input file of `size` bytes (None: a stream read past the limit)."""
    how = f"is {size} bytes" if size is not None else f"gives more than {limit} bytes"
    return InputError(
        f"{what}: {how}, above the limit of {limit} bytes for an input file (the memory "
        f"budget / {BUDGET_BYTES_PER_INPUT_BYTE}; --max-memory raises it)"
    )


def read_text(path: Path, what: str, limit: int) -> str:
    """The UTF-8 text of `path`, at most `limit` bytes; InputError naming `path` and
    `what` ("scenario file", "experiment file") otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        raise InputError(f"{path}: no such {what}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a {what}") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{path}: is a directory, not a {what}")
        if stat.S_ISREG(st.st_mode) and st.st_size > limit:
            raise too_large(str(path), st.st_size, limit)
        chunks: list[bytes] = []
        got = 0
        while True:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            if got > limit:
                raise too_large(str(path), None, limit)
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    try:
        return b"".join(chunks).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a TOML {what} (not UTF-8 text: {exc})") from None
