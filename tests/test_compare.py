"""`manetfair compare`: two runs side by side with differences marked, and two
stores of the same experiment at two code versions, with the claims whose verdict
changed listed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import REPO, run_cli

pytestmark = pytest.mark.core


def test_two_stores_at_two_code_versions_list_the_changed_verdicts(tmp_path: Path) -> None:
    import duckdb

    one = tmp_path / "one.duckdb"
    args = ["reproduce", "validate-chain", "--quick", "--seeds", "1", "--quiet"]
    proc = run_cli(
        [*args, "--store", str(one), "--out", str(tmp_path / "rep")], fake=False, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    # Another code version of the same experiment, in which 2-hop flows got slower.
    two = tmp_path / "two.duckdb"
    shutil.copy(one, two)
    con = duckdb.connect(str(two))
    rows = con.execute(
        "SELECT r.run_id, CAST(r.summary AS VARCHAR), CAST(e.variant AS VARCHAR) "
        "FROM runs r JOIN experiment_runs e USING (run_id)"
    ).fetchall()
    slowed = 0
    for run_id, summary_text, variant_text in rows:
        summary = json.loads(summary_text)
        if 2 in json.loads(variant_text).values():
            for f in summary["flows"]:
                f["throughput_kbps"] *= 0.6
            summary["aggregate_kbps"] *= 0.6
            slowed += 1
        con.execute(
            "UPDATE runs SET summary = ?, code_version = 'later-version' WHERE run_id = ?",
            [json.dumps(summary), run_id],
        )
    con.close()
    assert slowed == 1

    proc = run_cli(["compare", str(one), str(two), "--json"], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["versions"]["b"] == "later-version"
    changed = [(c["experiment"], c["what"]) for c in doc["verdict_changed"]]
    assert changed == [("validate-chain", changed[0][1])] and "2-hop" in changed[0][1]
    claims = doc["experiments"][0]["claims"]
    assert len(claims) == 3 and sum(c["measured_differs"] for c in claims) >= 1
    # The text marks the changed claim and names it at the end.
    proc = run_cli(["compare", str(one), str(two)], fake=False, cwd=tmp_path)
    assert "1 claim(s) changed verdict:" in proc.stdout and "now fails" in proc.stdout
    # The report folder of the first reproduction compares the same as its store.
    proc = run_cli(
        ["compare", str(tmp_path / "rep"), f"{two}@later", "--json"], fake=False, cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert [c["what"] for c in json.loads(proc.stdout)["verdict_changed"]] == [changed[0][1]]


def test_two_runs_side_by_side_with_overlaid_figures(tmp_path: Path) -> None:
    chain = str(REPO / "examples" / "chain.toml")
    for seed, name in ((1, "a"), (2, "b")):
        proc = run_cli(
            ["run", chain, "--duration", "5", "--seed", str(seed), "--out", str(tmp_path / name)],
            fake=False,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
    out = tmp_path / "cmp"
    args = ["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--json", "--out", str(out)]
    proc = run_cli(args, fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    rows = {r["key"]: r for r in doc["summary"]}
    assert rows["seed"]["differs"] and rows["seed"]["a"] == 1 and rows["seed"]["b"] == 2
    assert not rows["duration_s"]["differs"]
    flow = {r["key"]: r for r in doc["flows"][0]["fields"]}
    assert {"throughput_kbps", "p95_delay_s", "losses_mac_retry"} <= set(flow)
    for name in (
        "compare.json",
        "compare.txt",
        "throughput.png",
        "throughput.svg",
        "throughput.csv",
    ):
        assert (out / name).stat().st_size > 0
    bad = run_cli(
        ["compare", str(tmp_path / "a"), str(tmp_path / "nothing")], fake=False, cwd=tmp_path
    )
    assert bad.returncode == 2 and "nothing" in bad.stderr
