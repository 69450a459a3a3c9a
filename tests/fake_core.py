"""A stand-in for the native module with the same API, for tests of the front door's
own logic (store, sweeps, resume, report) that must not depend on the simulator's speed
or numbers. It validates a few keys like the core does and returns summaries whose
numbers depend on the scenario and seed only.

Environment: FAKE_CORE_DELAY_S (seconds to sleep per run), FAKE_CORE_COUNTER (a file
that gets one line per simulated run, from whichever process runs it).
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Callable

import tomllib

TOP_KEYS = {
    "name",
    "duration_s",
    "seed",
    "platform",
    "radio",
    "mac",
    "routing",
    "topology",
    "node",
    "flow",
}


class ScenarioError(ValueError):
    pass


def version() -> str:
    return "0.1.0"


def max_input_bytes(max_memory: int | None = None) -> int:
    return (max_memory or 2 << 30) // 64


def _parse(text: str, fmt: str, origin: str) -> dict[str, Any]:
    try:
        data = json.loads(text) if fmt == "json" else tomllib.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{origin}: not valid {fmt.upper()}: {exc}") from None
    for key in data:
        if key not in TOP_KEYS:
            raise ScenarioError(f"{origin}: unknown key `{key}`; allowed: {sorted(TOP_KEYS)}")
    if not isinstance(data.get("duration_s", 10.0), (int, float)):
        raise ScenarioError(f"{origin}: key `duration_s` must be a number of seconds")
    queue = data.get("mac", {}).get("queue", "droptail")
    if queue != "droptail":
        raise ScenarioError(f'{origin}: key `mac.queue` = {queue!r}: allowed "droptail"')
    for f in data.get("flow", []):
        if f.get("transport", "udp") != "udp":
            raise ScenarioError(f'{origin}: key `flow.transport`: allowed "udp"')
    data.setdefault("duration_s", 10.0)
    data.setdefault("seed", 1)
    data.setdefault("name", "scenario")
    return data


def check_scenario(
    text: str,
    fmt: str = "toml",
    origin: str = "<scenario>",
    seed: int | None = None,
    duration_s: float | None = None,
    base_dir: str | None = None,
    max_memory: int | None = None,
) -> str:
    data = _parse(text, fmt, origin)
    if seed is not None:
        data["seed"] = seed
    if duration_s is not None:
        data["duration_s"] = float(duration_s)
    return json.dumps(data, sort_keys=True)


def run_scenario(
    text: str,
    fmt: str = "toml",
    origin: str = "<scenario>",
    seed: int | None = None,
    duration_s: float | None = None,
    progress: Callable[..., None] | None = None,
    base_dir: str | None = None,
    max_memory: int | None = None,
    progress_events: bool = False,
) -> tuple[str, str]:
    data = json.loads(check_scenario(text, fmt, origin, seed, duration_s))
    seed = data["seed"]
    duration = float(data["duration_s"])
    delay = float(os.environ.get("FAKE_CORE_DELAY_S", "0"))
    if delay:
        time.sleep(delay)
    counter = os.environ.get("FAKE_CORE_COUNTER")
    if counter:
        with open(counter, "a") as fh:
            fh.write(f"{os.getpid()} {seed}\n")
    if progress is not None:
        for t in range(int(duration) + 1):
            progress(float(t), duration, 1000 * t) if progress_events else progress(
                float(t), duration
            )
    flows = []
    rts = data.get("mac", {}).get("rts_threshold_bytes", 0)
    for i, f in enumerate(data.get("flow", [])):
        kbps = min(float(f.get("rate_kbps", 100.0)), 1500.0 / max(1, len(data["flow"])))
        kbps *= 1.0 - 0.01 * (seed % 3) - (0.02 if rts == 0 else 0.0)
        flows.append(
            {
                "id": i,
                "src": f["src"],
                "dst": f["dst"],
                "transport": "udp",
                "hops": 1,
                "throughput_kbps": kbps,
                "delivered_bytes": int(kbps * duration * 125),
                "series_kbps": [kbps] * int(duration),
            }
        )
    agg = sum(f["throughput_kbps"] for f in flows)
    sq = sum(f["throughput_kbps"] ** 2 for f in flows)
    summary = {
        "name": data["name"],
        "seed": seed,
        "duration_s": duration,
        "wall_s": delay,
        "events": 1000 * len(flows),
        "flows": flows,
        "aggregate_kbps": agg,
        "jain_index": (agg * agg / (len(flows) * sq)) if sq else 1.0,
        "loss_pct": 0.0,
        "mac": {
            "frames_sent": {"rts": 0, "cts": 0, "data": 0, "ack": 0},
            "collisions": {"rts": 0, "cts": 0, "data": 0, "ack": 0},
            "retry_drops": 0,
        },
        "drops": {"queue_overflow": 0, "mac_retry": 0, "no_route": 0, "aqm": 0},
        "ledger": {"generated": 0, "delivered": 0, "dropped": 0, "in_flight": 0, "balanced": True},
    }
    if len(flows) >= 2 and agg > 0:
        share = agg / len(flows)
        spread = sum((f["throughput_kbps"] - share) ** 2 for f in flows)
        u = (spread / (len(flows) * share * share)) ** 0.5
        summary["equal_share_unfairness"] = summary["unfairness_index"] = u
    n_nodes = len(data.get("node", [])) or 2
    bins = int(duration)
    traces = {
        "bin_s": 1.0,
        "time_s": [float(t) for t in range(bins)],
        "flow_throughput_kbps": [f["series_kbps"] for f in flows],
        "queue_len_pkts": [[0.0] * bins for _ in range(n_nodes)],
        "radio_busy_frac": [[0.5] * bins for _ in range(n_nodes)],
        "tcp": [None for _ in flows],
    }
    return json.dumps(summary), json.dumps(traces)


def install() -> None:
    """Makes `manetfair._core` this module (call before importing manetfair)."""
    sys.modules["manetfair._core"] = sys.modules[__name__]
    if "manetfair" in sys.modules:
        sys.modules["manetfair"]._core = sys.modules[__name__]  # type: ignore[attr-defined]


def simulate(text: str, origin: str) -> tuple[str, str]:
    """`runner.Simulate` over this module: picklable, so worker processes run the
    stand-in too (they import this module, not the parent's patched `_core`)."""
    return run_scenario(text, "json", origin)
