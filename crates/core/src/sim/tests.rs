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

fn udp_pair_scenario(a: (f64, f64), b: (f64, f64), c: (f64, f64), d: (f64, f64), rts: u32) -> Scenario {
    let node = |id: u32, p: (f64, f64)| format!("[[node]]\nid = {id}\nx_m = {}\ny_m = {}\n", p.0, p.1);
    let flow = |s: u32, d: u32| {
        format!("[[flow]]\nsrc = {s}\ndst = {d}\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 2000.0\n")
    };
    let text = format!(
        "duration_s = 30.0\n[mac]\nrts_threshold_bytes = {rts}\n[topology]\nkind = \"explicit\"\n{}{}{}{}{}{}",
        node(1, a),
        node(2, b),
        node(3, c),
        node(4, d),
        flow(1, 2),
        flow(3, 4)
    );
    scenario(&text)
}

/// Two saturated one-hop flows A→B and C→D. Hidden: each receiver hears the
/// other flow's sender, the senders (600 m apart) cannot sense each other.
/// Control: the senders 500 m apart, within carrier-sense range.
#[test]
fn hidden_terminals_lose_far_more_frames() {
    for rts in [0, 3000] {
        let hidden = run(udp_pair_scenario(
            (0.0, 0.0),
            (250.0, 0.0),
            (600.0, 0.0),
            (350.0, 0.0),
            rts,
        ))
        .0;
        let sensed = run(udp_pair_scenario(
            (0.0, 0.0),
            (250.0, 0.0),
            (500.0, 0.0),
            (350.0, 0.0),
            rts,
        ))
        .0;
        let lost = |s: &Summary| s.mac.collisions.values().sum::<u64>();
        assert!(hidden.ledger.balanced && sensed.ledger.balanced);
        assert!(
            lost(&hidden) > 5 * lost(&sensed).max(1),
            "rts threshold {rts}: hidden lost {} frames, sensed {}",
            lost(&hidden),
            lost(&sensed)
        );
        assert!(
            hidden.aggregate_kbps < sensed.aggregate_kbps,
            "{} vs {}",
            hidden.aggregate_kbps,
            sensed.aggregate_kbps
        );
    }
}

/// A node walks out of range mid-run (scripted path): the channel follows
/// it, so static routing loses the link and the flow stops delivering.
#[test]
fn scripted_mobility_moves_the_channel() {
    let sc = scenario(
        r#"
duration_s = 20.0
[topology]
kind = "chain"
nodes = 2
spacing_m = 200.0
[[mobility.node]]
id = 1
path = [[5.0, 200.0, 0.0], [10.0, 1200.0, 0.0]]
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 100.0
"#,
    );
    let mut sim = Simulator::new(sc);
    // Positions reach the channel every update_interval_s (0.1 s): 7.5 s is a tick.
    sim.run_until(SimTime::from_secs_f64(7.500001));
    let p = sim.position(1);
    assert!((p.x - 700.0).abs() < 0.01 && p.y == 0.0, "{p:?}");
    sim.run();
    let s = sim.summary(0.0);
    assert!(s.ledger.balanced);
    let series = &s.flows[0].series_kbps;
    assert!(series[2] > 90.0, "{series:?}");
    // Out of range (beyond 250 m at 6 s): nothing arrives after that.
    assert!(series[8..].iter().all(|&x| x == 0.0), "{series:?}");
    assert!(s.drops["mac_retry"] > 0);
}

/// A field large enough to be stored in spatial order still reports its
/// per-node series by id: the saturated source's queue shows at its id.
#[test]
fn per_node_series_follow_ids_in_a_reordered_field() {
    let text = r#"
duration_s = 3.0
[topology]
kind = "random"
nodes = 600
width_m = 2500.0
height_m = 2500.0
[[flow]]
src = 7
dst = 8
transport = "udp"
app = "cbr"
rate_kbps = 5000.0
"#;
    let sc = match load(text, Format::Toml, None, None) {
        Ok(sc) => sc,
        // The seed's placement left 8 unreachable from 7: try the next pair.
        Err(_) => scenario(&text.replace("dst = 8", "dst = 9")),
    };
    assert_ne!(sc.file_order, (0..600).collect::<Vec<u32>>());
    let (s, t) = run(sc);
    assert!(s.ledger.balanced);
    let busiest = (0..600)
        .max_by(|&a, &b| t.queue_len_pkts[a][2].total_cmp(&t.queue_len_pkts[b][2]))
        .unwrap();
    assert_eq!(busiest, 7, "the overloaded source is node 7");
}

/// Under threshold capture, signals beyond the carrier-sense range "do not
/// exist" (`phy/reception/threshold.rs`): delivering them farther
/// (`radio.interference_range_m`) must change the events and nothing else.
/// Two saturated one-hop pairs 600 m apart, beyond carrier sense of each
/// other, within an interference range of 900 m. The MAC used to see such a
/// signal's start and end as medium edges, deferring as if it had sensed it.
#[test]
fn signals_beyond_carrier_sense_leave_threshold_capture_alone() {
    let text = |interference_m: f64| {
        format!(
            r#"
duration_s = 6.0
[radio]
cs_range_m = 550.0
interference_range_m = {interference_m}
[topology]
kind = "chain"
nodes = 6
spacing_m = 200.0
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 1500.0
start_s = 0.5
[[flow]]
src = 4
dst = 5
transport = "udp"
app = "cbr"
rate_kbps = 1500.0
start_s = 0.7
"#
        )
    };
    let (near, _) = run(scenario(&text(550.0)));
    let (far, _) = run(scenario(&text(900.0)));
    assert!(far.events > near.events, "{} against {}", far.events, near.events);
    for (a, b) in near.flows.iter().zip(&far.flows) {
        assert_eq!(a.delivered_bytes, b.delivered_bytes, "flow {}", a.id);
        assert_eq!(a.series_kbps, b.series_kbps, "flow {}", a.id);
    }
    assert_eq!(near.mac.frames_sent, far.mac.frames_sent);
    assert_eq!(near.mac.collisions, far.mac.collisions);
}

/// A frame decoded for another station takes a short path that only sets
/// the NAV (`reception_ended`) unless something records receptions: with
/// a trace on, node 2 of a chain records the CTS and ACKs node 1 sends to
/// node 0, which it decodes (200 m) and which are not for it.
#[test]
fn a_trace_records_frames_decoded_for_other_stations() {
    let sc = scenario(
        r#"
duration_s = 2.0
[topology]
kind = "chain"
nodes = 3
spacing_m = 200.0
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 100.0
start_s = 0.5
"#,
    );
    let mut sim = Simulator::new(sc);
    sim.enable_trace(Default::default());
    sim.run();
    let trace = sim.take_trace();
    let overheard = trace
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice::<serde_json::Value>(l).unwrap())
        .filter(|ev| ev["event"] == "rx_ok" && ev["node"] == 2 && ev["ra"] == 0)
        .count();
    assert!(overheard > 0, "node 2 recorded no frame for node 0");
}

/// `trace.series_interval_s` refines every series without changing the run:
/// ten times the bins, the same bytes and TCP events in them.
#[test]
fn finer_series_hold_the_same_run_in_more_bins() {
    let text = |extra: &str| {
        format!(
            r#"
duration_s = 12.0
seed = 4
{extra}
[mac]
queue_capacity_pkts = 5
[topology]
kind = "chain"
nodes = 5
spacing_m = 200.0
[[flow]]
src = 0
dst = 4
transport = "tcp-newreno"
[[flow]]
src = 4
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 800.0
"#
        )
    };
    let (s1, t1) = run(scenario(&text("")));
    let (s2, t2) = run(scenario(&text("[trace]\nseries_interval_s = 0.1")));
    // The same run: only the sampling events and the series differ.
    let same = |s: &Summary| {
        let flows: Vec<_> = s
            .flows
            .iter()
            .map(|f| (f.delivered_bytes, f.packets_delivered, f.delay.clone()))
            .collect();
        (flows, s.mac.clone(), s.drops.clone())
    };
    assert_eq!(same(&s1), same(&s2));
    assert_eq!((t1.time_s.len(), t2.time_s.len()), (12, 120));
    assert_eq!((t2.bin_s, t2.time_s[3]), (0.1, 0.3));
    let tcp1 = t1.tcp[0].as_ref().unwrap();
    let tcp2 = t2.tcp[0].as_ref().unwrap();
    assert_eq!(tcp2.cwnd_pkts.len(), 120);
    let sum = |v: &[u64]| v.iter().sum::<u64>();
    let st = s2.flows[0].tcp.as_ref().unwrap();
    assert!(st.timeouts + st.fast_retransmits > 0, "the run loses segments");
    assert_eq!(sum(&tcp1.timeouts), st.timeouts);
    assert_eq!(sum(&tcp2.timeouts), st.timeouts);
    assert_eq!(sum(&tcp2.fast_retransmits), st.fast_retransmits);
    for (coarse, fine) in t1.flow_throughput_kbps.iter().zip(&t2.flow_throughput_kbps) {
        for (i, c) in coarse.iter().enumerate() {
            let f: f64 = fine[10 * i..10 * i + 10].iter().sum::<f64>() / 10.0;
            assert!((c - f).abs() < 1e-9, "bin {i}: {c} vs {f}");
        }
    }
}

/// ns-2's ARP (`[ns2] arp`) on a 3-hop chain with static routes: the first
/// packet at each hop waits for an ARP exchange (a broadcast request, a
/// unicast reply), which the other nodes' requests resolve as well, and
/// then everything flows; every packet is accounted for. Without the key
/// no ARP frame is sent and `drops` has no `arp` entry.
#[test]
fn ns2_arp_resolves_each_next_hop_once_and_balances() {
    let text = |arp: bool| {
        format!(
            r#"
duration_s = 10.0
platform = "ns2"
[ns2]
arp = {arp}
[radio]
data_rate_mbps = 2.0
[topology]
kind = "chain"
nodes = 4
spacing_m = 200.0
[[flow]]
src = 0
dst = 3
transport = "udp"
app = "cbr"
rate_kbps = 100.0
packet_bytes = 500
start_s = 1.0
"#
        )
    };
    let (with, _) = run(scenario(&text(true)));
    let (without, _) = run(scenario(&text(false)));
    assert!(with.ledger.balanced && without.ledger.balanced);
    // 3 hops, each resolved once: 3 requests (broadcast data frames, so
    // no RTS) and 3 replies (unicast, after RTS/CTS).
    let data = |s: &crate::metrics::Summary| s.mac.frames_sent.get("data").copied().unwrap_or(0);
    let rts = |s: &crate::metrics::Summary| s.mac.frames_sent.get("rts").copied().unwrap_or(0);
    assert_eq!(data(&with) - data(&without), 6);
    assert_eq!(rts(&with) - rts(&without), 3);
    assert_eq!(with.drops.get("arp"), Some(&0));
    assert_eq!(without.drops.get("arp"), None);
    assert_eq!(with.flows[0].packets_sent, without.flows[0].packets_sent);
    assert_eq!(with.flows[0].packets_delivered, without.flows[0].packets_delivered);
}

/// ns-2's ARP holds one packet per unresolved next hop: packets that come
/// faster than the request is answered displace each other, and are
/// dropped as `arp` (`DROP_IFQ_ARP_FULL`).
#[test]
fn ns2_arp_drops_packets_displaced_from_the_hold() {
    let sc = scenario(
        r#"
duration_s = 3.0
platform = "ns2"
[ns2]
arp = true
[radio]
data_rate_mbps = 2.0
[topology]
kind = "chain"
nodes = 2
spacing_m = 200.0
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 4000.0
packet_bytes = 500
start_s = 1.0
"#,
    );
    let (s, _) = run(sc);
    assert!(s.ledger.balanced);
    assert!(s.drops["arp"] >= 1, "{:?}", s.drops);
}

/// docs/trace.md: every reception, decoded or lost, carries the power its
/// signal arrived with, under both reception models: on a chain at 200 m
/// spacing the two-ray power at 200 m times the hops between the node and
/// the frame's transmitter (the value the capture's radiotap header
/// carries for the addressee, rounded there to a whole dBm).
#[test]
fn every_traced_reception_carries_its_received_power() {
    use crate::phy::propagation::TwoRayGround;
    for reception in ["threshold", "sinr"] {
        let sc = scenario(&format!(
            r#"
duration_s = 3.0
[radio]
reception = "{reception}"
[topology]
kind = "chain"
nodes = 4
spacing_m = 200.0
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 800.0
start_s = 0.5
[[flow]]
src = 3
dst = 2
transport = "udp"
app = "cbr"
rate_kbps = 800.0
start_s = 0.5
"#
        ));
        let mut sim = Simulator::new(sc);
        sim.enable_trace(Default::default());
        sim.run();
        let trace = sim.take_trace();
        let mut seen = [0u32; 2];
        for line in trace.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            let ev: serde_json::Value = serde_json::from_slice(line).unwrap();
            let lost = match ev["event"].as_str() {
                Some("rx_ok") => 0,
                Some("rx_lost") => 1,
                _ => continue,
            };
            seen[lost] += 1;
            let hops = (ev["node"].as_i64().unwrap() - ev["peer"].as_i64().unwrap()).abs();
            let w = TwoRayGround::default().rx_power_w(200.0 * hops as f64);
            let want = (10.0 * (w * 1000.0).log10() * 100.0).round() / 100.0;
            let got = ev["power_dbm"].as_f64().unwrap_or_else(|| panic!("{reception}: {ev}"));
            assert!((got - want).abs() < 1e-9, "{reception}: {got} dBm, wanted {want}: {ev}");
        }
        assert!(
            seen[0] > 0 && seen[1] > 0,
            "{reception}: {seen:?} receptions decoded, lost"
        );
    }
}
