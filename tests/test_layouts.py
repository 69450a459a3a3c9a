"""Layouts that experiments use to generate topologies and traffic."""

from __future__ import annotations

import math

import pytest
from manetfair import layouts
from manetfair.errors import InputError


def test_star_places_stations_on_a_circle_around_node_0():
    sc: dict = {}
    layouts.apply(
        sc,
        {
            "kind": "star",
            "stations": 4,
            "radius_m": 10.0,
            "flow": {"transport": "udp", "rate_kbps": 2000.0},
        },
        "<t>",
    )
    assert sc["topology"] == {"kind": "explicit"}
    assert [n["id"] for n in sc["node"]] == [0, 1, 2, 3, 4]
    for node in sc["node"][1:]:
        assert math.hypot(node["x_m"], node["y_m"]) == pytest.approx(10.0)
    # Every pair of stations is within 2 r of each other.
    assert [(f["src"], f["dst"], f["rate_kbps"]) for f in sc["flow"]] == [
        (k, 0, 2000.0) for k in range(1, 5)
    ]


def test_chain_numbers_from_first_id_and_staggers_flows():
    sc: dict = {}
    layouts.apply(
        sc,
        {
            "kind": "chain",
            "nodes": 4,
            "first_id": 1,
            "spacing_m": 200.0,
            "flows": 3,
            "stagger_s": 0.5,
            "flow": {"start_s": 1.0},
        },
        "<t>",
    )
    assert [(n["id"], n["x_m"]) for n in sc["node"]] == [
        (1, 0.0),
        (2, 200.0),
        (3, 400.0),
        (4, 600.0),
    ]
    assert [(f["src"], f["dst"], f["start_s"]) for f in sc["flow"]] == [
        (1, 4, 1.0),
        (1, 4, 1.5),
        (1, 4, 2.0),
    ]


def test_bad_layouts_are_input_errors():
    with pytest.raises(InputError, match="not a known layout"):
        layouts.apply({}, {"kind": "ring"}, "<t>")
    with pytest.raises(InputError, match="layout.stations"):
        layouts.apply({}, {"kind": "star", "stations": 0}, "<t>")
