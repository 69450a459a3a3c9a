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


def test_chain_pairs_give_one_flow_per_pair():
    sc: dict = {}
    layouts.apply(
        sc,
        {
            "kind": "chain",
            "nodes": 6,
            "first_id": 1,
            "spacing_m": 250.0,
            "pairs": [[1, 2], [4, 5]],
            "flow": {"transport": "tcp-reno", "start_s": 1.0},
        },
        "<t>",
    )
    assert [(n["id"], n["x_m"]) for n in sc["node"]] == [(k, 250.0 * (k - 1)) for k in range(1, 7)]
    assert [(f["src"], f["dst"], f["transport"], f["start_s"]) for f in sc["flow"]] == [
        (1, 2, "tcp-reno", 1.0),
        (4, 5, "tcp-reno", 1.0),
    ]


def test_cross_numbers_the_horizontal_line_first_and_shares_its_middle_node():
    sc: dict = {}
    layouts.apply(
        sc,
        {"kind": "cross", "arm_nodes": 2, "first_id": 1, "spacing_m": 250.0, "flow": {}},
        "<t>",
    )
    pos = {n["id"]: (n["x_m"], n["y_m"]) for n in sc["node"]}
    assert len(pos) == 9
    assert [pos[k] for k in (1, 2, 3, 4, 5)] == [(x, 0.0) for x in (-500, -250, 0, 250, 500)]
    assert [pos[k] for k in (6, 7, 8, 9)] == [(0.0, y) for y in (500, 250, -250, -500)]
    # Default flows: each line end to end, both through node 3.
    assert [(f["src"], f["dst"]) for f in sc["flow"]] == [(1, 5), (6, 9)]
    # The M-TCP paper's scenario 4 geometry: node 4 is 500 m from node 2.
    assert math.dist(pos[2], pos[4]) == pytest.approx(500.0)


def test_pairs_must_be_src_dst_lists():
    with pytest.raises(InputError, match="pairs"):
        layouts.apply({}, {"kind": "cross", "arm_nodes": 1, "pairs": [[1, 2, 3]]}, "<t>")
