"""The two reception models side by side (docs/models.md).

`manetfair reproduce ID --reception sinr` reports its runs as `<id>-sinr.*` beside the
`<id>.*` of the papers' own model (threshold capture). Wherever both are in the report
folder, `reception.md` and `reception.html` put them together claim by claim, and list
first the papers' conclusions that hold under one model and not under the other
(side_by_side.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from manetfair import side_by_side

PAGE = "reception"
MODELS = ("threshold", "sinr")

PAIRING = side_by_side.Pairing(
    page=PAGE,
    heading="The reception models side by side",
    what="model",
    intro=(
        "Each experiment below was reproduced under both reception models: `threshold` "
        "(threshold capture, as the papers' ns-2 and QualNet) and `sinr` (cumulative "
        "interference with preamble detection and the DSSS/CCK error-rate model, as "
        "ns-3 and OMNeT++); docs/models.md describes both. Everything else about the "
        "runs is the same."
    ),
    suffixes=("-sinr",),
    label=lambda entry: str(entry.get("reception", "threshold")),
)


def suffix(reception: str) -> str:
    """File-name suffix of an experiment's pages under `reception`."""
    return "" if reception == "threshold" else f"-{reception}"


def title_suffix(reception: str) -> str:
    return "" if reception == "threshold" else f" ({reception.upper()} reception)"


def pairs(out: Path) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(threshold entry, sinr entry) of every experiment reported under both."""
    return [(a, b) for a, b, _, _ in side_by_side.pairs(PAIRING, out)]


def build(out: Path) -> tuple[str, str] | None:
    """(Markdown, HTML) of the side-by-side page, or None if no experiment in `out`
    was reported under both models."""
    return side_by_side.build(PAIRING, out)


def write(out: Path) -> list[Path]:
    """Writes reception.md and reception.html when some experiment has both models."""
    return side_by_side.write(PAIRING, out)


def has_page(out: Path) -> bool:
    """Whether `out` has the side-by-side page (the index links to it)."""
    return side_by_side.has_page(PAIRING, out)
