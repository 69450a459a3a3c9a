//! Runs one scenario file with the core alone (no Python), printing events,
//! wall time and the summary: for profiling (`perf`, `callgrind`).
//!
//! `run_scenario FILE [--from S]` runs the first S simulated seconds in
//! `warm_up` and the rest in `measured`, so that callgrind can split its
//! count at that point (`--dump-before=run_scenario::measured
//! --dump-before=run_scenario::report`,
//! as `bench/count.py` does), and prints one JSON line of counts to stderr:
//! events and (frame, receiver) deliveries of the whole run and of the
//! measured part, with its wall and CPU seconds.

use manetfair_core::scenario::{load, Format};
use manetfair_core::sim::Simulator;
use manetfair_core::SimTime;
use std::time::Instant;

/// The process's CPU time in nanoseconds (Linux `/proc/self/schedstat`).
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[inline(never)]
fn warm_up(sim: &mut Simulator, until: SimTime) {
    sim.run_until(until);
}

#[inline(never)]
fn measured(sim: &mut Simulator) -> u64 {
    let before = sim.events();
    sim.run();
    sim.events() - before
}

/// Marks the end of the measured part for callgrind (`--dump-before`).
#[inline(never)]
fn report(sim: &Simulator, wall: f64) -> String {
    sim.summary(wall).to_json()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: run_scenario FILE.toml|FILE.json [--from SECONDS]";
    let path = args.first().expect(usage);
    let from_s: f64 = match args.get(1).map(String::as_str) {
        Some("--from") => args.get(2).and_then(|s| s.parse().ok()).expect(usage),
        Some(_) => panic!("{usage}"),
        None => 0.0,
    };
    let text = std::fs::read_to_string(path).expect("readable scenario file");
    let format = if path.ends_with(".json") {
        Format::Json
    } else {
        Format::Toml
    };
    let sc = load(&text, format, None, None).unwrap_or_else(|e| {
        eprintln!("{path}: {e}");
        std::process::exit(2)
    });
    let started = Instant::now();
    let mut sim = Simulator::new(sc);
    warm_up(&mut sim, SimTime((from_s * 1e9).round() as u64));
    let (deliveries0, queued0) = (sim.deliveries(), sim.walk_steps_queued());
    let (wall0, cpu0) = (Instant::now(), cpu_ns());
    let measured_events = measured(&mut sim);
    let measured_wall = wall0.elapsed().as_secs_f64();
    let measured_cpu = cpu_ns().zip(cpu0).map(|(b, a)| (b - a) as f64 / 1e9);
    let wall = started.elapsed().as_secs_f64();
    let summary = report(&sim, wall);
    eprintln!(
        "{} events in {wall:.3} s: {:.1} M events/s",
        sim.events(),
        sim.events() as f64 / wall / 1e6
    );
    let cpu = measured_cpu.map_or("null".to_string(), |c| format!("{c:.3}"));
    eprintln!(
        "counts {{\"events\": {}, \"deliveries\": {}, \"from_s\": {from_s}, \
         \"measured_events\": {}, \"measured_deliveries\": {}, \
         \"measured_walk_steps_queued\": {}, \
         \"measured_wall_s\": {measured_wall:.3}, \"measured_cpu_s\": {cpu}}}",
        sim.events(),
        sim.deliveries(),
        measured_events,
        sim.deliveries() - deliveries0,
        sim.walk_steps_queued() - queued0,
    );
    println!("{summary}");
}
