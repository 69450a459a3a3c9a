//! Whole-stack scenario tests on small topologies.

use super::*;
use crate::scenario::{load, Format};

fn scenario(text: &str) -> Scenario {
    load(text, Format::Toml, None, None).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn one_hop_udp_delivers_below_capacity_and_balances() {
    let sc = scenario(
        r#"
duration_s = 10.0
[topology]
kind = "chain"
nodes = 2
spacing_m = 200.0
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 400.0
packet_bytes = 1000
start_s = 1.0
stop_s = 9.0
"#,
    );
    let (s, t) = run(sc);
    assert!(s.ledger.balanced);
    let f = &s.flows[0];
    // 400 kbit/s offered is well under a 2 Mbit/s link: all of it arrives.
    assert!((f.throughput_kbps - 400.0).abs() < 5.0, "{}", f.throughput_kbps);
    assert_eq!(f.hops, Some(1));
    assert_eq!(s.mac.frames_sent["rts"], s.mac.frames_sent["data"]);
    assert_eq!(s.mac.collisions.values().sum::<u64>(), 0);
    assert_eq!(t.time_s.len(), 10);
    assert_eq!(f.series_kbps.len(), 10);
    assert_eq!(f.series_kbps[0], 0.0);
}

#[test]
fn multihop_chain_forwards() {
    let sc = scenario(
        r#"
duration_s = 20.0
[topology]
kind = "chain"
nodes = 5
spacing_m = 200.0
[[flow]]
src = 0
dst = 4
transport = "udp"
app = "cbr"
rate_kbps = 100.0
"#,
    );
    let (s, _) = run(sc);
    assert!(s.ledger.balanced);
    assert_eq!(s.flows[0].hops, Some(4));
    assert!(s.flows[0].throughput_kbps > 90.0, "{}", s.flows[0].throughput_kbps);
}

#[test]
fn same_seed_same_bytes() {
    let text = r#"
duration_s = 5.0
seed = 3
[topology]
kind = "random"
nodes = 30
width_m = 800.0
height_m = 800.0
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 1500.0
[[flow]]
src = 2
dst = 3
transport = "udp"
app = "cbr"
rate_kbps = 1500.0
"#;
    let ok = |t: &str| match load(t, Format::Toml, None, None) {
        Ok(sc) => Some(sc),
        Err(e) => {
            assert!(e.message.contains("unreachable"), "{e}");
            None
        }
    };
    if let Some(sc) = ok(text) {
        let a = run(sc.clone()).0.to_json();
        let b = run(sc).0.to_json();
        assert_eq!(a, b);
    }
}
