#!/usr/bin/env python3
"""The release build: one wheel for CPython 3.9 and later (abi3) on any x86_64 Linux
with glibc 2.17 or newer (manylinux2014), built without Docker, and checked.

    pip install '.[release]'          # maturin, ziglang (zig as the linker), auditwheel
    python tools/build_wheel.py       # writes dist/manetfair-<version>-cp39-abi3-manylinux2014_x86_64....whl

maturin links with zig against glibc 2.17's symbols (`--zig --compatibility
manylinux2014`) and builds Cargo.toml's `dist` profile (no debug information,
symbols stripped). The wheel is then checked, and the script exits 1 saying which
check failed:

- auditwheel (`auditwheel show`) finds it consistent with manylinux_2_17;
- its tag is abi3 for CPython 3.9 (`cp39-abi3`);
- it is at most 12 MB, and its native module carries no DWARF debug information;
- it holds the experiments, the example scenarios and the licence.

Install it anywhere with `pip install dist/manetfair-*.whl`: no Rust needed.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from elftools.elf.elffile import ELFFile  # pyelftools, which auditwheel brings

REPO = Path(__file__).resolve().parent.parent
MAX_BYTES = 12 * 1024 * 1024
POLICY = "manylinux_2_17_x86_64"


def build(out: Path) -> Path:
    """Builds the wheel into `out` and returns its path."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    try:
        import ziglang  # type: ignore[import-untyped]  # zig, shipped on PyPI

        # maturin looks for `zig` on PATH, else `python -m ziglang` of its own
        # interpreter, which may not be this one.
        env["PATH"] = os.pathsep.join([str(Path(ziglang.__file__).parent), env["PATH"]])
    except ImportError:
        sys.exit("tools/build_wheel.py: needs zig: pip install '.[release]'")
    # maturin's own executable: `python -m maturin` finds it only beside this
    # interpreter's scripts.
    maturin = shutil.which("maturin") or shutil.which(
        "maturin", path=str(Path(sys.executable).parent)
    )
    if maturin is None:
        sys.exit("tools/build_wheel.py: needs maturin: pip install '.[release]'")
    cmd = [
        maturin, "build",
        "--profile", "dist",
        "--zig", "--compatibility", "manylinux2014", "--auditwheel", "check",
        "--out", str(out),
    ]  # fmt: skip
    if subprocess.run(cmd, cwd=REPO, env=env, check=False).returncode != 0:
        sys.exit("tools/build_wheel.py: maturin failed (its messages are above)")
    return max(out.glob("manetfair-*manylinux2014*.whl"), key=lambda p: p.stat().st_mtime)


def problems(wheel: Path, policy: str = POLICY) -> list[str]:
    """What keeps `wheel` from being published as a `policy` wheel (auditwheel's
    name, e.g. manylinux_2_17_x86_64): empty when it passes every check."""
    found: list[str] = []
    if "-cp39-abi3-" not in wheel.name or "manylinux" not in wheel.name:
        found.append(f"{wheel.name}: the tag is not cp39-abi3-manylinux")
    size = wheel.stat().st_size
    if size > MAX_BYTES:
        found.append(f"{wheel.name}: {size / 2**20:.1f} MB, over {MAX_BYTES / 2**20:.0f} MB")
    shown = subprocess.run(
        [sys.executable, "-m", "auditwheel", "show", str(wheel)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    # auditwheel wraps its sentences at varying points: any whitespace between words.
    tag = re.search(
        r'consistent\s+with\s+the\s+following\s+platform\s+tag:\s*"([^"]+)"', shown.stdout
    )
    if shown.returncode != 0 or tag is None or tag[1] != policy:
        got = tag[1] if tag else (shown.stderr.strip() or shown.stdout.strip())
        found.append(f"auditwheel: wanted {policy}, got {got}")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (module,) = [n for n in names if n.startswith("manetfair/_core") and n.endswith(".so")]
        elf = ELFFile(io.BytesIO(z.read(module)))
        if elf.get_section_by_name(".debug_info") or elf.get_section_by_name(".symtab"):
            found.append(f"{module} is not stripped (debug information or a symbol table)")
        for want in (
            "manetfair/experiments/",
            "manetfair/examples/chain.toml",
            ".dist-info/licenses/LICENSE",
        ):
            if not any(want in n for n in names):
                found.append(f"{wheel.name} lacks {want}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "dist", help="default: dist/")
    parser.add_argument("--check", type=Path, metavar="WHEEL", help="only check an existing wheel")
    args = parser.parse_args()
    wheel = args.check or build(args.out)
    found = problems(wheel)
    for p in found:
        print(f"FAILED: {p}", file=sys.stderr)
    if not found:
        print(f"{wheel} ({wheel.stat().st_size / 2**20:.1f} MB): {POLICY}, abi3, stripped")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
