"""`platform` ("standard" or "ns2", docs/models.md): the key, `--platform` on run, sweep
and reproduce, and the experiments' own platforms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import REPO, run_cli

pytestmark = pytest.mark.core

CHAIN = """
name = "platform-chain"
duration_s = 8.0
[radio]
data_rate_mbps = 2.0
[topology]
kind = "chain"
nodes = 5
spacing_m = 200.0
[[flow]]
src = 0
dst = 4
transport = "tcp-newreno"
app = "ftp"
packet_bytes = 1000
start_s = 1.0
"""


def _summary(tmp_path: Path, *args: str) -> dict[str, object]:
    (tmp_path / "chain.toml").write_text(CHAIN, encoding="utf-8")
    proc = run_cli(["run", "chain.toml", "--json", *args], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    summary: dict[str, object] = json.loads(proc.stdout)
    summary.pop("wall_s")
    return summary


def test_platform_flag_is_the_platform_key(tmp_path: Path) -> None:
    by_flag = _summary(tmp_path, "--platform", "ns2")
    by_key = _summary(tmp_path, "--param", "platform=ns2")
    standard = _summary(tmp_path)
    assert by_flag == by_key
    assert by_flag["flows"] != standard["flows"]


def test_platform_given_twice_or_unknown_is_refused(tmp_path: Path) -> None:
    (tmp_path / "chain.toml").write_text(CHAIN, encoding="utf-8")
    both = ["run", "chain.toml", "--platform", "ns2", "--param", "platform=standard"]
    proc = run_cli(both, fake=False, cwd=tmp_path)
    assert proc.returncode == 2
    assert "--platform and --param platform" in proc.stderr
    proc = run_cli(["run", "chain.toml", "--param", "platform=qualnet"], fake=False, cwd=tmp_path)
    assert proc.returncode == 2
    assert "platform" in proc.stderr and '"ns2"' in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_key_the_file_sets_wins_over_the_ns2_defaults(tmp_path: Path) -> None:
    (tmp_path / "chain.toml").write_text(CHAIN + "\n[tcp]\nmax_window_pkts = 3\n", encoding="utf-8")
    proc = run_cli(["check", "chain.toml", "--param", "platform=ns2"], fake=False, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    from manetfair.scenario import Scenario

    sc = Scenario.from_file(tmp_path / "chain.toml").with_overrides({"platform": "ns2"})
    canonical = json.loads(sc.canonical_json())
    assert canonical["tcp"]["max_window_pkts"] == 3
    assert canonical["tcp"]["min_rto_s"] == 0.2
    assert canonical["ns2"]["cts_if_idle"] is True


def test_papers_that_ran_ns2_run_on_ns2() -> None:
    from manetfair import experiments

    found = experiments.load_all(REPO / "experiments")
    platforms = {e.id.partition("-")[0]: e.platform for e in found}
    assert platforms == {
        "validate": "standard",
        "nred": "standard",
        "throttle": "ns2",
        "mtcp": "ns2",
        "selfcontention": "ns2",
        "opet": "ns2",
        # The league runs both platforms on an axis; its first variant is standard.
        "league": "standard",
    }
    for exp in found:
        for variant in exp.variants(quick=True)[:1]:
            data = exp.expand(variant).data
            assert data.get("platform", "standard") == exp.platform, exp.id


def test_platform_page_lists_the_conclusions_that_change(tmp_path: Path) -> None:
    from manetfair import report_platform

    def entry(platform: str, measured: float, holds: bool) -> dict[str, object]:
        claims = [
            {"what": "Jain index", "paper": 0.5, "measured": measured, "holds": holds},
            {"what": "aggregate", "paper": 300.0, "measured": 310.0, "holds": True},
        ]
        return {
            "id": "mtcp-table3",
            "title": "Table 3",
            "seeds": 3,
            "platform": platform,
            "paper_platform": "ns2",
            "claims": claims,
        }

    (tmp_path / "mtcp-table3.json").write_text(json.dumps(entry("ns2", 0.5, True)))
    (tmp_path / "mtcp-table3-standard.json").write_text(json.dumps(entry("standard", 0.9, False)))
    (tmp_path / "mtcp-table3-sinr.json").write_text(json.dumps(entry("ns2", 0.7, False)))
    assert report_platform.write(tmp_path)
    md = (tmp_path / "platform.md").read_text()
    changed = md.split("## Conclusions that hold under one platform")[1].split("## Table 3")[0]
    assert "| `mtcp-table3` | Jain index | 0.5 | ns2 only (ns2 0.5, standard 0.9) |" in changed
    assert "aggregate" not in changed and "sinr" not in md
    assert report_platform.has_page(tmp_path)
