"""The Python API: `manetfair.run(...)` returns a RunResult with the summary and
the time series as columns."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

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

    def write(self, out: Path) -> list[Path]:
        """Writes summary.json, series.parquet and series.csv into the directory `out`.

        Each file is written under a temporary name and renamed into place once whole,
        so a full disk or an interruption never leaves a truncated file; a failure
        raises OSError naming the file and the cause.
        """
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OSError(f"cannot create {out}: {exc.strerror or exc}") from None
        summary = out / "summary.json"
        text = json.dumps(self.summary, indent=2) + "\n"
        write_atomically(summary, lambda tmp: tmp.write_text(text, encoding="utf-8"))
        table = self.series()
        write_atomically(out / "series.parquet", lambda tmp: pq.write_table(table, str(tmp)))
        write_atomically(out / "series.csv", lambda tmp: pacsv.write_csv(table, str(tmp)))
        return [summary, out / "series.parquet", out / "series.csv"]


def write_atomically(path: Path, write: Callable[[Path], object]) -> None:
    """Calls `write(tmp)` for a temporary file beside `path`, flushes it to disk, and
    renames it to `path`; on any failure the temporary file is removed and OSError
    names `path` and the cause."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.part")
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise OSError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        _remove(tmp)
        raise


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def prepare(
    scenario: ScenarioLike,
    seed: int | None = None,
    duration_s: float | None = None,
    overrides: dict[str, Any] | None = None,
) -> Scenario:
    """Loads a scenario and applies dotted-key overrides, seed and duration.

    An ingress-throttling scenario (`[throttle]`) gets its missing reference
    throughputs measured in isolated runs (manetfair.throttle) and filled in.
    """
    sc = load(scenario)
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
    sc = prepare(scenario, seed, duration_s, keyed)
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
    (trace_path, trace_nodes, trace_flows, trace_events) go to the core."""
    summary_json, traces_json = sc.run_in_core(
        progress, pcap, max_memory, progress_events=progress_events, **core_options
    )
    return RunResult(json.loads(summary_json), traces_json, sc)
