"""No file of the repository keeps a merge's conflict markers (a `.ci/run` once did)."""

from __future__ import annotations

import re

from conftest import REPO

MARKER = re.compile(r"^(<{7} |>{7} |={7}$)", re.MULTILINE)
SKIP = {".git", "target", ".venv", "node_modules", "__pycache__", ".hypothesis", ".pytest_cache"}


def test_no_file_keeps_conflict_markers():
    found = []
    for path in REPO.rglob("*"):
        if set(path.relative_to(REPO).parts) & SKIP or not path.is_file():
            continue
        if path.stat().st_size > 2_000_000:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if MARKER.search(text) and "<" * 7 + " " in text:
            found.append(str(path.relative_to(REPO)))
    assert not found, f"conflict markers left in: {found}"
