"""The Python API: `manetfair.run(...)` returns a RunResult with the summary and
the time series as columns."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

from manetfair.errors import InputError
from manetfair.scenario import Scenario, ScenarioLike, load

Progress = Callable[[float, float], None]


class RunResult:
    """One finished run: `summary` is docs/contract.md §3; `traces` the per-second series.

    `traces` may be given as the core's JSON text: it is parsed when first read, and
    `manetfair run --json` never reads it. A plain class, not a dataclass: importing
    `dataclasses` (and `inspect` with it) costs about 12 ms, a tenth of what the front
    end adds to every `manetfair run` (docs/benchmark.md, "The front end of one run").
    """

    __slots__ = ("_traces", "scenario", "summary")

    def __init__(
        self, summary: dict[str, Any], traces: dict[str, Any] | str, scenario: Scenario
    ) -> None:
        self.summary = summary
        self._traces = traces
        self.scenario = scenario

    @property
    def traces(self) -> dict[str, Any]:
        traces = self._traces
        if isinstance(traces, str):
            traces = self._traces = json.loads(traces)
        return traces

    @traces.setter
    def traces(self, value: dict[str, Any]) -> None:
        self._traces = value

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RunResult):
            return NotImplemented
        return (self.summary, self.traces, self.scenario) == (
            other.summary,
            other.traces,
            other.scenario,
        )

    def __repr__(self) -> str:
        return (
            f"RunResult(summary={self.summary!r}, traces={self.traces!r}, "
            f"scenario={self.scenario!r})"
        )

    @property
    def aggregate_kbps(self) -> float:
        return float(self.summary["aggregate_kbps"])

    @property
    def jain_index(self) -> float:
        return float(self.summary["jain_index"])

    def node_ids(self) -> list[Any]:
        """Node labels for the per-node series: the file's ids for an explicit topology
        (in file order), else 0..n-1 as generated topologies number them."""
        n = len(self.traces.get("queue_len_pkts", []))
        nodes = self.scenario.data.get("node")
        if isinstance(nodes, list) and len(nodes) == n:
            return [node.get("id", i) for i, node in enumerate(nodes)]
        return list(range(n))

    def series_columns(self) -> dict[str, list[Any]]:
        """The traces as named columns of equal length, one row per bin of `bin_s`:
        time_s; flow<i>_kbps; node<id>_queue_pkts, node<id>_busy_frac and
        node<id>_nav_frac (the fraction of the bin the NAV was set); and for TCP
        flows flow<i>_cwnd_pkts, _ssthresh_pkts, _srtt_s, _rttvar_s."""
        t = self.traces
        cols: dict[str, list[Any]] = {"time_s": list(t.get("time_s", []))}
        for i, values in enumerate(t.get("flow_throughput_kbps", [])):
            cols[f"flow{i}_kbps"] = list(values)
        ids = self.node_ids()
        for node, values in zip(ids, t.get("queue_len_pkts", [])):
            cols[f"node{node}_queue_pkts"] = list(values)
        for node, values in zip(ids, t.get("radio_busy_frac", [])):
            cols[f"node{node}_busy_frac"] = list(values)
        for node, values in zip(ids, t.get("nav_busy_frac", [])):
            cols[f"node{node}_nav_frac"] = list(values)
        for i, tcp in enumerate(t.get("tcp", []) or []):
            if tcp:
                for key, values in tcp.items():
                    cols[f"flow{i}_{key}"] = list(values)
        n = len(cols["time_s"])
        return {k: (v + [None] * (n - len(v)))[:n] for k, v in cols.items()}

    def series(self) -> Any:
        """The traces as a pyarrow Table (columns as in `series_columns`)."""
        import pyarrow as pa

        return pa.table(self.series_columns())

    def flows(self) -> Any:
        """One row per flow of the summary, as a pyarrow Table (series_kbps left out)."""
        import pyarrow as pa

        rows = [{k: v for k, v in f.items() if k != "series_kbps"} for f in self.summary["flows"]]
        return pa.Table.from_pylist(rows)

    def write(self, out: str | os.PathLike[str]) -> list[Path]:
        """Writes summary.json, series.parquet and series.csv into the directory `out`.

        Each file is written under a temporary name and renamed into place once whole
        (manetfair.output), so a full disk or an interruption never leaves a truncated
        file; a failure raises OSError naming the file and the cause. A target that is
        not a regular file (a device, a FIFO, a link) is refused with InputError.
        """
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        from manetfair.output import Outputs, write_file, write_text

        names = ("summary.json", "series.parquet", "series.csv")
        folder = Outputs().add_dir(out, "out", names)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(f"cannot create {folder}: {exc.strerror or exc}") from None
        summary = write_text(folder / names[0], json.dumps(self.summary, indent=2) + "\n")
        table = self.series()
        series = write_file(folder / names[1], lambda tmp: pq.write_table(table, str(tmp)))
        csv = write_file(folder / names[2], lambda tmp: pacsv.write_csv(table, str(tmp)))
        return [summary, series, csv]


def check_max_memory(value: object) -> int | None:
    """A memory budget from the Python API: None or an integer of bytes from 1 to 2^63."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**63:
        raise InputError(f"max_memory: {value!r:.80} must be a number of bytes from 1 to 2^63")
    return value


def prepare(
    scenario: ScenarioLike,
    seed: int | None = None,
    duration_s: float | None = None,
    overrides: dict[str, Any] | None = None,
    max_memory: int | None = None,
) -> Scenario:
    """Loads a scenario and applies dotted-key overrides, seed and duration.

    A scenario file is read within the input-file limit of `max_memory`
    (manetfair.inputs). An ingress-throttling scenario (`[throttle]`) gets its
    missing reference throughputs measured in isolated runs (manetfair.throttle)
    and filled in.
    """
    sc = load(scenario, max_memory)
    if overrides:
        sc = sc.with_overrides(overrides)
    sc = sc.with_run(seed=seed, duration_s=duration_s)
    if not _may_throttle(sc):
        return sc
    from manetfair import throttle

    if throttle.throttle_table(sc.data) is not None:
        throttle.without_shaping(sc).canonical_json()  # bad input first, before any calibration
        sc = throttle.with_references(sc)
    return sc


def _may_throttle(sc: Scenario) -> bool:
    """Whether `prepare` must look for ingress throttling. TOML text that spells
    neither `throttle` nor an escape sequence (which could spell it) holds no
    `[throttle]` table and no `queue = "throttle"`, so it is left unparsed: the core
    reads the text itself, and its messages cite the file's own lines."""
    text = sc.source_text
    return text is None or "throttle" in text or "\\" in text


def run(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    duration_s: float | None = None,
    progress: Progress | None = None,
    pcap: str | os.PathLike[str] | None = None,
    max_memory: int | None = None,
    **overrides: Any,
) -> RunResult:
    """Runs one scenario in the native core and returns its RunResult.

    `scenario` is a path, TOML text, a dict of scenario keys, or a Scenario.
    Keyword overrides set scenario keys, with `__` standing for the dot:
    `run("chain.toml", seed=3, mac__queue="red", flow__0__rate_kbps=400)`.
    With `pcap`, every frame put on the air is written to that pcap file
    (802.11 with radiotap headers; Wireshark and tcpdump read it). `max_memory`
    (bytes) replaces the default memory budget of one run (2 GiB).

    Ctrl-C (or any signal whose handler raises) stops the run within a fraction of a
    second, even while simulated time stands still: KeyboardInterrupt says how far it
    got, and no pcap file is left behind.
    """
    keyed = {k.replace("__", "."): v for k, v in overrides.items()}
    max_memory = check_max_memory(max_memory)
    if progress is not None and not callable(progress):
        raise InputError(f"progress: expected a function (now_s, duration_s), not {progress!r:.80}")
    sc = prepare(scenario, seed, duration_s, keyed, max_memory)
    return run_prepared(sc, progress, pcap, max_memory=max_memory)


def run_prepared(
    sc: Scenario,
    progress: Callable[..., None] | None = None,
    pcap: str | os.PathLike[str] | None = None,
    max_memory: int | None = None,
    *,
    progress_events: bool = False,
    **core_options: Any,
) -> RunResult:
    """Runs a Scenario as it is (seed, duration and overrides already applied). With
    `progress_events`, `progress` receives (now_s, duration_s, events); `core_options`
    (trace_path, trace_nodes, trace_flows, trace_events) go to the core. `pcap` must
    be a new file or a regular file, apart from the scenario's own files
    (manetfair.output)."""
    if pcap is not None:
        from manetfair.output import Outputs

        pcap = Outputs([("scenario file", f) for f in sc.source_files()]).add(pcap, "pcap")
    summary_json, traces_json = sc.run_in_core(
        progress, pcap, max_memory, progress_events=progress_events, **core_options
    )
    return RunResult(json.loads(summary_json), traces_json, sc)
