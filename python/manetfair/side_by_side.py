"""One experiment reported two ways, side by side claim by claim.

`reproduce` reports an experiment's runs as `<id>.*` and, under another reception model
or on the other platform, as `<id>-<suffix>.*` beside them. Wherever both are in a report
folder, a side-by-side page puts them together claim by claim and lists first the papers'
conclusions that hold one way and not the other. Built from the `<id>.json` sidecars, so it
covers every experiment reported in the folder, whichever run wrote it. The two pages are
`reception` (report_reception.py) and `platform` (report_platform.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from manetfair.output import write_text
from manetfair.pages import fmt_number, render


@dataclass(frozen=True)
class Pairing:
    """What a side-by-side page compares."""

    page: str  # file name of the page: <page>.md, <page>.html
    heading: str
    what: str  # the thing that differs, singular: "model", "platform"
    intro: str
    # of the second entry's file stem, which names it: "-sinr"; "-ns2", "-standard"
    suffixes: Sequence[str]
    label: Callable[[dict[str, Any]], str]  # the first entry's label: its model or platform
    skip: Callable[[str], bool] = lambda stem: False  # first entries not to pair


def _load(path: Path) -> dict[str, Any] | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and isinstance(entry.get("claims"), list) else None


def pairs(p: Pairing, out: Path) -> list[tuple[dict[str, Any], dict[str, Any], str, str]]:
    """(first entry, second entry, second stem, second label) of every experiment
    reported both ways."""
    found = []
    for suffix in p.suffixes:
        for other in sorted(out.glob(f"*{suffix}.json")):
            stem = other.name[: -len(".json")]
            base = stem[: -len(suffix)]
            if p.skip(base):
                continue
            a, b = _load(out / f"{base}.json"), _load(other)
            if a is not None and b is not None and a.get("id") == b.get("id"):
                found.append((a, b, stem, suffix.lstrip("-")))
    return found


def build(p: Pairing, out: Path) -> tuple[str, str] | None:
    """(Markdown, HTML) of the side-by-side page, or None if no experiment in `out` was
    reported both ways."""
    found = pairs(p, out)
    if not found:
        return None
    changed: list[dict[str, Any]] = []
    sections = []
    for a, b, other, label in found:
        exp_id = a["id"]
        labels = (p.label(a), label)
        by_what = {c["what"]: c for c in b["claims"]}
        rows = []
        for ca in a["claims"]:
            cb = by_what.get(ca["what"])
            if cb is None:
                continue
            differs = bool(ca["holds"]) != bool(cb["holds"])
            what, paper = ca["what"], ca.get("paper")
            rows.append({"what": what, "paper": paper, "models": (ca, cb), "differs": differs})
            if differs:
                under = labels[0] if ca["holds"] else labels[1]
                detail = (
                    f"{under} only ({labels[0]} {fmt_number(ca['measured'])}, "
                    f"{labels[1]} {fmt_number(cb['measured'])})"
                )
                changed.append({"id": exp_id, "what": what, "paper": paper, "detail": detail})
        runs = (
            f"{labels[0]}: {a.get('seeds', '?')} seeds, {a.get('date', '?')}; "
            f"{labels[1]}: {b.get('seeds', '?')} seeds, {b.get('date', '?')}"
            + ("; quick mode" if a.get("quick") or b.get("quick") else "")
        )
        sections.append(
            {
                "id": exp_id,
                "other": other,
                "labels": labels,
                "title": a.get("title", exp_id),
                "runs": runs,
                "rows": rows,
            }
        )
    return render(
        "side_by_side",
        page_title=f"manetfair: {p.heading[0].lower()}{p.heading[1:]}",
        heading=p.heading,
        what=p.what,
        intro=p.intro,
        changed=changed,
        sections=sections,
    )


def write(p: Pairing, out: Path) -> list[Path]:
    """Writes the page when some experiment was reported both ways."""
    built = build(p, out)
    if built is None:
        return []
    paths = [out / f"{p.page}.md", out / f"{p.page}.html"]
    for path, text in zip(paths, built):
        write_text(path, text)
    return paths


def has_page(p: Pairing, out: Path) -> bool:
    """Whether `out` has the side-by-side page (the index links to it)."""
    return (out / f"{p.page}.md").is_file()
