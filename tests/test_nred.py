"""The NRED paper's experiments on the real core, in quick mode: every run
balances its ledger, NRED runs report their notifications and drops, and
every figure is drawn."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
IDS = [
    "nred-fig2",
    "nred-fig6",
    "nred-fig7",
    "nred-fig10",
    "nred-fig11",
    "nred-fig12",
    "nred-fig13",
    "nred-fig14",
    "nred-fig16",
    "nred-fig18",
    "nred-fig19",
    "nred-fig20",
]


@pytest.mark.core
def test_reproduce_quick_nred_with_the_core(tmp_path):
    out = tmp_path / "rep"
    args = ["reproduce", *IDS, "--quick", "--seeds", "1", "--json", "--out", str(out)]
    args += ["--store", str(tmp_path / "s.duckdb")]
    proc = run_cli(args, fake=False, cwd=tmp_path, timeout=900)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [e["id"] for e in doc["experiments"]] == IDS
    for exp in doc["experiments"]:
        assert exp["runs"] and exp["claims"], exp["id"]
        for run in exp["runs"]:
            s = run["summary"]
            assert s["ledger"]["balanced"] is True
            queue = run["variant"].get("mac.queue", "droptail")
            if queue in ("droptail", "red"):
                assert "nred" not in s
            else:
                n = s["nred"]
                assert n["ncn_sent"] > 0 and n["ncn_bytes"] == 28 * n["ncn_sent"]
                assert s["drops"]["aqm"] == n["drops_outgoing"] + n["drops_incoming"]
        assert (out / f"{exp['id']}.png").read_bytes().startswith(PNG_MAGIC)
    fig6 = next(e for e in doc["experiments"] if e["id"] == "nred-fig6")
    assert fig6["runs"][0]["summary"]["neighborhood"]["node"] == 5
