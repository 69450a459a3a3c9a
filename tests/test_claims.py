"""The claim vocabulary: measures, selections, tests and for_each expansion."""

from __future__ import annotations

import math

import pytest
from conftest import REAL_CORE
from hypothesis import given
from hypothesis import strategies as st
from manetfair import claims
from manetfair.claims import Run
from manetfair.errors import InputError


def summary(flows):
    agg = sum(flows)
    return {
        "aggregate_kbps": agg,
        "jain_index": claims.jain_index(flows),
        "flows": [{"id": i, "throughput_kbps": x} for i, x in enumerate(flows)],
    }


RUNS = [
    Run({"queue": "red", "n": 2}, 1, summary([100.0, 300.0])),
    Run({"queue": "red", "n": 2}, 2, summary([120.0, 280.0])),
    Run({"queue": "nred", "n": 2}, 1, summary([190.0, 210.0])),
    Run({"queue": "nred", "n": 2}, 2, summary([200.0, 200.0])),
]


def test_jain_index():
    assert claims.jain_index([5.0, 5.0, 5.0]) == 1.0
    assert claims.jain_index([1.0, 0.0]) == pytest.approx(0.5)
    # As the core's summary defines it: nobody delivered anything is not fair, it is 0.
    assert claims.jain_index([0.0, 0.0]) == 0.0
    assert claims.jain_index([0.0]) == 1.0


@pytest.mark.core
@given(st.lists(st.floats(min_value=0.0, max_value=1e6), min_size=1, max_size=12))
def test_jain_index_is_the_cores(xs):
    """One definition: the claims' Jain index equals the run summary's."""
    assert REAL_CORE is not None
    assert claims.jain_index(xs) == pytest.approx(REAL_CORE.jain_index(xs), rel=1e-12, abs=0)


def test_t95_is_students_quantile():
    # Tabulated two-sided 95% values; 21 degrees of freedom is 2.080 (not 2.060).
    for df, t in [(1, 12.706), (2, 4.303), (21, 2.080), (100, 1.984)]:
        assert claims.t95(df) == pytest.approx(t, abs=5e-4)
    assert math.isnan(claims.t95(0))


def test_mean_ci_uses_student_t():
    mean, half = claims.mean_ci([1.0, 3.0])
    assert mean == 2.0
    assert half == pytest.approx(12.706 * math.sqrt(2) / math.sqrt(2), abs=5e-4)
    assert math.isnan(claims.mean_ci([1.0])[1])


def test_field_measures_with_where_stat_and_reduce():
    m = {"field": "aggregate_kbps"}
    assert claims.measure_value(m, RUNS, {"queue": "red"}) == pytest.approx(400.0)
    low = {"field": "flows.*.throughput_kbps", "reduce": "min"}
    assert claims.measure_value(low, RUNS, {"queue": "red"}) == pytest.approx(110.0)
    assert claims.measure_value({**low, "stat": "min"}, RUNS, {"queue": "red"}) == 100.0
    assert claims.measure_value(
        {"field": "flows.1.throughput_kbps"}, RUNS, {"queue": "nred"}
    ) == pytest.approx(205.0)
    assert math.isnan(claims.measure_value(m, RUNS, {"queue": "droptail"}))


def test_ratio_and_difference():
    jain_ratio = {
        "ratio": [
            {"field": "jain_index", "where": {"queue": "nred"}},
            {"field": "jain_index", "where": {"queue": "red"}},
        ]
    }
    value = claims.measure_value(jain_ratio, RUNS, {})
    red = (claims.jain_index([100, 300]) + claims.jain_index([120, 280])) / 2
    nred = (claims.jain_index([190, 210]) + 1.0) / 2
    assert value == pytest.approx(nred / red)
    diff = {
        "difference": [
            {"field": "aggregate_kbps", "where": {"queue": "nred"}},
            {"field": "aggregate_kbps", "where": {"queue": "red"}},
        ]
    }
    assert claims.measure_value(diff, RUNS, {}) == pytest.approx(0.0)


def test_percent_change_of_means_and_per_seed():
    # Flow 1 against flow 0 under RED: means 290 and 110 kbit/s.
    change = {
        "percent_change": [
            {"field": "flows.1.throughput_kbps"},
            {"field": "flows.0.throughput_kbps"},
        ]
    }
    assert claims.measure_value(change, RUNS, {"queue": "red"}) == pytest.approx(
        100.0 * (290.0 / 110.0 - 1.0)
    )
    per_seed = {**change, "per_seed": True}
    assert claims.measure_value(per_seed, RUNS, {"queue": "red"}) == pytest.approx(
        50.0 * (300.0 / 100.0 - 1.0) + 50.0 * (280.0 / 120.0 - 1.0)
    )
    zero = {"percent_change": [{"field": "aggregate_kbps"}, {"field": "aggregate_kbps"}]}
    assert claims.measure_value(zero, RUNS, {"queue": "nred"}) == 0.0


def test_mean_defined_leaves_out_missing_values():
    assert claims.REDUCERS["mean_defined"]([1.0, math.nan, 3.0]) == 2.0
    assert math.isnan(claims.REDUCERS["mean_defined"]([math.nan]))
    assert math.isnan(claims.REDUCERS["mean"]([1.0, math.nan]))


def test_a_claim_on_a_value_the_sweep_does_not_run_is_not_evaluated():
    listed = [
        {"what": "n = 2", "where": {"n": 2}, "measured": {"field": "aggregate_kbps"}},
        {"what": "n = 5", "where": {"n": 5}, "measured": {"field": "aggregate_kbps"}},
        {"what": "any", "measured": {"field": "aggregate_kbps"}},
    ]
    variants = [{"queue": "red", "n": 2}, {"queue": "nred", "n": 2}]
    assert [c["what"] for c in claims.expand_claims(listed, variants)] == ["n = 2", "any"]


def test_bad_fields_are_input_errors():
    with pytest.raises(InputError, match="no 'nope'"):
        claims.measure_value({"field": "nope"}, RUNS, {})
    with pytest.raises(InputError, match="out of range"):
        claims.measure_value({"field": "flows.9.throughput_kbps"}, RUNS, {})
    with pytest.raises(InputError):
        claims.measure_value({"stat": "mean"}, RUNS, {})


@pytest.mark.parametrize(
    ("test", "measured", "paper", "extra", "holds"),
    [
        ("within", 104.0, 100.0, {"rel_tol": 0.05}, True),
        ("within", 106.0, 100.0, {"rel_tol": 0.05}, False),
        ("within", 94.0, 100.0, {"rel_tol": 0.05, "abs_tol": 1.0}, True),
        ("at_least", 0.97, 0.99, {"abs_tol": 0.03}, True),
        ("at_least", 0.95, 0.99, {"abs_tol": 0.03}, False),
        ("at_most", 1.2, 1.0, {"rel_tol": 0.1}, False),
        ("greater", 1.01, 1.0, {}, True),
        ("less", 1.01, 1.0, {}, False),
        ("within", math.nan, 1.0, {"rel_tol": 1.0}, False),
    ],
)
def test_check(test, measured, paper, extra, holds):
    assert claims.check(test, measured, paper, extra)[0] is holds


def test_evaluate_expands_for_each_and_uses_models():
    claim = {
        "what": "aggregate with {queue} near the model",
        "for_each": ["queue"],
        "measured": {"field": "aggregate_kbps"},
        "paper": {"model": "m"},
        "rel_tol": 0.01,
    }
    fixed = {
        "what": "nred fairer than red",
        "measured": {
            "ratio": [
                {"field": "jain_index", "where": {"queue": "nred"}},
                {"field": "jain_index", "where": {"queue": "red"}},
            ]
        },
        "paper": 1.0,
        "test": "greater",
    }
    variants = [{"queue": "red", "n": 2}, {"queue": "nred", "n": 2}]
    asked = []

    def model(name, where):
        asked.append((name, dict(where)))
        return 400.0 if where["queue"] == "red" else 500.0

    verdicts = claims.evaluate([claim, fixed], RUNS, variants, model)
    assert [v.what for v in verdicts] == [
        "aggregate with red near the model",
        "aggregate with nred near the model",
        "nred fairer than red",
    ]
    assert [v.holds for v in verdicts] == [True, False, True]
    assert verdicts[1].deviation == pytest.approx(-0.2)
    assert asked == [("m", {"queue": "red"}), ("m", {"queue": "nred"})]
    as_json = verdicts[0].as_json()
    assert set(as_json) >= {"what", "paper", "measured", "holds"}


def test_trace_measures_take_time_means_of_chosen_series():
    traces = {
        "time_s": [0.0, 1.0, 2.0, 3.0],
        "queue_len_pkts": [[9.0, 1.0, 1.0, 1.0], [0.0, 2.0, 4.0, 6.0], [5.0, 5.0, 5.0, 5.0]],
        "tcp": [{"cwnd_pkts": [1.0, 2.0, 3.0, 4.0]}, None],
    }
    run = Run({"q": "a"}, 1, summary([1.0]), traces)
    one = {"trace": "queue_len_pkts", "series": [1], "from_s": 1.0}
    assert claims.per_run_values(one, [run], {}) == [4.0]
    both = {"trace": "queue_len_pkts", "series": [0, 1], "from_s": 1.0, "reduce": "max"}
    assert claims.per_run_values(both, [run], {}) == [4.0]
    every = {"trace": "queue_len_pkts"}
    assert claims.per_run_values(every, [run], {}) == [pytest.approx((3.0 + 3.0 + 5.0) / 3)]
    assert claims.per_run_values({"trace": "tcp.0.cwnd_pkts"}, [run], {}) == [2.5]
    window = {"trace": "queue_len_pkts", "series": [1], "from_s": 1.0, "to_s": 3.0}
    assert claims.per_run_values(window, [run], {}) == [3.0]
    with pytest.raises(InputError, match="out of range"):
        claims.per_run_values({"trace": "queue_len_pkts", "series": [3]}, [run], {})
    with pytest.raises(InputError, match="traces"):
        claims.per_run_values(one, [Run({}, 1, summary([1.0]))], {})


def test_uses_traces_looks_at_every_depth():
    assert claims.uses_traces([{"measured": {"ratio": [{"trace": "x"}, {"field": "y"}]}}])
    assert not claims.uses_traces([{"measured": {"field": "y"}}, {"kind": "line"}])


SERIES = {
    "bin_s": 1.0,
    "time_s": [0.0, 1.0, 2.0, 3.0, 4.0, 5.0],
    "flow_throughput_kbps": [
        [5.0, 0.0, 0.0, 0.0, 7.0, 1.0],
        [0.0, 3.0, 4.0, 0.0, 2.0, 9.0],
    ],
}


def _trace(**kw):
    return claims.trace_value(
        Run({}, 1, summary([1.0, 1.0]), SERIES), {"trace": "flow_throughput_kbps", **kw}
    )


def test_trace_statistics_of_silence_and_activity():
    # Flow 0 is silent in bins 1-3 (3 s), flow 1 in bins 0 and 3 (1 s each).
    assert _trace(series=[0], over="longest_silence_s") == 3.0
    assert _trace(series=[1], over="longest_silence_s") == 1.0
    assert _trace(over="longest_silence_s", reduce="max") == 3.0
    assert _trace(series=[0], over="active_frac") == pytest.approx(3 / 6)
    assert _trace(series=[1], over="silent_frac") == pytest.approx(2 / 6)
    # A window: bins starting in [1, 4).
    assert _trace(series=[0], over="longest_silence_s", from_s=1.0, to_s=3.0) == 2.0
    # A threshold: active only above 2 kbit/s.
    assert _trace(series=[1], over="active_frac", active_above=2.0) == pytest.approx(3 / 6)


def test_joint_trace_statistics():
    # Both active only in bins 4 and 5.
    assert _trace(series=[0, 1], over="all_active_frac") == pytest.approx(2 / 6)
    # Flow 0 alone in bin 0; flow 1 alone in bins 1 and 2.
    assert _trace(series=[0, 1], over="alone_frac") == pytest.approx(1 / 6)
    assert _trace(series=[1, 0], over="alone_frac") == pytest.approx(2 / 6)
    # Flow 0 larger in bins 0 and 4.
    assert _trace(series=[0, 1], over="leads_frac") == pytest.approx(2 / 6)
    a, b = SERIES["flow_throughput_kbps"]
    assert _trace(series=[0, 1], over="corr") == pytest.approx(claims.pearson(a, b))
    assert claims.pearson([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)
    assert claims.pearson([1.0, 2.0, 3.0], [3.0, 2.0, 1.0]) == pytest.approx(-1.0)
    assert math.isnan(claims.pearson([1.0, 1.0], [1.0, 2.0]))
    with pytest.raises(InputError, match="two series"):
        _trace(series=[0], over="all_active_frac")
    with pytest.raises(InputError, match="over"):
        _trace(series=[0], over="median")


def test_unfairness_index_eq4_on_hand_made_numbers():
    assert claims.unfairness_index([100.0, 100.0], [100.0, 100.0]) == 0.0
    assert claims.unfairness_index([3.0, 4.0], [0.0, 0.0]) == pytest.approx(1.0)
    assert claims.unfairness_index([3.0, 4.0], [6.0, 0.0]) == pytest.approx(1.0)
    assert math.isnan(claims.unfairness_index([1.0], [1.0]))
    assert math.isnan(claims.unfairness_index([0.0, 0.0], [1.0, 1.0]))


def test_unfairness_measure_uses_flows_alone_and_shares():
    # Two flows that share one region (phi = 1/2); alone, each got 400 and 200 kbit/s.
    runs = [
        Run({"set": "both"}, 1, summary([150.0, 150.0])),
        Run({"set": "both"}, 2, summary([250.0, 50.0])),
        Run({"set": "a"}, 1, summary([400.0])),
        Run({"set": "b"}, 1, summary([200.0])),
    ]
    measure = {
        "unfairness": {"field": "flows.*.throughput_kbps"},
        "optimal": [
            {"field": "flows.0.throughput_kbps", "where": {"set": "a"}},
            {"field": "flows.0.throughput_kbps", "where": {"set": "b"}},
        ],
    }
    # Optima 200 and 100. Seed 1: sqrt(50² + 50²) / sqrt(200² + 100²); seed 2: (50, 50) too.
    u = math.sqrt(50**2 + 50**2) / math.sqrt(200**2 + 100**2)
    assert claims.per_run_values(measure, runs, {"set": "both"}) == [
        pytest.approx(u),
        pytest.approx(u),
    ]
    assert claims.measure_value(measure, runs, {"set": "both"}) == pytest.approx(u)
    shared = {**measure, "share": [1.0, 0.0]}
    # Optima 400 and 0: seed 1 sqrt(250² + 150²) / 400.
    assert claims.per_run_values(shared, runs, {"set": "both"})[0] == pytest.approx(
        math.sqrt(250**2 + 150**2) / 400
    )
    with pytest.raises(InputError, match="optimal"):
        claims.per_run_values({"unfairness": measure["unfairness"]}, runs, {"set": "both"})
    with pytest.raises(InputError, match="2 flows"):
        claims.per_run_values({**measure, "optimal": measure["optimal"][:1]}, runs, {"set": "both"})


def test_verdicts_carry_the_quote():
    claim = {
        "what": "fairer",
        "quote": "The fairness   is very clear.",
        "measured": {"field": "jain_index"},
        "paper": 0.5,
        "test": "greater",
        "direction_only": True,
    }
    (v,) = claims.evaluate([claim], RUNS, [{"queue": "red", "n": 2}], lambda n, w: 0.0)
    doc = v.as_json()
    assert doc["quote"] == "The fairness is very clear."
    assert doc["direction_only"] is True
