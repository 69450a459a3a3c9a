//! Runs one scenario file with the core alone (no Python), printing events,
//! wall time and the summary: for profiling (`perf`, `callgrind`).

use manetfair_core::scenario::{load, Format};
use manetfair_core::sim::Simulator;
use std::time::Instant;

fn main() {
    let path = std::env::args().nth(1).expect("usage: run_scenario FILE.toml");
    let text = std::fs::read_to_string(&path).expect("readable scenario file");
    let sc = load(&text, Format::Toml, None, None).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let started = Instant::now();
    let mut sim = Simulator::new(sc);
    sim.run();
    let wall = started.elapsed().as_secs_f64();
    eprintln!(
        "{} events in {wall:.3} s: {:.1} M events/s",
        sim.events(),
        sim.events() as f64 / wall / 1e6
    );
    println!("{}", sim.summary(wall).to_json());
}
