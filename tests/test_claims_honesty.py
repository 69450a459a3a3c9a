"""Honest claims (docs/experiments.md, "How claims read their papers" and "Verdicts, per
paper and platform"): the papers' own thresholds, controls shown but never counted,
calibrated verdicts marked, each claim's value on the other platform and ns-2.35's own
value beside its verdict."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import fake_core
import pytest
from conftest import REPO
from manetfair import claims, experiments, reproduce
from manetfair.errors import InputError
from manetfair.store import ResultsStore

EXPERIMENTS = experiments.load_all(REPO / "experiments")
BY_ID = {e.id: e for e in EXPERIMENTS}


def _claims(exp_id: str) -> list[dict[str, Any]]:
    return BY_ID[exp_id].claims


# --- the papers' numbers, exactly ---------------------------------------------------------


def test_a_floating_point_tie_is_a_tie() -> None:
    # mtcp-table3's "always the fairest" in scenario 1: every variant 1.000, one computed
    # 6.4e-9 below the others.
    assert claims.check("at_least", -6.4e-9, 0.0, {})[0]
    assert not claims.check("at_least", -1e-3, 0.0, {})[0]
    assert not claims.check("greater", 0.0, 0.0, {})[0]


@pytest.mark.parametrize(
    ("phrase", "number"),
    [("more than 99%", 0.99), ("between 99% and 100%", 0.99), ("95% or better", 0.95)],
)
def test_the_papers_thresholds_carry_no_slack(phrase: str, number: float) -> None:
    found = [(e.id, c) for e in EXPERIMENTS for c in e.claims if phrase in c.get("quote", "")]
    assert found
    for exp_id, c in found:
        assert c["paper"] == number, (exp_id, c["what"])
        assert c.get("abs_tol", 0) == 0 and c.get("rel_tol", 0) == 0, (exp_id, c["what"])


def test_the_77_percent_is_the_papers_number() -> None:
    quoted = [c for c in _claims("mtcp-fig6") if "77% were due to collisions" in c["quote"]]
    assert [c["paper"] for c in quoted] == [0.77]


def test_even_better_is_strictly_better() -> None:
    fair = [c for c in _claims("opet-fig11") if "even better" in c["quote"]]
    assert fair and all(c["test"] == "greater" and not c.get("abs_tol") for c in fair)


def _arms(spec: Any) -> set[str]:
    """Every `tcp` arm a claim's where tables select."""
    found: set[str] = set()
    if isinstance(spec, Mapping):
        if isinstance(spec.get("where"), Mapping) and "tcp" in spec["where"]:
            found.add(str(spec["where"]["tcp"]))
        for value in spec.values():
            found |= _arms(value)
    elif isinstance(spec, list):
        for value in spec:
            found |= _arms(value)
    return found


def test_sentences_about_x_50_measure_the_x_50_arm() -> None:
    for c in _claims("mtcp-table3"):
        if "x = 50" in c["quote"] or ("1.4%" in c["quote"] and "5%" in c["quote"]):
            arms = _arms(c)
            assert "m-tcp-x50" in arms and "m-tcp" not in arms, c["what"]


def test_with_respect_to_standard_tcp_and_westwood_means_both() -> None:
    for quote_part in ("5% more than the value achieved by TCPW", "with respect to standard"):
        against = {
            frozenset(_arms(c) - {"m-tcp-x50"})
            for c in _claims("mtcp-table3")
            if quote_part in c["quote"]
        }
        assert {frozenset({"standard"}), frozenset({"westwood"})} <= against, quote_part


def test_one_cross_measurement_is_judged_once() -> None:
    # mtcp-fig3 at x = 35 in the cross is the run of mtcp-table3's M-TCP cell: the table
    # judges it; Figure 3's "other values of x" leave it out.
    for c in _claims("mtcp-fig3"):
        where = dict(c.get("where", {}))
        if where.get("scenario") in (3, 4):
            assert where.get("x") != 35, c["what"]
            if "x" in c.get("for_each", []):
                assert 35 not in c["for_values"]["x"], c["what"]


def test_scenario_1_reaching_the_other_variants_is_claimed() -> None:
    reach = [
        c
        for c in _claims("mtcp-table3")
        if "where it reaches the other TCP variants" in c["quote"]
        and c.get("where", {}).get("scenario") == 1
    ]
    assert {frozenset(_arms(c)) for c in reach} == {
        frozenset({"m-tcp-x50", other}) for other in ("standard", "westwood", "tcp-ap")
    }
    assert all(c.get("kind", "claim") == "claim" for c in reach)


def test_no_number_the_paper_does_not_give() -> None:
    # opet-fig12's sentences give no number: directions, not "3 times" or "half".
    for c in _claims("opet-fig12"):
        if c.get("direction_only"):
            assert c["paper"] in (0.0, 1.0), c["what"]


# --- controls and calibrated verdicts ---------------------------------------------------------


def _fair_by_construction(exp: experiments.Experiment, c: Mapping[str, Any]) -> bool:
    """M-TCP's scenario 1 (two pairs 750 m apart) fairness, loss and flow-ratio checks."""
    if not exp.id.startswith("mtcp-") or c.get("where", {}).get("scenario") != 1:
        return False
    text = str(c["measured"])
    return "jain_index" in text or "loss_pct" in text or "flows.0.throughput_kbps" in text


def test_checks_that_cannot_fail_are_controls() -> None:
    for exp in EXPERIMENTS:
        for c in exp.claims:
            if _fair_by_construction(exp, c) or "allocation of Section 3.3" in c["what"]:
                assert c.get("kind") == "control", (exp.id, c["what"])
    assert [
        c.get("kind") for c in _claims("opet-fig12") if "sanity check" in c.get("note", "")
    ] == ["control"]


def test_throttled_rates_after_a_handover_are_marked_calibrated() -> None:
    marked = [c for c in _claims("throttle-table1") if c.get("calibrated")]
    assert len(marked) == 8
    assert all("RTS/CTS" in c["calibrated"] for c in marked)
    assert any(c.get("calibrated") for c in _claims("throttle-table2"))


def test_a_claim_kind_outside_the_two_is_refused(tmp_path) -> None:
    doc = {
        "id": "demo-fig1",
        "paper": "p",
        "figure": "Figure 1",
        "description": "d",
        "claim": [{"what": "w", "measured": {"field": "x"}, "paper": 1.0, "kind": "hint"}],
    }
    with pytest.raises(InputError, match=r"claim\[0\]\.kind"):
        experiments.parse(doc, tmp_path / "demo.toml")


def _bianchi() -> experiments.Experiment:
    return experiments.select(experiments.load_all(), ["validate-bianchi"])[0]


def test_controls_are_shown_but_not_counted(fake, tmp_path) -> None:
    exp = _bianchi()
    first = dict(exp.claims[0])
    exp.claims = [first, {**first, "what": "the same, as a control", "kind": "control"}]
    with ResultsStore(tmp_path / "s.duckdb") as store:
        (r,) = reproduce.reproduce([exp], store, quick=True, seeds=1, simulate=fake_core.simulate)
    half = len(r.verdicts) // 2  # each claim is one verdict per n
    assert half > 0 and r.holds_count()[1] == half and r.controls_count()[1] == half
    kinds = [c["kind"] for c in reproduce.to_json([r])["experiments"][0]["claims"]]
    assert kinds == ["claim"] * half + ["control"] * half
    counts = reproduce.to_json([r])["experiments"][0]["counts"]
    assert counts["claims"] == half and counts["controls"] == half


# --- three numbers per claim ----------------------------------------------------------------


def test_the_other_platform_comes_from_the_store_or_is_run_when_asked(fake, tmp_path) -> None:
    exp = _bianchi()
    with ResultsStore(tmp_path / "s.duckdb") as store:
        kw: dict[str, Any] = {"quick": True, "seeds": 1, "simulate": fake_core.simulate}
        (alone,) = reproduce.reproduce([exp], store, **kw)
        assert all(v.other is None for v in alone.verdicts)
        assert all(v.platform == "standard" for v in alone.verdicts)
        (on_ns2,) = reproduce.reproduce([exp], store, platform="ns2", **kw)
        (again,) = reproduce.reproduce([exp], store, **kw)
    for mine, theirs in zip(again.verdicts, on_ns2.verdicts):
        assert mine.other is not None and mine.other.platform == "ns2"
        assert mine.other.measured == theirs.measured or (
            math.isnan(mine.other.measured) and math.isnan(theirs.measured)
        )
    claim = reproduce.to_json([again])["experiments"][0]["claims"][0]
    assert claim["platform"] == "standard" and claim["other_platform"]["platform"] == "ns2"
    with ResultsStore(tmp_path / "both.duckdb") as store:
        (both,) = reproduce.reproduce([exp], store, both_platforms=True, **kw)
    assert all(v.other is not None for v in both.verdicts)


def test_a_miss_ns2_shares_is_told_from_one_of_manetfairs_own(fake, tmp_path) -> None:
    from manetfair.report import verdict_words

    exp = _bianchi()
    with ResultsStore(tmp_path / "s.duckdb") as store:
        (r,) = reproduce.reproduce([exp], store, quick=True, seeds=1, simulate=fake_core.simulate)
    v = r.verdicts[0]
    v.holds = False
    far = v.paper * 3 + 1
    reproduce.attach_ns2_values(r, [{"experiment": exp.id, "claim": v.what, "value": far}])
    assert v.ns2 is not None and not v.ns2.holds and v.miss_class == "ns2-shares"
    assert re.search(r"ns-2\.35 gives \S+ as well", verdict_words(v))
    reproduce.attach_ns2_values(r, [{"experiment": exp.id, "claim": v.what, "value": v.paper}])
    assert v.ns2 is not None and v.ns2.holds and v.miss_class == "manetfair"


def test_a_miss_ns2_makes_on_the_other_side_is_not_shared() -> None:
    from manetfair.report import verdict_words

    within = {"rel_tol": 0.10}
    v = claims.Verdict("u", 0.31, 0.10, False, "within", "within 10%", None, {})
    # ns-2.35 misses too, above the band where manetfair is below it: not shared.
    holds, _ = claims.check("within", 0.50, 0.31, within)
    v.ns2 = claims.Ns2Value(0.50, "case", "source", holds)
    assert not holds and v.miss_class == "manetfair"
    assert verdict_words(v).endswith("ns-2.35 gives 0.5, a miss on the other side")
    # Below the band as manetfair: shared.
    holds, _ = claims.check("within", 0.14, 0.31, within)
    v.ns2 = claims.Ns2Value(0.14, "case", "source", holds)
    assert not holds and v.miss_class == "ns2-shares"
    # A one-sided test is missed on one side only; no value shares nothing.
    assert claims.shares_miss("at_least", 0.80, 0.90, False, 0.95)
    assert not claims.shares_miss("within", math.nan, 0.14, False, 0.31)
    assert not claims.shares_miss("within", 0.10, 0.14, True, 0.31)


def test_every_ns2_value_names_a_claim_that_runs() -> None:
    known = reproduce.ns2_values(REPO / "experiments" / reproduce.NS2_VALUES)
    assert known
    for entry in known:
        exp = BY_ID[entry["experiment"]]
        for quick in (True, False):
            whats = [
                str(c["what"]).format_map(claims._Fmt({k: str(x) for k, x in c["where"].items()}))
                for c in claims.expand_claims(exp.runnable_claims(), exp.variants(quick))
            ]
            assert entry["claim"] in whats, entry
        assert isinstance(entry["value"], float) and entry["case"] and entry["source"]


# --- headlines ---------------------------------------------------------------------------


def test_every_paper_names_its_headline_results() -> None:
    # The league is no paper: it compares the papers' remedies and claims nothing.
    papers = {e.paper for e in EXPERIMENTS if e.paper not in ("validation", "league")}
    with_headline = {e.paper for e in EXPERIMENTS for c in e.claims if c.get("headline")}
    assert papers <= with_headline
