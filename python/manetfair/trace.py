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

    return pa.schema(
        [
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
    )


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
    the conversion when the run is over."""

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
            try:
                jsonl_to_parquet(self.core_path, self.path)
            finally:
                self._tmp.cleanup()
                self._tmp = None
