//! The scenario entry point under hostile input (see `fuzz/mod.rs`). In the
//! test suite it tries 64 files; `PROPTEST_CASES` raises that, and the long
//! campaign is `cargo run --release --example fuzz_scenario`
//! (docs/reliability.md).

mod fuzz;

use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn hostile_scenarios_are_answered_and_small_ones_run(text in fuzz::scenario_text()) {
        fuzz::check(&text);
    }
}
