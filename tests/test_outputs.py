"""Outputs that never destroy anything (docs/reliability.md, *Outputs*).

Reproducers C1, C2 and D1 of the 2026-11-29 hostile campaign: an output path that is
a device node, a FIFO, a symbolic link, a directory, the scenario itself or another
output of the same command is refused with exit 2 and left untouched; a write that
fails leaves neither a temporary file nor a cut file under the final name, and an
earlier complete file survives. Device nodes are private ones made with mknod in the
test's own folder, never the system's.
"""

from __future__ import annotations

import os
import resource
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import manetfair
import pytest
from conftest import UDP_CHAIN, no_traceback, run_cli
from manetfair.errors import InputError
from manetfair.output import Outputs, check_target, write_file, write_text

CHAIN = UDP_CHAIN


def scenario(tmp_path: Path, name: str = "c.toml") -> Path:
    path = tmp_path / name
    path.write_text(CHAIN, encoding="utf-8")
    return path


def private_device(tmp_path: Path) -> Path:
    """A character device of our own (a copy of /dev/full's numbers), or skip."""
    path = tmp_path / "mydev"
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    return path


def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def symlink(tmp_path: Path) -> Path:
    target = tmp_path / "kept.txt"
    target.write_text("keep me\n", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(target)
    return link


def fingerprint(path: Path) -> tuple[int, int, int, bytes]:
    """What must not change: the node's type and identity, and a regular file's bytes."""
    st = os.lstat(path)
    data = path.read_bytes() if stat.S_ISREG(st.st_mode) else b""
    return st.st_mode, st.st_ino, st.st_rdev, data


def refused(proc: subprocess.CompletedProcess[str], *words: str) -> None:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert no_traceback(proc), proc.stderr
    for w in words:
        assert w in proc.stderr, (w, proc.stderr)


def no_leftovers(folder: Path) -> None:
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".part")]


MAKERS: dict[str, Callable[[Path], Path]] = {
    "device": private_device,
    "fifo": fifo,
    "symlink": symlink,
}


@pytest.mark.core
@pytest.mark.parametrize("kind", sorted(MAKERS))
@pytest.mark.parametrize("option", ["--pcap", "--trace", "--trace-parquet", "--view", "--out"])
def test_special_files_as_outputs_are_refused_and_untouched(
    tmp_path: Path, kind: str, option: str
) -> None:
    sc = scenario(tmp_path)
    target = MAKERS[kind](tmp_path)
    if option == "--out":
        folder = tmp_path / "out"
        folder.mkdir()
        (folder / "summary.json").symlink_to(target) if kind == "symlink" else os.rename(
            target, folder / "summary.json"
        )
        target = folder / "summary.json"
        args = ["run", str(sc), "--quiet", "--out", str(folder)]
    elif option == "--trace-parquet":
        renamed = target.with_name("t.parquet")
        os.rename(target, renamed)
        target = renamed
        args = ["run", str(sc), "--quiet", "--trace", str(target)]
    else:
        args = ["run", str(sc), "--quiet", option, str(target)]
    before = fingerprint(target)
    proc = run_cli(args, fake=False, cwd=tmp_path, timeout=60)
    refused(proc, str(target))
    assert fingerprint(target) == before
    no_leftovers(target.parent)


@pytest.mark.core
@pytest.mark.parametrize("option", ["--pcap", "--trace", "--view"])
def test_the_scenario_itself_as_output_is_refused(tmp_path: Path, option: str) -> None:
    sc = scenario(tmp_path, "victim.toml")
    proc = run_cli(["run", str(sc), "--quiet", option, str(sc)], fake=False, cwd=tmp_path)
    refused(proc, "victim.toml", "scenario file")
    assert sc.read_text(encoding="utf-8") == CHAIN


@pytest.mark.core
def test_the_scenario_named_another_way_is_refused(tmp_path: Path) -> None:
    sc = scenario(tmp_path, "victim.toml")
    (tmp_path / "sub").mkdir()
    other = tmp_path / "sub" / ".." / "victim.toml"
    hard = tmp_path / "hard.toml"
    os.link(sc, hard)
    for target in (other, hard):
        proc = run_cli(["run", str(sc), "--quiet", "--pcap", str(target)], fake=False, cwd=tmp_path)
        refused(proc, "scenario file")
    assert sc.read_text(encoding="utf-8") == CHAIN


@pytest.mark.core
def test_the_movement_file_as_output_is_refused(tmp_path: Path) -> None:
    moves = tmp_path / "moves.ns2"
    text = "$node_(0) set X_ 0.0\n$node_(0) set Y_ 0.0\n"
    moves.write_text(text, encoding="utf-8")
    sc = tmp_path / "m.toml"
    sc.write_text(CHAIN + '[mobility]\nns2_file = "moves.ns2"\n', encoding="utf-8")
    proc = run_cli(["run", str(sc), "--quiet", "--pcap", str(moves)], fake=False, cwd=tmp_path)
    refused(proc, "moves.ns2")
    assert moves.read_text(encoding="utf-8") == text


@pytest.mark.core
def test_two_outputs_of_one_command_on_one_file_are_refused(tmp_path: Path) -> None:
    sc = scenario(tmp_path)
    x = tmp_path / "x"
    proc = run_cli(
        ["run", str(sc), "--quiet", "--pcap", str(x), "--view", str(x)], fake=False, cwd=tmp_path
    )
    refused(proc, "--view", "--pcap")
    assert not x.exists()
    out = tmp_path / "o"
    proc = run_cli(
        ["run", str(sc), "--quiet", "--out", str(out), "--pcap", str(out / "summary.json")],
        fake=False,
        cwd=tmp_path,
    )
    refused(proc, "summary.json")


@pytest.mark.core
@pytest.mark.parametrize("option", ["--pcap", "--trace"])
def test_a_directory_as_output_is_refused_and_leaves_no_temporary_file(
    tmp_path: Path, option: str
) -> None:
    """C2: `--pcap DIR` used to exit 1 and leave the whole capture as a .part file."""
    sc = scenario(tmp_path)
    sub = tmp_path / "sub"
    sub.mkdir()
    proc = run_cli(["run", str(sc), "--quiet", option, "sub"], fake=False, cwd=tmp_path)
    refused(proc, "sub", "directory")
    no_leftovers(tmp_path)
    assert list(sub.iterdir()) == []


@pytest.mark.core
def test_the_python_api_refuses_a_device_as_pcap(tmp_path: Path) -> None:
    """C1 from Python: `manetfair.run(..., pcap=DEVICE)` replaced the device."""
    dev = private_device(tmp_path)
    before = fingerprint(dev)
    with pytest.raises(InputError, match="character device"):
        manetfair.run(CHAIN, pcap=dev)
    assert fingerprint(dev) == before
    sc = scenario(tmp_path)
    with pytest.raises(InputError, match="scenario file"):
        manetfair.run(sc, pcap=str(sc))
    assert sc.read_text(encoding="utf-8") == CHAIN


@pytest.mark.core
def test_the_core_itself_refuses_special_targets(tmp_path: Path) -> None:
    """The native writer checks the target too, for callers of the core directly."""
    from manetfair import _core

    for target in (fifo(tmp_path), symlink(tmp_path), tmp_path):
        before = fingerprint(target)
        with pytest.raises(OSError, match="refusing to write"):
            _core.run_scenario(CHAIN, pcap_path=str(target))
        assert fingerprint(target) == before
    no_leftovers(tmp_path)


def test_write_file_replaces_only_when_whole(tmp_path: Path) -> None:
    """D1: a write that fails leaves the earlier complete file, and no temporary."""
    page = tmp_path / "v.html"
    write_text(page, "complete\n")

    def cut(tmp: Path) -> None:
        tmp.write_text("cut", encoding="utf-8")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match=r"cannot write .*v.html: No space left on device"):
        write_file(page, cut)
    assert page.read_text(encoding="utf-8") == "complete\n"
    no_leftovers(tmp_path)

    with pytest.raises(KeyboardInterrupt):
        write_file(page, lambda tmp: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert page.read_text(encoding="utf-8") == "complete\n"
    no_leftovers(tmp_path)


def test_check_target_names_what_the_target_is(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is a FIFO"):
        check_target(fifo(tmp_path), "--pcap")
    with pytest.raises(InputError, match="is a symbolic link"):
        check_target(symlink(tmp_path), "--pcap")
    with pytest.raises(InputError, match="is a directory"):
        check_target(tmp_path, "--pcap")
    assert check_target(tmp_path / "new.pcap") == tmp_path / "new.pcap"
    outputs = Outputs([("scenario file", tmp_path / "kept.txt")])
    with pytest.raises(InputError, match="scenario file"):
        outputs.add(tmp_path / "kept.txt", "--out")


def _limited(limit: int) -> Callable[[], None]:
    """preexec_fn: a file-size limit standing in for a full disk."""

    def apply() -> None:
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


@pytest.fixture
def full_tmpfs(tmp_path: Path) -> Iterator[Callable[[int], Path]]:
    """A 1 MiB tmpfs mounted in the test's folder, and a function that fills it to
    leave N bytes; skipped where the test cannot mount one (not root, no tmpfs)."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    proc = subprocess.run(  # noqa: PLW1510 - the return code is looked at
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()}")

    def fill(leave: int) -> Path:
        free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
        with open(mnt / "filler", "wb") as fh:
            fh.write(b"\0" * max(0, free - leave))
        return mnt

    try:
        yield fill
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True, check=False)


@pytest.mark.core
@pytest.mark.parametrize("how", ["view", "run --view", "run --pcap", "run --out"])
def test_a_full_disk_keeps_the_earlier_complete_output(
    tmp_path: Path, full_tmpfs: Callable[[int], Path], how: str
) -> None:
    """D1: `view` and `run --view` on a full disk left a cut page under the final name,
    over a whole one. Now the earlier file survives and no temporary file is left."""
    sc = scenario(tmp_path)
    mnt = full_tmpfs(1 << 20)
    name = {"run --pcap": "f.pcap", "run --out": "out"}.get(how, "v.html")
    target = mnt / name
    args = {
        "view": ["view", str(sc), "--out", str(target)],
        "run --view": ["run", str(sc), "--view", str(target)],
        "run --pcap": ["run", str(sc), "--pcap", str(target)],
        "run --out": ["run", str(sc), "--out", str(target)],
    }[how]
    earlier = target / "series.parquet" if how == "run --out" else target
    earlier.parent.mkdir(exist_ok=True)
    earlier.write_text("earlier, complete\n", encoding="utf-8")
    full_tmpfs(4096)
    proc = run_cli([*args, "--quiet"], fake=False, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert name in proc.stderr and "No space left on device" in proc.stderr, proc.stderr
    assert no_traceback(proc)
    assert earlier.read_text(encoding="utf-8") == "earlier, complete\n"
    no_leftovers(earlier.parent)


@pytest.mark.core
def test_a_full_disk_under_export_leaves_no_cut_table(tmp_path: Path) -> None:
    """D1: `export` left an unreadable series.parquet under its final name."""
    sc = scenario(tmp_path)
    store = tmp_path / "s.duckdb"
    proc = run_cli(
        ["sweep", str(sc), "--seeds", "2", "--store", str(store), "--jobs", "1", "--quiet"],
        fake=False,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "ex"
    env = dict(os.environ)
    env.pop("MANETFAIR_STORE", None)
    proc = subprocess.run(  # noqa: PLW1510 - the return code is looked at
        [sys.executable, "-m", "manetfair.cli", "export", "--store", str(store), "--out", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        preexec_fn=_limited(3_000),
    )
    assert proc.returncode == 1, proc.stderr
    import pyarrow.parquet as pq

    for table in out.glob("*.parquet"):
        pq.read_table(table)  # whatever is there is whole
    no_leftovers(out)


def test_examples_force_does_not_replace_a_special_file(tmp_path: Path) -> None:
    """`examples --force` wrote in place: a FIFO or a link among the targets."""
    from manetfair.cli import main

    folder = tmp_path / "ex"
    folder.mkdir()
    assert main(["examples", str(folder)]) == 0
    name = min(p.name for p in folder.iterdir())
    (folder / name).unlink()
    (folder / name).symlink_to(tmp_path / "elsewhere.toml")
    before = fingerprint(folder / name)
    assert main(["examples", str(folder), "--force"]) == 2
    assert fingerprint(folder / name) == before
    assert not (tmp_path / "elsewhere.toml").exists()
