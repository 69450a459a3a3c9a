"""Bianchi's saturation model against values computed by hand from its formulas."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from manetfair.models import bianchi
from manetfair.models.bianchi import DcfParams

P = DcfParams()
# 1000 B payload + 8 UDP + 20 IP + 28 MAC = 1056 B at 2 Mbit/s after the 192 µs PLCP.
DATA_US = 192 + 1056 * 8 / 2.0
ACK_US = 192 + 14 * 8 / 1.0
RTS_US = 192 + 20 * 8 / 1.0
CTS_US = 192 + 14 * 8 / 1.0
EIFS_US = 10 + ACK_US + 50


def test_airtimes():
    assert P.data_us(1056) == pytest.approx(4416.0)
    assert P.control_us(14) == pytest.approx(304.0)
    assert P.eifs_us == pytest.approx(364.0)


def test_exchange_times_basic_and_rts():
    ts, tc = bianchi.exchange_times(P, 1056, rts_cts=False)
    assert ts == pytest.approx(DATA_US + 10 + 1 + ACK_US + 50 + 1)
    assert tc == pytest.approx(DATA_US + EIFS_US + 1)
    ts, tc = bianchi.exchange_times(P, 1056, rts_cts=True)
    assert ts == pytest.approx(
        RTS_US + 10 + 1 + CTS_US + 10 + 1 + DATA_US + 10 + 1 + ACK_US + 50 + 1
    )
    assert tc == pytest.approx(RTS_US + EIFS_US + 1)
    _, tc_difs = bianchi.exchange_times(DcfParams(collision_wait="difs"), 1056, rts_cts=True)
    assert tc_difs == pytest.approx(RTS_US + 50 + 1)


@pytest.mark.parametrize("rts", [False, True])
def test_one_station_is_payload_over_difs_backoff_and_exchange(rts):
    # Alone, a station never collides: each frame costs the mean backoff of
    # (W - 1) / 2 slots plus Ts (which ends with DIFS).
    ts, _ = bianchi.exchange_times(P, 1056, rts)
    expected_kbps = 8000 / (15.5 * 20 + ts) * 1000
    assert bianchi.saturation_throughput_kbps(1, 1000, rts) == pytest.approx(
        expected_kbps, rel=1e-12
    )


def test_fixed_point_for_two_stations_by_hand():
    tau, p = bianchi.solve_fixed_point(2, P)
    # n = 2: p = tau, and tau = 2 (1 - 2p) / ((1 - 2p) 33 + 32 p (1 - (2p)^5)).
    assert p == pytest.approx(tau, rel=1e-9)
    rhs = 2 * (1 - 2 * p) / ((1 - 2 * p) * 33 + 32 * p * (1 - (2 * p) ** 5))
    assert tau == pytest.approx(rhs, rel=1e-9)


@given(st.integers(min_value=2, max_value=200))
def test_fixed_point_satisfies_both_equations(n):
    tau, p = bianchi.solve_fixed_point(n, P)
    assert 0 < tau < 1 and 0 < p < 1
    assert p == pytest.approx(1 - (1 - tau) ** (n - 1), abs=1e-9)
    assert tau == pytest.approx(bianchi.transmit_probability(p, P), rel=1e-9)


def test_finite_sum_form_matches_closed_form_away_from_one_half():
    for p in (0.01, 0.2, 0.49, 0.51, 0.9):
        closed = 2 * (1 - 2 * p) / ((1 - 2 * p) * 33 + p * 32 * (1 - (2 * p) ** 5))
        assert bianchi.transmit_probability(p, P) == pytest.approx(closed, rel=1e-12)


def test_shape_basic_access_falls_and_rts_is_flatter():
    basic = [bianchi.saturation_throughput_kbps(n, 1000, False) for n in (5, 10, 20, 50)]
    rts = [bianchi.saturation_throughput_kbps(n, 1000, True) for n in (5, 10, 20, 50)]
    assert basic == sorted(basic, reverse=True)
    assert (max(rts) - min(rts)) / max(rts) < (max(basic) - min(basic)) / max(basic)
    assert rts[-1] > basic[-1]  # with 50 stations, short RTS collisions win


def test_scenario_adapter_reads_rates_threshold_and_stations():
    flows = [{"src": k, "dst": 0, "transport": "udp", "packet_bytes": 1000} for k in range(1, 6)]
    sc = {
        "radio": {"data_rate_mbps": 2.0, "basic_rate_mbps": 1.0},
        "mac": {"rts_threshold_bytes": 3000},
        "flow": flows,
    }
    assert bianchi.saturation_kbps_for_scenario(sc) == pytest.approx(
        bianchi.saturation_throughput_kbps(5, 1000, rts_cts=False)
    )
    sc["mac"]["rts_threshold_bytes"] = 0
    assert bianchi.saturation_kbps_for_scenario(sc) == pytest.approx(
        bianchi.saturation_throughput_kbps(5, 1000, rts_cts=True)
    )
    sc["radio"]["data_rate_mbps"] = 11.0
    assert bianchi.saturation_kbps_for_scenario(sc) > 2 * bianchi.saturation_throughput_kbps(
        5, 1000, rts_cts=True
    )


def test_scenario_adapter_rejects_tcp():
    with pytest.raises(ValueError, match="UDP"):
        bianchi.saturation_kbps_for_scenario(
            {"flow": [{"src": 1, "dst": 0, "transport": "tcp-newreno"}]}
        )


def test_no_station_is_an_error():
    with pytest.raises(ValueError):
        bianchi.solve_fixed_point(0, P)
    assert math.isfinite(bianchi.saturation_throughput_kbps(1000, 1000, True))
