"""Type stubs of the native core (crates/py), built by maturin."""

from typing import Callable

__all__ = [
    "ScenarioError",
    "check_scenario",
    "default_max_memory",
    "jain_index",
    "max_input_bytes",
    "run_scenario",
    "shares",
    "version",
]

class ScenarioError(ValueError):
    """A scenario the core rejects: one paragraph naming the key, the bad value and what is allowed."""

def version() -> str: ...
def jain_index(xs: list[float]) -> float:
    """The core's Jain index, the one every run summary carries (the claims' own must agree)."""

def default_max_memory() -> int:
    """The default memory budget of one run, in bytes."""

def max_input_bytes(max_memory: int | None = None) -> int:
    """The largest scenario or movement file a memory budget allows (budget / 64)."""

def check_scenario(
    text: str,
    fmt: str = "toml",
    origin: str = "<scenario>",
    seed: int | None = None,
    duration_s: float | None = None,
    base_dir: str | None = None,
    max_memory: int | None = None,
) -> str:
    """Validates a scenario; returns the canonical JSON of the fully defaulted scenario.

    Relative paths in it (`mobility.ns2_file`) are read from `base_dir`; a scenario
    estimated to need more than `max_memory` bytes (default 2 GiB) is refused.
    """

def run_scenario(
    text: str,
    fmt: str = "toml",
    origin: str = "<scenario>",
    seed: int | None = None,
    duration_s: float | None = None,
    progress: Callable[..., None] | None = None,
    pcap_path: str | None = None,
    pcap_snaplen: int = 256,
    base_dir: str | None = None,
    max_memory: int | None = None,
    progress_events: bool = False,
    trace_path: str | None = None,
    trace_nodes: list[int] | None = None,
    trace_flows: list[int] | None = None,
    trace_events: list[str] | None = None,
    positions_path: str | None = None,
    pcap_nodes: list[int] | None = None,
    pcap_node_paths: list[str] | None = None,
) -> tuple[str, str]:
    """Runs one scenario; returns (summary JSON, traces JSON).

    With `pcap_path`, every frame put on the air is written there (pcap,
    IEEE 802.11 with radiotap headers), at most `pcap_snaplen` bytes each; the
    file appears only once the run has finished. Signals are looked at every
    few hundred thousand events: Ctrl-C raises KeyboardInterrupt saying how far
    the run got. `progress(now_s, duration_s)` is called once per simulated
    second, with `progress_events` as `progress(now_s, duration_s, events)`.
    `trace_path` receives every packet event as JSON lines (docs/trace.md),
    `positions_path` every node's position each second. `pcap_nodes[i]` (a node
    id) gets its own capture in `pcap_node_paths[i]`: the frames it sent and those
    addressed to it that it decoded, as its own interface sees them.
    """

def shares(
    text: str, fmt: str = "toml", origin: str = "<scenario>", base_dir: str | None = None
) -> str:
    """The max-min C-load shares of the scenario's flows (all active, initial routes) as JSON."""
