"""`manetfair view`: one self-contained HTML page of a run, in the spirit of ns-3's
NetAnim: the topology with transmission and carrier-sense ranges, the flows along
the routes their data took, the nodes moving, and the frames on the air as a time
slider plays. The page needs no server and no network: data and code are inline.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from manetfair.scenario import Scenario

# More frames than this make a page too heavy to open; later ones are left out.
MAX_FRAMES = 300_000
FRAME_EVENTS = ["tx_start", "tx_end", "rx_lost"]


def write_view(
    sc: Scenario,
    out: Path,
    progress: Callable[..., None] | None = None,
    *,
    progress_events: bool = False,
    pcap: str | os.PathLike[str] | None = None,
) -> tuple[str, str]:
    """Runs `sc` with the frame trace and node positions, writes the page to `out`,
    and returns the run's (summary, traces) JSON."""
    with tempfile.TemporaryDirectory(prefix="manetfair-view-") as tmp:
        trace = Path(tmp) / "trace.jsonl"
        positions = Path(tmp) / "positions.jsonl"
        summary_json, traces_json = sc.run_in_core(
            progress,
            pcap,
            progress_events=progress_events,
            trace_path=str(trace),
            trace_events=FRAME_EVENTS,
            positions_path=str(positions),
        )
        summary = json.loads(summary_json)
        data = view_data(sc, summary, trace, positions)
    from manetfair.output import write_text

    write_text(out, render(data))
    return summary_json, traces_json


def view_data(
    sc: Scenario, summary: dict[str, Any], trace: Path, positions: Path
) -> dict[str, Any]:
    """The page's data: positions over time, frames on the air, losses at the
    addressee, and each flow's route as the edges its data frames crossed."""
    canonical = json.loads(sc.canonical_json())
    pos_t: list[float] = []
    pos_x: list[list[float]] = []
    pos_y: list[list[float]] = []
    ids: list[Any] = []
    with positions.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if pos_t and row["t"] <= pos_t[-1]:
                continue
            ids = row["ids"]
            pos_t.append(row["t"])
            pos_x.append(row["x"])
            pos_y.append(row["y"])
    index = {node_id: i for i, node_id in enumerate(ids)}

    frames: list[list[Any]] = []
    lost: list[list[Any]] = []
    open_tx: dict[int, list[Any]] = {}
    edges: dict[int, set[tuple[int, int]]] = {}
    truncated = False
    sources = {f["id"]: f["src"] for f in summary.get("flows", [])}
    with trace.open(encoding="utf-8") as fh:
        for line in fh:
            ev = json.loads(line)
            node = index[ev["node"]]
            if ev["event"] == "tx_start":
                if len(frames) >= MAX_FRAMES:
                    truncated = True
                    continue
                ra = index.get(ev["ra"], -1) if "ra" in ev else -1
                frame = [ev["t_ns"], ev["t_ns"], node, ra, ev.get("frame", "data")]
                frames.append(frame)
                open_tx[node] = frame
                # The route runs from the flow's source: TCP ACKs coming back are left out.
                forward = "flow" in ev and sources.get(ev["flow"]) == ev.get("src")
                if ev.get("frame") in ("data", "data_ack") and forward and ra >= 0:
                    edges.setdefault(ev["flow"], set()).add((node, ra))
            elif ev["event"] == "tx_end" and node in open_tx:
                open_tx.pop(node)[1] = ev["t_ns"]
            elif ev["event"] == "rx_lost" and index.get(ev.get("ra")) == node:
                lost.append([ev["t_ns"], node, ev.get("frame", "data")])
    flows = []
    for f in summary.get("flows", []):
        flows.append(
            {
                "id": f["id"],
                "src": f["src"],
                "dst": f["dst"],
                "transport": f.get("transport", ""),
                "throughput_kbps": float(f.get("throughput_kbps", 0.0)),
                "edges": sorted(edges.get(f["id"], set())),
            }
        )
    radio = canonical.get("radio", {})
    note = (
        f"only the first {MAX_FRAMES:,} frames are shown; use --duration for a shorter run"
        if truncated
        else ""
    )
    return {
        "name": summary.get("name", ""),
        "duration_s": float(summary.get("duration_s", canonical.get("duration_s", 0.0))),
        "ids": ids,
        "tx_range_m": float(radio.get("tx_range_m", 250.0)),
        "cs_range_m": float(radio.get("cs_range_m", 550.0)),
        "positions": {"t": pos_t, "x": pos_x, "y": pos_y},
        "frames": frames,
        "max_frame_ns": max((e - s for s, e, *_ in frames), default=0),
        "lost": lost,
        "flows": flows,
        "note": note,
    }


def render(data: dict[str, Any]) -> str:
    template = (resources.files("manetfair") / "view_template.html").read_text(encoding="utf-8")
    # `</` cannot appear inside the inline JSON script.
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    title = str(data.get("name", "")).replace("&", "&amp;").replace("<", "&lt;")
    return template.replace("__TITLE__", title).replace("__DATA__", payload)
