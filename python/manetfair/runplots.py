"""Pictures of one run (`manetfair run --out DIR`, `manetfair plot RUN`): per-flow
throughput over time; cwnd and ssthresh per TCP flow with retransmission timeouts and
fast retransmits marked; queue length, busy and NAV fractions per node (lines for a
few nodes, heat maps over time for large fields); the topology with the flows' routes;
and each flow's delay distribution. Every figure is written as PNG and SVG with the
numbers behind it as CSV beside it, and an `index.html` shows them all with the
flows' statistics.

The figures are drawn from what every run keeps (its summary, its series and its
scenario), so that a run of the results store can be drawn as well as a fresh one.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from manetfair.api import RunResult
from manetfair.output import write_file
from manetfair.scenario import Scenario

# Per-node series are drawn as lines up to this many nodes, as heat maps beyond.
MAX_LINES = 12
# TCP flows drawn one panel each; more are left out of the figure (not of its CSV).
MAX_TCP_PANELS = 8
FORMATS = ("png", "svg")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    # SVG element ids from a fixed salt: equal runs draw equal bytes.
    matplotlib.rcParams["svg.hashsalt"] = "manetfair"
    import matplotlib.pyplot as plt

    return plt


class Figure:
    """One figure written: its stem, title and the files it was written to."""

    __slots__ = ("files", "stem", "title")

    def __init__(self, stem: str, title: str, files: list[Path]) -> None:
        self.stem = stem
        self.title = title
        self.files = files


def node_positions(sc: Scenario) -> dict[Any, tuple[float, float]]:
    """Each node's position at time 0, as the core places it (random fields too): from
    a 1 ms run of the scenario's nodes alone (topology, radio, mobility and seed, which
    is all the placement draws on; no flows, so no start time is in the way)."""
    import tempfile

    keep = ("name", "seed", "radio", "topology", "node", "mobility")
    data = {**{k: v for k, v in sc.data.items() if k in keep}, "duration_s": 1e-3}
    bare = Scenario(data, origin=sc.origin, base_dir=sc.base_dir)
    with tempfile.TemporaryDirectory(prefix="manetfair-pos-") as tmp:
        path = Path(tmp) / "positions.jsonl"
        try:
            bare.run_in_core(None, positions_path=str(path))
            with path.open(encoding="utf-8") as fh:
                row = json.loads(fh.readline())
        except Exception:  # noqa: BLE001 - a core without positions: place as files do
            from manetfair.layouts import positions

            return dict(positions(sc.data) or {})
    return {i: (float(x), float(y)) for i, x, y in zip(row["ids"], row["x"], row["y"])}


def flow_paths(sc: Scenario) -> dict[int, list[Any]]:
    """Each flow's route at the start, as the core's static routing computes it (the
    path `manetfair shares` reports; AODV may find others); empty if it cannot say."""
    from manetfair.throttle import report, without_shaping

    try:
        shares = report(without_shaping(sc))
    except Exception:  # noqa: BLE001 - a picture without routes is still a picture
        return {}
    return {int(f["id"]): list(f.get("path", [])) for f in shares.get("flows", [])}


class RunData:
    """What the figures are drawn from: a run's summary, its series as named columns
    (`RunResult.series_columns`), its node ids in series order, the series' bin and
    its scenario. Made from a fresh run, a folder `run --out` wrote, or the store."""

    __slots__ = ("bin_s", "cols", "ids", "scenario", "summary")

    def __init__(
        self,
        summary: Mapping[str, Any],
        cols: Mapping[str, Sequence[Any]],
        ids: Sequence[Any],
        bin_s: float,
        scenario: Scenario,
    ) -> None:
        self.summary = summary
        self.cols = cols
        self.ids = ids
        self.bin_s = bin_s
        self.scenario = scenario

    @classmethod
    def of_result(cls, result: RunResult) -> RunData:
        bin_s = float(result.traces.get("bin_s") or 1.0)
        return cls(
            result.summary, result.series_columns(), result.node_ids(), bin_s, result.scenario
        )

    @classmethod
    def of_folder(cls, folder: Path) -> RunData:
        """A folder `manetfair run --out` wrote: summary.json, series.parquet and
        scenario.json."""
        import pyarrow.parquet as pq

        from manetfair.errors import InputError
        from manetfair.scenario import load

        need = [folder / n for n in ("summary.json", "series.parquet", "scenario.json")]
        missing = [p.name for p in need if not p.is_file()]
        if missing:
            raise InputError(
                f"{folder}: not a run folder (no {', '.join(missing)}); "
                "`manetfair run FILE --out DIR` writes one"
            )
        summary = json.loads(need[0].read_text(encoding="utf-8"))
        cols = pq.read_table(need[1]).to_pydict()
        scenario = load(json.loads(need[2].read_text(encoding="utf-8")))
        ids = [c[len("node") : -len("_queue_pkts")] for c in cols if c.endswith("_queue_pkts")]
        ids_typed: list[Any] = [int(i) if i.lstrip("-").isdigit() else i for i in ids]
        trace = dict(scenario.data.get("trace", {}))
        return cls(summary, cols, ids_typed, float(trace.get("series_interval_s", 1.0)), scenario)

    @classmethod
    def of_stored(cls, store: Any, run_id: str) -> RunData:
        """Run `run_id` of an open results store (manetfair.store.Store)."""
        from manetfair.errors import InputError
        from manetfair.scenario import load
        from manetfair.store import rows_as_dicts

        with store.session() as con:
            rows = rows_as_dicts(
                con,
                "SELECT run_id, CAST(summary AS VARCHAR) AS summary, "
                "CAST(scenario AS VARCHAR) AS scenario FROM runs WHERE run_id LIKE ? || '%'",
                [run_id],
            )
        if len(rows) != 1:
            what = "no run" if not rows else f"{len(rows)} runs"
            raise InputError(
                f"{what} in {store.path} with id {run_id!r}; give a run id or a run folder"
            )
        traces = store.traces(rows[0]["run_id"]) or {}
        result = RunResult(
            json.loads(rows[0]["summary"]), traces, load(json.loads(rows[0]["scenario"]))
        )
        return cls.of_result(result)


def write_run_folder(result: RunResult, out: Path) -> list[Path]:
    """What `run --out` writes besides the series (`RunResult.write`, called after
    this): the summary, the scenario as run (canonical JSON, so that `manetfair plot`
    can redraw the folder later) and the run's page. The summary comes first, the
    series last: a disk that fills up on the way leaves the folder's earlier series as
    they were, and the message names the first file that did not fit."""
    from manetfair.output import write_text

    summary = write_text(out / "summary.json", json.dumps(result.summary, indent=2) + "\n")
    scenario = out / "scenario.json"
    text = json.dumps(json.loads(result.scenario.canonical_json()), indent=2) + "\n"
    write_text(scenario, text)
    return [summary, scenario, *write_run_page(result, out)]


def write_run_page(
    run: RunData | RunResult,
    out: Path,
    positions: Mapping[Any, tuple[float, float]] | None = None,
    paths: Mapping[int, Sequence[Any]] | None = None,
) -> list[Path]:
    """Draws every figure of a run into the folder `out` and writes `index.html`
    there; returns the files written. `positions` and `paths` (node id -> (x, y),
    flow id -> node ids) default to what the core computes for the run's scenario."""
    data = RunData.of_result(run) if isinstance(run, RunResult) else run
    out.mkdir(parents=True, exist_ok=True)
    if positions is None:
        positions = node_positions(data.scenario)
    if paths is None:
        paths = flow_paths(data.scenario)
    cols, summary, bin_s, ids = data.cols, data.summary, data.bin_s, data.ids
    name = f"{summary.get('name', 'run')}, seed {summary.get('seed', '?')}"
    figures = [
        throughput(cols, summary, bin_s, name, out),
        tcp(cols, summary, bin_s, name, out),
        nodes(cols, ids, bin_s, name, out, "queue", [("queue_pkts", "queue (packets)")]),
        nodes(
            cols,
            ids,
            bin_s,
            name,
            out,
            "channel",
            [("busy_frac", "radio busy fraction"), ("nav_frac", "NAV set fraction")],
        ),
        topology(summary, data.scenario.data, positions, paths, name, out),
        delays(summary, name, out),
    ]
    drawn = [f for f in figures if f is not None]
    page = out / "index.html"
    html = _page(summary, bin_s, drawn)
    write_file(page, lambda tmp: tmp.write_text(html, encoding="utf-8"))
    return [*[p for f in drawn for p in f.files], page]


def _save(fig: Any, out: Path, stem: str) -> list[Path]:
    """The figure as PNG and SVG (no timestamp in either: equal runs, equal bytes)."""
    written = []
    fig.tight_layout()
    for fmt in FORMATS:
        path = out / f"{stem}.{fmt}"
        meta: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
        write_file(path, partial(fig.savefig, format=fmt, metadata=meta))
        written.append(path)
    return written


def write_csv(path: Path, header: Sequence[str], rows: Sequence[Sequence[Any]]) -> Path:
    """A CSV file with a header row; None is written as an empty field."""

    def write(tmp: Path) -> None:
        with tmp.open("w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(header)
            w.writerows([["" if v is None else v for v in row] for row in rows])

    write_file(path, write)
    return path


def _columns_csv(path: Path, cols: Mapping[str, Sequence[Any]], names: Sequence[str]) -> Path:
    rows = list(zip(*(cols[n] for n in names)))
    return write_csv(path, names, rows)


def _flow_label(f: Mapping[str, Any]) -> str:
    return f"flow {f['id']} ({f['src']}→{f['dst']}, {f.get('transport', '')})"


def throughput(
    cols: Mapping[str, Sequence[Any]],
    summary: Mapping[str, Any],
    bin_s: float,
    name: str,
    out: Path,
) -> Figure | None:
    flows = summary.get("flows", [])
    names = [f"flow{f['id']}_kbps" for f in flows if f"flow{f['id']}_kbps" in cols]
    if not names:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
    try:
        t = cols["time_s"]
        for f in flows:
            key = f"flow{f['id']}_kbps"
            if key in cols:
                ax.step(t, [_num(v) for v in cols[key]], where="post", lw=1.2, label=_flow_label(f))
        ax.set_xlabel("time (s)")
        ax.set_ylabel(f"throughput (kbit/s, {bin_s:g} s bins)")
        ax.set_title(f"{name}: per-flow throughput", fontsize=9)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="best")
        files = _save(fig, out, "throughput")
    finally:
        plt.close(fig)
    files.append(_columns_csv(out / "throughput.csv", cols, ["time_s", *names]))
    return Figure("throughput", "Per-flow throughput over time", files)


def tcp(
    cols: Mapping[str, Sequence[Any]],
    summary: Mapping[str, Any],
    bin_s: float,
    name: str,
    out: Path,
) -> Figure | None:
    flows = [f for f in summary.get("flows", []) if f"flow{f['id']}_cwnd_pkts" in cols]
    if not flows:
        return None
    shown = flows[:MAX_TCP_PANELS]
    plt = _pyplot()
    fig, axes = plt.subplots(
        len(shown), 1, figsize=(8, 2.3 * len(shown) + 0.8), dpi=110, squeeze=False, sharex=True
    )
    # Sender state is sampled at the end of each bin.
    ends = [float(t) + bin_s for t in cols["time_s"]]
    try:
        for ax, f in zip([a[0] for a in axes], shown):
            i = f["id"]
            cwnd = [_num(v) for v in cols[f"flow{i}_cwnd_pkts"]]
            ssthresh = [_num(v) for v in cols[f"flow{i}_ssthresh_pkts"]]
            ax.plot(ends, cwnd, lw=1.2, color="#1f77b4", label="cwnd")
            ax.plot(ends, ssthresh, lw=1.0, ls="--", color="#7f7f7f", label="ssthresh")
            for key, marker, color, what in (
                ("timeouts", "x", "#d62728", "retransmission timeout"),
                ("fast_retransmits", "v", "#ff7f0e", "fast retransmit"),
            ):
                counts = cols.get(f"flow{i}_{key}") or []
                at = [k for k, c in enumerate(counts) if c]
                ax.plot(
                    [ends[k] for k in at],
                    [cwnd[k] for k in at],
                    ls="none",
                    marker=marker,
                    color=color,
                    markersize=7,
                    label=f"{what} ({int(sum(_num(c) for c in counts))})",
                )
            ax.set_ylabel("packets")
            ax.set_ylim(bottom=0, top=max(max(cwnd, default=1), 1) * 1.3)
            ax.set_title(_flow_label(f), fontsize=8)
            ax.legend(fontsize=7, loc="upper right", ncol=2)
        axes[-1][0].set_xlabel(f"time (s); markers at the end of the {bin_s:g} s bin they fell in")
        more = f" (first {len(shown)} of {len(flows)} TCP flows)" if len(flows) > len(shown) else ""
        fig.suptitle(f"{name}: cwnd and ssthresh{more}", fontsize=9)
        files = _save(fig, out, "tcp")
    finally:
        plt.close(fig)
    names = ["time_s"]
    for f in flows:
        i = f["id"]
        names += [
            n
            for n in (f"flow{i}_cwnd_pkts", f"flow{i}_ssthresh_pkts", f"flow{i}_timeouts")
            + (f"flow{i}_fast_retransmits", f"flow{i}_srtt_s")
            if n in cols
        ]
    files.append(_columns_csv(out / "tcp.csv", cols, names))
    return Figure("tcp", "TCP congestion window, timeouts and fast retransmits", files)


def nodes(
    cols: Mapping[str, Sequence[Any]],
    ids: Sequence[Any],
    bin_s: float,
    name: str,
    out: Path,
    stem: str,
    metrics: Sequence[tuple[str, str]],
) -> Figure | None:
    """Per-node series: one panel per metric, lines for few nodes, else a heat map."""
    present = [(m, label) for m, label in metrics if any(f"node{n}_{m}" in cols for n in ids)]
    if not present or not ids:
        return None
    plt = _pyplot()
    heat = len(ids) > MAX_LINES
    height = (max(2.8, 0.12 * len(ids) + 1.4) if heat else 2.8) * len(present) + 0.6
    fig, axes = plt.subplots(len(present), 1, figsize=(8, height), dpi=110, squeeze=False)
    t = [float(x) for x in cols["time_s"]]
    try:
        for ax, (metric, label) in zip([a[0] for a in axes], present):
            rows = [[_num(v) for v in cols.get(f"node{n}_{metric}", [])] for n in ids]
            if heat:
                end = t[-1] + bin_s if t else bin_s
                img = ax.imshow(
                    rows,
                    aspect="auto",
                    interpolation="nearest",
                    origin="lower",
                    extent=(0.0, end, -0.5, len(ids) - 0.5),
                    cmap="viridis",
                    vmin=0.0,
                    vmax=1.0 if metric.endswith("frac") else None,
                )
                step = max(1, len(ids) // 20)
                ax.set_yticks(range(0, len(ids), step), [str(n) for n in ids][::step], fontsize=6)
                ax.set_ylabel("node")
                fig.colorbar(img, ax=ax, label=label)
            else:
                for n, row in zip(ids, rows):
                    ax.step(t, row, where="post", lw=1.0, label=f"node {n}")
                ax.set_ylabel(label)
                ax.set_ylim(bottom=0)
                ax.legend(fontsize=6, loc="upper right", ncol=min(4, len(ids)))
            ax.set_title(f"{label}, mean over each {bin_s:g} s bin", fontsize=8)
        axes[-1][0].set_xlabel("time (s)")
        fig.suptitle(f"{name}: per node", fontsize=9)
        files = _save(fig, out, stem)
    finally:
        plt.close(fig)
    names = ["time_s"] + [f"node{n}_{m}" for m, _ in present for n in ids if f"node{n}_{m}" in cols]
    files.append(_columns_csv(out / f"{stem}.csv", cols, names))
    what = " and ".join(label for _, label in present)
    return Figure(stem, f"{what[0].upper()}{what[1:]} per node", files)


def topology(
    summary: Mapping[str, Any],
    scenario: Mapping[str, Any],
    positions: Mapping[Any, tuple[float, float]],
    paths: Mapping[int, Sequence[Any]],
    name: str,
    out: Path,
) -> Figure | None:
    if not positions:
        return None
    radio = dict(scenario.get("radio", {}))
    tx = float(radio.get("tx_range_m", 250.0))
    cs = float(radio.get("cs_range_m", 550.0))
    flows = summary.get("flows", [])
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 5.5), dpi=110)
    try:
        ax.scatter(
            [p[0] for p in positions.values()],
            [p[1] for p in positions.values()],
            s=20,
            color="#333",
            zorder=3,
        )
        if len(positions) <= 60:
            for n, (x, y) in positions.items():
                ax.annotate(str(n), (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
        if flows and flows[0]["src"] in positions:
            x, y = positions[flows[0]["src"]]
            ax.add_patch(plt.Circle((x, y), tx, fill=False, color="#2a6", alpha=0.6, lw=0.8))
            ax.add_patch(plt.Circle((x, y), cs, fill=False, color="#999", lw=0.8, ls="--"))
            ax.plot(
                [], [], color="#2a6", lw=0.8, label=f"transmission range {tx:g} m (flow 0's source)"
            )
            ax.plot([], [], color="#999", lw=0.8, ls="--", label=f"carrier sense {cs:g} m")
        colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
        for f in flows:
            route = [n for n in paths.get(int(f["id"]), []) if n in positions]
            color = colors[int(f["id"]) % len(colors)]
            for a, b in zip(route, route[1:]):
                ax.annotate(
                    "",
                    xy=positions[b],
                    xytext=positions[a],
                    arrowprops={"arrowstyle": "->", "color": color, "lw": 1.6},
                )
            kbps = f.get("throughput_kbps", 0.0)
            ax.plot([], [], color=color, lw=1.6, label=f"{_flow_label(f)}: {kbps:.1f} kbit/s")
        aodv = dict(scenario.get("routing", {})).get("protocol") == "aodv"
        note = " (routes: shortest paths at t = 0; AODV finds its own)" if aodv else ""
        ax.set_title(f"{name}: topology and routes{note}", fontsize=9)
        ax.set_aspect("equal", adjustable="datalim")
        ax.set_xlabel("x (m)")
        ax.set_ylabel("y (m)")
        ax.legend(fontsize=7, loc="best")
        files = _save(fig, out, "topology")
    finally:
        plt.close(fig)
    files.append(
        write_csv(
            out / "topology.csv",
            ["node", "x_m", "y_m"],
            [[n, x, y] for n, (x, y) in positions.items()],
        )
    )
    route_rows = [
        [f["id"], k, a, b]
        for f in flows
        for k, (a, b) in enumerate(
            zip(paths.get(int(f["id"]), []), paths.get(int(f["id"]), [])[1:])
        )
    ]
    files.append(write_csv(out / "routes.csv", ["flow", "hop", "from", "to"], route_rows))
    return Figure("topology", "Topology and routes", files)


def delays(summary: Mapping[str, Any], name: str, out: Path) -> Figure | None:
    """Each flow's one-way delay distribution (the summary's histogram) as a CDF."""
    flows = [f for f in summary.get("flows", []) if (f.get("delay_histogram") or {}).get("count")]
    if not flows:
        return None
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=110)
    rows: list[list[Any]] = []
    try:
        for f in flows:
            h = f["delay_histogram"]
            total = sum(h["count"])
            xs, ys, seen = [], [], 0
            for lo, hi, c in zip(h["bin_lo_s"], h["bin_hi_s"], h["count"]):
                seen += c
                xs.append(hi)
                ys.append(seen / total)
                rows.append([f["id"], lo, hi, c])
            ax.step(xs, ys, where="post", lw=1.2, label=_flow_label(f))
        ax.set_xscale("log")
        ax.set_xlabel("one-way delay (s)")
        ax.set_ylabel("fraction of delivered packets")
        ax.set_title(f"{name}: delay distribution", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        files = _save(fig, out, "delay")
    finally:
        plt.close(fig)
    files.append(write_csv(out / "delay.csv", ["flow", "bin_lo_s", "bin_hi_s", "count"], rows))
    return Figure("delay", "One-way delay distribution", files)


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)


FLOW_COLUMNS = (
    ("throughput_kbps", "throughput (kbit/s)"),
    ("packets_sent", "sent"),
    ("packets_delivered", "delivered"),
    ("mean_delay_s", "mean delay (s)"),
    ("median_delay_s", "median (s)"),
    ("p95_delay_s", "p95 (s)"),
    ("p99_delay_s", "p99 (s)"),
    ("jitter_s", "jitter (s)"),
    ("times_forwarded", "forwarded"),
)


def _page(summary: Mapping[str, Any], bin_s: float, figures: Sequence[Figure]) -> str:
    from manetfair.pages import ENV

    flows = []
    for f in summary.get("flows", []):
        losses = {k: v for k, v in (f.get("losses") or {}).items() if v}
        tcp_stats = f.get("tcp") or {}
        flows.append(
            {
                "label": _flow_label(f),
                "cells": [f.get(k) for k, _ in FLOW_COLUMNS],
                "losses": ", ".join(f"{k} {v}" for k, v in losses.items()) or "none",
                "tcp": ", ".join(f"{k} {v}" for k, v in tcp_stats.items()),
            }
        )
    return ENV.get_template("run.html").render(
        page_title=f"{summary.get('name', 'run')}: run",
        meta={
            k: summary.get(k, "")
            for k in ("name", "seed", "simulator", "duration_s", "nodes")
            + ("aggregate_kbps", "jain_index", "loss_pct")
        },
        bin_s=bin_s,
        heads=[label for _, label in FLOW_COLUMNS],
        flows=flows,
        figures=[
            {"title": f.title, "stem": f.stem, "files": [p.name for p in f.files]} for f in figures
        ],
    )
