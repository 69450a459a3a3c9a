"""Sweep figures and DataFrames: `sweep --out DIR` draws each summary metric against
each swept axis with the seeds' range; `manetfair.sweep(...)` and
`manetfair.results(...)` return one row per run with typed parameter columns."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from conftest import REPO, run_cli

pytestmark = pytest.mark.core

CHAIN = REPO / "examples" / "chain.toml"


def test_sweep_out_draws_every_metric_against_the_axis(tmp_path: Path) -> None:
    args = ["sweep", str(CHAIN), "--param", "mac.queue_capacity_pkts=10,50", "--seeds", "3"]
    args += ["--duration", "8", "--json", "--store", str(tmp_path / "s.duckdb")]
    proc = run_cli([*args, "--out", str(tmp_path / "s")], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = json.loads(proc.stdout)["runs"]
    axis = "mac.queue_capacity_pkts"
    for metric in ("aggregate_kbps", "jain_index", "loss_pct", "flows_throughput_kbps"):
        for ext in ("png", "svg", "csv"):
            assert (tmp_path / "s" / f"{metric}-vs-{axis}.{ext}").stat().st_size > 0
    with (tmp_path / "s" / f"aggregate_kbps-vs-{axis}.csv").open(newline="") as fh:
        points = list(csv.DictReader(fh))
    assert [p[axis] for p in points] == ["10", "50"]
    for p in points:
        values = [
            r["summary"]["aggregate_kbps"] for r in runs if r["variant"][axis] == int(p[axis])
        ]
        assert int(p["seeds"]) == len(values) == 3
        assert float(p["mean"]) == pytest.approx(sum(values) / 3)
        assert (float(p["min"]), float(p["max"])) == (min(values), max(values))
    with (tmp_path / "s" / "runs.csv").open(newline="") as fh:
        assert len(list(csv.DictReader(fh))) == 6


def test_sweep_and_results_return_typed_dataframes(tmp_path: Path) -> None:
    import manetfair

    store = tmp_path / "s.duckdb"
    params = {"mac.queue_capacity_pkts": [10, 50], "mac.queue": ["droptail", "red"]}
    df = manetfair.sweep(CHAIN, params, seeds=2, duration_s=4.0, store=store, jobs=2)
    assert len(df) == 8
    assert list(df.columns[:4]) == ["run_id", "seed", "mac.queue_capacity_pkts", "mac.queue"]
    assert str(df["mac.queue_capacity_pkts"].dtype) == "Int64"
    assert str(df["mac.queue"].dtype) == "string"
    assert str(df["seed"].dtype) == "Int64"
    assert str(df["aggregate_kbps"].dtype) == "float64"
    assert str(df["ledger_balanced"].dtype) == "boolean"
    assert df["flow0_throughput_kbps"].notna().all()
    by_cap = df.groupby("mac.queue_capacity_pkts")["aggregate_kbps"].count()
    assert by_cap.to_dict() == {10: 4, 50: 4}

    stored = manetfair.results(store)
    assert sorted(stored["run_id"]) == sorted(df["run_id"])
    assert str(stored["mac.queue_capacity_pkts"].dtype) == "Int64"
    merged = df.merge(stored, on="run_id", suffixes=("", "_stored"))
    assert (merged["aggregate_kbps"] == merged["aggregate_kbps_stored"]).all()
    assert len(manetfair.results(store, scenario_name="nothing-like-this")) == 0
