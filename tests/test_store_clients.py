"""A store written by manetfair opens in DuckDB clients other than the one that wrote
it (docs/results-store.md, "Which DuckDB reads it"):

- the DuckDB command-line client, from the `duckdb-cli` package that the `test` extra
  installs (the issue's 1.5.6 client was the reason for the pin);
- an older DuckDB Python package in a folder of its own, named by
  `MANETFAIR_DUCKDB_OLD` (`.ci/run` installs 1.1.3 there, the lowest the pin allows).

Each reads every table read-only and must see what the writer stored.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from manetfair.runner import execute
from manetfair.store import ResultsStore
from test_store import specs_for

TABLES = ("meta", "runs", "experiment_runs", "series")
# What a client must read back: the versions, every table's size, and each run.
QUERIES = {
    "meta": "SELECT key, value FROM meta ORDER BY key",
    "counts": " UNION ALL ".join(f"SELECT '{t}', count(*) FROM {t}" for t in TABLES),
    "runs": "SELECT run_id, seed, scenario_hash, code_version, summary::VARCHAR FROM runs "
    "ORDER BY seed",
    "version": "SELECT version()",
}


def _store(tmp_path: Path, pair_file: Path) -> tuple[Path, dict[str, list[list[object]]]]:
    """A store of three runs, and what its writer reads back."""
    import duckdb
    from fake_core import run_scenario

    path = tmp_path / "r.duckdb"
    with ResultsStore(path) as store:
        execute(
            specs_for(pair_file, [1, 2, 3]),
            store,
            simulate=lambda text, origin: run_scenario(text, "json", origin),
        )
    con = duckdb.connect(str(path), read_only=True)
    try:
        seen = {k: [list(row) for row in con.execute(q).fetchall()] for k, q in QUERIES.items()}
    finally:
        con.close()
    return path, seen


def _same_data(seen: dict[str, list[list[object]]], written: dict[str, list[list[object]]]):
    for key in ("meta", "counts", "runs"):
        assert seen[key] == written[key], key
    assert dict(seen["meta"])["created_by_duckdb"] == written["version"][0][0].lstrip("v")
    assert [n for _, n in seen["counts"]][:2] == [4, 3]


def _cli() -> str | None:
    beside = Path(sys.executable).parent / "duckdb"
    return str(beside) if beside.is_file() else shutil.which("duckdb")


@pytest.mark.skipif(_cli() is None, reason="needs the DuckDB CLI (pip install duckdb-cli)")
def test_the_duckdb_command_line_client_reads_the_store(fake, tmp_path, pair_file):
    path, written = _store(tmp_path, pair_file)
    seen = {}
    for key, query in QUERIES.items():
        proc = subprocess.run(
            [str(_cli()), "-readonly", "-json", str(path), "-c", query],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        seen[key] = [list(row.values()) for row in json.loads(proc.stdout or "[]")]
    version = seen["version"][0][0]
    assert version.startswith("v1."), version
    _same_data(seen, written)


OLD = os.environ.get("MANETFAIR_DUCKDB_OLD")


@pytest.mark.skipif(
    not OLD,
    reason="set MANETFAIR_DUCKDB_OLD to a folder holding duckdb 1.1.3 "
    "(pip install --target DIR duckdb==1.1.3), as .ci/run does",
)
def test_an_older_duckdb_python_package_reads_the_store(fake, tmp_path, pair_file):
    path, written = _store(tmp_path, pair_file)
    reader = (
        "import json, sys, duckdb\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "queries = json.loads(sys.argv[2])\n"
        "print(json.dumps({k: [list(r) for r in con.execute(q).fetchall()]"
        " for k, q in queries.items()}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(OLD)}
    proc = subprocess.run(
        [sys.executable, "-c", reader, str(path), json.dumps(QUERIES)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    assert seen["version"][0][0] != written["version"][0][0], "the same DuckDB as the writer"
    assert seen["version"][0][0].startswith("v1."), seen["version"]
    _same_data(seen, written)
