"""The results store: every finished run in one embedded DuckDB file.

A run is keyed by (scenario hash, seed, code version): asking for the same key
again is served from the store instead of simulating. Finished runs are committed
in groups (runner.CommitPolicy), one transaction per group, within seconds of
finishing, so an interrupted sweep keeps what it finished.

DuckDB lets one process at a time open a file. So that other processes (a
DuckDB client, `manetfair export`, a second sweep) can read or write while a
long reproduction runs, the store holds the file only while it reads or writes:
one connection per operation, or per `session()` block for a burst of look-ups.
An open that meets another process's lock waits and tries again.
The schema is documented in docs/results-store.md.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from manetfair.errors import InputError

if TYPE_CHECKING:
    from typing_extensions import Self

DEFAULT_STORE = "manetfair-results.duckdb"
STORE_ENV = "MANETFAIR_STORE"

# Bumped whenever a table or column changes meaning; a store written with a newer
# schema is refused rather than misread. Schema 3 keeps each series of a run's traces
# in a row of its own (tables `traces` and `series`); a store of schema 2 (or 1), with
# each run's traces as one JSON document in `series`, is read and written as it is.
SCHEMA_VERSION = 3
# The schema of stores whose `series` table holds each run's traces as one document.
JSON_TRACES_SCHEMA = 2
# How long an open waits for another process to let go of the file.
LOCK_WAIT_S = 60.0
# DuckDB's buffer pool may grow to 80 % of the machine's memory, and keeps the pages a
# commit read while it rewrote the last row group of `series` until the store is
# closed. Writes run with it held to this (`ResultsStore.bounded`); reads of whole
# tables (an export) are not bounded. (Under schema 2 a bound made commits fail: a
# vector of 2,048 traces documents of up to 1 MB each had to fit in it.)
WRITE_MEMORY_LIMIT = "512MB"

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
CREATE TABLE IF NOT EXISTS experiment_runs (
    experiment_id VARCHAR NOT NULL,
    variant       JSON NOT NULL,
    seed          BIGINT NOT NULL,
    run_id        VARCHAR NOT NULL,
    quick         BOOLEAN NOT NULL,
    PRIMARY KEY (experiment_id, variant, seed, run_id)
);
CREATE TABLE IF NOT EXISTS meta (
    key    VARCHAR PRIMARY KEY,
    value  VARCHAR NOT NULL
);
"""
# A run's traces (docs/results-store.md): their layout, with every series (a list of
# numbers) left out, and one row per series. DuckDB keeps a table's rows in groups of
# 122,880 and rewrites a group whole at each commit that adds to it, holding a vector
# of 2,048 values of a column at once: as one JSON document per run (0.8 MB for a
# 100-node run) the traces made each commit of a full reproduction rewrite all of them
# (13 s and 4.5 GB at 5 GB of store); as rows of one series each (300 numbers for a
# 300 s run) a commit rewrites at most the last group.
# `seq` numbers the runs in the order they were stored, so that a run's series rows
# lie together and DuckDB's minimum and maximum per block find them without a scan.
SERIES_SCHEMA = """
CREATE TABLE IF NOT EXISTS traces (
    run_id  VARCHAR PRIMARY KEY,
    seq     BIGINT NOT NULL,
    layout  JSON NOT NULL
);
CREATE TABLE IF NOT EXISTS series (
    run_id  VARCHAR NOT NULL,
    seq     BIGINT NOT NULL,
    path    VARCHAR NOT NULL,
    points  DOUBLE[] NOT NULL
);
"""
JSON_SERIES_SCHEMA = """
CREATE TABLE IF NOT EXISTS series (
    run_id  VARCHAR PRIMARY KEY,
    traces  JSON NOT NULL
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


# (experiment id, variant, seed, run id, quick)
Link = tuple[str, Mapping[str, Any], int, str, bool]


@dataclass
class NewRun:
    """A finished run to store, with the experiments' (id, variant, seed, quick) it is
    the run of."""

    scenario_hash: str
    seed: int
    code_version: str
    scenario_json: str
    summary_json: str
    traces_json: str | None
    experiment_id: str | None = None
    variant: Mapping[str, Any] | None = None
    parameters: Mapping[str, Any] | None = None
    links: list[tuple[str, Mapping[str, Any], int, bool]] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.scenario_hash, self.seed, self.code_version)


# How often a store that looks shorter than its blocks is opened again (0.2 s apart)
# before it is called damaged.
DAMAGE_LOOKS = 3


class ResultsStore:
    """One DuckDB file, held open only while it is read or written.

    With `read_only`, nothing is created or written (for readers beside a writer).
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, *, read_only: bool = False
    ) -> None:
        if path is None:
            self.path = default_path()
        else:
            from manetfair.output import as_path

            self.path = as_path(path, "store")
        self.read_only = read_only
        self._con: Any = None
        self._bounded = False
        self.json_traces = False
        if read_only:
            if not self.path.exists():
                raise FileNotFoundError(f"{self.path}: no results store here")
        elif self.path.parent and not self.path.parent.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.exists() and not self.path.is_file():
            kind = "a directory" if self.path.is_dir() else "not a regular file"
            raise InputError(
                f"{self.path}: is {kind}, not a results store; pass --store PATH for a file"
            )
        for look in range(DAMAGE_LOOKS):
            # A shortfall seen while another process writes the store is looked at
            # again, with fresh connections, before the store is called damaged: a
            # truncated file stays short, a store being written does not.
            with self.session() as con:
                short = self._shortfall(con)
                if short is None:
                    self._prepare(con)
                    return
            if look + 1 < DAMAGE_LOOKS:
                time.sleep(0.2)
        assert short is not None
        raise StoreDamagedError(
            self._damaged(
                f"the file is {short[0]} bytes, its used blocks need {short[1]}: truncated"
            )
        )

    def _prepare(self, con: Any) -> None:
        """Reads the schema version, creates missing tables (unless read-only), and
        checks the schema (`_check_schema`)."""
        # A store written before schema 3 keeps its traces as JSON documents.
        columns = {
            str(r[0])
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = 'series'"
            ).fetchall()
        }
        self.json_traces = "traces" in columns
        if not self.read_only:
            con.execute(SCHEMA)
            con.execute(JSON_SERIES_SCHEMA if self.json_traces else SERIES_SCHEMA)
        self._check_schema(con)

    # --- connections --------------------------------------------------------------------

    def _open(self) -> Any:
        """A connection, waiting (with jittered back-off) while another process holds
        the file; StoreBusyError after LOCK_WAIT_S. Any other failure is reported at
        once with its own cause (`_open_error`)."""
        import duckdb

        deadline = time.monotonic() + LOCK_WAIT_S
        pause = 0.01
        while True:
            try:
                # One thread: the queries are small, and a connection opens faster.
                return duckdb.connect(
                    str(self.path), read_only=self.read_only, config={"threads": 1}
                )
            except duckdb.Error as exc:
                locked = "could not set lock" in str(exc).lower()
                if not locked or time.monotonic() > deadline:
                    raise self._open_error(exc, locked) from None
            import random  # here, not at the top: every command reads the store's defaults

            time.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, 0.5)

    def _open_error(self, exc: Exception, locked: bool) -> Exception:
        """One message per reason a store cannot be opened, with its real cause."""
        text = str(exc)
        if locked:
            return StoreBusyError(
                f"{self.path}: cannot open the results store ({text}); another process has "
                f"held it for more than {LOCK_WAIT_S:.0f} s, or pass --store PATH for a "
                "different file"
            )
        if "not a valid DuckDB database file" in text:
            return InputError(
                f"{self.path}: not a results store (not a DuckDB database file); pass "
                "--store PATH for another file"
            )
        if "Read-only file system" in text or "Permission denied" in text:
            how = "read" if self.read_only else "written"
            return StoreBusyError(
                f"{self.path}: the results store cannot be {how} here ({text}); pass "
                "--store PATH in a folder this user can write"
            )
        if "Could not read enough bytes" in text:
            return StoreDamagedError(self._damaged(text))
        return StoreBusyError(f"{self.path}: cannot open the results store ({text})")

    def _damaged(self, cause: str) -> str:
        return (
            f"{self.path}: the results store is damaged ({cause}); restore it from a copy, "
            "or pass --store PATH for a new one"
        )

    def _shortfall(self, con: Any) -> tuple[int, int] | None:
        """(the file's size, the bytes its blocks need) when the file is shorter than
        its own header says (a truncated copy), else None. DuckDB reads such a file
        until a query reaches the missing blocks, so one command served runs from it
        while another failed on it. The blocks a connection counts include those
        replayed from a write-ahead log, not in the file yet: with a log beside the
        store (a writer at work) nothing is concluded."""
        if Path(f"{self.path}.wal").exists():
            return None
        # Used blocks only: DuckDB cuts free blocks off the end of the file, and a
        # file holds at least every used block whatever the order.
        row = con.execute(
            "SELECT block_size, used_blocks FROM pragma_database_size() "
            "WHERE database_name = current_database()"
        ).fetchone()
        if row is None:
            return None
        need, have = int(row[0]) * int(row[1]), self.path.stat().st_size
        return (have, need) if have < need else None

    @contextmanager
    def session(self) -> Iterator[Any]:
        """Holds one connection for the block (nested sessions share it)."""
        if self._con is not None:
            yield self._con
            return
        self._con = self._open()
        try:
            yield self._con
        finally:
            con, self._con = self._con, None
            con.close()

    @contextmanager
    def bounded(self) -> Iterator[Any]:
        """A session (nested sessions share it) in which DuckDB's buffer pool is held to
        WRITE_MEMORY_LIMIT, for writes to a store of schema 3 and reads of a run at a
        time; the bound is lifted when the outermost bounded block ends."""
        with self.session() as con:
            outermost = not self._bounded and not self.json_traces
            if outermost:
                con.execute(f"SET memory_limit = '{WRITE_MEMORY_LIMIT}'")
                self._bounded = True
            try:
                yield con
            finally:
                if outermost:
                    self._bounded = False
                    import duckdb

                    # A failed write may have broken the connection: its error is the
                    # one to report (and the connection closes with the session).
                    with suppress(duckdb.Error):
                        con.execute("RESET memory_limit")

    def close(self) -> None:
        """Nothing stays open between operations; kept for `with` and old callers."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_schema(self, con: Any) -> None:
        import duckdb

        rows = dict(con.execute("SELECT key, value FROM meta").fetchall())
        found = int(rows.get("schema_version", "1"))
        if found > SCHEMA_VERSION:
            raise StoreBusyError(
                f"{self.path}: written with results-store schema {found} by "
                f"{rows.get('manetfair_version', 'a newer manetfair')}; this manetfair reads "
                f"schema {SCHEMA_VERSION} and older: upgrade it or use another --store"
            )
        if self.read_only:
            return
        now = {
            "schema_version": str(JSON_TRACES_SCHEMA if self.json_traces else SCHEMA_VERSION),
            "duckdb_version": duckdb.__version__,
            "manetfair_version": _package_version(),
        }
        if "created_by_duckdb" not in rows:
            now["created_by_duckdb"] = duckdb.__version__
        for key, value in now.items():
            if rows.get(key) != value:
                con.execute(
                    "INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = ?",
                    [key, value, value],
                )

    def meta(self) -> dict[str, str]:
        """The store's schema version and the DuckDB and manetfair versions that wrote
        it (`schema_version`, `created_by_duckdb`, `duckdb_version` of the last writer,
        `manetfair_version`)."""
        with self.session() as con:
            return dict(con.execute("SELECT key, value FROM meta").fetchall())

    # --- runs ---------------------------------------------------------------------------

    def lookup(self, scenario_hash: str, seed: int, code_version: str) -> StoredRun | None:
        with self.session() as con:
            row = con.execute(
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

    def lookup_many(
        self, keys: Sequence[tuple[str, int]], code_version: str
    ) -> dict[tuple[str, int], StoredRun]:
        """The stored runs among `keys` ((scenario hash, seed) pairs) of `code_version`,
        found in one query."""
        wanted = set(keys)
        if not wanted:
            return {}
        hashes = sorted({h for h, _ in wanted})
        found: dict[tuple[str, int], StoredRun] = {}
        with self.session() as con:
            rows = con.execute(
                "SELECT scenario_hash, seed, run_id, summary, experiment_id, variant, parameters "
                "FROM runs WHERE code_version = ? AND scenario_hash IN "
                "(SELECT unnest(?::VARCHAR[]))",
                [code_version, hashes],
            ).fetchall()
        for h, seed, run_id, summary, exp_id, variant, parameters in rows:
            if (h, seed) not in wanted:
                continue
            found[(h, seed)] = StoredRun(
                run_id=run_id,
                scenario_hash=h,
                seed=seed,
                code_version=code_version,
                summary=json.loads(summary),
                experiment_id=exp_id,
                variant=json.loads(variant) if variant else None,
                parameters=json.loads(parameters) if parameters else None,
            )
        return found

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
        """Stores one finished run in its own transaction; returns its run id. If a run
        with the same key is already stored (another process finished it first), that
        run's id is returned and nothing is written."""
        run = NewRun(
            scenario_hash=scenario_hash,
            seed=seed,
            code_version=code_version,
            scenario_json=scenario_json,
            summary_json=summary_json,
            traces_json=traces_json,
            experiment_id=experiment_id,
            variant=variant,
            parameters=parameters,
        )
        return self.insert_many([run])[0]

    def insert_many(self, runs: Sequence[NewRun]) -> list[str]:
        """Stores finished runs, and their links to experiments, in one transaction:
        all of them or (on an error) none. Returns their run ids in order. A run whose
        key is already stored (another process finished it first) is not written again:
        its stored id is returned and its links point there."""
        import uuid  # here, not at the top: every command reads the store's defaults

        if not runs:
            return []
        with self.bounded() as con:
            con.execute("BEGIN TRANSACTION")
            try:
                ids: list[str] = []
                new_rows: list[list[Any]] = []
                series_rows: list[list[Any]] = []
                links: list[list[Any]] = []
                now = datetime.now(timezone.utc).replace(tzinfo=None)
                known = self._stored_ids(con, [run.key for run in runs])
                for run in runs:
                    existing = known.get(run.key)
                    if existing is not None:
                        run_id = existing
                    else:
                        run_id = known[run.key] = uuid.uuid4().hex
                        summary = json.loads(run.summary_json)
                        new_rows.append(
                            [
                                run_id,
                                run.scenario_hash,
                                run.seed,
                                run.code_version,
                                summary.get("name"),
                                run.experiment_id,
                                _dumps(run.variant),
                                _dumps(run.parameters),
                                run.scenario_json,
                                run.summary_json,
                                summary.get("wall_s"),
                                now,
                            ]
                        )
                        if run.traces_json is not None:
                            series_rows.append([run_id, run.traces_json])
                    ids.append(run_id)
                    links += [
                        [exp_id, _dumps(variant), seed, run_id, quick]
                        for exp_id, variant, seed, quick in run.links
                    ]
                _insert_rows(con, "runs", _RUNS_COLUMNS, new_rows)
                if series_rows:
                    self._insert_traces(con, series_rows)
                _insert_rows(con, "experiment_runs", _LINK_COLUMNS, links, "ON CONFLICT DO NOTHING")
                con.execute("COMMIT")
            except BaseException as exc:
                # A failed write (a full disk) may already have ended the transaction:
                # a failing ROLLBACK must not hide the error that caused it.
                try:
                    con.execute("ROLLBACK")
                except Exception:  # noqa: BLE001, S110 - the original error is raised below
                    pass
                import duckdb

                if isinstance(exc, duckdb.Error):
                    what = (
                        "a finished run"
                        if len(runs) == 1
                        else f"{len(runs)} finished runs (one transaction)"
                    )
                    raise StoreWriteError(
                        f"{self.path}: cannot store {what} "
                        f"({type(exc).__name__}: {exc}); the runs stored before are kept"
                    ) from None
                raise
        return ids

    def _insert_traces(self, con: Any, rows: Sequence[list[Any]]) -> None:
        """Stores (run id, traces JSON) pairs: as they are in a store of JSON documents,
        else split into their layout and one row per series."""
        if self.json_traces:
            con.executemany("INSERT INTO series VALUES (?, ?)", rows)
            return
        import orjson
        import pyarrow as pa

        last = con.execute("SELECT coalesce(max(seq), 0) FROM traces").fetchone()
        seq = int(last[0]) if last else 0
        layouts: list[list[Any]] = []
        chunks: list[Any] = []
        held = 0
        for run_id, text in rows:
            seq += 1
            # orjson, not json: a 100-node run's traces are 1.3 MB of numbers, which
            # the standard parser took 47 ms to read and orjson reads in 8-15 ms (the
            # same values); that parse was half of what storing such a run cost.
            layout, series = split_traces(orjson.loads(text))
            layouts.append([run_id, seq, json.dumps(layout, separators=(",", ":"))])
            if series:
                # As Arrow at once (8 bytes a number, not a Python float's 32), and into
                # the transaction every few million numbers: a group of 200 large runs
                # is 200 MB of numbers.
                chunks.append(
                    pa.table(
                        {
                            "run_id": pa.array([run_id] * len(series), pa.string()),
                            "seq": pa.array([seq] * len(series), pa.int64()),
                            "path": pa.array([p for p, _ in series], pa.string()),
                            "points": pa.array([v for _, v in series], pa.list_(pa.float64())),
                        }
                    )
                )
                held += sum(len(v) for _, v in series)
            del series
            if held >= _SERIES_CHUNK:
                _append_series(con, chunks)
                chunks, held = [], 0
        _append_series(con, chunks)
        _insert_rows(con, "traces", _TRACES_COLUMNS, layouts)

    @staticmethod
    def _stored_ids(con: Any, keys: Sequence[tuple[str, int, str]]) -> dict[Any, str]:
        """Run ids of the keys (scenario hash, seed, code version) already stored."""
        wanted = set(keys)
        rows = con.execute(
            "SELECT scenario_hash, seed, code_version, run_id FROM runs "
            "WHERE scenario_hash IN (SELECT unnest(?::VARCHAR[]))",
            [sorted({k[0] for k in wanted})],
        ).fetchall()
        return {(h, s, v): str(r) for h, s, v, r in rows if (h, s, v) in wanted}

    def link(
        self, experiment_id: str, variant: Mapping[str, Any], seed: int, run_id: str, quick: bool
    ) -> None:
        """Records that `run_id` is the run of an experiment's variant and seed."""
        self.link_missing([(experiment_id, variant, seed, run_id, quick)])

    def link_missing(self, links: Sequence[Link]) -> int:
        """Records the links (experiment id, variant, seed, run id, quick) that are not
        stored yet, all in one transaction; the links already there are neither read
        back one by one nor written again. Returns how many were written."""
        if not links:
            return 0
        rows = [[e, _dumps(v), s, r, q] for e, v, s, r, q in links]
        with self.session() as con:
            present = set(
                con.execute(
                    "SELECT experiment_id, CAST(variant AS VARCHAR), seed, run_id "
                    "FROM experiment_runs WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                    [sorted({run_id for _, _, _, run_id, _ in links})],
                ).fetchall()
            )
            missing = [r for r in rows if (r[0], r[1], r[2], r[3]) not in present]
            if missing:
                con.execute("BEGIN TRANSACTION")
                try:
                    _insert_rows(
                        con, "experiment_runs", _LINK_COLUMNS, missing, "ON CONFLICT DO NOTHING"
                    )
                    con.execute("COMMIT")
                except BaseException:
                    try:
                        con.execute("ROLLBACK")
                    except Exception:  # noqa: BLE001, S110 - the original error is raised
                        pass
                    raise
        return len(missing)

    def traces(self, run_id: str, keep: Collection[str] | None = None) -> dict[str, Any] | None:
        """The run's traces (None if it has none); with `keep`, only those top-level
        entries (`time_s`, `tcp`, ...): the rest is dropped as soon as it is read, so
        that a reader of a few entries of many runs holds no more than those."""
        with self.session() as con:
            if self.json_traces:
                row = con.execute("SELECT traces FROM series WHERE run_id = ?", [run_id]).fetchone()
                if row is None:
                    return None
                traces: dict[str, Any] = json.loads(row[0])
                return traces if keep is None else {k: v for k, v in traces.items() if k in keep}
            row = con.execute(
                "SELECT seq, layout FROM traces WHERE run_id = ?", [run_id]
            ).fetchone()
            if row is None:
                return None
            layout: dict[str, Any] = json.loads(row[1])
            if keep is None:
                series = con.execute(
                    "SELECT path, points FROM series WHERE seq = ?", [row[0]]
                ).fetchall()
            else:
                layout = {k: v for k, v in layout.items() if k in keep}
                series = con.execute(
                    "SELECT path, points FROM series WHERE seq = ? "
                    "AND list_contains(?::VARCHAR[], split_part(path, '.', 1))",
                    [row[0], sorted(keep)],
                ).fetchall()
        return join_traces(layout, series)

    def all_traces(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every stored run's (run id, traces), one run at a time, by run id."""
        with self.session() as con:
            if self.json_traces:
                cur = con.execute(
                    "SELECT run_id, CAST(traces AS VARCHAR) FROM series ORDER BY run_id"
                )
                while True:
                    row = cur.fetchone()
                    if row is None:
                        return
                    yield row[0], json.loads(row[1])
            ids = [
                r[0] for r in con.execute("SELECT run_id FROM traces ORDER BY run_id").fetchall()
            ]
            for run_id in ids:
                traces = self.traces(run_id)
                if traces is not None:
                    yield run_id, traces

    def count(self) -> int:
        with self.session() as con:
            row = con.execute("SELECT count(*) FROM runs").fetchone()
        return int(row[0]) if row else 0


def open_existing(path: str | os.PathLike[str] | None) -> ResultsStore:
    """The results store at `path` (or the default one), read-only; bad input naming
    the path when there is none, rather than creating an empty store."""
    where = path if path is not None else default_path()
    if not Path(where).exists():
        raise InputError(
            f"{where}: no results store here (pass --store PATH or set MANETFAIR_STORE)"
        )
    return ResultsStore(where, read_only=True)


class StoreBusyError(RuntimeError):
    """The store file is locked by another process for too long, or is unreadable."""


class StoreDamagedError(StoreBusyError):
    """The store file fails DuckDB's own checks (truncated, unreadable blocks)."""


class StoreWriteError(RuntimeError):
    """A run could not be written to the store (the message names the file and the cause)."""


_SERIES_TYPES = {float, type(None)}
# A run's traces, whatever their shape, as join_traces gets and gives them back.
_Traces = TypeVar("_Traces")
# How many numbers of series a write gathers before it hands them to DuckDB.
_SERIES_CHUNK = 4_000_000


# The columns of the tables written row by row, with their Arrow types, in table order.
_RUNS_COLUMNS = (
    ("run_id", "string"),
    ("scenario_hash", "string"),
    ("seed", "int64"),
    ("code_version", "string"),
    ("scenario_name", "string"),
    ("experiment_id", "string"),
    ("variant", "string"),
    ("parameters", "string"),
    ("scenario", "string"),
    ("summary", "string"),
    ("wall_s", "float64"),
    ("created_at", "timestamp"),
)
_LINK_COLUMNS = (
    ("experiment_id", "string"),
    ("variant", "string"),
    ("seed", "int64"),
    ("run_id", "string"),
    ("quick", "bool"),
)
_TRACES_COLUMNS = (("run_id", "string"), ("seq", "int64"), ("layout", "string"))


def _insert_rows(
    con: Any,
    table: str,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
    conflict: str = "",
) -> None:
    """Inserts rows into `table` as one Arrow table in one statement. DuckDB's
    `executemany` converts each row's parameters on its own, and looks for pandas
    (an import that fails, searching the whole path, when it is not installed) some
    forty times for each run stored: a fifth of what storing a run cost."""
    if not rows:
        return
    import pyarrow as pa

    types = {
        "string": pa.string(),
        "int64": pa.int64(),
        "float64": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("us"),
    }
    try:
        data = pa.table(
            {
                name: pa.array([row[i] for row in rows], types[kind])
                for i, (name, kind) in enumerate(columns)
            }
        )
    except (OverflowError, pa.ArrowException) as exc:
        # A value the column cannot hold (a seed beyond BIGINT): the error DuckDB
        # gave for it when the rows were its parameters, so that callers see one kind.
        import duckdb

        raise duckdb.ConversionException(f"{table}: {exc}") from None
    _insert_arrow(con, table, data, [n for n, _ in columns], conflict)


def _insert_arrow(
    con: Any, table: str, data: Any, columns: Sequence[str], conflict: str = ""
) -> None:
    """Inserts the Arrow table `data` (its `columns`, in `table`'s order) into
    `table` in one statement."""
    name = f"manetfair_new_{table}"
    con.register(name, data)
    try:
        con.execute(f"INSERT INTO {table} SELECT {', '.join(columns)} FROM {name} {conflict}")
    finally:
        con.unregister(name)


def _append_series(con: Any, chunks: list[Any]) -> None:
    """Appends Arrow tables of series rows to the `series` table."""
    if not chunks:
        return
    import pyarrow as pa

    _insert_arrow(con, "series", pa.concat_tables(chunks), ["run_id", "seq", "path", "points"])


def split_traces(traces: Any) -> tuple[Any, list[tuple[str, list[float | None]]]]:
    """A run's traces as (layout, series): each series, a list of floats (and nulls,
    where a value is undefined), replaced by null in the layout and listed with its
    path, e.g. `radio_busy_frac.17` or `tcp.0.srtt_s` (list positions as numbers).
    Whatever is not such a list (a number, an empty list, a list with an integer in
    it, anything under an empty key or one with a dot) stays in the layout as it is,
    so that join_traces gives back exactly the traces given."""
    series: list[tuple[str, list[float | None]]] = []

    def strip(node: Any, path: str) -> Any:
        if isinstance(node, list):
            if node and set(map(type, node)) <= _SERIES_TYPES:
                series.append((path, node))
                return None
            return [strip(x, f"{path}.{i}") for i, x in enumerate(node)]
        if isinstance(node, dict):
            return {k: strip(v, f"{path}.{k}") if _plain(k) else v for k, v in node.items()}
        return node

    if not isinstance(traces, dict):
        return traces, []
    return {k: strip(v, k) if _plain(k) else v for k, v in traces.items()}, series


def _plain(key: str) -> bool:
    """Whether a key can be a step of a dotted path."""
    return bool(key) and "." not in key


def join_traces(layout: _Traces, series: Iterable[tuple[str, list[float | None]]]) -> _Traces:
    """The traces that split_traces split into `layout` and `series` (it fills `layout`)."""
    for path, points in series:
        node: Any = layout
        *parents, last = path.split(".")
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = points
        else:
            node[last] = points
    return layout


def _dumps(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, sort_keys=True)


def _package_version() -> str:
    try:
        from importlib.metadata import version

        return f"manetfair {version('manetfair')}"
    except Exception:  # noqa: BLE001 - a source tree without metadata
        return "manetfair (unknown version)"


def rows_as_dicts(con: Any, query: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The rows of `query` as dicts keyed by column name."""
    cur = con.execute(query, list(params))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]
