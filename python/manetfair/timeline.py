"""The channel timeline of a run, in the spirit of OMNeT++'s sequence chart: for a
window of time, one row per node, every frame it put on the air as a bar coloured by
its type (RTS, CTS, DATA, ACK and the remedies' own frames), the frames lost at their
addressee (collisions, or the addressee was itself transmitting) marked on the
addressee's row, and the deferrals: frames a node overheard, each of which set its
NAV (virtual carrier sense, IEEE 802.11 §9.2.5.4), marked on the overhearer's row.

It reads the packet trace (`run --trace FILE`, JSON lines or Parquet; docs/trace.md)
and draws the figure as PNG and SVG with every mark as a row of a CSV beside it
(`manetfair timeline`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from manetfair.output import write_file

# The frame types, their colours and legend names. Saturated colours, none of them
# the red of a loss: the view (manetfair.view) uses the same.
FRAME_COLORS: dict[str, str] = {
    "rts": "#ff7f0e",
    "cts": "#8c564b",
    "data": "#1a1a1a",
    "ack": "#2ca02c",
    "data_ack": "#d4a017",
    "ack_rts": "#17becf",
    "ncts": "#9467bd",
    "rtr": "#e377c2",
}
FRAME_NAMES: dict[str, str] = {
    "rts": "RTS",
    "cts": "CTS",
    "data": "DATA",
    "ack": "ACK",
    "data_ack": "DATA2+ACK1 (quick exchange)",
    "ack_rts": "ACK-RTS (fast forward)",
    "ncts": "NCTS (OPET)",
    "rtr": "RTR (OPET)",
}
LOST_COLOR = "#d62828"
# What the timeline needs of a trace (`run --trace-event`).
EVENTS = ("tx_start", "tx_end", "rx_ok", "rx_lost")


class Timeline:
    """The marks of one window: `frames` as (node, start_ns, end_ns, frame, ra, retry);
    `lost` as (t_ns, node, frame, cause) at the addressee; `overheard` as (t_ns, node,
    frame, transmitter). Frames overlapping the window count, cut to it nowhere."""

    __slots__ = ("end_ns", "frames", "lost", "nodes", "overheard", "start_ns")

    def __init__(self, start_ns: int, end_ns: int) -> None:
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.frames: list[tuple[Any, int, int, str, Any, bool]] = []
        self.lost: list[tuple[int, Any, str, str]] = []
        self.overheard: list[tuple[int, Any, str, Any]] = []
        self.nodes: list[Any] = []


def _events(trace: Path) -> Iterator[Mapping[str, Any]]:
    if trace.suffix == ".parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(trace).iter_batches():
            for row in batch.to_pylist():
                yield {k: v for k, v in row.items() if v is not None}
        return
    with trace.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def read(trace: Path, start_s: float, end_s: float) -> Timeline:
    """The frames on the air between `start_s` and `end_s` (those whose airtime
    overlaps the window), the losses and the overheard frames within it."""
    tl = Timeline(round(start_s * 1e9), round(end_s * 1e9))
    t0, t1 = tl.start_ns, tl.end_ns
    on_air: dict[Any, list[Any]] = {}
    nodes: set[Any] = set()
    for ev in _events(trace):
        kind, node, t = ev.get("event"), ev.get("node"), int(ev.get("t_ns", 0))
        if kind not in EVENTS:
            continue
        nodes.add(node)
        if kind == "tx_start":
            _close(tl, on_air.pop(node, None), None)
            on_air[node] = [
                node,
                t,
                None,
                ev.get("frame", "data"),
                ev.get("ra"),
                bool(ev.get("retry")),
            ]
        elif kind == "tx_end":
            _close(tl, on_air.pop(node, None), t)
        elif t0 <= t < t1 and kind == "rx_lost" and ev.get("ra") == node:
            tl.lost.append((t, node, ev.get("frame", "data"), ev.get("cause", "")))
        elif t0 <= t < t1 and kind == "rx_ok" and "ra" in ev and ev["ra"] != node:
            tl.overheard.append((t, node, ev.get("frame", "data"), ev.get("peer")))
        if t >= t1 + 1_000_000_000:
            break  # a second past the window: every frame begun in it has ended
    for frame in list(on_air.values()):
        _close(tl, frame, None)
    tl.frames.sort(key=lambda f: (f[1], str(f[0])))
    tl.nodes = sorted(nodes, key=lambda n: (not isinstance(n, int), n))
    return tl


def _close(tl: Timeline, frame: list[Any] | None, end: int | None) -> None:
    """Keeps `frame` if its airtime [start, end) overlaps the window; a frame whose end
    the trace does not hold (the run stopped) lasts to the window's end."""
    if frame is None:
        return
    start = frame[1]
    stop = end if end is not None else max(start, tl.end_ns)
    if start < tl.end_ns and stop > tl.start_ns:
        tl.frames.append((frame[0], start, stop, frame[3], frame[4], frame[5]))


def draw(tl: Timeline, stem: Path, title: str = "") -> list[Path]:
    """`stem`.png, `stem`.svg and `stem`.csv of the timeline; returns them."""
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "manetfair"
    import matplotlib.pyplot as plt

    rows = {n: i for i, n in enumerate(tl.nodes)}
    t0 = tl.start_ns
    ms = 1e-6  # nanoseconds to milliseconds
    fig, ax = plt.subplots(figsize=(10, 0.35 * len(rows) + 1.8), dpi=110)
    try:
        kinds = sorted(
            {f[3] for f in tl.frames},
            key=lambda k: list(FRAME_COLORS).index(k) if k in FRAME_COLORS else 99,
        )
        for kind in kinds:
            for node, row in rows.items():
                bars = [
                    ((s - t0) * ms, (e - s) * ms)
                    for n, s, e, k, _, _ in tl.frames
                    if n == node and k == kind
                ]
                if bars:
                    ax.broken_barh(
                        bars,
                        (row - 0.35, 0.7),
                        facecolors=FRAME_COLORS.get(kind, "#777777"),
                        gid=f"frames-{node}-{kind}",
                    )
            ax.plot(
                [],
                [],
                lw=6,
                color=FRAME_COLORS.get(kind, "#777777"),
                label=FRAME_NAMES.get(kind, kind),
            )
        if tl.lost:
            ax.plot(
                [(t - t0) * ms for t, *_ in tl.lost],
                [rows[n] for _, n, *_ in tl.lost],
                ls="none",
                marker="x",
                color=LOST_COLOR,
                markersize=8,
                mew=2,
                label="lost at its addressee (collision)",
                gid="lost",
            )
        if tl.overheard:
            ax.plot(
                [(t - t0) * ms for t, *_ in tl.overheard],
                [rows[n] + 0.42 for _, n, *_ in tl.overheard],
                ls="none",
                marker="v",
                color="#555555",
                markersize=4,
                label="overheard: NAV set (deferral)",
                gid="overheard",
            )
        ax.set_yticks(range(len(rows)), [f"node {n}" for n in rows])
        ax.set_ylim(-0.7, len(rows) - 0.3)
        ax.set_xlim(0, (tl.end_ns - t0) * ms)
        ax.set_xlabel(f"time after {t0 / 1e9:.6f} s (ms)")
        ax.set_title(title or "frames on the air", fontsize=9)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        written = []
        for fmt in ("png", "svg"):
            path = stem.with_name(f"{stem.name}.{fmt}")
            meta: dict[str, Any] = {"Date": None} if fmt == "svg" else {}
            write_file(path, partial(fig.savefig, format=fmt, metadata=meta))
            written.append(path)
    finally:
        plt.close(fig)
    written.append(write_csv(tl, stem.with_name(f"{stem.name}.csv")))
    return written


def write_csv(tl: Timeline, path: Path) -> Path:
    """One row per mark: `mark` (frame, lost, overheard), node, start_s, end_s, frame,
    ra (frames: addressee; overheard: transmitter), retry, cause."""
    from manetfair.runplots import write_csv as write

    rows: list[Sequence[Any]] = [
        ["frame", n, s / 1e9, e / 1e9, k, ra, retry, None] for n, s, e, k, ra, retry in tl.frames
    ]
    rows += [["lost", n, t / 1e9, None, k, None, None, cause] for t, n, k, cause in tl.lost]
    rows += [["overheard", n, t / 1e9, None, k, tx, None, None] for t, n, k, tx in tl.overheard]
    header = ["mark", "node", "start_s", "end_s", "frame", "ra", "retry", "cause"]
    return write(path, header, rows)
