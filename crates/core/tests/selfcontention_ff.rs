//! Whole-stack checks of fast-forward's rules (Berger et al. §3.2), read
//! from the packet-event trace: the consecutive limit, and the run of
//! fast-forwarded hops that each data frame carries (`"ff_run"`).

use manetfair_core::scenario::{load, Format, Scenario};
use manetfair_core::sim::Simulator;
use serde_json::Value;
use std::collections::HashMap;

/// One UDP flow end to end over a chain of `hops` hops at 200 m (each node
/// decodes only its neighbours), fast-forward always taken (p = 1).
fn chain(hops: u32, limit: u32) -> Scenario {
    let text = format!(
        "duration_s = 8.0\nseed = 3\n\
         [mac.fast_forward]\nenabled = true\np = 1.0\nconsecutive_limit = {limit}\n\
         [topology]\nkind = \"chain\"\nnodes = {}\nspacing_m = 200.0\n\
         [[flow]]\nsrc = 0\ndst = {hops}\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 600.0\nstart_s = 1.0\n",
        hops + 1
    );
    load(&text, Format::Toml, None, None).unwrap_or_else(|e| panic!("{e}"))
}

fn traced(sc: Scenario) -> (Simulator, Vec<Value>) {
    let mut sim = Simulator::new(sc);
    sim.enable_trace(Default::default());
    sim.run();
    let events = sim
        .take_trace()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).expect("a JSON line"))
        .collect();
    (sim, events)
}

fn run_of(ev: &Value) -> u64 {
    ev["ff_run"].as_u64().unwrap_or(0)
}

fn is_ack_rts(ev: &Value) -> bool {
    ev["frame"] == "ack_rts"
}

/// The run each data frame carries, checked against what happened on the
/// air: a data frame carries a run > 0 exactly when its sender's previous
/// frame was an ACK-RTS (it was fast-forwarded), and then one more than the
/// run the packet arrived at that node with. Returns the largest run.
fn check_runs(events: &[Value]) -> u64 {
    let mut last_tx: HashMap<i64, &Value> = HashMap::new();
    // (node, packet) -> runs it was received with (addressed to the node).
    let mut arrived: HashMap<(i64, u64), Vec<u64>> = HashMap::new();
    let mut max = 0;
    for ev in events {
        let (Some(node), Some(frame)) = (ev["node"].as_i64(), ev["frame"].as_str()) else {
            continue;
        };
        match ev["event"].as_str() {
            Some("rx_ok") if frame == "data" && ev["ra"].as_i64() == Some(node) => {
                let packet = ev["packet"].as_u64().unwrap();
                arrived.entry((node, packet)).or_default().push(run_of(ev));
            }
            Some("tx_start") => {
                if frame == "data" {
                    let run = run_of(ev);
                    let after_ack_rts = last_tx.get(&node).is_some_and(|p| is_ack_rts(p));
                    assert_eq!(run > 0, after_ack_rts, "{ev}");
                    if run > 0 {
                        let packet = ev["packet"].as_u64().unwrap();
                        let before = arrived.get(&(node, packet)).cloned().unwrap_or_default();
                        assert!(before.contains(&(run - 1)), "{ev}: arrived with {before:?}");
                    }
                    max = max.max(run);
                }
                last_tx.insert(node, ev);
            }
            _ => {}
        }
    }
    max
}

/// `consecutive_limit = 3` (the paper's ⌈550/250⌉): no packet is
/// fast-forwarded over more than three hops in a row, and some are over
/// exactly three; without the limit, on the same 8-hop chain, runs are
/// longer. The ledger balances either way.
#[test]
fn the_consecutive_limit_holds_on_a_chain() {
    let (free, free_events) = traced(chain(8, 0));
    let (limited, limited_events) = traced(chain(8, 3));
    assert!(free.ledger_balanced() && limited.ledger_balanced());
    let free_max = check_runs(&free_events);
    let limited_max = check_runs(&limited_events);
    assert!(free_max > 3, "without a limit the runs reach {free_max}");
    assert_eq!(limited_max, 3);
    let attempted = |s: &Simulator| s.summary(0.0).mac.ff.expect("fast-forward on").attempted;
    assert!(attempted(&limited) < attempted(&free));
    eprintln!(
        "longest run {free_max} without the limit; ACK-RTS {} without, {} with; {:.1} and {:.1} kbit/s",
        attempted(&free),
        attempted(&limited),
        free.summary(0.0).aggregate_kbps,
        limited.summary(0.0).aggregate_kbps
    );
}
