//! Whole-run results locked in a snapshot: per-flow throughput, frames sent
//! and collided by type, drops by cause, the event count, the remedies' own
//! MAC counters (`mac.qe`, `mac.ff`, `mac.opet`) and every scheme section of
//! the summary (NRED, throttling), for ten scenarios × three seeds ×
//! `radio.lock_on_sensed` on and off. The scenarios reach every remedy:
//! quick-exchange with fast-forward, OPET, M-TCP, TCP-AP and Westwood+,
//! ingress throttling under SINR reception, RED and NRED, and the ns-2
//! platform (`platform = "ns2"`).
//!
//! A refactor must leave every line of `snapshots/*.snap` unchanged. A change
//! that moves a number on purpose updates the snapshot (`cargo insta review`,
//! or `INSTA_UPDATE=always cargo test --test snapshot`) and says in its commit
//! which number moved and why.

use manetfair_core::scenario::{load, Format};
use manetfair_core::sim::Simulator;
use std::fmt::Write;

const SEEDS: [u64; 3] = [1, 2, 3];

/// The scenario file with `radio.lock_on_sensed` set.
fn with_lock(text: &str, lock_on_sensed: bool) -> String {
    let mut doc: toml::Table = text.parse().expect("snapshot scenario is TOML");
    let radio = doc
        .entry("radio")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .expect("[radio] is a table");
    radio.insert("lock_on_sensed".into(), toml::Value::Boolean(lock_on_sensed));
    toml::to_string(&doc).expect("TOML serialises")
}

/// Runs the scenario for every seed and lock setting; one readable block per run.
fn whole_runs(file: &str) -> String {
    let path = format!("{}/tests/snapshot/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("snapshot scenario readable");
    let mut out = String::new();
    for lock in [true, false] {
        let variant = with_lock(&text, lock);
        for seed in SEEDS {
            let sc = load(&variant, Format::Toml, Some(seed), None).unwrap_or_else(|e| panic!("{path}: {e}"));
            let mut sim = Simulator::new(sc);
            sim.run();
            assert!(sim.ledger_balanced(), "{file} seed {seed}: ledger does not balance");
            let s = sim.summary(0.0);
            writeln!(out, "seed {seed}, lock_on_sensed {lock}").unwrap();
            writeln!(out, "  events {}", s.events).unwrap();
            for f in &s.flows {
                writeln!(
                    out,
                    "  flow {} throughput_kbps {:?} delivered_bytes {} packets {}/{}",
                    f.id, f.throughput_kbps, f.delivered_bytes, f.packets_delivered, f.packets_sent
                )
                .unwrap();
            }
            let join = |m: &std::collections::BTreeMap<&str, u64>| {
                m.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
            };
            writeln!(out, "  frames_sent {}", join(&s.mac.frames_sent)).unwrap();
            writeln!(out, "  collisions {}", join(&s.mac.collisions)).unwrap();
            writeln!(
                out,
                "  retry_drops {} duplicates {}",
                s.mac.retry_drops, s.mac.duplicates
            )
            .unwrap();
            writeln!(out, "  drops {}", join(&s.drops)).unwrap();
            writeln!(
                out,
                "  routing control_packets {} control_bytes {}",
                s.routing.control_packets, s.routing.control_bytes
            )
            .unwrap();
            writeln!(
                out,
                "  ledger generated {} delivered {} dropped {} in_flight {}",
                s.ledger.generated, s.ledger.delivered, s.ledger.dropped, s.ledger.in_flight
            )
            .unwrap();
            if let (Some(a), Some(b)) = (s.mac.msdus_started, s.mac.first_rts_failed) {
                writeln!(out, "  msdus_started {a} first_rts_failed {b}").unwrap();
            }
            let mac = serde_json::to_value(&s.mac).expect("the MAC summary serialises");
            for key in ["qe", "ff", "opet"] {
                if let Some(section) = mac.get(key) {
                    writeln!(out, "  mac.{key} {section}").unwrap();
                }
            }
            let schemes = serde_json::to_value(&s.schemes).expect("scheme sections serialise");
            for (key, section) in schemes.as_object().expect("scheme sections are a map") {
                writeln!(out, "  {key} {section}").unwrap();
            }
        }
    }
    out
}

#[test]
fn grid_10x10_16_flows() {
    insta::assert_snapshot!(whole_runs("grid.toml"));
}

#[test]
fn chain_5_hops() {
    insta::assert_snapshot!(whole_runs("chain.toml"));
}

#[test]
fn nred_hidden_terminal() {
    insta::assert_snapshot!(whole_runs("nred_hidden.toml"));
}

#[test]
fn quick_exchange_fast_forward_chain() {
    insta::assert_snapshot!(whole_runs("qe_ff_chain.toml"));
}

#[test]
fn opet_chain() {
    insta::assert_snapshot!(whole_runs("opet_chain.toml"));
}

#[test]
fn mtcp_tcp_ap_westwood_plus() {
    insta::assert_snapshot!(whole_runs("tcp_variants.toml"));
}

#[test]
fn throttle_sinr() {
    insta::assert_snapshot!(whole_runs("throttle_sinr.toml"));
}

#[test]
fn red_chain() {
    insta::assert_snapshot!(whole_runs("red_chain.toml"));
}

#[test]
fn ns2_platform_chain() {
    insta::assert_snapshot!(whole_runs("ns2_chain.toml"));
}

#[test]
fn aodv_field_random_waypoint() {
    insta::assert_snapshot!(whole_runs("aodv_field.toml"));
}
