"""The two reception models side by side (docs/models.md).

`manetfair reproduce ID --reception sinr` reports its runs as `<id>-sinr.*` beside the
`<id>.*` of the papers' own model (threshold capture). Wherever both are in the report
folder, `reception.md` and `reception.html` put them together claim by claim, and list
first the papers' conclusions that hold under one model and not under the other. Built
from the `<id>.json` sidecars, so it covers every experiment reported in the folder,
whichever run wrote it.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path
from typing import Any

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


def _num(x: Any) -> str:
    if not isinstance(x, (int, float)) or not math.isfinite(x):
        return "n/a"
    return f"{x:.4g}" if abs(x) < 10 else f"{x:.1f}"


def _word(holds: Any) -> str:
    return "holds" if holds else "does not hold"


def _rows(t: dict[str, Any], s: dict[str, Any]) -> list[tuple[str, Any, Any, Any]]:
    """(claim, paper, threshold claim, sinr claim) matched by the claim's text."""
    by_what = {c["what"]: c for c in s["claims"]}
    return [(c["what"], c.get("paper"), c, by_what.get(c["what"])) for c in t["claims"]]


def build(out: Path) -> tuple[str, str] | None:
    found = pairs(out)
    if not found:
        return None
    intro = (
        "Each experiment below was reproduced under both reception models: `threshold` "
        "(threshold capture, as the papers' ns-2 and QualNet) and `sinr` (cumulative "
        "interference with preamble detection and the DSSS/CCK error-rate model, as ns-3 "
        "and OMNeT++); docs/models.md describes both. Everything else about the runs is "
        "the same."
    )
    changed: list[tuple[str, str, Any, Any, Any]] = []
    sections_md, sections_html = [], []
    for t, s in found:
        exp_id = t["id"]
        rows = _rows(t, s)
        runs = (
            f"threshold: {t.get('seeds', '?')} seeds, {t.get('date', '?')}; "
            f"sinr: {s.get('seeds', '?')} seeds, {s.get('date', '?')}"
            + ("; quick mode" if t.get("quick") or s.get("quick") else "")
        )
        md = [
            f"## {t.get('title', exp_id)}\n",
            f"[threshold]({exp_id}.md) · [sinr]({exp_id}{suffix('sinr')}.md) · {runs}\n",
            "| claim | paper | threshold | sinr | changes |",
            "| --- | --- | --- | --- | --- |",
        ]
        hrows = []
        for what, paper, tc, sc in rows:
            if sc is None:
                continue
            differs = bool(tc["holds"]) != bool(sc["holds"])
            if differs:
                changed.append((exp_id, what, paper, tc, sc))
            flag = "**yes**" if differs else ""
            md.append(
                f"| {what} | {_num(paper)} | {_num(tc['measured'])} ({_word(tc['holds'])}) | "
                f"{_num(sc['measured'])} ({_word(sc['holds'])}) | {flag} |"
            )
            hrows.append(
                f"<tr><td>{html.escape(what)}</td><td>{_num(paper)}</td>"
                + "".join(
                    f'<td class="{"holds" if c["holds"] else "fails"}">{_num(c["measured"])} '
                    f"({_word(c['holds'])})</td>"
                    for c in (tc, sc)
                )
                + f"<td>{'yes' if differs else ''}</td></tr>"
            )
        sections_md.append("\n".join(md) + "\n")
        sections_html.append(
            f"<h2>{html.escape(str(t.get('title', exp_id)))}</h2>"
            f'<p><a href="{exp_id}.html">threshold</a> · '
            f'<a href="{exp_id}{suffix("sinr")}.html">sinr</a> · {html.escape(runs)}</p>'
            "<table><tr><th>claim</th><th>paper</th><th>threshold</th><th>sinr</th>"
            "<th>changes</th></tr>" + "".join(hrows) + "</table>"
        )
    head_md = ["# The reception models side by side\n", intro + "\n"]
    head_html = ["<h1>The reception models side by side</h1>", f"<p>{html.escape(intro)}</p>"]
    title = "Conclusions that hold under one model and not under the other"
    if changed:
        head_md += [
            f"## {title}\n",
            "| experiment | claim | paper | holds under |\n| --- | --- | --- | --- |",
        ]
        trs = []
        for exp_id, what, paper, tc, sc in changed:
            under = "threshold only" if tc["holds"] else "sinr only"
            detail = f"{under} (threshold {_num(tc['measured'])}, sinr {_num(sc['measured'])})"
            head_md.append(f"| `{exp_id}` | {what} | {_num(paper)} | {detail} |")
            trs.append(
                f"<tr><td><code>{html.escape(exp_id)}</code></td><td>{html.escape(what)}</td>"
                f"<td>{_num(paper)}</td><td>{html.escape(detail)}</td></tr>"
            )
        head_md.append("")
        head_html.append(
            f"<h2>{title}</h2><table><tr><th>experiment</th><th>claim</th><th>paper</th>"
            "<th>holds under</th></tr>" + "".join(trs) + "</table>"
        )
    else:
        none = "Every claim compared holds, or fails, under both models alike."
        head_md += [f"## {title}\n", none + "\n"]
        head_html.append(f"<h2>{title}</h2><p>{none}</p>")
    md = "\n".join(head_md) + "\n" + "\n".join(sections_md) + "\n[all experiments](index.md)\n"
    body = (
        "".join(head_html)
        + "".join(sections_html)
        + '<p><a href="index.html">all experiments</a></p>'
    )
    return md, body


def write(out: Path) -> list[Path]:
    """Writes reception.md and reception.html when some experiment has both models."""
    from manetfair.report import _html_page

    built = build(out)
    if built is None:
        return []
    md, body = built
    paths = [out / f"{PAGE}.md", out / f"{PAGE}.html"]
    paths[0].write_text(md, encoding="utf-8")
    paths[1].write_text(_html_page("manetfair: reception models side by side", body), "utf-8")
    return paths


def index_link(out: Path) -> tuple[str, str]:
    """The index's pointer to the side-by-side page, when there is one."""
    if not (out / f"{PAGE}.md").is_file():
        return "", ""
    text = "Both reception models side by side, claim by claim:"
    return (
        f"\n{text} [reception models]({PAGE}.md).\n",
        f'<p>{html.escape(text)} <a href="{PAGE}.html">reception models</a>.</p>',
    )
