"""Experiment files: arms marked unavailable, the claims that wait for them, and the
report and JSON that list both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from manetfair import experiments, report
from manetfair.errors import InputError
from manetfair.reproduce import reproduce, to_json
from manetfair.store import ResultsStore

ARMS = """
id = "demo-fig1"
paper = "demo.txt"
figure = "Figure 1"
description = "a baseline arm and a scheme that does not exist yet"

[scenario]
name = "demo"
duration_s = 5.0

[layout]
kind = "star"
stations = 2
[layout.flow]
transport = "udp"
app = "cbr"
rate_kbps = 100.0

[sweep]
seeds = 2
[sweep.quick]
seeds = 1

[[sweep.axis]]
name = "scheme"
values = ["basic", "better"]
[sweep.axis.set.basic]
[sweep.axis.unavailable]
better = "needs the better scheme"

[[sweep.axis]]
name = "stations"
key = "layout.stations"
values = [1, 2]

[[claim]]
what = "basic delivers something, {stations} stations"
quote = "The basic scheme delivers some traffic."
direction_only = true
where = { scheme = "basic" }
for_each = ["stations"]
measured = { field = "aggregate_kbps" }
paper = 0.0
test = "greater"

[[claim]]
what = "better / basic about 1.1"
quote = "The better scheme delivers about 10% more."
measured = { ratio = [{ field = "aggregate_kbps", where = { scheme = "better" } }, { field = "aggregate_kbps", where = { scheme = "basic" } }] }
paper = 1.1
test = "within"
rel_tol = 0.05
"""


def _write(tmp_path: Path, text: str) -> Path:
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "demo.toml").write_text(text, encoding="utf-8")
    return folder


def test_unavailable_arms_are_not_run_and_their_claims_wait(tmp_path, fake):
    exp = experiments.get("demo-fig1", _write(tmp_path, ARMS))
    assert exp.variants(quick=False) == [
        {"scheme": "basic", "stations": 1},
        {"scheme": "basic", "stations": 2},
    ]
    assert exp.missing_arms() == [("scheme", "better", "needs the better scheme")]
    pending = exp.pending_claims()
    assert [c["what"] for c, _ in pending] == ["better / basic about 1.1"]
    assert "scheme = better: needs the better scheme" in pending[0][1]
    assert [c["what"] for c in exp.runnable_claims()] == [
        "basic delivers something, {stations} stations"
    ]
    assert exp.availability() == (True, "")
    assert len(exp.specs(quick=False)) == 4


def test_an_experiment_whose_every_arm_waits_is_unavailable(tmp_path, fake):
    text = ARMS.replace('values = ["basic", "better"]', 'values = ["better"]').replace(
        "[sweep.axis.set.basic]\n", ""
    )
    exp = experiments.get("demo-fig1", _write(tmp_path, text))
    ok, why = exp.availability()
    assert not ok and "needs the better scheme" in why


def test_unavailable_must_name_a_value(tmp_path):
    text = ARMS.replace('better = "needs', 'worse = "needs')
    with pytest.raises(InputError, match="worse"):
        experiments.load_all(_write(tmp_path, text))


def test_set_axis_still_needs_a_table_for_each_runnable_value(tmp_path):
    text = ARMS.replace("[sweep.axis.set.basic]\n", "")
    with pytest.raises(InputError, match="basic"):
        experiments.load_all(_write(tmp_path, text))


def test_report_and_json_list_missing_arms_and_pending_claims(tmp_path, fake):
    exp = experiments.get("demo-fig1", _write(tmp_path, ARMS))
    with ResultsStore(tmp_path / "s.duckdb") as store:
        results = reproduce([exp], store, quick=True)
    (r,) = results
    assert [v.where for v in r.verdicts] == [
        {"scheme": "basic", "stations": 1},
        {"scheme": "basic", "stations": 2},
    ]
    assert {o.spec.variant["scheme"] for o in r.outcomes} == {"basic"}
    doc = to_json(results)["experiments"][0]
    assert doc["missing_arms"] == [
        {"axis": "scheme", "value": "better", "reason": "needs the better scheme"}
    ]
    assert [p["what"] for p in doc["pending_claims"]] == ["better / basic about 1.1"]
    assert doc["pending_claims"][0]["quote"] == "The better scheme delivers about 10% more."
    # A run's variant is the settings it changes; its axis values are beside it.
    assert [r["variant"] for r in doc["runs"]] == [{"layout.stations": 1}, {"layout.stations": 2}]
    assert [r["axes"] for r in doc["runs"]] == [
        {"scheme": "basic", "stations": 1},
        {"scheme": "basic", "stations": 2},
    ]
    assert doc["runs"][0]["label"] == "scheme = basic, stations = 1"
    assert doc["claims"][0]["quote"] == "The basic scheme delivers some traffic."
    json.dumps(doc)
    report.write(results, tmp_path / "out")
    page = (tmp_path / "out" / "demo-fig1.md").read_text(encoding="utf-8")
    assert "## Not yet available" in page
    assert "scheme = better: needs the better scheme" in page
    assert (
        "| better / basic about 1.1 | “The better scheme delivers about 10% more.” | 1.1 |" in page
    )
    index = (tmp_path / "out" / "index.md").read_text(encoding="utf-8")
    assert "arms not yet available: scheme = better" in index


def test_experiments_command_marks_partly_available_ones(tmp_path):
    from conftest import run_cli

    folder = _write(tmp_path, ARMS)
    env = {"MANETFAIR_EXPERIMENTS": str(folder)}
    proc = run_cli(["experiments", "--json"], fake=True, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr
    # A user's experiments come beside the built-in ones.
    listing = {e["id"]: e for e in json.loads(proc.stdout)["experiments"]}
    assert "validate-bianchi" in listing
    entry = listing["demo-fig1"]
    assert entry["available"] is True
    assert entry["missing_arms"] == [
        {"axis": "scheme", "value": "better", "reason": "needs the better scheme"}
    ]
    text = run_cli(["experiments"], fake=True, cwd=tmp_path, env=env).stdout
    assert any(line.startswith("demo-fig1") and " partial " in line for line in text.splitlines())
    assert "arm scheme = better waits: needs the better scheme" in text
