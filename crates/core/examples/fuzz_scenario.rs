//! The long fuzz campaign on `scenario::load` (docs/reliability.md): hostile
//! scenario files from the same generator as `tests/fuzz_scenario.rs`, in
//! batches of 1,000 with a fresh seed each, until stopped or until
//! `--minutes` have passed. Every failure (a panic, a slow answer, time that
//! stands still) is shrunk to a small input, saved under `--out`, and the
//! campaign goes on. Prints its counts once a minute.
//!
//!     cargo run --release --example fuzz_scenario -- --minutes 90 --out fuzz-out

#[path = "../tests/fuzz/mod.rs"]
mod fuzz;

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let minutes: f64 = arg("--minutes").and_then(|m| m.parse().ok()).unwrap_or(60.0);
    let out = std::path::PathBuf::from(arg("--out").unwrap_or_else(|| "fuzz-out".into()));
    let first_seed: u64 = arg("--seed").and_then(|s| s.parse().ok()).unwrap_or(1);
    std::fs::create_dir_all(&out).expect("output folder");
    // Failures are reported here, not as panic messages for every shrink step.
    std::panic::set_hook(Box::new(|_| {}));

    let counts = [
        AtomicU64::new(0), // executions
        AtomicU64::new(0), // refused
        AtomicU64::new(0), // ran
        AtomicU64::new(0), // accepted, too large to run
    ];
    let started = Instant::now();
    let mut last_report = Instant::now();
    let mut failures = 0u64;
    let mut seed = first_seed;
    while started.elapsed().as_secs_f64() < minutes * 60.0 {
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        let config = Config {
            cases: 1000,
            failure_persistence: None,
            ..Config::default()
        };
        let mut runner = TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &key));
        let result = runner.run(&fuzz::scenario_text(), |text| {
            counts[0].fetch_add(1, Ordering::Relaxed);
            let outcome = fuzz::check(&text);
            let i = match outcome {
                fuzz::Outcome::Refused => 1,
                fuzz::Outcome::Ran => 2,
                fuzz::Outcome::Accepted => 3,
            };
            counts[i].fetch_add(1, Ordering::Relaxed);
            Ok(())
        });
        if let Err(e) = result {
            failures += 1;
            let path = out.join(format!("failure-seed{seed}.txt"));
            std::fs::write(&path, format!("{e}\n")).expect("write the failure");
            eprintln!("seed {seed}: failure saved to {}", path.display());
        }
        seed += 1;
        if last_report.elapsed().as_secs() >= 60 || started.elapsed().as_secs_f64() >= minutes * 60.0 {
            last_report = Instant::now();
            let c: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
            let line = format!(
                "{:.1} min: {} executions ({} refused, {} ran, {} accepted but not run), {failures} failures, next seed {seed}",
                started.elapsed().as_secs_f64() / 60.0,
                c[0],
                c[1],
                c[2],
                c[3]
            );
            println!("{line}");
            std::fs::write(out.join("progress.txt"), format!("{line}\n")).expect("write progress");
        }
    }
}
