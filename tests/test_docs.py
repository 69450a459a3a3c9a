"""The documentation's examples run as written, and say what they show.

Every SQL, shell and Python example in README.md and docs/*.md either runs here, on a
small store and small runs made for the purpose, with its output checked, or is named
in NOT_RUN with the reason it cannot run in a test. SQL runs in the DuckDB Python
package that manetfair installs, the version that writes the store.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.core

# (document, language, how the example starts): examples not run, and why.
NOT_RUN = {
    ("README.md", "sh", "# 1. Install"): "installs the package; .ci/run runs these commands",
    ("README.md", "sh", "pip install ./manetfair-"): "a released wheel (tests/test_wheel.py)",
    ("README.md", "sh", "python -m venv"): "rebuilds the native module",
    ("docs/cluster.md", "sh", "pip install"): "installs the package on cluster machines",
    ("docs/cluster.md", "sh", "ray start"): "starts a Ray cluster (tests/test_cluster.py)",
    ("docs/cluster.md", "sh", "manetfair reproduce --quick --backend ray"): "a Ray cluster",
    ("docs/benchmark.md", "sh", ""): "needs ns-3 and hours (bench/)",
    ("docs/install.md", "sh", ""): "installs, builds wheels or runs these tests (test_wheel.py)",
    ("docs/trace.md", "sh", "manetfair run examples/chain.toml --pcap air.pcap"): (
        "needs tshark; tests/test_pcap_nodes.py runs the same and checks the count"
    ),
    ("docs/figures.md", "sh", "manetfair run hidden.toml"): (
        "needs a hidden-terminal scenario file; tests/test_timeline.py runs both commands"
    ),
    ("docs/figures.md", "python", "import manetfair"): (
        "full-length sweeps and a store made first; tests/test_sweeps.py makes both calls"
    ),
    ("docs/figures.md", "sh", "manetfair compare out-red"): (
        "needs runs, stores and reports made first; tests/test_compare.py compares each kind"
    ),
    ("docs/nred.md", "sh", "python3 tools/tcp_loss_anatomy.py"): (
        "needs tshark; tests/test_loss_anatomy_tool.py runs seed 1 and checks its counts"
    ),
    ("docs/selfcontention.md", "sh", "python3 tools/ff_anatomy.py"): (
        "minutes of 100 s runs; tests/test_ff_anatomy_tool.py runs a short string"
    ),
}
RUN_LANGUAGES = ("sql", "sh", "python")


def blocks(doc: str) -> list[tuple[str, str]]:
    """The fenced examples of `doc` (a path from the repository's root): (language, text)."""
    text = (REPO / doc).read_text(encoding="utf-8")
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.DOTALL | re.MULTILINE)


def block(doc: str, lang: str, start: str) -> str:
    """The one example of `doc` in `lang` that starts with `start`."""
    (found,) = [b for lang_, b in blocks(doc) if lang_ == lang and b.startswith(start)]
    return found


def _documents() -> Iterator[str]:
    yield "README.md"
    for path in sorted((REPO / "docs").glob("*.md")):
        yield f"docs/{path.name}"


# The examples this file runs, by (document, language, start); each test below takes
# its example from here.
README_SCENARIO = ("README.md", "sh", "manetfair examples ")
README_PYTHON = ("README.md", "python", "import manetfair")
CLI_PYTHON = ("docs/cli.md", "python", "from pathlib import Path")
TRACE_SH = ("docs/trace.md", "sh", "manetfair run examples/chain.toml --trace t.jsonl")
TRACE_PYTHON = ("docs/trace.md", "python", "import pandas as pd")
VIEW_SH = ("docs/trace.md", "sh", "manetfair view examples/chain.toml")
STORE_META = ("docs/results-store.md", "sql", "SELECT * FROM meta;")
STORE_SCHEMA = ("docs/results-store.md", "sql", "CREATE TABLE runs")
STORE_QUERIES = ("docs/results-store.md", "sql", "-- mean aggregate throughput per number")
EXPORT_PYTHON = ("docs/results-store.md", "python", "import pandas as pd")
EXPORT_QUERIES = ("docs/results-store.md", "sql", "-- mean aggregate throughput per queue")
ALL_RUN = [
    README_SCENARIO,
    README_PYTHON,
    CLI_PYTHON,
    TRACE_SH,
    TRACE_PYTHON,
    VIEW_SH,
    STORE_META,
    STORE_SCHEMA,
    STORE_QUERIES,
    EXPORT_PYTHON,
    EXPORT_QUERIES,
]


def test_every_example_runs_in_a_test_or_says_why_not() -> None:
    covered = [*ALL_RUN, *NOT_RUN]
    for doc in _documents():
        for lang, text in blocks(doc):
            if lang not in RUN_LANGUAGES:
                continue
            starts = [s for d, la, s in covered if d == doc and la == lang and text.startswith(s)]
            assert starts, f"{doc}: a {lang} example that no test runs:\n{text[:200]}"
    for key in ALL_RUN:
        block(*key)  # each names exactly one example


# --- running them -------------------------------------------------------------------


@pytest.fixture(scope="module")
def shell_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a user's shell: `manetfair` on PATH (this interpreter's)."""
    bin_dir = tmp_path_factory.mktemp("bin")
    exe = bin_dir / "manetfair"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m manetfair.cli "$@"\n', "utf-8")
    exe.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MANETFAIR_")}
    path = [str(bin_dir), str(Path(sys.executable).parent), env.get("PATH", "")]
    env["PATH"] = os.pathsep.join(path)
    return env


def sh(text: str, cwd: Path, env: dict[str, str]) -> str:
    """Runs a shell example as a user would paste it: stops at the first failure."""
    proc = subprocess.run(
        ["bash", "-e", "-c", text],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, f"{text}\nexited {proc.returncode}:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def python(text: str, cwd: Path) -> dict[str, Any]:
    """Runs a Python example in `cwd`; returns its variables."""
    here = Path.cwd()
    os.chdir(cwd)
    try:
        names: dict[str, Any] = {}
        exec(compile(text, "<example>", "exec"), names)  # noqa: S102  (the docs, as written)
        return names
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory, shell_env: dict[str, str]) -> Path:
    """A small store: the experiments the docs' queries name, one seed each, and a
    sweep of the queue capacity; its export in out/."""
    d = tmp_path_factory.mktemp("store")
    sh(
        "manetfair examples\n"
        "manetfair reproduce validate-bianchi opet-fig2 --quick --seeds 1 --quiet\n"
        "manetfair sweep examples/chain.toml --param mac.queue_capacity_pkts=20,50 "
        "--param duration_s=10 --seeds 2\n"
        "manetfair export --out out\n",
        d,
        shell_env,
    )
    return d


def sql(text: str) -> list[str]:
    """The statements of a SQL example, comments dropped."""
    lines = [line.split("--")[0] for line in text.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def test_readme_one_scenario(tmp_path: Path, shell_env: dict[str, str]) -> None:
    out = sh(block(*README_SCENARIO), tmp_path, shell_env)
    assert "valid (chain topology, 5 nodes, 1 flow" in out
    assert '"aggregate_kbps"' in out  # --json
    assert (tmp_path / "out" / "summary.json").is_file()
    assert (tmp_path / "out" / "series.parquet").is_file()
    assert (tmp_path / "frames.pcap").read_bytes()[:4] == bytes.fromhex("4d3cb2a1")
    first = json.loads((tmp_path / "events.jsonl").read_text().splitlines()[0])
    assert {"t_ns", "node", "event"} <= set(first)
    assert "dataset.ready" in (tmp_path / "examples" / "random.html").read_text()
    assert re.search(r"^\s*100\b", out, flags=re.MULTILINE), out  # the sweep's table
    assert "filter add dev" in out  # shares --tc
    python(block(*README_PYTHON), tmp_path)


def test_cli_python_api(tmp_path: Path, shell_env: dict[str, str]) -> None:
    sh("manetfair examples && cp examples/chain.toml chain.toml", tmp_path, shell_env)
    names = python(block(*CLI_PYTHON), tmp_path)
    r = names["r"]
    assert r.summary["aggregate_kbps"] > 0 and r.summary["duration_s"] == 50
    assert r.series().num_rows == 50 and r.flows().num_rows == 1
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "summary.json",
        "series.parquet",
        "series.csv",
    }


def test_trace_examples(tmp_path: Path, shell_env: dict[str, str]) -> None:
    if shutil.which("jq", path=shell_env["PATH"]) is None:
        pytest.skip("needs jq (apt-get install jq)")
    sh("manetfair examples", tmp_path, shell_env)
    out = sh(block(*TRACE_SH), tmp_path, shell_env)
    dropped = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert dropped and all(e["flow"] == 0 and e["cause"] == "mac_retry" for e in dropped)
    assert re.search(r"│\s*\d+\s*│\s*mac_retry\s*│\s*\d+\s*│", out), out  # duckdb's table
    names = python(block(*TRACE_PYTHON), tmp_path)
    enqueued = names["enqueued"]
    assert enqueued.sum() > 0 and list(enqueued.index) == sorted(enqueued.index)
    t = names["t"]  # polars, from Parquet: every column, power_dbm included
    assert {"cause", "retry", "power_dbm", "ff_run"} <= set(t.columns)
    received = t.filter(t["event"].is_in(["rx_ok", "rx_lost"]))
    assert received.height > 0 and received["power_dbm"].null_count() == 0

    # The page's advice for JSON lines: infer_schema_length=None reads every key.
    import polars as pl

    sh("manetfair run examples/chain.toml --trace all.jsonl", tmp_path, shell_env)
    every = pl.read_ndjson(tmp_path / "all.jsonl", infer_schema_length=None)
    assert {"cause", "retry", "power_dbm"} <= set(every.columns)
    assert every.height == t.height


def test_trace_fields_are_the_documented_ones(tmp_path: Path, shell_env: dict[str, str]) -> None:
    """The field table of docs/trace.md names every key a trace writes, and its
    example lines use only those."""
    text = (REPO / "docs" / "trace.md").read_text(encoding="utf-8")
    table = text.split("| field | meaning |", 1)[1].split("\n\n", 1)[0]
    documented = set(re.findall(r"^\| `([a-z_]+)`(?:, `([a-z_]+)`)?", table, flags=re.MULTILINE))
    fields = {f for pair in documented for f in pair if f}
    for line in block("docs/trace.md", "json", "").splitlines():
        assert set(json.loads(line)) <= fields, line
    sh(
        "manetfair examples && manetfair run examples/explicit.toml --duration 10 "
        "--param radio.reception=sinr --trace t.jsonl",
        tmp_path,
        shell_env,
    )
    written: set[str] = set()
    for line in (tmp_path / "t.jsonl").read_text().splitlines():
        written |= set(json.loads(line))
    assert written - fields == set(), written - fields
    assert "power_dbm" in written
    # A Parquet trace has exactly the documented columns, whatever the run wrote
    # (fast-forward's `ff_run` included: its runs' Parquet traces failed without it).
    from manetfair import trace

    assert set(trace.schema().names) == fields
    sh(
        "manetfair run examples/chain.toml --duration 5 "
        "--param mac.fast_forward.enabled=true --trace ff.parquet",
        tmp_path,
        shell_env,
    )


def test_view_examples(tmp_path: Path, shell_env: dict[str, str]) -> None:
    sh("manetfair examples", tmp_path, shell_env)
    sh(block(*VIEW_SH), tmp_path, shell_env)
    for page in (tmp_path / "examples" / "chain.html", tmp_path / "random.html"):
        assert "dataset.ready" in page.read_text(encoding="utf-8")


def test_store_examples(store_dir: Path) -> None:
    import duckdb

    con = duckdb.connect(str(store_dir / "manetfair-results.duckdb"), read_only=True)
    try:
        (meta,) = sql(block(*STORE_META))
        keys = {k for k, _ in con.execute(meta).fetchall()}
        assert keys == {
            "schema_version",
            "created_by_duckdb",
            "duckdb_version",
            "manetfair_version",
        }

        # The schema as documented is the store's: every table, its columns in order.
        for create in sql(block(*STORE_SCHEMA)):
            table = create.split()[2]
            body = create.split("(", 1)[1].rsplit(")", 1)[0]
            documented = [
                line.split()[0]
                for line in body.splitlines()
                if line.strip() and not line.strip().startswith(("UNIQUE", "PRIMARY KEY ("))
            ]
            actual = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
            assert documented == actual, table

        per_stations, per_flow, busy = (
            con.execute(q).fetchall() for q in sql(block(*STORE_QUERIES))
        )
        stations = [r[0] for r in per_stations]
        assert stations == sorted(stations) and len(stations) >= 3, per_stations
        assert all(seeds == 1 and kbps > 0 for _, seeds, kbps in per_stations)
        assert per_flow and all(kbps >= 0 for _, _, kbps in per_flow)
        assert busy and all(0 < b < 1 for _, b in busy)
    finally:
        con.close()


def test_export_examples(store_dir: Path) -> None:
    import duckdb

    names = python(block(*EXPORT_PYTHON), store_dir)
    runs_df, flows_df, series_df = names["runs"], names["flows"], names["series"]
    assert runs_df.height == len(series_df["run_id"].unique()) > 0  # polars, the last read
    assert len(flows_df) >= runs_df.height

    con = duckdb.connect()
    here = Path.cwd()
    os.chdir(store_dir)
    try:
        queries = sql(block(*EXPORT_QUERIES))
        run_id = con.execute(
            "SELECT run_id FROM 'out/series.parquet' WHERE entity = 'node3' LIMIT 1"
        ).fetchone()
        assert run_id is not None
        queries[-1] = queries[-1].replace("'...'", f"'{run_id[0]}'")  # the page's placeholder
        capacity, jain, queue = (con.execute(q).fetchall() for q in queries)
    finally:
        os.chdir(here)
        con.close()
    assert [r[0] for r in capacity] == sorted(r[0] for r in capacity)
    assert {20, 50} <= {r[0] for r in capacity}
    assert jain and all(0 < j <= 1 for _, j in jain)
    assert queue and [t for t, _ in queue] == sorted(t for t, _ in queue)
