"""The two platforms side by side (docs/models.md, "The ns-2 platform").

Each experiment runs on its paper's platform (`ns2` for the papers that ran ns-2,
`standard` otherwise); `manetfair reproduce --platform X` reports runs on the other one as
`<id>-ns2.*` or `<id>-standard.*`. Wherever both are in the report folder, `platform.md`
and `platform.html` put them together claim by claim, and list first the papers'
conclusions that hold on one platform and not on the other (side_by_side.py).
"""

from __future__ import annotations

from pathlib import Path

from manetfair import side_by_side

PAIRING = side_by_side.Pairing(
    page="platform",
    heading="The two platforms side by side",
    what="platform",
    intro=(
        "Each experiment below was reproduced on its paper's platform (the first column) "
        "and on the other one: `standard` (IEEE 802.11 and the RFCs) and `ns2` (ns-2.35's "
        "defaults and its departures from 802.11, which four of the five papers ran); "
        "docs/models.md lists each rule. Everything else about the runs is the same."
    ),
    suffixes=("-ns2", "-standard"),
    label=lambda entry: str(entry.get("platform", "standard")),
    # Runs under the other reception model have their own page.
    skip=lambda stem: stem.endswith("-sinr"),
)


def write(out: Path) -> list[Path]:
    """Writes platform.md and platform.html when some experiment has both platforms."""
    return side_by_side.write(PAIRING, out)


def has_page(out: Path) -> bool:
    """Whether `out` has the side-by-side page (the index links to it)."""
    return side_by_side.has_page(PAIRING, out)
