"""The league (docs/experiments.md, "The league"): its arms are every single remedy and
every cross-layer pairing; the pairings it lists as refused are exactly those the
core refuses, with the core's message; its metrics, ranks, fronts and flips; and the
same seeds give the same table."""

from __future__ import annotations

import copy
import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from manetfair import _core, experiments, league, report, throttle
from manetfair.errors import InputError
from manetfair.reproduce import reproduce
from manetfair.store import ResultsStore

LEAGUE = [e for e in experiments.load_all(REPO / "experiments") if e.paper == league.PAPER]
NETWORKS = {"hidden", "exposed", "line3", "bottleneck", "string8", "grid", "random"}


def _arm_axis(exp: experiments.Experiment) -> experiments.Axis:
    return next(a for a in exp.axes if a.name == "arm")


def test_the_seven_networks_on_both_platforms() -> None:
    assert {e.id.removeprefix(league.PREFIX) for e in LEAGUE} == NETWORKS
    for exp in LEAGUE:
        platform = next(a for a in exp.axes if a.name == "platform")
        assert platform.values == list(league.PLATFORMS)
        assert exp.varies_platform
        assert exp.quick.seeds == 3 and exp.full.seeds == 10
        # Full mode keeps each network's own paper's duration.
        assert exp.full.duration_s is None


def test_the_arms_are_every_remedy_and_every_cross_layer_pairing() -> None:
    singles = list(league.LAYERS)
    pairs = [
        f"{a} & {b}"
        for a, b in itertools.combinations(singles, 2)
        if league.LAYERS[a] != league.LAYERS[b]
    ]
    for exp in LEAGUE:
        values = _arm_axis(exp).values
        assert values[0] == league.BASELINE
        assert len(singles) == 10 and len([v for v in values if " & " not in v]) == 11
        # Pairings in either order count once; every cross-layer one is listed.
        listed = {frozenset(v.split(" & ")) for v in values if " & " in v}
        assert listed == {frozenset(p.split(" & ")) for p in pairs}
        assert len(values) == 11 + len(pairs)


def _refusal(exp: experiments.Experiment, variant: dict[str, Any]) -> str | None:
    """The core's message refusing one variant's scenario, or None if it accepts it."""
    try:
        sc = exp.expand(variant)
        sc.canonical_json()
        throttle.check(sc)
    except (_core.ScenarioError, InputError) as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("exp", LEAGUE, ids=lambda e: e.id)
def test_the_refused_pairings_are_exactly_those_the_core_refuses(
    exp: experiments.Experiment,
) -> None:
    axis = _arm_axis(exp)
    for platform in league.PLATFORMS:
        for arm in axis.values:
            refused = _refusal(exp, {"platform": platform, "arm": arm})
            listed = axis.refused.get(arm)
            assert (refused is None) == (listed is None), (exp.id, platform, arm, refused)
            if refused is not None and listed is not None:
                # The listed reason is the core's own message (its origin aside).
                assert listed in refused, (listed, refused)


def _summary(**more: Any) -> dict[str, Any]:
    flow = {
        "throughput_kbps": 300.0,
        "delay_histogram": {"bin_lo_s": [0.01, 0.02], "bin_hi_s": [0.011, 0.021], "count": [95, 5]},
        "tcp": {"timeouts": 2},
    }
    other = {
        "throughput_kbps": 100.0,
        "delay_histogram": {"bin_lo_s": [0.02, 0.5], "bin_hi_s": [0.021, 0.52], "count": [0, 100]},
        "tcp": {"timeouts": 0},
    }
    base = {
        "flows": [flow, other],
        "jain_index": 0.8,
        "aggregate_kbps": 400.0,
        "mac": {"frames_sent": {"rts": 10, "cts": 9, "data": 8, "ack": 7, "data_ack": 2}},
        "drops": {"queue_overflow": 3, "mac_retry": 1},
    }
    return {**base, **more}


def test_run_metrics_on_hand_made_numbers() -> None:
    m = league.run_metrics(_summary(), [200.0, 200.0])
    assert m["jain"] == 0.8 and m["goodput_kbps"] == 400.0
    # u = |(200, 200) - (300, 100)| / |(200, 200)| = sqrt(2 * 100^2) / sqrt(2 * 200^2)
    assert m["u"] == pytest.approx(0.5)
    # 200 packets: the 190th is in the flows' merged bins at 0.5-0.52 s (95 + 5 + 0 below)
    assert m["p95_delay_s"] == pytest.approx(0.51)
    assert m["drops"] == 4 and m["drops_by_cause"] == {"queue_overflow": 3, "mac_retry": 1}
    # control: RTS, CTS, ACK = 26; frames with data: DATA and DATA2+ACK1 = 10
    assert m["control_per_data"] == pytest.approx(2.6)
    assert m["rtos_per_flow"] == 1.0
    # Without an optimum, or with one flow, u is undefined: null, never NaN, in JSON.
    assert league.run_metrics(_summary(), None)["u"] is None
    one = _summary(flows=[_summary()["flows"][0]])
    assert league.run_metrics(one, [200.0])["u"] is None


def test_the_optimum_is_the_throttle_arms_phi_times_thr_max() -> None:
    throttled = {"throttle": {"flows": [{"thr_opt_kbps": 439.9}, {"thr_opt_kbps": 220.0}]}}
    assert league.optimum_of(throttled) == [439.9, 220.0]
    assert league.optimum_of({"throttle": {"flows": [{"thr_opt_kbps": None}]}}) is None
    assert league.optimum_of({}) is None


def test_ranks_share_the_best_rank_and_skip_missing_values() -> None:
    assert league.ranks({"a": 1.0, "b": 3.0, "c": 3.0, "d": None}, True) == {
        "a": 3,
        "b": 1,
        "c": 1,
        "d": None,
    }
    assert league.ranks({"a": 1.0, "b": 3.0}, False) == {"a": 1, "b": 2}


def test_the_pareto_front_keeps_only_undominated_arms() -> None:
    points = {
        "fair": (100.0, 1.0),
        "fast": (900.0, 0.5),
        "both-worse": (90.0, 0.9),
        "middle": (500.0, 0.8),
        "dominated-by-middle": (400.0, 0.7),
        "no-value": (None, 0.9),
    }
    assert league.pareto_front(points) == ["fair", "middle", "fast"]


def _cell(lo: float, hi: float) -> dict[str, Any]:
    stats = {"mean": (lo + hi) / 2, "min": lo, "max": hi}
    return {m.key: stats for m in league.METRICS}


def test_a_flip_is_a_sign_change_beyond_the_seeds_spread() -> None:
    def network(arm_std: tuple[float, float], arm_ns2: tuple[float, float]) -> dict[str, Any]:
        return {
            "id": "league-x",
            "platforms": {
                "standard": {"arms": {"802.11": _cell(10, 11), "nred": _cell(*arm_std)}},
                "ns2": {"arms": {"802.11": _cell(10, 11), "nred": _cell(*arm_ns2)}},
            },
        }

    flips = league._flips([network((12, 13), (8, 9))], ["802.11", "nred"])
    by_metric = {f["metric"]: f for f in flips}
    assert set(by_metric) == {m.key for m in league.METRICS}
    assert by_metric["jain"]["better_on"] == "standard"  # higher is better
    assert by_metric["drops"]["better_on"] == "ns2"  # lower is better
    # Overlapping ranges on either platform: no flip.
    assert league._flips([network((10.5, 13), (8, 9))], ["802.11", "nred"]) == []


def _without_run_ids(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {k: _without_run_ids(v) for k, v in doc.items() if k != "run_id"}
    if isinstance(doc, list):
        return [_without_run_ids(v) for v in doc]
    return doc


def _small_league() -> experiments.Experiment:
    (exp,) = experiments.select(LEAGUE, ["league-hidden"])
    exp = copy.deepcopy(exp)
    exp.quick = experiments.Plan(1, 16.0, {"arm": ["802.11", "throttle", "nred", "m-tcp & qe"]})
    return exp


def test_the_same_seeds_give_the_same_table(tmp_path: Path) -> None:
    exp = _small_league()
    docs, pages = [], []
    for k in range(2):
        with ResultsStore(tmp_path / f"store-{k}.duckdb") as store:
            results = reproduce([exp], store, quick=True)
        out = tmp_path / f"report-{k}"
        report.write(results, out)
        docs.append(json.loads((out / "league.json").read_text(encoding="utf-8")))
        pages.append(re.sub(r"`[0-9a-f]{32}`", "RUN", (out / "league-runs.md").read_text()))
        assert (out / "league-hidden-scatter.png").is_file()
        index = (out / "index.md").read_text(encoding="utf-8")
        assert "[the league](league.md)" in index
        assert "no claims: the league page compares the remedies" in index
    assert _without_run_ids(docs[0]) == _without_run_ids(docs[1])
    assert pages[0] == pages[1]
    # The league runs both platforms on its own axis: --platform and --both-platforms
    # change nothing (every run comes from the first store, nothing is simulated).
    with ResultsStore(tmp_path / "store-0.duckdb") as store:
        for options in ({"platform": "ns2"}, {"both_platforms": True}):
            again = reproduce([exp], store, quick=True, **options)
            assert all(o.cached for o in again[0].outcomes)
            assert league.document(again) == docs[0]
    doc = docs[0]
    (network,) = doc["networks"]
    assert set(network["platforms"]) == set(league.PLATFORMS)
    cells = network["platforms"]["standard"]["arms"]
    assert set(cells) == {"802.11", "throttle", "nred", "m-tcp & qe"}
    # u is defined for every arm once the throttle arm gives the optimum.
    assert all(c["u"]["mean"] is not None for c in cells.values())
    assert [r["arm"] for r in doc["refused"]] == ["red & opet", "nred & opet", "throttle & opet"]
    assert network["platforms"]["ns2"]["pareto"]


def test_a_prefix_names_every_experiment_it_starts() -> None:
    chosen = experiments.select(experiments.load_all(), ["league"])
    assert sorted(e.id for e in chosen) == sorted(e.id for e in LEAGUE)
    with pytest.raises(InputError, match="unknown experiment"):
        experiments.select(experiments.load_all(), ["leag"])


def _league_table() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "league_table", REPO / "tools" / "league_table.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


KEPT = REPO / "docs" / "data" / "league-quick.json"


def test_the_docs_league_tables_are_the_generated_ones() -> None:
    tool = _league_table()
    text = (REPO / "docs" / "experiments.md").read_text(encoding="utf-8")
    start, end = text.index(tool.BEGIN), text.index(tool.END)
    kept = json.loads(KEPT.read_text(encoding="utf-8"))
    assert text[start : end + len(tool.END) + 1] == tool.table(kept)


def test_the_kept_league_has_todays_networks_and_arms() -> None:
    kept = json.loads(KEPT.read_text(encoding="utf-8"))
    assert kept["quick"] and kept["seeds"] == 3
    assert [n["id"] for n in kept["networks"]] == [e.id for e in LEAGUE]
    axis = _arm_axis(LEAGUE[0])
    assert [a["arm"] for a in kept["arms"]] == axis.runnable(axis.values)
    assert {r["arm"]: r["reason"] for r in kept["refused"]} == axis.refused
    for n in kept["networks"]:
        for p in league.PLATFORMS:
            assert set(n["platforms"][p]["arms"]) == set(axis.runnable(axis.values))


def test_a_winner_that_ranks_in_the_lower_half_elsewhere_is_flagged() -> None:
    def platform(order: list[str]) -> dict[str, Any]:
        return {"ranks": {m.key: {a: i + 1 for i, a in enumerate(order)} for m in league.METRICS}}

    network = {
        "id": "league-x",
        "platforms": {
            "standard": platform(["a", "b", "c", "d"]),
            "ns2": platform(["b", "c", "d", "a"]),
        },
    }
    flips = league._winner_flips([network])
    # a wins on standard and is 4th of 4 on ns2; b wins on ns2 and is 2nd of 4 there.
    assert {(f["arm"], f["wins_on"], f["rank_on_other"]) for f in flips} == {("a", "standard", 4)}
    assert len(flips) == len(league.METRICS)
