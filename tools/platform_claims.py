#!/usr/bin/env python3
"""How many claims hold per paper on each platform, from `reproduce --json` documents.

    manetfair reproduce --quick --json > paper.json                       # each on its paper's
    manetfair reproduce --quick --platform standard --json > standard.json
    manetfair reproduce --quick --platform ns2 --json > ns2.json
    python3 tools/platform_claims.py paper.json standard.json ns2.json --doc docs/experiments.md

Counts, per paper and platform, the claims holding out of those evaluated (controls left
out, as everywhere claims are counted); the paper's own
platform is marked. Every document contributes the experiments it ran, each under the
platform it reports; an (experiment, platform) pair found twice counts once. With --doc
the table replaces the text between `<!-- platform-claims:start -->` and
`<!-- platform-claims:end -->` in that file; without, it is printed.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- platform-claims:start -->", "<!-- platform-claims:end -->"
PLATFORMS = ("standard", "ns2")


def counts(docs: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per paper: its title, its own platform, and (held, total) per platform."""
    seen: set[tuple[str, str]] = set()
    papers: dict[str, dict[str, Any]] = {}
    for doc in docs:
        for exp in doc["experiments"]:
            if not exp.get("available", True):
                continue
            platform = exp.get("platform", "standard")
            if (exp["id"], platform) in seen:
                continue
            seen.add((exp["id"], platform))
            title = (
                "Validations" if exp["paper"] == "validation" else exp["title"].rsplit(",", 1)[0]
            )
            paper = papers.setdefault(
                exp["paper"],
                {"title": title, "own": exp.get("paper_platform", "standard"), "held": {}},
            )
            held, total = paper["held"].get(platform, (0, 0))
            # Controls cannot fail by construction: shown in the report, never counted.
            claims = [c for c in exp.get("claims", []) if c.get("kind", "claim") != "control"]
            paper["held"][platform] = (
                held + sum(1 for c in claims if c["holds"]),
                total + len(claims),
            )
    return papers


def table(docs: Sequence[Mapping[str, Any]]) -> str:
    papers = counts(docs)
    lines = [
        "| paper | " + " | ".join(f"`{p}`" for p in PLATFORMS) + " |",
        "| --- | " + " | ".join("---" for _ in PLATFORMS) + " |",
    ]
    for key in sorted(papers, key=str):
        paper = papers[key]
        cells = []
        for p in PLATFORMS:
            held = paper["held"].get(p)
            text = "not run" if held is None else f"{held[0]} of {held[1]}"
            cells.append(f"**{text}** (its own)" if p == paper["own"] else text)
        lines.append(f"| {paper['title']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+", type=Path, help="reproduce --json documents")
    ap.add_argument("--doc", type=Path, help="write the table between the markers here")
    args = ap.parse_args(argv)
    docs = [json.loads(p.read_text(encoding="utf-8")) for p in args.json]
    text = table(docs)
    if args.doc is None:
        print(text, end="")
        return 0
    doc = args.doc.read_text(encoding="utf-8")
    start, end = doc.index(BEGIN) + len(BEGIN), doc.index(END)
    args.doc.write_text(doc[:start] + "\n" + text + doc[end:], encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
