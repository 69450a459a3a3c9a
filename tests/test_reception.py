"""`manetfair reproduce --reception sinr` and the report's side-by-side page."""

from __future__ import annotations

import json

from conftest import no_traceback, run_cli
from manetfair import report_reception


def _reproduce(tmp_path, *extra):
    args = ["reproduce", "validate-bianchi", "--quick", "--seeds", "1", "--jobs", "1"]
    args += ["--out", str(tmp_path / "rep"), "--store", str(tmp_path / "s.duckdb"), *extra]
    env = {"FAKE_CORE_COUNTER": str(tmp_path / "count")}
    return run_cli(args, fake=True, cwd=tmp_path, env=env)


def test_reproduce_under_both_models_puts_them_side_by_side(tmp_path):
    first = _reproduce(tmp_path, "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["experiments"][0]["reception"] == "threshold"
    second = _reproduce(tmp_path, "--json", "--reception", "sinr")
    assert second.returncode == 0, second.stderr
    doc = json.loads(second.stdout)["experiments"][0]
    assert doc["reception"] == "sinr"
    # Other scenarios than the threshold runs: simulated, not served from the store.
    assert not any(r["cached"] for r in doc["runs"])
    runs = len((tmp_path / "count").read_text().splitlines())
    assert runs == 2 * len(doc["runs"])
    rep = tmp_path / "rep"
    for name in ("validate-bianchi.md", "validate-bianchi-sinr.md", "validate-bianchi-sinr.html"):
        assert (rep / name).is_file(), name
    assert "reception model sinr" in (rep / "validate-bianchi-sinr.md").read_text()
    page = (rep / "reception.md").read_text()
    assert "validate-bianchi-sinr.md" in page and "| claim | paper | threshold | sinr |" in page
    index = (rep / "index.md").read_text()
    assert "(validate-bianchi.md)" in index and "(reception.md)" in index


def test_side_by_side_lists_the_conclusions_that_change(tmp_path):
    def entry(measured, holds):
        claims = [
            {"what": "Jain index", "paper": 0.5, "measured": measured, "holds": holds},
            {"what": "aggregate", "paper": 300.0, "measured": 310.0, "holds": True},
        ]
        return {"id": "mtcp-table3", "title": "Table 3", "seeds": 3, "claims": claims}

    (tmp_path / "mtcp-table3.json").write_text(json.dumps(entry(0.6, True)))
    (tmp_path / "mtcp-table3-sinr.json").write_text(json.dumps(entry(0.99, False)))
    (tmp_path / "nred-fig10.json").write_text(json.dumps(entry(0.6, True)))  # one model only
    md, page = report_reception.build(tmp_path)
    changed = md.split("## Conclusions that hold under one model")[1].split("## Table 3")[0]
    assert (
        "| `mtcp-table3` | Jain index | 0.5 | threshold only (threshold 0.6, sinr 0.99) |"
        in changed
    )
    assert "aggregate" not in changed and "nred-fig10" not in md
    assert "<td>yes</td>" in page
    report_reception.write(tmp_path)
    assert (tmp_path / "reception.html").read_text().startswith("<!DOCTYPE html>")


def test_nothing_to_compare_writes_no_page(tmp_path):
    assert report_reception.write(tmp_path) == []
    assert not report_reception.has_page(tmp_path)


def test_unknown_reception_model_is_refused(tmp_path):
    proc = _reproduce(tmp_path, "--reception", "ber")
    assert proc.returncode == 2 and no_traceback(proc)
    assert "--reception" in proc.stderr and "sinr" in proc.stderr
