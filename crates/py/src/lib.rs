//! Thin PyO3 bindings: a scenario crosses into Rust once, the whole run
//! happens in Rust (without the GIL), and the summary and traces come back
//! as JSON text. Bad input raises `ScenarioError`, a `ValueError`.

use manetfair_core::scenario::{self, Format, Scenario};
use manetfair_core::sim::Simulator;
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
/// `progress(now_s, duration_s)` is called once per simulated second.
/// With `pcap_path`, every frame put on the air is written there (pcap,
/// 802.11 with radiotap), keeping at most `pcap_snaplen` bytes of each.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", origin = "<scenario>", seed = None, duration_s = None, progress = None, pcap_path = None, pcap_snaplen = 256))]
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
    let chunk = SimTime::from_secs_f64(1.0).as_nanos();
    let mut until = SimTime(0);
    loop {
        until = SimTime((until.as_nanos() + chunk).min(end.as_nanos()));
        let done = py.allow_threads(|| sim.run_until(until));
        if let Some(f) = pcap.as_mut() {
            use std::io::Write;
            f.write_all(&sim.take_pcap())?;
        }
        py.check_signals()?;
        if let Some(cb) = &progress {
            cb.call1(py, (until.as_secs_f64(), end.as_secs_f64()))?;
        }
        if done {
            break;
        }
    }
    if !sim.ledger_balanced() {
        return Err(pyo3::exceptions::PyRuntimeError::new_err(format!(
            "internal error: the packet ledger does not balance at the end of {origin}; please report this scenario"
        )));
    }
    let wall_s = started.elapsed().as_secs_f64();
    Ok((sim.summary(wall_s).to_json(), sim.traces().to_json()))
}

/// The max-min C-load shares of a scenario's flows (Osipov and Tschudin,
/// §3.3) with every flow active on its initial route, as JSON: L-regions,
/// bottlenecks, φ, and the rate limit and Δ where Thr_max is known.
#[pyfunction]
#[pyo3(signature = (text, fmt = "toml", origin = "<scenario>"))]
fn shares(text: &str, fmt: &str, origin: &str) -> PyResult<String> {
    let sc = load(text, fmt, origin, None, None)?;
    Ok(manetfair_core::net::throttle::static_report(&sc).to_json())
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(check_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(run_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(shares, m)?)?;
    Ok(())
}
