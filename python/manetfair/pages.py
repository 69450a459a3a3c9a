"""The report's pages rendered from Jinja2 templates shipped in the package
(`manetfair/templates/`): each page is one context rendered twice, as `<name>.md` and
`<name>.html`, so that the Markdown and the HTML say the same. HTML is autoescaped."""

from __future__ import annotations

import math
from typing import Any

import jinja2


def fmt_number(x: Any) -> str:
    """A number as the report prints it: 4 significant digits below 10, one decimal
    above; "n/a" for anything that is not a finite number."""
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
        return "n/a"
    return f"{x:.4g}" if abs(x) < 10 else f"{x:.1f}"


def md_cell(text: Any) -> str:
    """Text that stays in one Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("manetfair", "templates"),
    autoescape=jinja2.select_autoescape(["html"]),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
ENV.filters["num"] = fmt_number
ENV.filters["cell"] = md_cell


def render(name: str, **context: Any) -> tuple[str, str]:
    """(Markdown, HTML) of page template `name` with `context`."""
    md, html = (ENV.get_template(f"{name}.{ext}").render(**context) for ext in ("md", "html"))
    return md, html
