"""tools/platform_claims.py: claims holding per paper on each platform."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from conftest import REPO

spec = importlib.util.spec_from_file_location(
    "platform_claims", REPO / "tools" / "platform_claims.py"
)
assert spec is not None and spec.loader is not None
tool = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tool)


def doc(platform: str, holds: list[bool], exp_id: str = "mtcp-fig3") -> dict[str, Any]:
    claims = [{"what": f"c{i}", "holds": h} for i, h in enumerate(holds)]
    exp = {
        "id": exp_id,
        "paper": "002.txt",
        "title": "Yahia and Bíró 2007, M-TCP, Figure 3",
        "platform": platform,
        "paper_platform": "ns2",
        "claims": claims,
    }
    return {"experiments": [exp]}


def test_counts_each_platform_once_and_marks_the_papers(tmp_path: Path) -> None:
    paper = doc("ns2", [True, False, True])
    standard = doc("standard", [True, True, True])
    again = doc("ns2", [False, False, False])  # the same experiment and platform: not counted
    text = tool.table([paper, standard, again])
    assert "| Yahia and Bíró 2007, M-TCP | 3 of 3 | **2 of 3** (its own) |" in text
    target = tmp_path / "doc.md"
    target.write_text(f"before\n{tool.BEGIN}\nold\n{tool.END}\nafter\n", encoding="utf-8")
    files = []
    for i, d in enumerate((paper, standard)):
        files.append(tmp_path / f"{i}.json")
        files[-1].write_text(json.dumps(d), encoding="utf-8")
    assert tool.main([*map(str, files), "--doc", str(target)]) == 0
    written = target.read_text(encoding="utf-8")
    assert "old" not in written and "**2 of 3** (its own)" in written
    assert written.startswith("before\n") and written.endswith(f"{tool.END}\nafter\n")


def test_controls_are_not_counted() -> None:
    d = doc("ns2", [True, False])
    d["experiments"][0]["claims"].append({"what": "control", "holds": True, "kind": "control"})
    assert "**1 of 2** (its own)" in tool.table([d])
