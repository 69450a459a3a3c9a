"""`manetfair run --trace FILE`: every packet event of a run, as JSON lines or
Parquet (docs/trace.md). The core writes JSON lines; a `.parquet` file is
converted with pyarrow under one fixed schema, so that every file has every column.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

EVENTS = ("enqueue", "dequeue", "tx_start", "tx_end", "rx_ok", "rx_lost", "drop")


def schema() -> Any:
    import pyarrow as pa

    columns: list[tuple[str, pa.DataType]] = [
        ("t_ns", pa.int64()),
        ("node", pa.int64()),
        ("layer", pa.string()),
        ("event", pa.string()),
        ("packet", pa.int64()),
        ("bytes", pa.int64()),
        ("src", pa.int64()),
        ("dst", pa.int64()),
        ("flow", pa.int64()),
        ("packet_kind", pa.string()),
        ("frame", pa.string()),
        ("frame_bytes", pa.int64()),
        ("ra", pa.int64()),
        ("retry", pa.bool_()),
        ("ff_run", pa.int64()),
        ("peer", pa.int64()),
        ("cause", pa.string()),
        ("power_dbm", pa.float64()),
    ]
    return pa.schema(columns)


def is_parquet(path: str | os.PathLike[str]) -> bool:
    return Path(path).suffix.lower() in (".parquet", ".pq")


def jsonl_to_parquet(source: Path, target: Path) -> None:
    """Converts the core's JSON lines into a Parquet file with `schema()`."""
    import pyarrow.json as pajson
    import pyarrow.parquet as pq

    if source.stat().st_size == 0:
        pq.write_table(schema().empty_table(), target)
        return
    table = pajson.read_json(
        source,
        parse_options=pajson.ParseOptions(
            explicit_schema=schema(), unexpected_field_behavior="error"
        ),
    )
    pq.write_table(table, target)


class TraceTarget:
    """Where the core writes (a temporary JSON-lines file for Parquet output), and
    the conversion when the run is over: the Parquet file goes through
    manetfair.output, whole or not at all."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        if is_parquet(self.path):
            self._tmp = tempfile.TemporaryDirectory(prefix="manetfair-trace-")
            self.core_path = Path(self._tmp.name) / "trace.jsonl"
        else:
            self.core_path = self.path

    def finish(self) -> None:
        if self._tmp is not None:
            from manetfair.output import write_file

            try:
                write_file(self.path, lambda tmp: jsonl_to_parquet(self.core_path, tmp))
            finally:
                self.cleanup()

    def cleanup(self) -> None:
        """Removes the temporary JSON lines (also when the run failed)."""
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def check_filters(sc: Any, nodes: list[int] | None, flows: list[int] | None) -> None:
    """Refuses `--trace-node` and `--trace-flow` values that name no node or flow of the
    scenario: they would write an empty trace and exit 0."""
    import json

    from manetfair.errors import InputError

    if not nodes and not flows:
        return
    canon = json.loads(sc.canonical_json())
    listed = canon.get("node")
    if isinstance(listed, list) and listed:
        ids = [n.get("id", i) for i, n in enumerate(listed)]
    else:
        topo = canon.get("topology", {})
        count = topo.get("nodes") or topo.get("rows", 0) * topo.get("cols", 0)
        ids = list(range(int(count)))
    known = set(ids)
    for node in nodes or []:
        if node not in known:
            listed = ", ".join(str(i) for i in sorted(known)[:8])
            more = ", ..." if len(known) > 8 else ""
            raise InputError(
                f"--trace-node {node}: the scenario has no such node (its {len(ids)} "
                f"node ids are {listed}{more})"
            )
    pairs = canon.get("traffic", {}).get("random_pairs")
    n_flows = len(canon.get("flow", [])) + (int(pairs.get("count", 0)) if pairs else 0)
    for flow in flows or []:
        if not 0 <= flow < n_flows:
            raise InputError(
                f"--trace-flow {flow}: the scenario has no such flow (it has {n_flows} "
                f"flows, numbered from 0)"
            )


def node_capture_paths(scenario: Path, pcap: Path | None, nodes: list[int]) -> list[Path]:
    """Where `run --pcap-node N` writes node N's capture: beside the air capture,
    `FILE-node<N>.pcap` for `--pcap FILE.pcap`; without one, `<scenario>-node<N>.pcap`
    in the current directory (as ns-3 names per-device captures prefix-node-device)."""
    if pcap is not None:
        return [pcap.with_name(f"{pcap.stem}-node{n}{pcap.suffix or '.pcap'}") for n in nodes]
    return [Path(f"{scenario.stem}-node{n}.pcap") for n in nodes]
