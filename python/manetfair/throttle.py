"""Ingress throttling's inputs that come from runs of their own (docs/throttle.md).

Osipov and Tschudin (2007) set each source's rate limit r = Thr_max(h) · φ (eq. 2),
with Thr_max(h, MSS, rate) the throughput of one TCP flow alone on an h-hop path,
"experimentally measured" in isolation (§4.3), and they judge fairness by u (eq. 4)
against φ · Thr_alone, each flow's throughput "when running alone in the network"
(§5.1.1). Both are measured here by the simulator itself:

- Thr_max(h): one flow of the scenario's segment size and transport on a straight
  chain of h hops (`throttle.thr_max_spacing_m`, default the flows' mean hop length)
  with the scenario's radio, MAC and TCP settings, over `throttle.thr_max_seeds`
  seeds, measured from `throttle.thr_max_warmup_s` after its start to the end of the
  run; the mean over seeds is the table entry.
- Thr_alone: each flow alone on its own route and positions (the scenario with the
  other flows removed), same seeds and window (`throttle.u_reference = "isolated"`).

The calibration runs are ordinary runs: they go through the results store, so a
sweep measures each entry once, and they are listed with their settings.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from manetfair.errors import InputError
from manetfair.scenario import Scenario, ScenarioLike, load

# The runner (multiprocessing), the store, `statistics` and `tempfile` are imported
# where used: `manetfair run` asks `throttle_table` of every scenario, and a run's
# start-up is part of what a user waits for (bench/RESULTS.md, the ns-3 ratios).
if TYPE_CHECKING:
    from manetfair.runner import BatchClock, RunOutcome, RunSpec, Simulate
    from manetfair.store import ResultsStore

# Keys of the scenario that a calibration run keeps: what the path's capacity depends on.
_KEPT = ("radio", "mac", "tcp", "duration_s")


@dataclass
class Reference:
    """One measured reference throughput: its value, how it was measured, its runs."""

    kbps: float
    what: str  # "thr_max" or "thr_alone"
    key: int  # hops (thr_max) or flow index (thr_alone)
    settings: dict[str, Any]
    per_seed_kbps: list[float] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "what": self.what,
            "key": self.key,
            "kbps": self.kbps,
            "per_seed_kbps": self.per_seed_kbps,
            "settings": self.settings,
            "run_ids": self.run_ids,
        }


def shares(
    scenario: ScenarioLike,
    *,
    measure: bool = False,
    store: ResultsStore | str | os.PathLike[str] | None = None,
    jobs: int = 1,
) -> dict[str, Any]:
    """The max-min C-load shares of a scenario's flows (Osipov and Tschudin, §3.3).

    Every flow active on its initial route: per flow its path, the L-regions it loads
    (by centre node id), its bottleneck regions, φ (as a number and exactly, "1/3"),
    the iteration that assigned it, and, where Thr_max(h) is known, the rate limit
    r = Thr_max · φ (kbit/s of TCP payload) and the spacing Δ = MSS / r (s). With
    `measure`, missing Thr_max entries are measured first (in `store`, or in a
    temporary one).
    """
    given = _store_of(store, open_it=measure)
    if isinstance(jobs, bool) or not isinstance(jobs, int) or not 1 <= jobs <= 256:
        raise InputError(f"jobs: {jobs!r:.40} must be an integer from 1 to 256")
    sc = load(scenario)
    if measure:
        sc = with_references(sc, store=given, jobs=jobs, alone=False)
    else:
        sc = without_shaping(sc)
    return report(sc)


def _store_of(store: object, open_it: bool = True) -> ResultsStore | None:
    """A results store given as a store, a path (str or os.PathLike) or None; a path
    is opened only with `open_it`. Anything else is InputError naming `store`."""
    from manetfair.store import ResultsStore

    if store is None or isinstance(store, ResultsStore):
        return store
    if isinstance(store, (str, os.PathLike)):
        return ResultsStore(store) if open_it else None
    raise InputError(f"store: expected a ResultsStore or a path, not {store!r:.80}")


def report(sc: Scenario) -> dict[str, Any]:
    """The core's shares report of `sc` (as `shares`, without measuring)."""
    from manetfair import _core

    text, fmt, kwargs = sc.core_input()
    where = {"base_dir": kwargs["base_dir"]} if "base_dir" in kwargs else {}
    return dict(json.loads(_core.shares(text, fmt, sc.origin, **where)))


def throttle_table(data: dict[str, Any]) -> dict[str, Any] | None:
    """The scenario's `[throttle]` table ({} when the throttle queue implies it), or None."""
    table = data.get("throttle")
    mac = data.get("mac")
    if table is None and isinstance(mac, dict) and mac.get("queue") == "throttle":
        return {}
    return table if isinstance(table, dict) else None


def without_shaping(sc: Scenario) -> Scenario:
    """The scenario as the core sees it before Thr_max is known (shaping off), so
    that its shares can be computed without the table shaping needs."""
    out = sc.copy()
    table = throttle_table(out.data)
    if table is not None:
        table = dict(table)
        table["enforce"] = False
        out.data["throttle"] = table
    return out


def calibration_scenario(
    sc: Scenario, hops: int, spacing_m: float, mss: int, transport: str, warmup_s: float
) -> Scenario:
    """One flow of `mss`-byte segments over a straight chain of `hops` hops `spacing_m`
    apart, with `sc`'s radio, MAC (plain DropTail) and TCP settings and duration,
    measured from `warmup_s` on."""
    data: dict[str, Any] = {k: copy.deepcopy(sc.data[k]) for k in _KEPT if k in sc.data}
    mac = dict(data.get("mac", {}))
    mac["queue"] = "droptail"
    data["mac"] = mac
    data["name"] = f"thr-max-{hops}-hops"
    data["topology"] = {"kind": "explicit"}
    data["node"] = [{"id": k, "x_m": round(spacing_m * k, 6), "y_m": 0.0} for k in range(hops + 1)]
    data["flow"] = [
        {
            "src": 0,
            "dst": hops,
            "transport": transport,
            "app": "ftp",
            "packet_bytes": mss,
            "start_s": 0.0,
            "route": list(range(hops + 1)),
        }
    ]
    data["metrics"] = {"warmup_s": warmup_s}
    data["trace"] = {"node_series": False}
    return Scenario(data, f"{sc.origin} (Thr_max calibration, {hops} hops)")


def alone_scenario(sc: Scenario, flow: int, warmup_s: float) -> Scenario:
    """`sc` with only flow `flow`, plain DropTail and no throttling, measured from
    `warmup_s` after its start: its throughput "when running alone in the network"."""
    data = copy.deepcopy(sc.data)
    data.pop("throttle", None)
    mac = dict(data.get("mac", {}))
    mac["queue"] = "droptail"
    data["mac"] = mac
    data["flow"] = [data["flow"][flow]]
    data["metrics"] = {"warmup_s": warmup_s}
    data["trace"] = {"node_series": False}
    data["name"] = f"{data.get('name', 'scenario')}-alone-{flow}"
    return Scenario(data, f"{sc.origin} (flow {flow} alone)")


def _settings(sc: Scenario) -> dict[str, Any]:
    """What a reference throughput depends on, for display beside it."""
    canon = json.loads(sc.canonical_json())
    radio = canon.get("radio", {})
    mac = canon.get("mac", {})
    flow = canon["flow"][0]
    nodes = canon.get("node", [])
    return {
        "hops": len(flow.get("route") or []) - 1 if flow.get("route") else None,
        "spacing_m": nodes[1]["x_m"] - nodes[0]["x_m"] if len(nodes) > 1 else None,
        "mss_bytes": flow.get("packet_bytes"),
        "transport": flow.get("transport"),
        "data_rate_mbps": radio.get("data_rate_mbps"),
        "basic_rate_mbps": radio.get("basic_rate_mbps"),
        "tx_range_m": radio.get("tx_range_m"),
        "cs_range_m": radio.get("cs_range_m"),
        "rts_threshold_bytes": mac.get("rts_threshold_bytes"),
        "queue_capacity_pkts": mac.get("queue_capacity_pkts"),
        "tcp": canon.get("tcp", {}),
        "duration_s": canon.get("duration_s"),
        "warmup_s": canon.get("metrics", {}).get("warmup_s"),
    }


@dataclass
class _Need:
    what: str
    key: int
    scenario: Scenario
    seeds: int
    settings: dict[str, Any] = field(default_factory=dict)


def _needs(sc: Scenario, alone: bool) -> list[_Need]:
    """The reference runs `sc` still lacks: Thr_max entries for every hop count its
    flows take, and (u_reference = "isolated") each flow's Thr_alone.

    Each is validated here, before any runs, and `check` (below) calls this too: a
    scenario `check` accepts is one whose reference runs can run, and a refusal names
    the user's `[throttle]` key and value, not a key of the internal scenario."""
    table = throttle_table(sc.data)
    if table is None:
        return []
    shares_now = report(without_shaping(sc))
    flows = shares_now["flows"]
    canon = json.loads(without_shaping(sc).canonical_json())
    cfg = canon["throttle"]
    mss = {f["mss_bytes"] for f in flows}
    transports = {f.get("transport", "tcp-newreno") for f in canon["flow"]}
    if len(mss) > 1 or len(transports) > 1:
        raise InputError(
            f"{sc.origin}: throttle.thr_max_kbps is one table per scenario, but the flows use "
            f"segment sizes {sorted(mss)} and transports {sorted(transports)}; give "
            "throttle.thr_max_kbps explicitly"
        )
    alone_given = cfg.get("thr_alone_kbps") or []
    if alone_given and len(alone_given) != len(flows):
        raise InputError(
            f"{sc.origin}: key `throttle.thr_alone_kbps`: {len(alone_given)} values for "
            f"{len(flows)} flows; give one Thr_alone per flow, in flow order"
        )
    have = {int(k) for k in cfg.get("thr_max_kbps", {})}
    spacing = cfg.get("thr_max_spacing_m")
    spacing_given = spacing is not None
    if spacing is None:
        hop_lengths = [f["mean_hop_m"] for f in flows if f.get("mean_hop_m")]
        from statistics import fmean

        spacing = fmean(hop_lengths) if hop_lengths else 200.0
    warmup = float(cfg["thr_max_warmup_s"])
    seeds = int(cfg["thr_max_seeds"])
    segment = next(iter(mss), 1000)
    transport = next(iter(transports), "tcp-newreno")
    needs = [
        _Need(
            "thr_max",
            h,
            calibration_scenario(sc, h, float(spacing), segment, transport, warmup),
            seeds,
        )
        for h in shares_now["hops_needed"]
        if h not in have and h > 0
    ]
    if alone and cfg.get("u_reference") == "isolated" and not alone_given:
        if canon.get("traffic", {}).get("random_pairs") and flows:
            raise InputError(
                f'{sc.origin}: key `throttle.u_reference`: "isolated" measures each flow '
                "alone, but the flows of traffic.random_pairs are drawn by the core and "
                'cannot be run one by one; set throttle.u_reference = "thr_max" or give '
                "throttle.thr_alone_kbps"
            )
        needs += [
            _Need("thr_alone", i, alone_scenario(sc, i, warmup), seeds) for i in range(len(flows))
        ]
    known = {
        "thr_max_warmup_s": (warmup, "thr_max_warmup_s" in table),
        "thr_max_spacing_m": (round(float(spacing), 6), spacing_given),
    }
    for n in needs:
        try:
            n.settings = _settings(n.scenario)
        except ValueError as exc:  # the core's ScenarioError, or InputError
            raise _reference_error(sc, n, str(exc), known) from None
    return needs


def _reference_error(
    sc: Scenario, need: _Need, message: str, known: dict[str, tuple[float, bool]]
) -> InputError:
    """A reference run the core refused, told in the user's terms: the `[throttle]`
    key whose value made it impossible (its warm-up, its chain's spacing)."""
    detail = message.split(": ", 1)[1] if message.startswith(need.scenario.origin) else message
    run = (
        f"the Thr_max calibration run over {need.key} hops"
        if need.what == "thr_max"
        else f'the run of flow {need.key} alone (u_reference = "isolated")'
    )
    if "metrics.warmup_s" in detail:
        key = "thr_max_warmup_s"
    elif need.what == "thr_max" and ("node[" in detail or "route" in detail):
        key = "thr_max_spacing_m"
    else:
        return InputError(f"{sc.origin}: key `throttle`: {run} cannot run: {detail}")
    value, given = known[key]
    default = "" if given else " (the default)"
    if key == "thr_max_warmup_s":
        flow = need.scenario.data["flow"][0]
        start = float(flow.get("start_s", 0.0))
        stop = flow.get("stop_s", need.scenario.data.get("duration_s"))
        why = (
            f"leaves {run} no measurement window: its flow runs from {start} s to {stop} s "
            f"and is measured from {value} s after its start"
        )
        fix = "a warm-up shorter than that (or a longer duration_s)"
    else:
        import re

        why = f"makes {run} impossible: " + re.sub(r"key `[^`]*`: ", "", detail)
        fix = "a spacing within radio.tx_range_m"
    return InputError(
        f"{sc.origin}: key `throttle.{key}`: {value}{default} {why}; give {fix}, or the "
        "measured values themselves (throttle.thr_max_kbps, throttle.thr_alone_kbps)"
    )


def check(sc: Scenario) -> None:
    """Validates everything `run` will build for ingress throttling (the reference
    runs included) without running anything: InputError or the core's ScenarioError."""
    if throttle_table(sc.data) is not None:
        _needs(sc, alone=True)


def measure_references(
    scenarios: Sequence[Scenario],
    store: ResultsStore,
    *,
    jobs: int = 1,
    simulate: Simulate | None = None,
    alone: bool = True,
    clock: BatchClock | None = None,
) -> tuple[list[Scenario], list[Reference]]:
    """Fills in every scenario's missing Thr_max entries (and, where u_reference is
    "isolated", its flows' Thr_alone) from calibration runs, all obtained in one batch
    through `store` (simulated by `simulate`, the core in this process by default).
    Returns the completed scenarios and the references measured."""
    from statistics import fmean

    from manetfair.runner import RunSpec, execute, simulate_with_core

    needs = [_needs(sc, alone) for sc in scenarios]
    specs: list[RunSpec] = []
    owners: list[tuple[int, int]] = []
    for i, ns in enumerate(needs):
        for j, n in enumerate(ns):
            for seed in range(1, n.seeds + 1):
                specs.append(RunSpec(n.scenario.with_run(seed=seed), seed))
                owners.append((i, j))
    simulate = simulate or simulate_with_core
    outcomes = execute(specs, store, jobs=jobs, simulate=simulate, clock=clock) if specs else []
    runs: dict[tuple[int, int], list[RunOutcome]] = {}
    for owner, outcome in zip(owners, outcomes):
        runs.setdefault(owner, []).append(outcome)
    done: list[Scenario] = []
    refs: list[Reference] = []
    for i, (sc, ns) in enumerate(zip(scenarios, needs)):
        if not ns:
            done.append(sc)
            continue
        out = sc.copy()
        table = dict(throttle_table(out.data) or {})
        thr_max = {str(k): v for k, v in dict(table.get("thr_max_kbps", {})).items()}
        alone_kbps: dict[int, float] = {}
        for j, n in enumerate(ns):
            got = runs.get((i, j), [])
            per_seed = [float(o.summary["flows"][0]["throughput_kbps"]) for o in got]
            ref = Reference(
                kbps=fmean(per_seed),
                what=n.what,
                key=n.key,
                settings=n.settings,
                per_seed_kbps=per_seed,
                run_ids=[o.run_id for o in got],
            )
            refs.append(ref)
            if n.what == "thr_max":
                thr_max[str(n.key)] = round(ref.kbps, 3)
            else:
                alone_kbps[n.key] = round(ref.kbps, 3)
        if thr_max:
            table["thr_max_kbps"] = dict(sorted(thr_max.items(), key=lambda kv: int(kv[0])))
        if alone_kbps:
            table["thr_alone_kbps"] = [alone_kbps[k] for k in sorted(alone_kbps)]
        out.data["throttle"] = table
        done.append(out)
    return done, refs


def complete(
    specs: list[RunSpec],
    store: ResultsStore,
    *,
    jobs: int = 1,
    simulate: Simulate | None = None,
    clock: BatchClock | None = None,
) -> list[RunSpec]:
    """`specs` with those of ingress-throttling scenarios given their reference
    throughputs (Thr_max, Thr_alone), measured through the same store; the others are
    returned as they are. Batches call this before `runner.execute`, which knows no
    remedy."""
    chosen = [i for i, s in enumerate(specs) if throttle_table(s.scenario.data) is not None]
    if not chosen:
        return specs
    done, _ = measure_references(
        [specs[i].scenario for i in chosen], store, jobs=jobs, simulate=simulate, clock=clock
    )
    out = list(specs)
    for i, sc in zip(chosen, done):
        out[i] = dataclasses.replace(specs[i], scenario=sc, canonical_json="", scenario_hash="")
    return out


def with_references(
    scenario: ScenarioLike,
    *,
    store: ResultsStore | str | os.PathLike[str] | None = None,
    jobs: int = 1,
    alone: bool = True,
) -> Scenario:
    """`scenario` with its missing reference throughputs measured and filled in (in
    `store`, or in a temporary store that lasts for this call)."""
    sc = load(scenario)
    if throttle_table(sc.data) is None:
        return sc
    store = _store_of(store)
    if store is not None:
        return measure_references([sc], store, jobs=jobs, alone=alone)[0][0]
    with scratch_store() as scratch:
        return measure_references([sc], scratch, jobs=jobs, alone=alone)[0][0]


@contextmanager
def scratch_store() -> Iterator[ResultsStore]:
    """A results store in a temporary directory, removed afterwards."""
    import tempfile

    from manetfair.store import ResultsStore

    with tempfile.TemporaryDirectory(prefix="manetfair-calibration-") as tmp:
        yield ResultsStore(Path(tmp) / "calibration.duckdb")


def tc_commands(
    report: dict[str, Any],
    dev: str = "wlan0",
    subnet: str = "10.0.0.0/24",
    first_id: int = 0,
    limit: int = 50,
) -> list[str]:
    """Linux `tc` commands that enforce each flow's rate limit at its source.

    Per source node: an HTB root whose default class passes unshaped traffic at the
    device's speed, and one class per flow it sources at r (the flow's rate limit,
    scaled from TCP payload to IP bytes: MSS + 40 bytes of headers per segment) with
    a burst of one packet, so that segments leave about Δ apart, each with a
    `limit`-packet pfifo; a u32 filter sends the flow's packets (by destination
    address) to its class. Node `first_id` has the subnet's first host address, node
    `first_id` + k the k-th after it (a convention of this tool: adapt the filters to
    the real addresses). The lines are `tc -batch` input: no leading `tc`.
    """
    import ipaddress

    net = ipaddress.ip_network(subnet, strict=False)
    by_src: dict[int, list[dict[str, Any]]] = {}
    for f in report["flows"]:
        if f.get("rate_kbps"):
            by_src.setdefault(int(f["src"]), []).append(f)
    lines: list[str] = []
    for src, flows in sorted(by_src.items()):
        lines.append(f"# node {src} ({_addr(net, src - first_id)}): {len(flows)} shaped flow(s)")
        lines.append(f"qdisc replace dev {dev} root handle 1: htb default 1")
        lines.append(f"class add dev {dev} parent 1: classid 1:1 htb rate 100mbit quantum 1514")
        for k, f in enumerate(flows, start=1):
            cls = 10 + k
            ip_kbit = f["rate_kbps"] * (f["mss_bytes"] + 40) / f["mss_bytes"]
            lines.append(
                f"# flow {f['id']} -> node {f['dst']}: phi {f['phi_exact']}, "
                f"r = {f['rate_kbps']:.1f} kbit/s of payload, delta = {f['delta_s'] * 1000:.2f} ms"
            )
            lines.append(
                f"class add dev {dev} parent 1: classid 1:{cls} htb "
                f"rate {ip_kbit:.0f}kbit ceil {ip_kbit:.0f}kbit "
                f"burst {f['mss_bytes'] + 40}b cburst {f['mss_bytes'] + 40}b"
            )
            lines.append(f"qdisc add dev {dev} parent 1:{cls} handle {cls}: pfifo limit {limit}")
            lines.append(
                f"filter add dev {dev} parent 1: protocol ip prio 1 u32 "
                f"match ip dst {_addr(net, int(f['dst']) - first_id)}/32 flowid 1:{cls}"
            )
    return lines


def _addr(net: Any, index: int) -> str:
    """The address of the node `index` places after the first node."""
    if not 0 <= index < net.num_addresses - 2:
        raise InputError(
            f"{net} has no host address for the node {index} places after the first; "
            "pass a larger --subnet"
        )
    return str(net.network_address + index + 1)
