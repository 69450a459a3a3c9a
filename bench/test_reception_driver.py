"""Tests of bench/reception.py: the cases, the inputs both simulators get, and the
verdict rule. Run with ``python3 -m pytest bench/test_reception_driver.py``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reception


def by_name() -> dict[str, reception.Case]:
    return {c.name: c for c in reception.cases()}


def test_cases_cover_the_issue_list() -> None:
    names = set(by_name())
    assert {"link-250", "link-251", "pair-500", "pair-551", "hidden-002"} <= names
    assert {f"chain-{h}" for h in range(1, 9)} <= names


def test_both_simulators_get_the_same_nodes_flows_and_settings() -> None:
    c = by_name()["pair-551"]
    sc = reception.manetfair_scenario(c, 3)
    assert sc["seed"] == 3 and sc["radio"]["reception"] == "sinr"
    assert sc["radio"]["sinr"]["preamble_detection_db"] == reception.PREAMBLE_DB
    assert sc["mac"] == {"ack_rate_mbps": 2.0, "eifs_after_sensed": False, "long_retry_limit": 7}
    assert [(n["x_m"], n["y_m"]) for n in sc["node"]] == [
        (-200, 0.0),
        (0, 0.0),
        (551, 0.0),
        (751, 0.0),
    ]
    assert [(f["src"], f["dst"], f["app"], f["rate_kbps"]) for f in sc["flow"]] == [
        (1, 0, "cbr", 2000.0),
        (2, 3, "cbr", 2000.0),
    ]
    text = reception.ns3_input(c, 3).splitlines()
    assert "seed 3" in text and f"preamble_threshold {reception.PREAMBLE_DB}" in text
    assert "udpflow 1 0 1.0 60.0 2000.0" in text and "node 2 551 0.0" in text


def test_routes_run_both_ways_along_the_path() -> None:
    text = reception.ns3_input(by_name()["chain-3"], 1)
    hops = {line for line in text.splitlines() if line.startswith("nexthop")}
    assert hops == {
        "nexthop 0 3 1",
        "nexthop 1 3 2",
        "nexthop 2 3 3",
        "nexthop 3 0 2",
        "nexthop 2 0 1",
        "nexthop 1 0 0",
    }
    assert "flow 0 3 1.0 60.0" in text
    sc = reception.manetfair_scenario(by_name()["chain-3"], 1)
    assert sc["flow"][0]["route"] == [0, 1, 2, 3] and sc["flow"][0]["transport"] == "tcp-newreno"


def test_verdict_inside_range_or_within_five_percent() -> None:
    case = by_name()["link-250"]
    row = reception.Row(case, 0, ns3=[100.0, 110.0, 120.0], mf=[115.0, 115.0])
    assert row.verdict() == ("inside range", True)
    near = reception.Row(case, 0, ns3=[100.0, 100.0], mf=[104.0])
    assert near.verdict() == ("+4.0%", True)
    far = reception.Row(case, 0, ns3=[100.0, 101.0], mf=[90.0])
    assert far.verdict()[1] is False
    zero = reception.Row(case, 0, ns3=[0.0, 0.0], mf=[0.0])
    assert zero.verdict() == ("both 0", True)


def test_rows_become_records_of_the_reception_tables() -> None:
    case = by_name()["link-250"]
    row = reception.Row(case, 0, ns3=[100.0, 110.0, 120.0], mf=[115.0, 115.0])
    speed = {m: {"cpu_s": 1.0, "events": 10, "aggregate_kbps": 5.0} for m in reception.MODELS}
    tables = reception.data_records([row], 5, speed)
    (rec,) = tables["reception"]
    assert rec["case"].startswith("link-250 (") and rec["flow"] == 0
    assert rec["ns3_kbps"] == "110.0 [100.0–120.0]" and rec["verdict"] == "inside range"
    assert rec["command"] == "python3 bench/reception.py --seeds 5"
    assert [r["reception"] for r in tables["reception_cost"]] == list(reception.MODELS)
    assert "reception_cost" not in reception.data_records([row], 5, None)
