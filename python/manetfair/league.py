"""The league: the five papers' remedies side by side on the same networks
(docs/experiments.md, "The league").

Each `league-*` experiment (experiments/league/league.toml) is one canonical network
run under every arm (plain 802.11, each remedy alone, every pairing the stack accepts)
on both platforms. This module reads those runs' summaries, and only them:

- per run, the metrics of `METRICS` (`run_metrics`);
- per network, platform and arm, the mean and the lowest and highest seed of each;
- per network, platform and metric, the arms' ranks (1 is best, ties share the best
  rank), and the Pareto front of fairness (Jain) against aggregate goodput;
- per platform, the league: each arm's mean rank over the networks, per metric;
- the flips: a remedy that beats plain 802.11 on a metric on one platform and loses to
  it on the other, each by more than the seeds' spread (the ranges do not overlap);
  and a network's best arm on a metric on one platform that ranks in the lower half
  on the other.

`document` is the league as JSON (`league.json` in the report folder); `write` draws
the page (`league.md`, `league.html`), the runs behind every number
(`league-runs.md`, `league-runs.html`) and one scatter per network (`<id>-scatter.png`).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manetfair.claims import unfairness_index
from manetfair.output import write_file, write_text
from manetfair.pages import render

if TYPE_CHECKING:
    from manetfair.experiment_result import ExperimentResult

# The experiments' `paper`, which marks a league network.
PAPER = "league"
PREFIX = "league-"
BASELINE = "802.11"
# The arm whose runs give each network's optimum for u: throttling alone, whose
# summary carries phi (the allocator's max-min shares) and Thr_max(h) per flow.
THROTTLE_ARM = "throttle"
PLATFORMS = ("standard", "ns2")
# The layers of the remedies (an arm "a & b" pairs two of different layers).
LAYERS = {
    "red": "network",
    "nred": "network",
    "throttle": "network",
    "m-tcp": "transport",
    "tcp-ap": "transport",
    "westwood+": "transport",
    "qe": "MAC",
    "ff": "MAC",
    "qe+ff": "MAC",
    "opet": "MAC",
}


@dataclass(frozen=True)
class Metric:
    """One column of the league: its key in `run_metrics`, its label, and whether
    more is better."""

    key: str
    label: str
    higher_is_better: bool
    note: str


METRICS = (
    Metric("jain", "Jain's index", True, "over the flows' throughput_kbps (the summary's)"),
    Metric(
        "u",
        "unfairness u",
        False,
        "Osipov and Tschudin's eq. (4) against phi_i * Thr_max(h_i): the allocator's "
        "max-min C-load shares and the one-flow chain reference of the same network, "
        "platform and seed (the throttle arm's); n/a with one flow",
    ),
    Metric("goodput_kbps", "aggregate goodput (kbit/s)", True, "the summary's aggregate_kbps"),
    Metric(
        "p95_delay_s",
        "p95 delay (s)",
        False,
        "one-way, of every delivered data packet of every flow (the flows' delay "
        "histograms merged, nearest rank)",
    ),
    Metric("drops", "drops", False, "network-layer packets dropped, every cause"),
    Metric(
        "control_per_data",
        "control frames per DATA frame",
        False,
        "every MAC frame sent that carries no data (RTS, CTS, ACK, ACK-RTS, OPET's "
        "NCTS and RTR) over the frames that carry data (DATA, DATA2+ACK1)",
    ),
    Metric("rtos_per_flow", "RTOs per flow", False, "TCP retransmission timeouts, mean over flows"),
)
_BY_KEY = {m.key: m for m in METRICS}
# Frames that carry a data packet; every other kind counted in mac.frames_sent is control.
DATA_FRAMES = ("data", "data_ack")


def is_league(result: ExperimentResult) -> bool:
    """Whether `result` is one of the league's networks (its experiment's `paper`)."""
    return result.experiment.paper == PAPER


def unfairness(optimum: Sequence[float] | None, summary: Mapping[str, Any]) -> float:
    """u of eq. (4) of one run against `optimum` (one value per flow): the one
    function through which the league computes u (claims.unfairness_index, which the
    claims use too). NaN without an optimum or with fewer than two flows."""
    if optimum is None:
        return math.nan
    actual = [float(f["throughput_kbps"]) for f in summary["flows"]]
    return unfairness_index(list(optimum), actual)


def optimum_of(throttled: Mapping[str, Any]) -> list[float] | None:
    """phi_i * Thr_max(h_i) per flow, from a run of the throttle arm (its summary's
    `throttle.flows[].thr_opt_kbps`, with u_reference = "thr_max"), or None."""
    table = throttled.get("throttle")
    if not isinstance(table, Mapping):
        return None
    values = [f.get("thr_opt_kbps") for f in table.get("flows", [])]
    if not values or any(not isinstance(v, (int, float)) for v in values):
        return None
    return [float(v) for v in values]


def p95_delay(summary: Mapping[str, Any]) -> float:
    """The 95th percentile (nearest rank) of the one-way delay of every delivered
    packet of every flow, from the flows' delay histograms merged (columns
    `bin_lo_s`, `bin_hi_s`, `count`, with the same bins everywhere: docs/contract.md
    §3), at the bin's midpoint; NaN if none."""
    bins: dict[tuple[float, float], int] = {}
    for flow in summary["flows"]:
        hist = flow.get("delay_histogram") or {}
        for lo, hi, n in zip(
            hist.get("bin_lo_s", []), hist.get("bin_hi_s", []), hist.get("count", [])
        ):
            key = (float(lo), float(hi))
            bins[key] = bins.get(key, 0) + int(n)
    total = sum(bins.values())
    if total == 0:
        return math.nan
    rank = math.ceil(0.95 * total)
    seen = 0
    for (lo, hi), count in sorted(bins.items()):
        seen += count
        if seen >= rank:
            return (lo + hi) / 2
    return math.nan  # pragma: no cover - the ranks add up to total


def run_metrics(summary: Mapping[str, Any], optimum: Sequence[float] | None) -> dict[str, Any]:
    """The league's metrics of one run (`METRICS`; None where undefined), plus its
    drops by cause."""
    flows = summary["flows"]
    frames = {str(k): int(v) for k, v in summary["mac"]["frames_sent"].items()}
    data = sum(frames.get(k, 0) for k in DATA_FRAMES)
    control = sum(v for k, v in frames.items() if k not in DATA_FRAMES)
    drops = {str(k): int(v) for k, v in summary["drops"].items()}
    timeouts = [int(f["tcp"]["timeouts"]) for f in flows if isinstance(f.get("tcp"), Mapping)]
    values: dict[str, float] = {
        "jain": float(summary["jain_index"]),
        "u": unfairness(optimum, summary),
        "goodput_kbps": float(summary["aggregate_kbps"]),
        "p95_delay_s": p95_delay(summary),
        "drops": float(sum(drops.values())),
        "control_per_data": control / data if data else math.nan,
        "rtos_per_flow": statistics.fmean(timeouts) if timeouts else math.nan,
    }
    # None (JSON null) where a metric is undefined: u with one flow, a delay without
    # deliveries.
    out: dict[str, Any] = {k: v if math.isfinite(v) else None for k, v in values.items()}
    out["drops_by_cause"] = drops
    return out


def _finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _stats(values: Sequence[float]) -> dict[str, float | None]:
    """mean, min, max over seeds of the finite values (None where there are none)."""
    xs = [float(v) for v in values if _finite(v)]
    if not xs:
        return {"mean": None, "min": None, "max": None}
    return {"mean": statistics.fmean(xs), "min": min(xs), "max": max(xs)}


def ranks(means: Mapping[str, float | None], higher_is_better: bool) -> dict[str, int | None]:
    """Competition ranks (1 is best; equal values share the best rank) of the arms'
    means; None for an arm without a value."""
    valued = [(a, float(v)) for a, v in means.items() if v is not None]
    order = sorted(v for _, v in valued)
    if higher_is_better:
        order.reverse()
    first: dict[float, int] = {}
    for i, v in enumerate(order):
        first.setdefault(v, i + 1)
    out: dict[str, int | None] = {a: None for a in means}
    for a, v in valued:
        out[a] = first[v]
    return out


def pareto_front(points: Mapping[str, tuple[float | None, float | None]]) -> list[str]:
    """The arms no other arm dominates on (goodput, fairness), both to be maximised:
    sorted by goodput. An arm without both values is left out."""
    pts = {a: (x, y) for a, (x, y) in points.items() if x is not None and y is not None}
    front = [
        a
        for a, (x, y) in pts.items()
        if not any(
            (x2 >= x and y2 >= y) and (x2 > x or y2 > y) for b, (x2, y2) in pts.items() if b != a
        )
    ]
    return sorted(front, key=lambda a: (pts[a][0], -pts[a][1], a))


def layers_of(arm: str) -> list[str]:
    """The layers an arm's remedies act at ([] for plain 802.11)."""
    return [LAYERS[part] for part in arm.split(" & ") if part in LAYERS]


def document(results: Sequence[ExperimentResult]) -> dict[str, Any]:
    """The league of the league experiments among `results` (others are ignored), as
    JSON: deterministic for given runs (run ids aside, which name stored runs)."""
    chosen = [r for r in results if is_league(r) and r.available and r.outcomes]
    networks = []
    arms: list[str] = []
    refused: dict[str, str] = {}
    for r in chosen:
        exp = r.experiment
        arm_axis = next(a for a in exp.axes if a.name == "arm")
        for a in arm_axis.values:
            if str(a) not in arms and str(a) in arm_axis.runnable([a]):
                arms.append(str(a))
        refused.update(arm_axis.refused)
        networks.append(_network(r))
    league = {p: _league(networks, p, arms) for p in PLATFORMS}
    return {
        "quick": any(r.quick for r in chosen),
        "seeds": max((len({o.spec.seed for o in r.outcomes}) for r in chosen), default=0),
        "metrics": [
            {"key": m.key, "label": m.label, "higher_is_better": m.higher_is_better, "note": m.note}
            for m in METRICS
        ],
        "arms": [{"arm": a, "single": " & " not in a, "layers": layers_of(a)} for a in arms],
        "refused": [{"arm": a, "reason": why} for a, why in refused.items()],
        "networks": networks,
        "league": league,
        "flips": _flips(networks, arms),
        "winner_flips": _winner_flips(networks),
    }


def _network(r: ExperimentResult) -> dict[str, Any]:
    """One network's runs, cells, ranks and Pareto front, per platform."""
    exp = r.experiment
    by_key: dict[tuple[str, str, int], Any] = {}
    for o in r.outcomes:
        by_key[(str(o.spec.variant["platform"]), str(o.spec.variant["arm"]), o.spec.seed)] = o
    platforms: dict[str, Any] = {}
    for p in PLATFORMS:
        cells: dict[str, Any] = {}
        for (plat, arm, seed), o in sorted(by_key.items(), key=lambda kv: (kv[0][1], kv[0][2])):
            if plat != p:
                continue
            ref = by_key.get((p, THROTTLE_ARM, seed))
            metrics = run_metrics(o.summary, optimum_of(ref.summary) if ref else None)
            cell = cells.setdefault(arm, {"runs": []})
            cell["runs"].append({"seed": seed, "run_id": o.run_id, **metrics})
        if not cells:
            continue
        for cell in cells.values():
            for m in METRICS:
                cell[m.key] = _stats([run[m.key] for run in cell["runs"]])
        rank = {
            m.key: ranks({a: c[m.key]["mean"] for a, c in cells.items()}, m.higher_is_better)
            for m in METRICS
        }
        front = pareto_front(
            {a: (c["goodput_kbps"]["mean"], c["jain"]["mean"]) for a, c in cells.items()}
        )
        platforms[p] = {"arms": cells, "ranks": rank, "pareto": front}
    return {
        "id": exp.id,
        "title": exp.figure,
        "description": exp.description,
        "flows": len(next(iter(r.outcomes)).summary["flows"]),
        "platforms": platforms,
    }


def _league(networks: Sequence[Mapping[str, Any]], platform: str, arms: Sequence[str]) -> Any:
    """Per arm and metric, the mean of its ranks over the networks that rank it."""
    out: dict[str, Any] = {}
    for a in arms:
        row: dict[str, float | None] = {}
        for m in METRICS:
            got = [
                n["platforms"][platform]["ranks"][m.key].get(a)
                for n in networks
                if platform in n["platforms"]
            ]
            valued = [float(x) for x in got if x is not None]
            row[m.key] = statistics.fmean(valued) if valued else None
        overall = [v for v in row.values() if v is not None]
        row["overall"] = statistics.fmean(overall) if overall else None
        out[a] = row
    return out


def _flips(networks: Sequence[Mapping[str, Any]], arms: Sequence[str]) -> list[dict[str, Any]]:
    """Every (network, metric, arm) whose effect against plain 802.11 changes sign
    between the platforms, each beyond the seeds' spread: on one platform the arm's
    lowest seed is better than the baseline's best seed, on the other its best seed is
    worse than the baseline's worst."""
    out = []
    for n in networks:
        if not all(p in n["platforms"] for p in PLATFORMS):
            continue
        for m in METRICS:
            for a in arms:
                if a == BASELINE:
                    continue
                verdicts = []
                for p in PLATFORMS:
                    cells = n["platforms"][p]["arms"]
                    verdicts.append(_beats(cells.get(a), cells.get(BASELINE), m))
                if None not in verdicts and verdicts[0] != verdicts[1]:
                    out.append(
                        {
                            "network": n["id"],
                            "metric": m.key,
                            "arm": a,
                            "better_on": PLATFORMS[0] if verdicts[0] else PLATFORMS[1],
                            "values": {
                                p: {
                                    "arm": n["platforms"][p]["arms"][a][m.key]["mean"],
                                    "baseline": n["platforms"][p]["arms"][BASELINE][m.key]["mean"],
                                }
                                for p in PLATFORMS
                            },
                        }
                    )
    return out


def _winner_flips(networks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every (network, metric) whose best arm on one platform ranks in the lower half
    on the other: the ranking itself flips."""
    out = []
    for n in networks:
        if not all(p in n["platforms"] for p in PLATFORMS):
            continue
        for m in METRICS:
            for p, q in (PLATFORMS, PLATFORMS[::-1]):
                here, there = (n["platforms"][x]["ranks"][m.key] for x in (p, q))
                ranked = sum(r is not None for r in there.values())
                for arm in sorted(a for a, r in here.items() if r == 1):
                    other = there.get(arm)
                    if other is not None and other > ranked / 2:
                        out.append(
                            {
                                "network": n["id"],
                                "metric": m.key,
                                "arm": arm,
                                "wins_on": p,
                                "rank_on_other": other,
                                "of": ranked,
                            }
                        )
    return out


def _beats(cell: Any, base: Any, m: Metric) -> bool | None:
    """True: the arm is better than the baseline beyond the seeds' spread; False: worse
    beyond it; None: the ranges overlap, or a value is missing."""
    if cell is None or base is None:
        return None
    a, b = cell[m.key], base[m.key]
    if any(v is None for v in (a["min"], a["max"], b["min"], b["max"])):
        return None
    if m.higher_is_better:
        if a["min"] > b["max"]:
            return True
        if a["max"] < b["min"]:
            return False
    else:
        if a["max"] < b["min"]:
            return True
        if a["min"] > b["max"]:
            return False
    return None


# --- the page ------------------------------------------------------------------------


def slug(*parts: str) -> str:
    """An HTML anchor for a network, platform and arm (or metric)."""
    text = "-".join(parts)
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")


def _cell(stats: Mapping[str, float | None]) -> str:
    from manetfair.pages import fmt_number

    mean, lo, hi = stats["mean"], stats["min"], stats["max"]
    if mean is None:
        return "n/a"
    if lo == hi:
        return fmt_number(mean)
    return f"{fmt_number(mean)} ({fmt_number(lo)}–{fmt_number(hi)})"


def _rank(x: float | None) -> str:
    """A mean rank, to one decimal."""
    return "n/a" if x is None else f"{x:.1f}"


def _context(doc: Mapping[str, Any]) -> dict[str, Any]:
    """What the page templates read: rows of formatted cells with their links."""
    from manetfair.pages import fmt_number

    metrics = [_BY_KEY[m["key"]] for m in doc["metrics"]]
    networks = []
    for n in doc["networks"]:
        per_platform = []
        for p, data in n["platforms"].items():
            rows = []
            order = sorted(
                data["arms"],
                key=lambda a: (data["ranks"]["jain"].get(a) or 10**6, a),
            )
            for a in order:
                cell = data["arms"][a]
                anchor = slug(n["id"], p, a)
                causes: dict[str, int] = {}
                for run in cell["runs"]:
                    for k, v in run["drops_by_cause"].items():
                        causes[k] = causes.get(k, 0) + v
                runs = len(cell["runs"])
                rows.append(
                    {
                        "arm": a,
                        "anchor": anchor,
                        "front": a in data["pareto"],
                        "cells": [
                            (_cell(cell[m.key]), data["ranks"][m.key].get(a)) for m in metrics
                        ],
                        "causes": ", ".join(
                            f"{k} {fmt_number(v / runs)}" for k, v in sorted(causes.items()) if v
                        )
                        or "none",
                    }
                )
            per_platform.append(
                {
                    "platform": p,
                    "rows": rows,
                    "pareto": data["pareto"],
                    "png": f"{n['id']}-scatter.png",
                }
            )
        networks.append({**n, "per_platform": per_platform})
    league = []
    for p in PLATFORMS:
        table = doc["league"].get(p, {})
        order = sorted(
            table, key=lambda a: (table[a]["overall"] is None, table[a]["overall"] or 0.0, a)
        )
        league.append(
            {
                "platform": p,
                "rows": [
                    {
                        "arm": a,
                        "cells": [
                            (_rank(table[a][m.key]), slug("rank", p, m.key)) for m in metrics
                        ],
                        "overall": _rank(table[a]["overall"]),
                    }
                    for a in order
                ],
            }
        )
    rank_tables = []
    for p in PLATFORMS:
        for m in metrics:
            present = [n for n in doc["networks"] if p in n["platforms"]]
            rows = []
            for a in [x["arm"] for x in doc["arms"]]:
                rows.append(
                    {
                        "arm": a,
                        "cells": [
                            (n["platforms"][p]["ranks"][m.key].get(a), slug(n["id"], p, a))
                            for n in present
                        ],
                    }
                )
            rank_tables.append(
                {
                    "anchor": slug("rank", p, m.key),
                    "platform": p,
                    "metric": m,
                    "networks": [n["id"][len(PREFIX) :] for n in present],
                    "rows": rows,
                }
            )
    flips = [
        {
            **f,
            "label": _BY_KEY[f["metric"]].label,
            "anchor": slug(f["network"], f["better_on"], f["arm"]),
            "text": "; ".join(
                f"{p}: {fmt_number(v['arm'])} against {fmt_number(v['baseline'])}"
                for p, v in f["values"].items()
            ),
        }
        for f in doc["flips"]
    ]
    winner_flips = [
        {
            **f,
            "label": _BY_KEY[f["metric"]].label,
            "anchor": slug(f["network"], f["wins_on"], f["arm"]),
            "other": PLATFORMS[1] if f["wins_on"] == PLATFORMS[0] else PLATFORMS[0],
        }
        for f in doc["winner_flips"]
    ]
    return {
        "metrics": metrics,
        "networks": networks,
        "winner_flips": winner_flips,
        "league": league,
        "rank_tables": rank_tables,
        "flips": flips,
        "refused": doc["refused"],
        "arms": doc["arms"],
        "mode": "quick" if doc["quick"] else "full",
        "seeds": doc["seeds"],
    }


# How the scatter draws each kind of arm: (label, marker, colour, marker size).
_KINDS = (
    ("one remedy", "o", "tab:blue", 5),
    ("a pairing", "s", "tab:orange", 4),
    ("plain 802.11", "o", "black", 8),
)


def _kind(arm: str) -> int:
    return 2 if arm == BASELINE else (0 if " & " not in arm else 1)


def scatter(network: Mapping[str, Any], path: Path) -> None:
    """One network's fairness (Jain) against aggregate goodput, a panel per platform:
    each arm at its means with its seeds' range on both axes, the Pareto front drawn
    through the arms it holds and labelled, plain 802.11 marked."""
    from manetfair.plots import _pyplot

    plt = _pyplot()
    plats = [p for p in PLATFORMS if p in network["platforms"]]
    fig, axes = plt.subplots(1, len(plats), figsize=(6.2 * len(plats), 4.6), dpi=100, squeeze=False)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.12, top=0.92, wspace=0.18)
    try:
        for ax, p in zip(axes[0], plats):
            data = network["platforms"][p]
            for kind, (label, marker, colour, size) in enumerate(_KINDS):
                cells = [
                    c
                    for a, c in sorted(data["arms"].items())
                    if _kind(a) == kind
                    and c["goodput_kbps"]["mean"] is not None
                    and c["jain"]["mean"] is not None
                ]
                if not cells:
                    continue
                g = [c["goodput_kbps"] for c in cells]
                j = [c["jain"] for c in cells]
                ax.errorbar(
                    [s["mean"] for s in g],
                    [s["mean"] for s in j],
                    xerr=[[s["mean"] - s["min"] for s in g], [s["max"] - s["mean"] for s in g]],
                    yerr=[[s["mean"] - s["min"] for s in j], [s["max"] - s["mean"] for s in j]],
                    fmt=marker,
                    color=colour,
                    markersize=size,
                    elinewidth=0.6,
                    alpha=0.85,
                    label=label,
                )
            front = data["pareto"]
            xs = [data["arms"][a]["goodput_kbps"]["mean"] for a in front]
            ys = [data["arms"][a]["jain"]["mean"] for a in front]
            ax.plot(xs, ys, "-", color="tab:red", linewidth=1.2, label="Pareto front")
            # Arms with the same means (a remedy that changes nothing there) share a label.
            labels: dict[tuple[float, float], list[str]] = {}
            for a, x, y in zip(front, xs, ys):
                labels.setdefault((x, y), []).append(a)
            for (x, y), names in labels.items():
                text = " = ".join(names)
                ax.annotate(text, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
            base = data["arms"].get(BASELINE)
            if base is not None and BASELINE not in front:
                ax.annotate(
                    BASELINE,
                    (base["goodput_kbps"]["mean"], base["jain"]["mean"]),
                    textcoords="offset points",
                    xytext=(4, -10),
                    fontsize=7,
                )
            ax.set_title(f"{network['title']}, platform {p}", fontsize=10)
            ax.set_xlabel("aggregate goodput (kbit/s)")
            ax.set_ylabel("Jain's index")
            ax.grid(True, alpha=0.3)
            ax.legend(fontsize=7, loc="lower left")
        write_file(path, lambda tmp: fig.savefig(tmp, format="png", metadata={"Software": None}))
    finally:
        plt.close(fig)


def write(results: Sequence[ExperimentResult], out: Path) -> list[Path]:
    """Writes the league page, its runs page, its JSON and one scatter per network
    when `results` hold league runs; the paths written."""
    doc = document(results)
    if not doc["networks"]:
        return []
    written = [out / "league.json"]
    write_text(written[0], json.dumps(doc, indent=1, allow_nan=False) + "\n")
    for n in doc["networks"]:
        path = out / f"{n['id']}-scatter.png"
        scatter(n, path)
        written.append(path)
    context = _context(doc)
    for page in ("league", "league_runs"):
        md, html = render(page, page_title=f"manetfair: {page.replace('_', ' ')}", **context)
        stem = page.replace("_", "-")
        for path, text in ((out / f"{stem}.md", md), (out / f"{stem}.html", html)):
            write_text(path, text)
            written.append(path)
    return written


def has_page(out: Path) -> bool:
    """Whether `out` has the league page (the index links to it)."""
    return (out / "league.md").is_file()
