"""`manetfair compare A B`: two runs side by side, or two reproductions' claims.

A and B are each one of:

- a run: a folder `run --out` wrote (its `summary.json`), or a run id of `--store`;
- a reproduction: a folder `reproduce --out` wrote (the `<id>.json` beside each
  experiment page), a `reproduce --json` document, or a results store
  (`PATH.duckdb`, or `PATH.duckdb@VERSION` for the runs of one code version, a unique
  prefix of it; without one, the newest version in the store), whose experiments'
  claims are evaluated afresh from the stored runs.

Two runs give their summaries' scalar fields and their flows' statistics side by
side; two reproductions give every claim's measured value and verdict side by side
and list those whose verdict changed. Differences beyond the relative tolerance
(`--rel-tol`, default 1 %) are marked.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from manetfair.errors import InputError
from manetfair.export import flatten_counters

FLOW_FIELDS = (
    "throughput_kbps",
    "packets_sent",
    "packets_delivered",
    "mean_delay_s",
    "p95_delay_s",
    "p99_delay_s",
    "jitter_s",
    "times_forwarded",
)


class Side:
    """One side of a comparison: a run's summary, or claims by experiment id."""

    __slots__ = ("claims", "label", "summary", "version")

    def __init__(
        self,
        label: str,
        summary: Mapping[str, Any] | None = None,
        claims: Mapping[str, list[dict[str, Any]]] | None = None,
        version: str = "",
    ) -> None:
        self.label = label
        self.summary = summary
        self.claims = claims
        self.version = version


def load(spec: str, store: Path | None = None) -> Side:
    """The side `spec` names (see the module's description)."""
    path = Path(spec)
    base, _, version = spec.partition("@")
    if base.endswith(".duckdb"):
        return _store_side(Path(base), version or None, spec)
    if path.is_dir():
        if (path / "summary.json").is_file():
            return Side(spec, summary=_read_json(path / "summary.json"))
        claims, version = _report_claims(path)
        if claims:
            return Side(spec, claims=claims, version=version)
        raise InputError(
            f"{spec}: neither a run folder (summary.json) nor a report folder (<id>.json)"
        )
    if path.is_file():
        doc = _read_json(path)
        if isinstance(doc, dict) and "flows" in doc:
            return Side(spec, summary=doc)
        if isinstance(doc, dict) and isinstance(doc.get("experiments"), list):
            return Side(
                spec,
                claims={
                    str(e.get("id")): [dict(c) for c in e.get("claims", [])]
                    for e in doc["experiments"]
                },
            )
        raise InputError(f"{spec}: neither a run summary nor a `reproduce --json` document")
    if store is not None:
        from manetfair.runplots import RunData
        from manetfair.store import open_existing

        with open_existing(store) as st:
            return Side(spec, summary=RunData.of_stored(st, spec).summary)
    raise InputError(
        f"{spec}: no such file or folder; a run id needs --store (docs/figures.md, compare)"
    )


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read it as JSON ({exc})") from None


def _report_claims(folder: Path) -> tuple[dict[str, list[dict[str, Any]]], str]:
    claims: dict[str, list[dict[str, Any]]] = {}
    version = ""
    for sidecar in sorted(folder.glob("*.json")):
        try:
            entry = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict) and isinstance(entry.get("claims"), list) and "id" in entry:
            claims[sidecar.stem] = [dict(c) for c in entry["claims"]]
            version = version or str(entry.get("version", ""))
    return claims, version


def _store_side(path: Path, version: str | None, label: str) -> Side:
    """Every experiment of the store at one code version, its claims evaluated from
    the stored runs as `reproduce` evaluates them (full runs where an experiment has
    both full and quick ones)."""
    from manetfair import claims as claims_mod
    from manetfair import experiments as experiments_mod
    from manetfair.reproduce import model_evaluator, trace_roots
    from manetfair.store import open_existing, rows_as_dicts

    with open_existing(path) as st:
        with st.session() as con:
            versions = [
                r["code_version"]
                for r in rows_as_dicts(
                    con,
                    "SELECT code_version, max(created_at) AS last FROM runs "
                    "GROUP BY code_version ORDER BY last DESC",
                )
            ]
            chosen = [v for v in versions if version is None or v.startswith(version)]
            if not chosen or (version is not None and len(chosen) > 1):
                raise InputError(
                    f"{label}: {'no' if not chosen else 'more than one'} code version "
                    f"{version!r} in {path}; it holds: {', '.join(versions) or 'no runs'}"
                )
            code = chosen[0]
            links = rows_as_dicts(
                con,
                "SELECT e.experiment_id, CAST(e.variant AS VARCHAR) AS variant, e.seed, "
                "e.run_id, e.quick, CAST(r.summary AS VARCHAR) AS summary FROM experiment_runs e "
                "JOIN runs r ON r.run_id = e.run_id WHERE r.code_version = ? "
                "ORDER BY e.experiment_id, e.run_id",
                [code],
            )
        by_exp: dict[str, list[dict[str, Any]]] = {}
        for link in links:
            by_exp.setdefault(link["experiment_id"], []).append(link)
        claims: dict[str, list[dict[str, Any]]] = {}
        # Experiments this version of the package does not know are left out.
        known = {e.id: e for e in experiments_mod.load_all()}
        for exp_id, rows in by_exp.items():
            if exp_id not in known:
                continue
            exp = known[exp_id]
            quick = all(r["quick"] for r in rows)
            rows = [r for r in rows if bool(r["quick"]) == quick]
            traces: dict[str, Any] = {}
            if claims_mod.uses_traces(exp.claims):
                keep = trace_roots(exp)
                traces = {r["run_id"]: st.traces(r["run_id"], keep) for r in rows}
            runs = [
                claims_mod.Run(
                    json.loads(r["variant"]),
                    r["seed"],
                    json.loads(r["summary"]),
                    traces.get(r["run_id"]),
                )
                for r in rows
            ]
            verdicts = claims_mod.evaluate(
                exp.runnable_claims(), runs, exp.variants(quick), model_evaluator(exp, quick)
            )
            claims[exp_id] = [v.as_json() for v in verdicts]
    return Side(label, claims=claims, version=code)


def _differs(a: Any, b: Any, rel_tol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not (_num(a) and _num(b)):
        return bool(a != b)
    if math.isnan(a) and math.isnan(b):
        return False
    scale = max(abs(a), abs(b))
    return bool(abs(a - b) > rel_tol * scale)


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _rel(a: Any, b: Any) -> float | None:
    if not (_num(a) and _num(b)) or isinstance(a, bool) or a == 0:
        return None
    value = (b - a) / abs(a)
    return value if math.isfinite(value) else None


def compare(a: Side, b: Side, rel_tol: float = 0.01) -> dict[str, Any]:
    """The comparison as a JSON-able document: `runs` (two summaries) or `claims`."""
    if (a.summary is None) != (b.summary is None):
        raise InputError(
            f"compare: {a.label} is {'a run' if a.summary is not None else 'a reproduction'} "
            f"and {b.label} is {'a run' if b.summary is not None else 'a reproduction'}; "
            "compare two runs, or two reproductions"
        )
    doc: dict[str, Any] = {"a": a.label, "b": b.label, "rel_tol": rel_tol}
    if a.summary is not None and b.summary is not None:
        doc["summary"] = _rows(_scalars(a.summary), _scalars(b.summary), rel_tol)
        flows_a = {f["id"]: f for f in a.summary.get("flows", [])}
        flows_b = {f["id"]: f for f in b.summary.get("flows", [])}
        doc["flows"] = [
            {
                "flow": i,
                "fields": _rows(
                    _flow_fields(flows_a.get(i, {})), _flow_fields(flows_b.get(i, {})), rel_tol
                ),
            }
            for i in sorted(set(flows_a) | set(flows_b))
        ]
        return doc
    claims_a, claims_b = a.claims or {}, b.claims or {}
    doc["versions"] = {"a": a.version, "b": b.version}
    experiments = []
    changed = []
    for exp_id in sorted(set(claims_a) | set(claims_b)):
        by_what_a = {c.get("what"): c for c in claims_a.get(exp_id, [])}
        by_what_b = {c.get("what"): c for c in claims_b.get(exp_id, [])}
        rows = []
        for what in list(dict.fromkeys([*by_what_a, *by_what_b])):
            ca, cb = by_what_a.get(what), by_what_b.get(what)
            row = {
                "what": what,
                "paper": (ca or cb or {}).get("paper"),
                "a": _claim(ca),
                "b": _claim(cb),
                "verdict_changed": bool(ca and cb and ca.get("holds") != cb.get("holds")),
                "measured_differs": bool(
                    ca and cb and _differs(ca.get("measured"), cb.get("measured"), rel_tol)
                ),
            }
            rows.append(row)
            if row["verdict_changed"]:
                changed.append({"experiment": exp_id, **row})
        experiments.append({"id": exp_id, "claims": rows})
    doc["experiments"] = experiments
    doc["verdict_changed"] = changed
    return doc


def _scalars(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The name, seed and every scalar field of a summary (nested ones joined by `_`)."""
    return {"name": summary.get("name"), "seed": summary.get("seed"), **flatten_counters(summary)}


def _claim(c: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return None if c is None else {"measured": c.get("measured"), "holds": c.get("holds")}


def _flow_fields(f: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: f.get(k) for k in FLOW_FIELDS if k in f}
    out.update({f"losses_{k}": v for k, v in (f.get("losses") or {}).items()})
    out.update({f"tcp_{k}": v for k, v in (f.get("tcp") or {}).items()})
    return out


def _rows(a: Mapping[str, Any], b: Mapping[str, Any], rel_tol: float) -> list[dict[str, Any]]:
    return [
        {
            "key": k,
            "a": a.get(k),
            "b": b.get(k),
            "rel": _rel(a.get(k), b.get(k)),
            "differs": _differs(a.get(k), b.get(k), rel_tol),
        }
        for k in dict.fromkeys([*a, *b])
        if k not in ("wall_s", "simulator")
    ]


# ---- text and pages -----------------------------------------------------------------


def _cell(x: Any) -> str:
    from manetfair.pages import fmt_number

    if x is None:
        return "-"
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, int):
        return str(x)
    return fmt_number(x) if _num(x) else str(x)


def _verdict(c: Mapping[str, Any] | None) -> str:
    if c is None:
        return "absent"
    return "holds" if c.get("holds") else "fails"


def text(doc: Mapping[str, Any]) -> str:
    """The comparison as plain text: differences marked with `*`."""
    lines = [f"A: {doc['a']}", f"B: {doc['b']}"]
    if "summary" in doc:
        table = [["", "A", "B", "change"]]
        for r in doc["summary"]:
            table.append(_text_row(r["key"], r))
        for flow in doc["flows"]:
            for r in flow["fields"]:
                table.append(_text_row(f"flow {flow['flow']} {r['key']}", r))
        lines += _table(table)
        return "\n".join(lines) + "\n"
    versions = doc.get("versions", {})
    if versions.get("a") or versions.get("b"):
        lines.append(f"code versions: A {versions.get('a') or '?'}, B {versions.get('b') or '?'}")
    table = [["experiment", "claim", "paper", "A measured", "A", "B measured", "B"]]
    for exp in doc["experiments"]:
        for c in exp["claims"]:
            a, b = c["a"] or {}, c["b"] or {}
            mark = "*" if c["verdict_changed"] or c["measured_differs"] else " "
            table.append(
                [
                    f"{mark} {exp['id']}",
                    str(c["what"]),
                    _cell(c["paper"]),
                    _cell(a.get("measured")),
                    _verdict(c["a"]),
                    _cell(b.get("measured")),
                    _verdict(c["b"]),
                ]
            )
    lines += _table(table)
    changed = doc["verdict_changed"]
    lines.append(f"{len(changed)} claim(s) changed verdict:")
    for c in changed:
        now = "holds" if (c["b"] or {}).get("holds") else "fails"
        lines.append(f"  {c['experiment']}: {c['what']}: now {now}")
    return "\n".join(lines) + "\n"


def _text_row(name: str, r: Mapping[str, Any]) -> list[str]:
    rel = r["rel"]
    change = f"{rel * 100:+.1f}%" if rel is not None else ("differs" if r["differs"] else "")
    return [("* " if r["differs"] else "  ") + name, _cell(r["a"]), _cell(r["b"]), change]


def _table(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]


def write(doc: Mapping[str, Any], a: Side, b: Side, out: Path) -> list[Path]:
    """`compare.json`, `compare.txt` and, for two runs, the flows' throughput of both
    overlaid (`throughput.png`, `.svg`, `.csv`) into `out`."""
    from manetfair.output import write_file

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, body in (
        ("compare.json", json.dumps(doc, indent=1) + "\n"),
        ("compare.txt", text(doc)),
    ):
        path = out / name
        write_file(path, partial(_write_text, body=body))
        written.append(path)
    if a.summary is not None and b.summary is not None:
        written += _overlay(a, b, out)
    return written


def _write_text(path: Path, body: str) -> None:
    path.write_text(body, encoding="utf-8")


def _overlay(a: Side, b: Side, out: Path) -> list[Path]:
    import matplotlib

    from manetfair.output import write_file
    from manetfair.runplots import write_csv

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "manetfair"
    import matplotlib.pyplot as plt

    assert a.summary is not None and b.summary is not None
    rows: list[list[Any]] = []
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    try:
        for side, style in ((a, "-"), (b, "--")):
            assert side.summary is not None
            for f in side.summary.get("flows", []):
                series = [float(v) for v in f.get("series_kbps", [])]
                bin_s = float(side.summary.get("duration_s", len(series))) / max(1, len(series))
                t = [i * bin_s for i in range(len(series))]
                name = "A" if side is a else "B"
                ax.step(
                    t,
                    series,
                    where="post",
                    ls=style,
                    color=colors[int(f["id"]) % len(colors)],
                    label=f"{name}: flow {f['id']}",
                )
                rows += [[name, f["id"], ti, v] for ti, v in zip(t, series)]
        ax.set_xlabel("time (s)")
        ax.set_ylabel("throughput (kbit/s)")
        ax.set_title(f"A (solid): {a.label}; B (dashed): {b.label}", fontsize=8)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, ncol=2)
        fig.tight_layout()
        written = []
        for fmt in ("png", "svg"):
            path = out / f"throughput.{fmt}"
            meta: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
            write_file(path, partial(fig.savefig, format=fmt, metadata=meta))
            written.append(path)
    finally:
        plt.close(fig)
    written.append(write_csv(out / "throughput.csv", ["side", "flow", "time_s", "kbps"], rows))
    return written
