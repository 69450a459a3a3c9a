"""The report's templates: one context, two pages; the HTML escapes, the Markdown does
not, and a table cell stays one cell."""

from __future__ import annotations

from importlib import resources

from manetfair import pages


def test_templates_ship_inside_the_package():
    folder = resources.files("manetfair") / "templates"
    for name in ("index", "experiment", "side_by_side"):
        assert (folder / f"{name}.md").is_file() and (folder / f"{name}.html").is_file()


def test_html_is_escaped_and_markdown_cells_stay_one_cell():
    row = {
        "id": "x-fig1",
        "title": "<script>alert(1)</script>",
        "description": "a | b\nc",
        "linked": True,
        "status": "1/1 claims hold",
        "run": "quick",
        "cls": "holds",
    }
    md, page = pages.render(
        "index",
        page_title="t & u",
        meta="m",
        total="t",
        interval_note="n",
        rows=[row],
        reception=False,
        platform=False,
    )
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<title>t &amp; u</title>" in page
    assert '<a href="x-fig1.html">' in page
    line = next(x for x in md.splitlines() if "x-fig1" in x)
    assert line.startswith("| [<script>alert(1)</script>](x-fig1.md) | `x-fig1` | a \\| b c |")


def test_numbers_as_the_report_prints_them():
    assert [pages.fmt_number(x) for x in (0.123456, 12.345, None, float("nan"), "x")] == [
        "0.1235",
        "12.3",
        "n/a",
        "n/a",
        "n/a",
    ]
