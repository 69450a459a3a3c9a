"""An ns-2.35 Tcl script from a manetfair scenario.

The scenario is read through manetfair's own validator (``check_scenario``), so
the script sees every key with its default filled in, exactly as manetfair runs
it. What ns-2.35 cannot express is refused with the key's name
(:class:`Unsupported`), never approximated.

The script writes ns-2's old-format wireless trace to stdout, preceded by one
``#flow`` line per flow (its ns-2 addresses and measurement window) that
:mod:`ns2trace` reads back.
"""

from __future__ import annotations

import json
import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# ns-2.35's WirelessPhy and OmniAntenna (tcl/lib/ns-default.tcl :747-762).
PT_W = 0.28183815
FREQ_HZ = 914e6
ANTENNA_M = 1.5
SYSTEM_LOSS = 1.0
SPEED_OF_LIGHT = 299792458.0
# ns-2's own thresholds for 250 m and 550 m (ns-default.tcl :758-759): 4 digits,
# rounded down, so that a node at exactly the range still decodes / senses.
NS2_THRESHOLDS = {250.0: 3.652e-10, 550.0: 1.559e-11}

TCP_AGENTS = {"tcp-newreno": "Agent/TCP/Newreno", "tcp-reno": "Agent/TCP/Reno"}

Json = dict[str, Any]


class Unsupported(ValueError):
    """A scenario key whose value ns-2.35 (as this harness drives it) cannot run."""

    def __init__(self, key: str, value: object, allowed: str) -> None:
        super().__init__(f"key `{key}`: {value!r} cannot run on ns-2.35; allowed: {allowed}")


def received_power_w(distance_m: float) -> float:
    """ns-2's TwoRayGround (mobile/tworayground.cc): Friis up to the crossover, d^-4 beyond."""
    wavelength = SPEED_OF_LIGHT / FREQ_HZ
    crossover = 4 * math.pi * ANTENNA_M * ANTENNA_M / wavelength
    if distance_m < crossover:
        return PT_W * wavelength**2 / ((4 * math.pi * distance_m) ** 2 * SYSTEM_LOSS)
    return PT_W * ANTENNA_M**4 / (distance_m**4 * SYSTEM_LOSS)


def threshold_w(range_m: float) -> float:
    """Receive or carrier-sense threshold whose range is ``range_m``, to ns-2's 4 digits."""
    if range_m in NS2_THRESHOLDS:
        return NS2_THRESHOLDS[range_m]
    p = received_power_w(range_m)
    scale = 10.0 ** (math.floor(math.log10(p)) - 3)
    return math.floor(p / scale) * scale


def canonical(path: Path, duration_s: float | None = None) -> Json:
    """The scenario file as manetfair reads it: every key, defaults filled in."""
    from manetfair import _core

    text = path.read_text()
    out = _core.check_scenario(
        text, "toml", str(path), duration_s=duration_s, base_dir=str(path.parent)
    )
    data: Json = json.loads(out)
    return data


@dataclass(frozen=True)
class Flow:
    """One flow in ns-2's numbering (node index = position in the scenario's node list)."""

    index: int
    src: int
    dst: int
    transport: str
    app: str
    packet_bytes: int
    start_s: float
    stop_s: float
    measure_from_s: float
    rate_kbps: float | None
    route: tuple[int, ...] | None
    # Later explicit paths: (from time, path), as manetfair's `route_changes`.
    route_changes: tuple[tuple[float, tuple[int, ...]], ...] = ()


@dataclass(frozen=True)
class Layout:
    """Node positions and ids: ``ids[i]`` is the scenario's id of ns-2's node i."""

    ids: tuple[int, ...]
    positions: tuple[tuple[float, float], ...]


def layout(sc: Json) -> Layout:
    topo = sc["topology"]
    kind = topo["kind"]
    if kind == "chain":
        n, sp = topo["nodes"], topo["spacing_m"]
        return Layout(tuple(range(n)), tuple((i * sp, 0.0) for i in range(n)))
    if kind == "grid":
        rows, cols, sp = topo["rows"], topo["cols"], topo["spacing_m"]
        pos = tuple((c * sp, r * sp) for r in range(rows) for c in range(cols))
        return Layout(tuple(range(rows * cols)), pos)
    if kind == "explicit":
        nodes = sc["node"]
        return Layout(
            tuple(int(n["id"]) for n in nodes), tuple((n["x_m"], n["y_m"]) for n in nodes)
        )
    raise Unsupported("topology.kind", kind, '"chain", "grid", "explicit"')


def flows(sc: Json, lay: Layout) -> list[Flow]:
    index = {node_id: i for i, node_id in enumerate(lay.ids)}
    specs = sc.get("flow") or []
    if "traffic" in sc:
        raise Unsupported("traffic", "random_pairs", "explicit [[flow]] tables")
    out: list[Flow] = []
    last_start = max((f["start_s"] for f in specs), default=0.0)
    warmup = (sc.get("metrics") or {}).get("warmup_s")
    for i, f in enumerate(specs):
        transport = f["transport"]
        if transport not in TCP_AGENTS and transport != "udp":
            raise Unsupported(f"flow[{i}].transport", transport, '"tcp-newreno", "tcp-reno", "udp"')
        if f["app"] not in ("ftp", "cbr"):
            raise Unsupported(f"flow[{i}].app", f["app"], '"ftp", "cbr"')
        changes = f.get("route_changes") or []
        if changes and f.get("route") is None:
            raise Unsupported(f"flow[{i}].route_changes", "...", "with an explicit route")
        stop = f.get("stop_s", sc["duration_s"])
        measure_from = f["start_s"]
        if warmup is not None:
            measure_from = max(measure_from, last_start + warmup)
        route = f.get("route")
        out.append(
            Flow(
                index=i,
                src=index[f["src"]],
                dst=index[f["dst"]],
                transport=transport,
                app=f["app"],
                packet_bytes=f["packet_bytes"],
                start_s=f["start_s"],
                stop_s=stop,
                measure_from_s=measure_from,
                rate_kbps=f.get("rate_kbps"),
                route=None if route is None else tuple(index[n] for n in route),
                route_changes=tuple(
                    (float(c["at_s"]), tuple(index[n] for n in c["route"])) for c in changes
                ),
            )
        )
    return out


def scripted_paths(sc: Json, lay: Layout) -> dict[int, list[tuple[float, float, float]]]:
    """ns-2 node index -> the (t, x, y) points of its `[[mobility.node]]` path.

    Only scripted paths are run: ns-2's `setdest` between consecutive points gives
    the same linear motion (manetfair pushes positions to the channel every
    `update_interval_s`; ns-2 computes them when a frame is sent or received)."""
    mobility = sc.get("mobility") or {}
    other = sorted(k for k in mobility if k not in ("update_interval_s", "node"))
    if other:
        raise Unsupported(f"mobility.{other[0]}", "...", "[[mobility.node]] paths")
    index = {node_id: i for i, node_id in enumerate(lay.ids)}
    out: dict[int, list[tuple[float, float, float]]] = {}
    for k, node in enumerate(mobility.get("node") or []):
        if "path" not in node:
            raise Unsupported(f"mobility.node[{k}]", "moves", "a path")
        points = [(float(t), float(x), float(y)) for t, x, y in node["path"]]
        if any(b[0] <= a[0] for a, b in zip(points, points[1:])):
            raise Unsupported(f"mobility.node[{k}].path", "a jump", "increasing times")
        out[index[node["id"]]] = points
    return out


def neighbours(lay: Layout, range_m: float) -> list[list[int]]:
    """Nodes within ``range_m`` of each node (the range included), in index order."""
    pos = lay.positions
    return [
        [j for j in range(len(pos)) if j != i and math.dist(pos[i], pos[j]) <= range_m + 1e-9]
        for i in range(len(pos))
    ]


def next_hops(adj: Sequence[Sequence[int]], dst: int) -> dict[int, int]:
    """Hop-count shortest paths towards ``dst``; ties go to the lowest node index."""
    dist = {dst: 0}
    queue = deque([dst])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            if v not in dist:
                dist[v] = dist[u] + 1
                queue.append(v)
    return {u: min(v for v in adj[u] if dist.get(v) == d - 1) for u, d in dist.items() if u != dst}


def static_routes(sc: Json, lay: Layout, fl: Sequence[Flow]) -> dict[int, dict[int, int]]:
    """Per node, destination -> next hop, for every flow's data and its ACKs."""
    adj = neighbours(lay, sc["radio"]["tx_range_m"])
    table: dict[int, dict[int, int]] = {i: {} for i in range(len(lay.ids))}

    def put(node: int, dst: int, hop: int, key: str) -> None:
        old = table[node].setdefault(dst, hop)
        if old != hop:
            raise Unsupported(key, "routes that disagree", "one next hop per node and destination")

    for f in fl:
        if f.route is not None:
            path = f.route
            for a, b in zip(path, path[1:]):
                put(a, f.dst, b, f"flow[{f.index}].route")
                put(b, f.src, a, f"flow[{f.index}].route")
            continue
        for dst in (f.dst, f.src):
            for node, hop in next_hops(adj, dst).items():
                put(node, dst, hop, "routing.protocol")
    return table


def _tcl_num(x: float) -> str:
    return repr(float(x)) if not float(x).is_integer() else str(int(x))


def script(
    sc: Json,
    *,
    seed: int,
    agent_lib: Path | None,
    arp: str | None = None,
    trace: bool = True,
    router_trace: bool = False,
    tcp_ip_header: bool = False,
) -> str:
    """The ns-2.35 script of ``sc`` (canonical, from :func:`canonical`) with ``seed``.

    ``arp``: ``"filled"`` gives every node its neighbours' MAC addresses before
    the run (static routes never ARP anyway); ``"ns2"`` leaves ns-2's ARP as it
    is; ``None`` takes ``"ns2"`` if the scenario sets ``[ns2] arp``.
    ``tcp_ip_header``: static routes add 20 bytes of IP header to TCP segments
    too, as DSDV does (AODV, and the default, add it to other packets only).
    ``trace=False`` traces drops only (to time the simulation alone; ns-2's
    wireless nodes need a trace file for their drop targets).
    ``agent_lib`` is the library of ``agent/static_route.cc`` (static routes, ARP filling).
    """
    if arp is None:  # the scenario's own choice: `[ns2] arp` (manetfair's ns-2 ARP rule)
        arp = "ns2" if (sc.get("ns2") or {}).get("arp") else "filled"
    if arp not in ("filled", "ns2"):
        raise ValueError(f"arp: {arp!r}; allowed: filled, ns2")
    radio, mac, tcp = sc["radio"], sc["mac"], sc["tcp"]
    if radio.get("reception", "threshold") != "threshold":
        raise Unsupported("radio.reception", radio["reception"], '"threshold"')
    if radio.get("propagation", "two-ray-ground") != "two-ray-ground":
        raise Unsupported("radio.propagation", radio["propagation"], '"two-ray-ground"')
    for key in ("tx_range_by_rate_m", "profile"):
        if key in radio:
            raise Unsupported(f"radio.{key}", radio[key], "none (one range for every rate)")
    if radio.get("interference_range_m", radio["cs_range_m"]) != radio["cs_range_m"]:
        raise Unsupported("radio.interference_range_m", radio["interference_range_m"], "cs_range_m")
    if mac["queue"] != "droptail":
        raise Unsupported("mac.queue", mac["queue"], '"droptail"')
    for ext in ("quick_exchange", "fast_forward", "opet"):
        if (mac.get(ext) or {}).get("enabled"):
            raise Unsupported(f"mac.{ext}.enabled", True, "false")
    ack_rate = mac.get("ack_rate_mbps", radio["basic_rate_mbps"])
    if ack_rate != radio["basic_rate_mbps"]:
        raise Unsupported("mac.ack_rate_mbps", ack_rate, "the basic rate")
    protocol = sc["routing"]["protocol"]
    needs_lib = protocol == "static" or arp == "filled"
    if needs_lib and agent_lib is None:
        raise ValueError(
            "static routing and filled ARP tables need the agent library (make -C bench/ns2 agent)"
        )

    lay = layout(sc)
    fl = flows(sc, lay)
    paths = scripted_paths(sc, lay)
    if any(f.route_changes for f in fl) and protocol != "static":
        raise Unsupported("flow.route_changes", "...", 'routing.protocol = "static"')
    n = len(lay.ids)
    start = list(lay.positions)
    for i, points in paths.items():
        start[i] = points[0][1:]
    xs = [p[0] for p in start] + [x for pts in paths.values() for _, x, _ in pts]
    ys = [p[1] for p in start] + [y for pts in paths.values() for _, _, y in pts]
    # ns-2's flat grid starts at (0, 0): shift the field there (distances are kept);
    # a moving node's destinations must lie inside it (mobilenode.cc :411-414).
    margin = 1.0 if paths else 0.0
    x0, y0 = min(xs) - margin, min(ys) - margin
    positions = [(x - x0, y - y0) for x, y in start]
    width, height = max(xs) - x0 + 1.0, max(ys) - y0 + 1.0
    rts = mac["rts_threshold_bytes"]
    duration = sc["duration_s"]
    lines: list[str] = []
    add = lines.append
    add(f"# {sc['name']}: generated from a manetfair scenario by bench/ns2/ns2tcl.py")
    add(f"# seed {seed}; the trace (old wireless format) goes to the file named by the")
    add("# first argument, or to stdout")
    if needs_lib:
        add(f"load {json.dumps(str(agent_lib))} Staticroute")
    add("global defaultRNG")
    add(f"$defaultRNG seed {seed}")
    add("set ns [new Simulator]")
    add('set tf [expr {$argc > 0 ? [open [lindex $argv 0] w] : "stdout"}]')
    add("$ns trace-all $tf")
    add(f"set topo [new Topography]\n$topo load_flatgrid {_tcl_num(width)} {_tcl_num(height)}")
    add(f"create-god {n}")
    add("set chan [new Channel/WirelessChannel]")
    phy = {
        "Pt_": PT_W,
        "freq_": FREQ_HZ,
        "L_": SYSTEM_LOSS,
        "RXThresh_": threshold_w(radio["tx_range_m"]),
        "CSThresh_": threshold_w(radio["cs_range_m"]),
        "CPThresh_": 10 ** (radio["capture_threshold_db"] / 10),
        "bandwidth_": radio["data_rate_mbps"] * 1e6,
    }
    for k, v in phy.items():
        add(f"Phy/WirelessPhy set {k} {v!r}")
    for k in ("X_", "Y_"):
        add(f"Antenna/OmniAntenna set {k} 0")
    add(f"Antenna/OmniAntenna set Z_ {ANTENNA_M}")
    macp = {
        "dataRate_": f"{_tcl_num(radio['data_rate_mbps'])}Mb",
        "basicRate_": f"{_tcl_num(radio['basic_rate_mbps'])}Mb",
        # ns-2 sends an RTS when size >= RTSThreshold_; manetfair when size > threshold.
        "RTSThreshold_": rts + 1 if rts > 0 else 0,
        "ShortRetryLimit_": mac["short_retry_limit"],
        "LongRetryLimit_": mac["long_retry_limit"],
        "CWMin_": mac["cw_min"],
        "CWMax_": mac["cw_max"],
        "SlotTime_": mac["slot_us"] * 1e-6,
        "SIFS_": mac["sifs_us"] * 1e-6,
        "PLCPDataRate_": 1e6,
    }
    for k, v in macp.items():
        add(f"Mac/802_11 set {k} {v}")
    if protocol == "static":
        add(f"Agent/StaticRoute set tcpIpHeader_ {int(tcp_ip_header)}")
        add("Simulator instproc create-static-route-agent {node} {")
        add("    set ragent [new Agent/StaticRoute]")
        add("    $ragent addr [$node node-addr]")
        add("    $node set ragent_ $ragent")
        add("    return $ragent")
        add("}")
        routing = "DumbAgent -rtAgentFunction create-static-route-agent"
    elif protocol == "aodv":
        routing = "AODV"
    else:
        raise Unsupported("routing.protocol", protocol, '"static", "aodv"')
    on = {True: "ON", False: "OFF"}
    add(
        f"$ns node-config -adhocRouting {routing} -llType LL -macType Mac/802_11"
        f" -ifqType Queue/DropTail/PriQueue -ifqLen {mac['queue_capacity_pkts']}"
        " -antType Antenna/OmniAntenna -propType Propagation/TwoRayGround"
        " -phyType Phy/WirelessPhy -channel $chan -topoInstance $topo"
        f" -agentTrace {on[trace]} -routerTrace {on[trace and router_trace]}"
        f" -macTrace {on[trace]}"
        " -movementTrace OFF"
    )
    add(f"for {{set i 0}} {{$i < {n}}} {{incr i}} {{")
    add("    set node_($i) [$ns node]\n    $node_($i) random-motion 0\n}")
    for i, (x, y) in enumerate(positions):
        add(
            f"$node_({i}) set X_ {_tcl_num(x)}; $node_({i}) set Y_ {_tcl_num(y)}; "
            f"$node_({i}) set Z_ 0"
        )
    for i, points in sorted(paths.items()):
        for (t, x, y), (t2, x2, y2) in zip(points, points[1:]):
            if (x, y) != (x2, y2):
                speed = math.dist((x, y), (x2, y2)) / (t2 - t)
                add(
                    f'$ns at {t!r} "$node_({i}) setdest {_tcl_num(x2 - x0)} '
                    f'{_tcl_num(y2 - y0)} {speed!r}"'
                )
    if protocol == "static":
        for node, tab in static_routes(sc, lay, fl).items():
            for dst, hop in sorted(tab.items()):
                add(f"[$node_({node}) set ragent_] route {dst} {hop}")
        for f in fl:
            for at, path in f.route_changes:
                # From `at` on, data and ACKs take the new path (manetfair's route_changes).
                for a, b in zip(path, path[1:]):
                    add(f'$ns at {at!r} "[$node_({a}) set ragent_] route {f.dst} {b}"')
                    add(f'$ns at {at!r} "[$node_({b}) set ragent_] route {f.src} {a}"')
    elif arp == "filled":
        add("set arpfill [new ARPFill]")
        for i, nbrs in enumerate(neighbours(lay, radio["tx_range_m"])):
            for j in nbrs:
                add(f"$arpfill add [$node_({i}) set arptable_] {j} {j}")
    tcp_vars = {
        "window_": tcp["max_window_pkts"],
        "windowInit_": tcp["initial_cwnd_pkts"],
        "minrto_": tcp["min_rto_s"],
        "rtxcur_init_": tcp["initial_rto_s"],
        "maxrto_": tcp["max_rto_s"],
        "tcpTick_": tcp["clock_granularity_s"],
        "numdupacks_": tcp["dupack_threshold"],
    }
    sink = "Agent/TCPSink/DelAck" if tcp["delayed_ack"] else "Agent/TCPSink"
    for f in fl:
        i = f.index
        if f.transport in TCP_AGENTS:
            add(f"set src_({i}) [new {TCP_AGENTS[f.transport]}]")
            for k, v in tcp_vars.items():
                add(f"$src_({i}) set {k} {v}")
            add(f"$src_({i}) set packetSize_ {f.packet_bytes}")
            add(f"set sink_({i}) [new {sink}]")
            if tcp["delayed_ack"]:
                add(f"$sink_({i}) set interval_ {tcp['delayed_ack_timeout_s']}")
            add(f"set app_({i}) [new Application/FTP]")
        else:
            if f.rate_kbps is None:
                raise Unsupported(f"flow[{i}].rate_kbps", None, "a rate for a CBR flow")
            add(f"set src_({i}) [new Agent/UDP]")
            add(f"set sink_({i}) [new Agent/Null]")
            add(f"set app_({i}) [new Application/Traffic/CBR]")
            add(f"$app_({i}) set packetSize_ {f.packet_bytes}")
            add(f"$app_({i}) set rate_ {f.rate_kbps * 1000!r}")
        add(f"$ns attach-agent $node_({f.src}) $src_({i})")
        add(f"$ns attach-agent $node_({f.dst}) $sink_({i})")
        add(f"$ns connect $src_({i}) $sink_({i})")
        add(f"$app_({i}) attach-agent $src_({i})")
        add(f'$ns at {f.start_s!r} "$app_({i}) start"')
        if f.stop_s < duration:
            add(f'$ns at {f.stop_s!r} "$app_({i}) stop"')
        add(
            f'puts $tf "#flow {i} [$src_({i}) set agent_addr_] [$src_({i}) set agent_port_]'
            f" [$sink_({i}) set agent_addr_] [$sink_({i}) set agent_port_]"
            f' {f.packet_bytes} {f.measure_from_s!r} {f.stop_s!r}"'
        )
    add(f'puts $tf "#routing {protocol}"')
    add(f'puts $tf "#duration {duration!r}"')
    add(f'$ns at {duration!r} "$ns flush-trace; $ns halt"')
    add("$ns run")
    add("close $tf")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> None:
    import argparse

    ap = argparse.ArgumentParser(description="Writes the ns-2.35 script of a manetfair scenario.")
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--arp", choices=("filled", "ns2"), help="default: the scenario's [ns2] arp")
    ap.add_argument("--tcp-ip-header", action="store_true", help="IP header on TCP too (DSDV)")
    ap.add_argument("--no-trace", action="store_true", help="trace drops only (timing)")
    ap.add_argument("--router-trace", action="store_true", help="trace the routing layer too")
    ap.add_argument(
        "--agent-lib",
        type=Path,
        default=Path(__file__).resolve().parent / "build" / "static_route.so",
    )
    args = ap.parse_args(argv)
    sc = canonical(args.scenario)
    print(
        script(
            sc,
            seed=args.seed,
            agent_lib=args.agent_lib.resolve(),
            arp=args.arp,
            tcp_ip_header=args.tcp_ip_header,
            trace=not args.no_trace,
            router_trace=args.router_trace,
        ),
        end="",
    )


if __name__ == "__main__":
    main()
