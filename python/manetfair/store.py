"""The results store: every finished run in one embedded DuckDB file.

A run is keyed by (scenario hash, seed, code version): asking for the same key
again is served from the store instead of simulating. Each run is committed as
soon as it finishes, so an interrupted sweep keeps what it finished. Only the
process that owns the store writes to it; worker processes hand results back.
The schema is documented in docs/results-store.md.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from typing_extensions import Self

DEFAULT_STORE = "manetfair-results.duckdb"
STORE_ENV = "MANETFAIR_STORE"

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    run_id         VARCHAR PRIMARY KEY,
    scenario_hash  VARCHAR NOT NULL,
    seed           BIGINT NOT NULL,
    code_version   VARCHAR NOT NULL,
    scenario_name  VARCHAR,
    experiment_id  VARCHAR,
    variant        JSON,
    parameters     JSON,
    scenario       JSON NOT NULL,
    summary        JSON NOT NULL,
    wall_s         DOUBLE,
    created_at     TIMESTAMP NOT NULL,
    UNIQUE (scenario_hash, seed, code_version)
);
CREATE TABLE IF NOT EXISTS series (
    run_id  VARCHAR PRIMARY KEY,
    traces  JSON NOT NULL
);
CREATE TABLE IF NOT EXISTS experiment_runs (
    experiment_id VARCHAR NOT NULL,
    variant       JSON NOT NULL,
    seed          BIGINT NOT NULL,
    run_id        VARCHAR NOT NULL,
    quick         BOOLEAN NOT NULL,
    PRIMARY KEY (experiment_id, variant, seed, run_id)
);
"""


def default_path() -> Path:
    """`$MANETFAIR_STORE` if set, else ./manetfair-results.duckdb."""
    return Path(os.environ.get(STORE_ENV) or DEFAULT_STORE)


@dataclass
class StoredRun:
    run_id: str
    scenario_hash: str
    seed: int
    code_version: str
    summary: dict[str, Any]
    experiment_id: str | None = None
    variant: dict[str, Any] | None = None
    parameters: dict[str, Any] | None = None


class ResultsStore:
    """One DuckDB file, opened for reading and writing by one process at a time."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        import duckdb

        self.path = Path(path) if path is not None else default_path()
        if self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self.con = duckdb.connect(str(self.path))
        except duckdb.IOException as exc:
            raise StoreBusyError(
                f"{self.path}: cannot open the results store ({exc}); another manetfair "
                "process may be using it, or pass --store PATH for a different file"
            ) from None
        self.con.execute(SCHEMA)

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def lookup(self, scenario_hash: str, seed: int, code_version: str) -> StoredRun | None:
        row = self.con.execute(
            "SELECT run_id, summary, experiment_id, variant, parameters FROM runs "
            "WHERE scenario_hash = ? AND seed = ? AND code_version = ?",
            [scenario_hash, seed, code_version],
        ).fetchone()
        if row is None:
            return None
        return StoredRun(
            run_id=row[0],
            scenario_hash=scenario_hash,
            seed=seed,
            code_version=code_version,
            summary=json.loads(row[1]),
            experiment_id=row[2],
            variant=json.loads(row[3]) if row[3] else None,
            parameters=json.loads(row[4]) if row[4] else None,
        )

    def insert(
        self,
        *,
        scenario_hash: str,
        seed: int,
        code_version: str,
        scenario_json: str,
        summary_json: str,
        traces_json: str | None,
        experiment_id: str | None = None,
        variant: Mapping[str, Any] | None = None,
        parameters: Mapping[str, Any] | None = None,
    ) -> str:
        """Stores one finished run in its own transaction; returns its run id."""
        run_id = uuid.uuid4().hex
        summary = json.loads(summary_json)
        self.con.execute("BEGIN TRANSACTION")
        try:
            self.con.execute(
                "INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    run_id,
                    scenario_hash,
                    seed,
                    code_version,
                    summary.get("name"),
                    experiment_id,
                    _dumps(variant),
                    _dumps(parameters),
                    scenario_json,
                    summary_json,
                    summary.get("wall_s"),
                    datetime.now(timezone.utc).replace(tzinfo=None),
                ],
            )
            if traces_json is not None:
                self.con.execute("INSERT INTO series VALUES (?, ?)", [run_id, traces_json])
            self.con.execute("COMMIT")
        except BaseException as exc:
            # A failed write (a full disk) may already have ended the transaction:
            # a failing ROLLBACK must not hide the error that caused it.
            try:
                self.con.execute("ROLLBACK")
            except Exception:  # noqa: BLE001, S110 - the original error is raised below
                pass
            import duckdb

            if isinstance(exc, duckdb.Error):
                raise StoreWriteError(
                    f"{self.path}: cannot store a finished run ({type(exc).__name__}: {exc}); "
                    "the runs stored before it are kept"
                ) from None
            raise
        return run_id

    def link(
        self, experiment_id: str, variant: Mapping[str, Any], seed: int, run_id: str, quick: bool
    ) -> None:
        """Records that `run_id` is the run of an experiment's variant and seed."""
        self.con.execute(
            "INSERT INTO experiment_runs VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [experiment_id, _dumps(variant), seed, run_id, quick],
        )

    def traces(self, run_id: str) -> dict[str, Any] | None:
        row = self.con.execute("SELECT traces FROM series WHERE run_id = ?", [run_id]).fetchone()
        return json.loads(row[0]) if row else None

    def count(self) -> int:
        row = self.con.execute("SELECT count(*) FROM runs").fetchone()
        return int(row[0]) if row else 0

    def export(self, out: str | os.PathLike[str], fmt: str = "parquet") -> list[Path]:
        """Writes the runs table (with the summary's headline fields pulled out), one
        row per flow, and the experiment links, to `out` as Parquet or CSV.

        `out` is a directory (created if needed) that receives runs.<ext>,
        flows.<ext> and experiment_runs.<ext>.
        """
        if fmt not in ("parquet", "csv"):
            raise ValueError(f"export format must be 'parquet' or 'csv', not {fmt!r}")
        out_dir = Path(out)
        out_dir.mkdir(parents=True, exist_ok=True)
        queries = {
            "runs": (
                "SELECT run_id, scenario_hash, seed, code_version, scenario_name, experiment_id, "
                "CAST(variant AS VARCHAR) AS variant, CAST(parameters AS VARCHAR) AS parameters, "
                "CAST(summary->>'duration_s' AS DOUBLE) AS duration_s, "
                "CAST(summary->>'aggregate_kbps' AS DOUBLE) AS aggregate_kbps, "
                "CAST(summary->>'jain_index' AS DOUBLE) AS jain_index, "
                "CAST(summary->>'events' AS BIGINT) AS events, wall_s, created_at, "
                "CAST(scenario AS VARCHAR) AS scenario, CAST(summary AS VARCHAR) AS summary "
                "FROM runs ORDER BY created_at, run_id"
            ),
            "flows": (
                "SELECT r.run_id, r.experiment_id, r.seed, "
                "CAST(f.value->>'id' AS INTEGER) AS flow_id, "
                "CAST(f.value->>'src' AS BIGINT) AS src, CAST(f.value->>'dst' AS BIGINT) AS dst, "
                "f.value->>'transport' AS transport, CAST(f.value->>'hops' AS INTEGER) AS hops, "
                "CAST(f.value->>'throughput_kbps' AS DOUBLE) AS throughput_kbps, "
                "CAST(f.value->>'delivered_bytes' AS BIGINT) AS delivered_bytes "
                "FROM runs r, json_each(r.summary->'flows') f ORDER BY r.created_at, r.run_id, flow_id"
            ),
            "experiment_runs": (
                "SELECT experiment_id, CAST(variant AS VARCHAR) AS variant, seed, run_id, quick "
                "FROM experiment_runs ORDER BY experiment_id, variant, seed"
            ),
        }
        written = []
        for name, query in queries.items():
            target = out_dir / f"{name}.{fmt}"
            option = "(FORMAT PARQUET)" if fmt == "parquet" else "(FORMAT CSV, HEADER)"
            path_sql = str(target).replace("'", "''")
            self.con.execute(f"COPY ({query}) TO '{path_sql}' {option}")
            written.append(target)
        return written


class StoreBusyError(RuntimeError):
    """The store file is locked by another process."""


class StoreWriteError(RuntimeError):
    """A run could not be written to the store (the message names the file and the cause)."""


def _dumps(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)
