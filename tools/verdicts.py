#!/usr/bin/env python3
"""The quick-versus-full verdict table of docs/experiments.md, from two reproductions.

    manetfair reproduce --quick --json > quick.json
    manetfair reproduce --json > full.json
    python3 tools/verdicts.py quick.json full.json > verdicts.md

Prints the count of claims holding in each mode, then one Markdown row per claim
(experiment, claim, the paper's value, the measured value and verdict in each mode),
then the claims whose verdict differs between the modes. Claims are matched by
experiment and claim text; a claim present in one mode only shows "-" in the other.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Key = tuple[str, str]


def verdicts(doc: Mapping[str, Any]) -> dict[Key, Mapping[str, Any]]:
    """Every evaluated claim of a `reproduce --json` document by (experiment, claim)."""
    out: dict[Key, Mapping[str, Any]] = {}
    for exp in doc["experiments"]:
        for claim in exp["claims"]:
            out[(exp["id"], claim["what"])] = claim
    return out


def cell(claim: Mapping[str, Any] | None) -> str:
    if claim is None:
        return "-"
    measured = claim.get("measured")
    value = "n/a" if measured is None else f"{measured:.3g}"
    return f"{value} {'holds' if claim['holds'] else '**fails**'}"


def table(quick: Mapping[str, Any], full: Mapping[str, Any]) -> str:
    q, f = verdicts(quick), verdicts(full)
    keys = list(q) + [k for k in f if k not in q]
    holding = [sum(1 for c in m.values() if c["holds"]) for m in (q, f)]
    lines = [
        f"**Quick: {holding[0]} of {len(q)} hold; full: {holding[1]} of {len(f)}**",
        "",
        "| experiment | claim | paper | quick | full |",
        "| --- | --- | --- | --- | --- |",
    ]
    for key in keys:
        claim = q.get(key) or f[key]
        paper = claim.get("paper")
        what = key[1].replace("|", "\\|")
        lines.append(
            f"| {key[0]} | {what} | {'n/a' if paper is None else f'{paper:.3g}'} | "
            f"{cell(q.get(key))} | {cell(f.get(key))} |"
        )
    differ = [k for k in keys if k in q and k in f and q[k]["holds"] != f[k]["holds"]]
    lines += ["", f"Verdicts that differ between the modes: {len(differ)}."]
    lines += [f"- {exp}: {what}" for exp, what in differ]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str]) -> int:
    if len(argv) != 2:
        print("usage: verdicts.py QUICK.json FULL.json", file=sys.stderr)
        return 2
    docs = [json.loads(Path(p).read_text(encoding="utf-8")) for p in argv]
    sys.stdout.write(table(docs[0], docs[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
