//! Thin PyO3 bindings: a scenario crosses into Rust once, the whole run
//! happens in Rust (without the GIL), and the summary and traces come back
//! as JSON text. Bad input raises `ScenarioError`, a `ValueError`.
//!
//! A run gives the interpreter back every `EVENTS_PER_CHECK` events (and at
//! every simulated second), so that Ctrl-C stops it even when simulated time
//! stands still: it then raises `KeyboardInterrupt` saying how far it got,
//! and leaves no output file behind.

use manetfair_core::scenario::{self, Format, Options, Scenario, DEFAULT_MAX_MEMORY};
use manetfair_core::sim::{Advance, Simulator};
use manetfair_core::trace::events::{Filter as TraceFilter, Kind as TraceKind};
use manetfair_core::SimTime;
use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot run: the message names the key, the value and what is allowed."
);

/// Events run between two looks for a signal: a few tens of milliseconds.
const EVENTS_PER_CHECK: u64 = 200_000;

fn format_of(fmt: &str) -> PyResult<Format> {
    match fmt {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(PyValueError::new_err(format!(
            "fmt must be \"toml\" or \"json\", not {other:?}"
        ))),
    }
}

/// The seed override, refused with the key when it is not a u64.
fn seed_of(origin: &str, seed: Option<&Bound<'_, PyAny>>) -> PyResult<Option<u64>> {
    let Some(s) = seed.filter(|s| !s.is_none()) else {
        return Ok(None);
    };
    if s.is_instance_of::<pyo3::types::PyBool>() {
        return Err(ScenarioError::new_err(format!(
            "{origin}: key `seed`: {s} must be an integer from 0 to {}",
            u64::MAX
        )));
    }
    s.extract::<u64>().map(Some).map_err(|_| {
        ScenarioError::new_err(format!(
            "{origin}: key `seed`: {} must be an integer from 0 to {}",
            s.repr().map(|r| r.to_string()).unwrap_or_default(),
            u64::MAX
        ))
    })
}

/// The duration override, refused with the key when it is not a number.
fn duration_of(origin: &str, d: Option<&Bound<'_, PyAny>>) -> PyResult<Option<f64>> {
    let Some(d) = d.filter(|d| !d.is_none()) else {
        return Ok(None);
    };
    d.extract::<f64>().map(Some).map_err(|_| {
        ScenarioError::new_err(format!(
            "{origin}: key `duration_s`: {} must be a number of seconds",
            d.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

/// Bytes of memory a budget allows per byte of an input file. Parsing TOML takes
/// about 40 bytes of memory per byte of text (a 75 MB scenario took 2.97 GB), so a
/// file above budget / 64 could exhaust the budget before any estimate is made: it is
/// refused before it is parsed, and read no further than that.
const BUDGET_BYTES_PER_INPUT_BYTE: u64 = 64;

/// The largest scenario or movement file a memory budget allows (32 MiB for 2 GiB).
#[pyfunction]
#[pyo3(signature = (max_memory = None))]
fn max_input_bytes(max_memory: Option<u64>) -> u64 {
    max_memory.unwrap_or(DEFAULT_MAX_MEMORY) / BUDGET_BYTES_PER_INPUT_BYTE
}

/// The refusal of an input of `size` bytes (None: a stream read past the limit).
fn too_large(what: &str, size: Option<u64>, limit: u64) -> String {
    let how = match size {
        Some(n) => format!("is {n} bytes"),
        None => format!("gives more than {limit} bytes"),
    };
    format!(
        "{what} {how}, above the limit of {limit} bytes for an input file \
         (the memory budget / {BUDGET_BYTES_PER_INPUT_BYTE}; --max-memory raises it)"
    )
}

/// Reads a file the scenario names, relative to `base_dir` (the scenario
/// file's folder) unless absolute. Only a regular file is read (a device or a
/// FIFO could give bytes without end, or block forever), and no more than `limit`
/// bytes of it: the size is checked before reading, and the read stops at the limit.
fn read_relative(base_dir: Option<&Path>, path: &str, limit: u64) -> Result<String, String> {
    use std::io::Read;
    let full = match base_dir {
        Some(dir) if Path::new(path).is_relative() => dir.join(path),
        _ => PathBuf::from(path),
    };
    let cannot = |e: std::io::Error| format!("cannot read {}: {e}", full.display());
    let meta = std::fs::metadata(&full).map_err(cannot)?;
    if meta.is_dir() {
        return Err(format!("cannot read {}: it is a directory", full.display()));
    }
    if !meta.is_file() {
        return Err(format!(
            "cannot read {}: not a regular file (a device or a FIFO); give a movement file",
            full.display()
        ));
    }
    if meta.len() > limit {
        return Err(too_large(&full.display().to_string(), Some(meta.len()), limit));
    }
    let file = std::fs::File::open(&full).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(&full.display().to_string(), None, limit));
    }
    String::from_utf8(bytes).map_err(|e| format!("cannot read {}: not UTF-8 text ({e})", full.display()))
}

/// Longest error message, bytes: a message echoes the value it refuses, and a
/// 200,000-hop route or a 1 MB key made one line of 600 KB or 1 MB.
const MAX_MESSAGE_BYTES: usize = 2000;

/// `msg` cut to `MAX_MESSAGE_BYTES` (at a character boundary), saying how much was cut.
fn bounded(msg: String) -> String {
    if msg.len() <= MAX_MESSAGE_BYTES {
        return msg;
    }
    let mut end = MAX_MESSAGE_BYTES;
    while !msg.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} … ({} more bytes)", &msg[..end], msg.len() - end)
}

struct Loading<'a> {
    text: &'a str,
    fmt: &'a str,
    origin: &'a str,
    seed: Option<&'a Bound<'a, PyAny>>,
    duration_s: Option<&'a Bound<'a, PyAny>>,
    base_dir: Option<PathBuf>,
    max_memory: Option<u64>,
}

impl Loading<'_> {
    fn load(&self) -> PyResult<Scenario> {
        let budget = self.max_memory.unwrap_or(DEFAULT_MAX_MEMORY);
        let limit = max_input_bytes(Some(budget));
        if self.text.len() as u64 > limit {
            return Err(ScenarioError::new_err(format!(
                "{}: {}",
                self.origin,
                too_large("the scenario", Some(self.text.len() as u64), limit)
            )));
        }
        let read = |path: &str| read_relative(self.base_dir.as_deref(), path, limit);
        let opts = Options {
            seed: seed_of(self.origin, self.seed)?,
            duration_s: duration_of(self.origin, self.duration_s)?,
            max_memory_bytes: budget,
            read_file: Some(&read),
        };
        scenario::load_with(self.text, format_of(self.fmt)?, &opts)
            .map_err(|e| ScenarioError::new_err(bounded(format!("{}: {e}", self.origin))))
    }
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// The default memory budget of one run, bytes.
/// The core's Jain index, the one every run summary carries; the front door's
/// claims compute the same and a test holds the two together.
#[pyfunction]
fn jain_index(xs: Vec<f64>) -> f64 {
    manetfair_core::metrics::jain_index(&xs)
}

#[pyfunction]
fn default_max_memory() -> u64 {
    DEFAULT_MAX_MEMORY
}

/// Validates a scenario; returns its canonical JSON (every default filled in).
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", origin = "<scenario>", seed = None, duration_s = None, base_dir = None, max_memory = None))]
#[allow(clippy::too_many_arguments)]
fn check_scenario(
    text: &str,
    fmt: &str,
    origin: &str,
    seed: Option<&Bound<'_, PyAny>>,
    duration_s: Option<&Bound<'_, PyAny>>,
    base_dir: Option<PathBuf>,
    max_memory: Option<u64>,
) -> PyResult<String> {
    let l = Loading {
        text,
        fmt,
        origin,
        seed,
        duration_s,
        base_dir,
        max_memory,
    };
    Ok(l.load()?.canonical_json())
}

/// An output file (pcap, trace, positions) written under a temporary name and renamed into place only
/// when the run has finished, so that no truncated capture is ever left.
///
/// The target must be a new name or an existing regular file: renaming over a device
/// node, a FIFO or a symbolic link would replace it (a capture renamed over
/// `/dev/full` replaced the device), so those are refused before anything is written,
/// and again just before the rename. The temporary file is created exclusively (never
/// through a link someone placed there) and removed on every error path.
struct PcapOut {
    path: PathBuf,
    part: PathBuf,
    file: Option<std::fs::File>,
}

/// Refuses an output target that exists and is not a regular file.
fn check_target(path: &Path) -> PyResult<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_file() => Ok(()),
        Ok(m) => {
            let what = if m.file_type().is_symlink() {
                "a symbolic link"
            } else if m.is_dir() {
                "a directory"
            } else {
                "not a regular file"
            };
            Err(PyOSError::new_err(format!(
                "refusing to write {}: it is {what}; an output must be a new file or a regular file to replace",
                path.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(io_error(path, &e)),
    }
}

impl PcapOut {
    fn create(path: PathBuf) -> PyResult<Self> {
        check_target(&path)?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut n = 0u32;
        loop {
            let part = path.with_file_name(format!(".{name}.{}.{n}.part", std::process::id()));
            match std::fs::OpenOptions::new().write(true).create_new(true).open(&part) {
                Ok(file) => {
                    return Ok(PcapOut {
                        path,
                        part,
                        file: Some(file),
                    })
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 1000 => n += 1,
                Err(e) => return Err(io_error(&path, &e)),
            }
        }
    }

    fn write(&mut self, bytes: &[u8]) -> PyResult<()> {
        let f = self.file.as_mut().expect("open until finished");
        f.write_all(bytes).map_err(|e| io_error(&self.path, &e))
    }

    fn finish(mut self) -> PyResult<()> {
        let f = self.file.as_ref().expect("open until finished");
        f.sync_all().map_err(|e| io_error(&self.path, &e))?;
        check_target(&self.path)?;
        std::fs::rename(&self.part, &self.path).map_err(|e| io_error(&self.path, &e))?;
        // Renamed: nothing left for Drop to remove.
        self.file = None;
        Ok(())
    }
}

impl Drop for PcapOut {
    /// An unfinished capture (error or interruption) leaves nothing behind.
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.part);
        }
    }
}

fn io_error(path: &Path, e: &std::io::Error) -> PyErr {
    PyOSError::new_err(format!("cannot write {}: {e}", path.display()))
}

/// Runs a scenario to its end; returns (summary JSON, traces JSON).
/// `progress(now_s, duration_s)` is called once per simulated second, or
/// `progress(now_s, duration_s, events)` with `progress_events`.
/// With `pcap_path`, every frame put on the air is written there (pcap,
/// 802.11 with radiotap), keeping at most `pcap_snaplen` bytes of each.
/// With `trace_path`, every packet event is written there as JSON lines,
/// keeping only `trace_nodes`, `trace_flows` and `trace_events` if given.
/// With `positions_path`, every node's position at 0 s and at the end of
/// each simulated second is written there, one JSON line per instant.
/// Like the capture, these files appear only once the run has finished.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", origin = "<scenario>", seed = None, duration_s = None, progress = None, pcap_path = None, pcap_snaplen = 256, base_dir = None, max_memory = None, progress_events = false, trace_path = None, trace_nodes = None, trace_flows = None, trace_events = None, positions_path = None, pcap_nodes = None, pcap_node_paths = None))]
#[allow(clippy::too_many_arguments)]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    fmt: &str,
    origin: &str,
    seed: Option<&Bound<'_, PyAny>>,
    duration_s: Option<&Bound<'_, PyAny>>,
    progress: Option<PyObject>,
    pcap_path: Option<PathBuf>,
    pcap_snaplen: usize,
    base_dir: Option<PathBuf>,
    max_memory: Option<u64>,
    progress_events: bool,
    trace_path: Option<PathBuf>,
    trace_nodes: Option<Vec<i64>>,
    trace_flows: Option<Vec<u32>>,
    trace_events: Option<Vec<String>>,
    positions_path: Option<PathBuf>,
    pcap_nodes: Option<Vec<i64>>,
    pcap_node_paths: Option<Vec<PathBuf>>,
) -> PyResult<(String, String)> {
    let l = Loading {
        text,
        fmt,
        origin,
        seed,
        duration_s,
        base_dir,
        max_memory,
    };
    let sc = l.load()?;
    let started = Instant::now();
    let end = sc.duration;
    let mut sim = Simulator::new(sc);
    let mut pcap = match pcap_path {
        Some(p) => {
            sim.enable_pcap(pcap_snaplen.max(64));
            Some(PcapOut::create(p)?)
        }
        None => None,
    };
    // Per-node captures: node ids (the scenario's) and their files, pairwise.
    let (nodes, paths) = (pcap_nodes.unwrap_or_default(), pcap_node_paths.unwrap_or_default());
    if nodes.len() != paths.len() {
        return Err(PyValueError::new_err("pcap_nodes and pcap_node_paths must pair up"));
    }
    let mut node_pcaps = Vec::new();
    for (node, path) in nodes.into_iter().zip(paths) {
        let i = sim
            .enable_node_pcap(node, pcap_snaplen.max(64))
            .map_err(ScenarioError::new_err)?;
        node_pcaps.push((i, PcapOut::create(path)?));
    }
    let mut trace = match trace_path {
        Some(p) => {
            let mut kinds = Vec::new();
            for name in trace_events.unwrap_or_default() {
                kinds.push(TraceKind::from_name(&name).ok_or_else(|| {
                    let allowed: Vec<&str> = TraceKind::ALL.iter().map(|k| k.name()).collect();
                    PyValueError::new_err(format!("unknown trace event {name:?}; allowed: {}", allowed.join(", ")))
                })?);
            }
            sim.enable_trace(TraceFilter {
                nodes: trace_nodes.unwrap_or_default(),
                flows: trace_flows.unwrap_or_default(),
                kinds,
            });
            Some(PcapOut::create(p)?)
        }
        None => None,
    };
    let mut positions = match positions_path {
        Some(p) => {
            let mut out = PcapOut::create(p)?;
            out.write(&positions_line(&sim, 0.0))?;
            Some(out)
        }
        None => None,
    };
    let chunk = SimTime::from_secs_f64(1.0).as_nanos();
    let mut until = SimTime(chunk.min(end.as_nanos()));
    loop {
        let step = py.allow_threads(|| sim.run_for(until, EVENTS_PER_CHECK));
        if let Some(out) = pcap.as_mut() {
            out.write(&sim.take_pcap())?;
        }
        if let Some(out) = trace.as_mut() {
            out.write(&sim.take_trace())?;
        }
        for (i, out) in &mut node_pcaps {
            out.write(&sim.take_node_pcap(*i))?;
        }
        if let Err(e) = py.check_signals() {
            // Ctrl-C (or a subclass of KeyboardInterrupt) says how far the run got.
            if e.is_instance_of::<PyKeyboardInterrupt>(py) {
                let msg = format!(
                    "run interrupted at {:.3} s of {} s simulated; its results were not kept",
                    sim.now().as_secs_f64(),
                    end.as_secs_f64()
                );
                e.value(py).setattr("args", (msg,))?;
            }
            return Err(e);
        }
        if step == Advance::Paused {
            continue;
        }
        if let Some(out) = positions.as_mut() {
            out.write(&positions_line(&sim, until.as_secs_f64()))?;
        }
        if let Some(cb) = &progress {
            if progress_events {
                cb.call1(py, (until.as_secs_f64(), end.as_secs_f64(), sim.events()))?;
            } else {
                cb.call1(py, (until.as_secs_f64(), end.as_secs_f64()))?;
            }
        }
        if step == Advance::Done {
            break;
        }
        until = SimTime((until.as_nanos() + chunk).min(end.as_nanos()));
    }
    if !sim.ledger_balanced() {
        return Err(PyRuntimeError::new_err(format!(
            "internal error: the packet ledger does not balance at the end of {origin}; please report this scenario"
        )));
    }
    let nodes = node_pcaps.into_iter().map(|(_, out)| out);
    for out in [pcap, trace, positions].into_iter().flatten().chain(nodes) {
        out.finish()?;
    }
    let wall_s = started.elapsed().as_secs_f64();
    Ok((sim.summary(wall_s).to_json(), sim.traces().to_json()))
}

/// The max-min C-load shares of a scenario's flows (Osipov and Tschudin,
/// §3.3) with every flow active on its initial route, as JSON: L-regions,
/// bottlenecks, φ, and the rate limit and Δ where Thr_max is known.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", origin = "<scenario>", base_dir = None))]
fn shares(text: &str, fmt: &str, origin: &str, base_dir: Option<PathBuf>) -> PyResult<String> {
    let l = Loading {
        text,
        fmt,
        origin,
        seed: None,
        duration_s: None,
        base_dir,
        max_memory: None,
    };
    let sc = l.load()?;
    Ok(manetfair_core::net::throttle::static_report(&sc.throttle_input()).to_json())
}

/// One JSON line: the time and every node's position (in internal order,
/// with the scenario's ids).
fn positions_line(sim: &Simulator, t_s: f64) -> Vec<u8> {
    let ids = &sim.scenario().node_ids;
    let join = |v: Vec<String>| v.join(",");
    let pos: Vec<_> = (0..ids.len() as u32).map(|i| sim.position(i)).collect();
    format!(
        "{{\"t\":{},\"ids\":[{}],\"x\":[{}],\"y\":[{}]}}\n",
        t_s,
        join(ids.iter().map(|i| i.to_string()).collect()),
        join(pos.iter().map(|p| p.x.to_string()).collect()),
        join(pos.iter().map(|p| p.y.to_string()).collect()),
    )
    .into_bytes()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(jain_index, m)?)?;
    m.add_function(wrap_pyfunction!(default_max_memory, m)?)?;
    m.add_function(wrap_pyfunction!(max_input_bytes, m)?)?;
    m.add_function(wrap_pyfunction!(check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(shares, m)?)?;
    Ok(())
}
