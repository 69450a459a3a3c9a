"""Topology-and-traffic builders that experiments name in their `[layout]` table.

Some experiments vary something a plain key override cannot express, such as
the number of stations, which changes how many `[[node]]` and `[[flow]]` tables
the scenario has. A layout is a named function from its parameters (after the
sweep's `layout.*` overrides) to those tables; it writes an explicit topology so
that the core sees an ordinary scenario.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping
from typing import Any, Callable

from manetfair.errors import InputError

Layout = Callable[[dict[str, Any], Mapping[str, Any]], None]


def star(scenario: dict[str, Any], params: Mapping[str, Any]) -> None:
    """`stations` senders evenly spaced on a circle of `radius_m` around one receiver.

    The receiver is node 0 at the origin; stations are nodes 1..n, station k at
    angle 2πk/n. Every station sends one flow (the `flow` table's keys) to node 0,
    all within range of each other, so there are no hidden terminals: the
    single-hop setting of Bianchi's model.
    """
    n = _int_param(params, "stations", minimum=1)
    radius = float(params.get("radius_m", 10.0))
    flow_template = dict(params.get("flow", {}))
    nodes = [{"id": 0, "x_m": 0.0, "y_m": 0.0}]
    flows = []
    for k in range(1, n + 1):
        angle = 2 * math.pi * (k - 1) / n
        nodes.append(
            {
                "id": k,
                "x_m": round(radius * math.cos(angle), 6),
                "y_m": round(radius * math.sin(angle), 6),
            }
        )
        flow = copy.deepcopy(flow_template)
        flow.update({"src": k, "dst": 0})
        flows.append(flow)
    scenario["topology"] = {"kind": "explicit"}
    scenario["node"] = nodes
    scenario["flow"] = flows


def chain(scenario: dict[str, Any], params: Mapping[str, Any]) -> None:
    """`nodes` nodes on a line `spacing_m` apart, numbered from `first_id` (default 0;
    papers that number nodes from 1 use 1), and `flows` identical flows (the `flow`
    table's keys) from `src` to `dst` (default: the first node to the last), the k-th
    starting `stagger_s` × k after the template's `start_s`. `pairs` (a list of
    [src, dst]) gives one flow per pair instead.

    It writes an explicit topology, so node ids in summaries are the paper's.
    """
    n = _int_param(params, "nodes", minimum=2)
    first = int(params.get("first_id", 0))
    spacing = float(params.get("spacing_m", 200.0))
    scenario["topology"] = {"kind": "explicit"}
    scenario["node"] = [{"id": first + k, "x_m": spacing * k, "y_m": 0.0} for k in range(n)]
    if "pairs" in params:
        pairs = _pairs(params)
    else:
        count = _int_param(params, "flows", minimum=0) if "flows" in params else 1
        src = int(params.get("src", first))
        dst = int(params.get("dst", first + n - 1))
        pairs = [(src, dst)] * count
    scenario["flow"] = _flows(params, pairs)


def cross(scenario: dict[str, Any], params: Mapping[str, Any]) -> None:
    """Two perpendicular lines of 2·`arm_nodes` + 1 nodes, `spacing_m` apart, sharing
    their middle node (the M-TCP paper's cross network, Yahia and Bíró 2007, Fig. 2).

    Numbering from `first_id` (default 0): the horizontal line west to east first,
    so its middle node is `first_id + arm_nodes`; then the vertical line north to
    south without the shared node. With `arm_nodes = 2` and `first_id = 1`: 1 2 3 4 5
    across, 6 7 (3) 8 9 down. Flows: one per [src, dst] of `pairs` (default the two
    lines end to end), with the `flow` table's keys, the k-th `stagger_s` × k later.
    """
    a = _int_param(params, "arm_nodes", minimum=1)
    first = int(params.get("first_id", 0))
    spacing = float(params.get("spacing_m", 200.0))
    nodes = [{"id": first + k, "x_m": spacing * (k - a), "y_m": 0.0} for k in range(2 * a + 1)]
    offsets = [a - k for k in range(2 * a + 1) if k != a]
    nodes += [
        {"id": first + 2 * a + 1 + j, "x_m": 0.0, "y_m": spacing * off}
        for j, off in enumerate(offsets)
    ]
    scenario["topology"] = {"kind": "explicit"}
    scenario["node"] = nodes
    if "pairs" in params:
        pairs = _pairs(params)
    else:
        pairs = [(first, first + 2 * a), (first + 2 * a + 1, first + 4 * a)]
    scenario["flow"] = _flows(params, pairs)


def parallel(scenario: dict[str, Any], params: Mapping[str, Any]) -> None:
    """`flows` parallel chains of `hops` hops each, `spacing_m` between the nodes of
    a chain and `separation_m` between chains (Osipov and Tschudin 2007, Fig. 6(a),
    as reconstructed: chains 50 m apart share one L-region).

    Chain k (k = 0 .. flows - 1) runs along y = k · separation_m from x = 0 eastward;
    its nodes are numbered `first_id` + k · (hops + 1) + j. One flow per chain, from
    its west end to its east end, along the chain (an explicit `route`: with chains
    closer than a hop, shortest paths would otherwise zigzag between chains), with
    the `flow` table's keys, the k-th `stagger_s` × k later.
    """
    n = _int_param(params, "flows", minimum=1)
    h = _int_param(params, "hops", minimum=1)
    first = int(params.get("first_id", 0))
    spacing = float(params.get("spacing_m", 126.0))
    separation = float(params.get("separation_m", 50.0))
    nodes = []
    routes = []
    for k in range(n):
        ids = [first + k * (h + 1) + j for j in range(h + 1)]
        nodes += [{"id": i, "x_m": spacing * j, "y_m": separation * k} for j, i in enumerate(ids)]
        routes.append(ids)
    scenario["topology"] = {"kind": "explicit"}
    scenario["node"] = nodes
    flows = _flows(params, [(r[0], r[-1]) for r in routes])
    for flow, route in zip(flows, routes):
        flow["route"] = route
    scenario["flow"] = flows


def _pairs(params: Mapping[str, Any]) -> list[tuple[int, int]]:
    raw = params["pairs"]
    if not isinstance(raw, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, int) for x in p) for p in raw
    ):
        raise InputError(f"layout.pairs must be a list of [src, dst] node ids, not {raw!r}")
    return [(int(p[0]), int(p[1])) for p in raw]


def _flows(params: Mapping[str, Any], pairs: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """One flow per (src, dst) from the `flow` template, the k-th `stagger_s` × k later."""
    stagger = float(params.get("stagger_s", 0.0))
    template = dict(params.get("flow", {}))
    flows = []
    for k, (src, dst) in enumerate(pairs):
        flow = copy.deepcopy(template)
        flow.update({"src": src, "dst": dst})
        flow["start_s"] = float(template.get("start_s", 0.0)) + stagger * k
        flows.append(flow)
    return flows


LAYOUTS: dict[str, Layout] = {"chain": chain, "cross": cross, "parallel": parallel, "star": star}


def apply(scenario: dict[str, Any], layout: Mapping[str, Any], origin: str) -> None:
    """Writes the layout named by `layout["kind"]` into `scenario`."""
    kind = layout.get("kind")
    if kind not in LAYOUTS:
        known = ", ".join(sorted(LAYOUTS))
        raise InputError(f"{origin}: layout.kind = {kind!r} is not a known layout ({known})")
    params = {k: v for k, v in layout.items() if k != "kind"}
    LAYOUTS[str(kind)](scenario, params)


def _int_param(params: Mapping[str, Any], key: str, minimum: int) -> int:
    value = params.get(key)
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InputError(f"layout.{key} must be an integer >= {minimum}, not {value!r}")
    return value


def positions(scenario: Mapping[str, Any]) -> dict[int, tuple[float, float]] | None:
    """Node id -> (x, y) of a scenario as the core places it, or None for a random
    field (placed by the core from the seed)."""
    topo = dict(scenario.get("topology", {}))
    kind = topo.get("kind", "chain")
    if kind == "explicit":
        return {int(n["id"]): (float(n["x_m"]), float(n["y_m"])) for n in scenario.get("node", [])}
    spacing = float(topo.get("spacing_m", 200.0))
    if kind == "chain":
        return {i: (spacing * i, 0.0) for i in range(int(topo.get("nodes", 9)))}
    if kind == "grid":
        cols = int(topo.get("cols", 10))
        rows = int(topo.get("rows", 10))
        return {
            row * cols + col: (col * spacing, row * spacing)
            for row in range(rows)
            for col in range(cols)
        }
    return None
