"""Every file a command writes goes through here (docs/reliability.md, *Outputs*).

Two rules make an output safe whatever path the user gives:

- A target is either a new name or an existing regular file. A device node, a FIFO,
  a socket, a directory or a symbolic link is refused as bad input (exit 2) before
  anything runs: renaming a finished file over it would replace it (a capture renamed
  over `/dev/full` replaced the device), and writing into it in place would lose what
  it stands for. A target that is one of the command's inputs (the scenario, its
  movement file, the results store) or another output of the same command is refused
  the same way.
- A file is written under a temporary name in its own folder, synced to disk, and
  renamed into place only when it is whole; on any error or interruption the
  temporary file is removed. A full disk therefore leaves either the complete new file
  or the earlier one, never a cut one under the final name.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from manetfair.errors import InputError


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_target(path: str | os.PathLike[str], what: str = "output") -> Path:
    """`path` as a Path if it may be written: a new name, or an existing regular file
    (not a symbolic link). Otherwise InputError naming the path and what it is."""
    p = as_path(path, what)
    try:
        st = os.lstat(p)
    except FileNotFoundError:
        return p
    except OSError as exc:
        raise InputError(f"{what} {p}: cannot be written ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise InputError(
            f"{what} {p}: is {_kind(st.st_mode)}; an output must be a new file or a "
            "regular file to replace"
        )
    return p


def as_path(value: object, what: str) -> Path:
    """A str or os.PathLike as a Path; anything else is InputError naming `what`."""
    if isinstance(value, (str, os.PathLike)):
        text = os.fspath(value)
        if isinstance(text, str) and text and "\0" not in text:
            return Path(text)
    raise InputError(f"{what}: expected a path (str or os.PathLike), not {value!r:.80}")


def _identity(p: Path) -> tuple[str, tuple[int, int] | None]:
    """The resolved name of `p` and, when it exists, its (device, inode)."""
    try:
        st = os.stat(p)
        ino: tuple[int, int] | None = (st.st_dev, st.st_ino)
    except OSError:
        ino = None
    return os.path.realpath(p), ino


class Outputs:
    """The files one command will read and write, checked together before it runs:
    each output must be writable (`check_target`), and no output may be an input or
    another output of the same command."""

    def __init__(self, inputs: Iterable[tuple[str, str | os.PathLike[str] | None]] = ()) -> None:
        self._seen: list[tuple[str, str, tuple[int, int] | None]] = []
        for what, path in inputs:
            if path is not None:
                name, ino = _identity(Path(path))
                self._seen.append((f"the {what} {path}", name, ino))

    def add(self, path: str | os.PathLike[str], what: str) -> Path:
        """Claims `path` as an output described as `what` (an option such as `--pcap`)."""
        p = check_target(path, what)
        name, ino = _identity(p)
        for other, other_name, other_ino in self._seen:
            if name == other_name or (ino is not None and ino == other_ino):
                raise InputError(
                    f"{what} {p}: is also {other}; give each output a file of its own, "
                    "apart from the command's inputs"
                )
        self._seen.append((f"{what} {p}", name, ino))
        return p

    def add_dir(self, path: str | os.PathLike[str], what: str, names: Iterable[str]) -> Path:
        """Claims the folder `path` (a directory or a new name) and the files `names`
        that will be written into it."""
        p = as_path(path, what)
        try:
            st = os.stat(p)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise InputError(f"{what} {p}: cannot be used ({exc.strerror or exc})") from None
        else:
            if not stat.S_ISDIR(st.st_mode):
                raise InputError(f"{what} {p}: is not a directory")
        for name in names:
            self.add(p / name, what)
        return p


def write_file(path: str | os.PathLike[str], write: Callable[[Path], object]) -> Path:
    """Calls `write(tmp)` for a new temporary file beside `path`, syncs it, and renames
    it to `path`. The target is checked first (`check_target`) and again just before
    the rename. On any failure the temporary file is removed; an OSError names `path`
    and the cause."""
    target = check_target(path)
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tmp = _new_temporary(folder, target.name)
    except OSError as exc:
        raise OSError(f"cannot write {target}: {exc.strerror or exc}") from None
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        check_target(target)
        os.replace(tmp, target)
    except OSError as exc:
        _remove(tmp)
        raise OSError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise
    _sync_folder(folder)
    return target


def _new_temporary(folder: Path, name: str) -> Path:
    """A new empty file `.NAME.RANDOM.part` in `folder`, created exclusively (never
    through a link placed there) with the permissions the umask gives a new file."""
    for _ in range(100):
        tmp = folder / f".{name}.{secrets.token_hex(4)}.part"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        except FileExistsError:
            continue
        os.close(fd)
        return tmp
    raise FileExistsError(f"no free temporary name beside {folder / name}")


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """`write_file` for UTF-8 text."""
    return write_file(path, lambda tmp: tmp.write_text(text, encoding="utf-8"))


def _sync_folder(folder: Path) -> None:
    """Makes the rename durable; a folder that cannot be opened (some file systems)
    is left as it is: the file itself is already on disk."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
