"""The two reception models side by side (docs/models.md).

`manetfair reproduce ID --reception sinr` reports its runs as `<id>-sinr.*` beside the
`<id>.*` of the papers' own model (threshold capture). Wherever both are in the report
folder, `reception.md` and `reception.html` put them together claim by claim, and list
first the papers' conclusions that hold under one model and not under the other. Built
from the `<id>.json` sidecars, so it covers every experiment reported in the folder,
whichever run wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from manetfair.pages import fmt_number, render

PAGE = "reception"
MODELS = ("threshold", "sinr")


def suffix(reception: str) -> str:
    """File-name suffix of an experiment's pages under `reception`."""
    return "" if reception == "threshold" else f"-{reception}"


def title_suffix(reception: str) -> str:
    return "" if reception == "threshold" else f" ({reception.upper()} reception)"


def _load(path: Path) -> dict[str, Any] | None:
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and isinstance(entry.get("claims"), list) else None


def pairs(out: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(threshold entry, sinr entry) of every experiment reported under both."""
    found = []
    for sinr_path in sorted(out.glob(f"*{suffix('sinr')}.json")):
        base = out / (sinr_path.name[: -len(f"{suffix('sinr')}.json")] + ".json")
        t, s = _load(base), _load(sinr_path)
        if t is not None and s is not None and t.get("id") == s.get("id"):
            found.append((t, s))
    return found


def _rows(t: dict[str, Any], s: dict[str, Any]) -> list[tuple[str, Any, Any, Any]]:
    """(claim, paper, threshold claim, sinr claim) matched by the claim's text."""
    by_what = {c["what"]: c for c in s["claims"]}
    return [(c["what"], c.get("paper"), c, by_what.get(c["what"])) for c in t["claims"]]


def build(out: Path) -> tuple[str, str] | None:
    """(Markdown, HTML) of the side-by-side page, or None if no experiment in `out`
    was reported under both models."""
    found = pairs(out)
    if not found:
        return None
    changed: list[dict[str, Any]] = []
    sections = []
    for t, s in found:
        exp_id = t["id"]
        rows = []
        for what, paper, tc, sc in _rows(t, s):
            if sc is None:
                continue
            differs = bool(tc["holds"]) != bool(sc["holds"])
            rows.append({"what": what, "paper": paper, "models": (tc, sc), "differs": differs})
            if differs:
                under = "threshold only" if tc["holds"] else "sinr only"
                detail = (
                    f"{under} (threshold {fmt_number(tc['measured'])}, "
                    f"sinr {fmt_number(sc['measured'])})"
                )
                changed.append({"id": exp_id, "what": what, "paper": paper, "detail": detail})
        runs = (
            f"threshold: {t.get('seeds', '?')} seeds, {t.get('date', '?')}; "
            f"sinr: {s.get('seeds', '?')} seeds, {s.get('date', '?')}"
            + ("; quick mode" if t.get("quick") or s.get("quick") else "")
        )
        sections.append({"id": exp_id, "title": t.get("title", exp_id), "runs": runs, "rows": rows})
    return render(
        "reception",
        page_title="manetfair: reception models side by side",
        intro=(
            "Each experiment below was reproduced under both reception models: `threshold` "
            "(threshold capture, as the papers' ns-2 and QualNet) and `sinr` (cumulative "
            "interference with preamble detection and the DSSS/CCK error-rate model, as "
            "ns-3 and OMNeT++); docs/models.md describes both. Everything else about the "
            "runs is the same."
        ),
        changed=changed,
        sections=sections,
    )


def write(out: Path) -> list[Path]:
    """Writes reception.md and reception.html when some experiment has both models."""
    built = build(out)
    if built is None:
        return []
    paths = [out / f"{PAGE}.md", out / f"{PAGE}.html"]
    from manetfair.output import write_text

    for path, text in zip(paths, built):
        write_text(path, text)
    return paths


def has_page(out: Path) -> bool:
    """Whether `out` has the side-by-side page (the index links to it)."""
    return (out / f"{PAGE}.md").is_file()
