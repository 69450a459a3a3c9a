//! Thin PyO3 bindings: a scenario crosses into Rust once, the whole run
//! happens in Rust (without the GIL), and the summary and traces come back
//! as JSON text. Bad input raises `ScenarioError`, a `ValueError`.

use manetfair_core::scenario::{self, Format, Scenario};
use manetfair_core::sim::Simulator;
use manetfair_core::trace::events::{Filter as TraceFilter, Kind as TraceKind};
use manetfair_core::SimTime;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::time::Instant;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario that cannot run: the message names the key, the value and what is allowed."
);

fn format_of(fmt: &str) -> PyResult<Format> {
    match fmt {
        "toml" => Ok(Format::Toml),
        "json" => Ok(Format::Json),
        other => Err(PyValueError::new_err(format!(
            "fmt must be \"toml\" or \"json\", not {other:?}"
        ))),
    }
}

fn load(text: &str, fmt: &str, origin: &str, seed: Option<u64>, duration_s: Option<f64>) -> PyResult<Scenario> {
    scenario::load(text, format_of(fmt)?, seed, duration_s)
        .map_err(|e| ScenarioError::new_err(format!("{origin}: {e}")))
}

#[pyfunction]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// Validates a scenario; returns its canonical JSON (every default filled in).
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", origin = "<scenario>", seed = None, duration_s = None))]
fn check_scenario(text: &str, fmt: &str, origin: &str, seed: Option<u64>, duration_s: Option<f64>) -> PyResult<String> {
    Ok(load(text, fmt, origin, seed, duration_s)?.canonical_json())
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
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", origin = "<scenario>", seed = None, duration_s = None, progress = None, pcap_path = None, pcap_snaplen = 256, progress_events = false, trace_path = None, trace_nodes = None, trace_flows = None, trace_events = None, positions_path = None))]
#[allow(clippy::too_many_arguments)]
fn run_scenario(
    py: Python<'_>,
    text: &str,
    fmt: &str,
    origin: &str,
    seed: Option<u64>,
    duration_s: Option<f64>,
    progress: Option<PyObject>,
    pcap_path: Option<std::path::PathBuf>,
    pcap_snaplen: usize,
    progress_events: bool,
    trace_path: Option<std::path::PathBuf>,
    trace_nodes: Option<Vec<i64>>,
    trace_flows: Option<Vec<u32>>,
    trace_events: Option<Vec<String>>,
    positions_path: Option<std::path::PathBuf>,
) -> PyResult<(String, String)> {
    let sc = load(text, fmt, origin, seed, duration_s)?;
    let started = Instant::now();
    let end = sc.duration;
    let mut sim = Simulator::new(sc);
    let mut pcap = match &pcap_path {
        Some(p) => {
            sim.enable_pcap(pcap_snaplen.max(64));
            Some(
                std::fs::File::create(p)
                    .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", p.display())))?,
            )
        }
        None => None,
    };
    let mut trace = match &trace_path {
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
            Some(create(p)?)
        }
        None => None,
    };
    let mut positions = match &positions_path {
        Some(p) => {
            let mut f = create(p)?;
            write_positions(&mut f, &sim, 0.0)?;
            Some(f)
        }
        None => None,
    };
    let chunk = SimTime::from_secs_f64(1.0).as_nanos();
    let mut until = SimTime(0);
    loop {
        until = SimTime((until.as_nanos() + chunk).min(end.as_nanos()));
        let done = py.allow_threads(|| sim.run_until(until));
        if let Some(f) = pcap.as_mut() {
            use std::io::Write;
            f.write_all(&sim.take_pcap())?;
        }
        if let Some(f) = trace.as_mut() {
            use std::io::Write;
            f.write_all(&sim.take_trace())?;
        }
        if let Some(f) = positions.as_mut() {
            write_positions(f, &sim, until.as_secs_f64())?;
        }
        py.check_signals()?;
        if let Some(cb) = &progress {
            if progress_events {
                cb.call1(py, (until.as_secs_f64(), end.as_secs_f64(), sim.events()))?;
            } else {
                cb.call1(py, (until.as_secs_f64(), end.as_secs_f64()))?;
            }
        }
        if done {
            break;
        }
    }
    for f in [trace.as_mut(), positions.as_mut()].into_iter().flatten() {
        use std::io::Write;
        f.flush()?;
    }
    if !sim.ledger_balanced() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "internal error: the packet ledger does not balance at the end of {origin}; please report this scenario"
        )));
    }
    let wall_s = started.elapsed().as_secs_f64();
    Ok((sim.summary(wall_s).to_json(), sim.traces().to_json()))
}

fn create(p: &std::path::Path) -> PyResult<std::io::BufWriter<std::fs::File>> {
    std::fs::File::create(p)
        .map(std::io::BufWriter::new)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot write {}: {e}", p.display())))
}

/// One JSON line: the time and every node's position (in internal order,
/// with the scenario's ids).
fn write_positions(f: &mut impl std::io::Write, sim: &Simulator, t_s: f64) -> PyResult<()> {
    let ids = &sim.scenario().node_ids;
    let join = |v: Vec<String>| v.join(",");
    let pos: Vec<_> = (0..ids.len() as u32).map(|i| sim.position(i)).collect();
    writeln!(
        f,
        "{{\"t\":{},\"ids\":[{}],\"x\":[{}],\"y\":[{}]}}",
        t_s,
        join(ids.iter().map(|i| i.to_string()).collect()),
        join(pos.iter().map(|p| p.x.to_string()).collect()),
        join(pos.iter().map(|p| p.y.to_string()).collect()),
    )?;
    Ok(())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    Ok(())
}
