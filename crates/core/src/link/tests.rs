//! Whole runs with the link's extensions on: quick-exchange, fast-forward
//! and OPET on chains, and the simulator's invariants on random stacks
//! with every extension, queue discipline and scheme.

use crate::metrics::Summary;
use crate::net::packet::{Body, Packet, PacketKind};
use crate::net::routing::DEFAULT_TTL;
use crate::scenario::{load, Format, Scenario};
use crate::sim::{run, Simulator};
use crate::time::{Duration, SimTime};

fn scenario(text: &str) -> Scenario {
    load(text, Format::Toml, None, None).unwrap_or_else(|e| panic!("{e}"))
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    /// A random field with a few flows of random kinds; None if a flow's
    /// destination happens to be unreachable.
    fn random_scenario(
        seed: u64,
        nodes: u32,
        flows: &[(u32, u32, bool)],
        rts: bool,
        qe: bool,
        ff: bool,
        opet: bool,
    ) -> Option<Scenario> {
        // OPET runs on plain DCF: with it on, quick-exchange and fast-forward are off.
        let (qe, ff) = (qe && !opet, ff && !opet);
        let mut text = format!(
            "duration_s = 4.0\nseed = {seed}\n[mac]\nrts_threshold_bytes = {}\nqueue_capacity_pkts = 10\n[mac.quick_exchange]\nenabled = {qe}\n[mac.fast_forward]\nenabled = {ff}\np = 0.75\n[mac.opet]\nenabled = {opet}\n[topology]\nkind = \"random\"\nnodes = {nodes}\nwidth_m = 450.0\nheight_m = 450.0\n",
            if rts { 0 } else { 3000 }
        );
        for &(s, d, tcp) in flows {
            let (s, d) = (s % nodes, d % nodes);
            if s == d {
                continue;
            }
            if tcp {
                text += &format!(
                    "[[flow]]\nsrc = {s}\ndst = {d}\ntransport = \"tcp-newreno\"\napp = \"ftp\"\nstart_s = 0.5\n"
                );
            } else {
                text +=
                    &format!("[[flow]]\nsrc = {s}\ndst = {d}\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 800.0\n");
            }
        }
        load(&text, Format::Toml, None, None).ok()
    }

    const QUEUES: [&str; 4] = ["droptail", "red", "nred", "throttle"];
    const TRANSPORTS: [&str; 7] = [
        "tcp-newreno",
        "tcp-reno",
        "tcp-mtcp",
        "tcp-ap",
        "tcp-westwood",
        "tcp-westwood-plus",
        "udp",
    ];

    /// A random field under AODV or static routes, moving or not, with a
    /// queue discipline and transports drawn from all the schemes; None if
    /// a flow's destination is unreachable at the start.
    fn random_stack(
        seed: u64,
        nodes: u32,
        flows: &[(u32, u32, usize)],
        aodv: bool,
        speed: Option<f64>,
        queue: usize,
        (qe, ff, opet): (bool, bool, bool),
    ) -> Option<Scenario> {
        // OPET runs on plain DCF with DropTail; fast-forward without it.
        let (opet, queue) = (opet && queue == 0, if opet { 0 } else { queue });
        let (qe, ff) = (qe && !opet, ff && !opet);
        let mut text = format!(
            "duration_s = 6.0\nseed = {seed}\n[mac]\nqueue = \"{}\"\nqueue_capacity_pkts = 15\n[mac.quick_exchange]\nenabled = {qe}\n[mac.fast_forward]\nenabled = {ff}\n[mac.opet]\nenabled = {opet}\n[routing]\nprotocol = \"{}\"\n[topology]\nkind = \"random\"\nnodes = {nodes}\nwidth_m = 700.0\nheight_m = 300.0\n",
            QUEUES[queue],
            if aodv { "aodv" } else { "static" }
        );
        if let Some(v) = speed {
            text += &format!("[mobility.random_waypoint]\nspeed_max_mps = {v}\npause_s = 1.0\n");
        }
        for &(s, d, transport) in flows {
            let (s, d) = (s % nodes, d % nodes);
            if s == d {
                continue;
            }
            let transport = TRANSPORTS[transport];
            text += &format!("[[flow]]\nsrc = {s}\ndst = {d}\ntransport = \"{transport}\"\nstart_s = 0.5\n");
            text += if transport == "udp" {
                "app = \"cbr\"\nrate_kbps = 600.0\n"
            } else {
                "app = \"ftp\"\n"
            };
        }
        load(&text, Format::Toml, None, None).ok()
    }

    /// What every finished run of `sc` must show: every packet accounted
    /// for, finite throughputs, no radio decoding two overlapping frames,
    /// nobody starting a frame of its own while its NAV is set (only
    /// responses, CTS, ACK and DATA after a CTS, may go then), and the same
    /// bytes from the same seed.
    fn finished_run_holds(sim: &Simulator, sc: Scenario) -> Result<(), TestCaseError> {
        let summary = sim.summary(0.0);
        prop_assert!(summary.ledger.balanced, "{:?}", summary.ledger);
        for f in &summary.flows {
            prop_assert!(
                f.throughput_kbps.is_finite() && f.throughput_kbps >= 0.0,
                "{:?}",
                f.throughput_kbps
            );
        }
        prop_assert_eq!(sim.probe().unwrap().air_violation(), None);
        prop_assert_eq!(run(sc).0.to_json(), summary.to_json());
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        #[test]
        fn invariants_hold(seed in 0u64..1000, nodes in 4u32..14, rts: bool, qe: bool, ff: bool, opet: bool,
                           flows in proptest::collection::vec((0u32..14, 0u32..14, any::<bool>()), 1..4)) {
            let Some(sc) = random_scenario(seed, nodes, &flows, rts, qe, ff, opet) else { return Ok(()) };
            let mut sim = Simulator::new(sc.clone());
            sim.enable_probe();
            // OPET: no flow stays blocked past its timeout (a lost
            // ready-to-receive frame, an upstream the RTR never reached).
            // Blocks end lazily, when the MAC is next fed: one outlived by
            // its timeout may stay in the table only while the MAC has a
            // frame of its own, whose end feeds it.
            let timeout = SimTime::from_secs_f64(sc.dcf.opet.block_timeout_s).as_nanos();
            let mut t = SimTime::ZERO;
            while !sim.run_until(t) {
                for n in sim.nodes() {
                    for (label, hop, since, until) in n.queue.blocks() {
                        prop_assert!((until >= t || !n.mac.wants_msdu()) && until.as_nanos() - since.as_nanos() <= timeout,
                            "flow {label} towards {hop} blocked {since:?}..{until:?} at {t:?}, MAC wants a frame: {}",
                            n.mac.wants_msdu());
                    }
                }
                t += Duration::from_millis(50);
            }
            finished_run_holds(&sim, sc)?;
        }

        /// The same invariants across the schemes: AODV's floods, repairs
        /// and route errors on a moving field, every queue discipline and
        /// transport, and the MAC extensions.
        #[test]
        fn invariants_hold_across_schemes(seed in 0u64..1000, nodes in 5u32..16, aodv: bool,
                                          speed in proptest::option::of(1.0f64..20.0), queue in 0usize..4, mac: (bool, bool, bool),
                                          flows in proptest::collection::vec((0u32..16, 0u32..16, 0usize..7), 1..5)) {
            let Some(sc) = random_stack(seed, nodes, &flows, aodv, speed, queue, mac) else { return Ok(()) };
            let mut sim = Simulator::new(sc.clone());
            sim.enable_probe();
            sim.run();
            finished_run_holds(&sim, sc)?;
        }
    }
}

/// Quick-exchange over one TCP connection on a 3-hop chain: the relays'
/// TCP ACKs ride back inside the data exchanges (Berger et al. §3.1), every
/// packet is accounted for, and with it off the counters are absent.
#[test]
fn quick_exchange_carries_tcp_acks_back_on_a_chain() {
    let text = |qe: bool| {
        format!(
            r#"
duration_s = 20.0
[mac.quick_exchange]
enabled = {qe}
[topology]
kind = "chain"
nodes = 4
spacing_m = 200.0
[[flow]]
src = 0
dst = 3
transport = "tcp-newreno"
app = "ftp"
"#
        )
    };
    let (on, _) = run(scenario(&text(true)));
    let (off, _) = run(scenario(&text(false)));
    assert!(on.ledger.balanced && off.ledger.balanced);
    assert!(off.mac.qe.is_none());
    let qe = on.mac.qe.clone().unwrap();
    assert!(qe.completed > 100, "{qe:?}");
    assert!(qe.honored >= qe.completed && qe.requested >= qe.honored, "{qe:?}");
    // Every station honours: nothing falls back to the plain exchange.
    assert_eq!(qe.fallen_back, 0, "{qe:?}");
    let (declined, _) = run(scenario(
        &text(true).replace("enabled = true", "enabled = true\nhonor = false"),
    ));
    let qd = declined.mac.qe.clone().unwrap();
    assert!(
        qd.fallen_back > 100 && qd.honored == 0 && qd.requested >= qd.fallen_back,
        "{qd:?}"
    );
    // DATA2+ACK1 is counted apart (`data_ack`), once per honoured exchange;
    // no ACK-RTS without fast-forward, and neither key without the schemes.
    assert_eq!(on.mac.frames_sent["data_ack"], qe.honored);
    assert!(!on.mac.frames_sent.contains_key("ack_rts"));
    assert!(!off.mac.frames_sent.contains_key("data_ack") && !off.mac.collisions.contains_key("data_ack"));
    // Fewer RTS per data frame sent: each exchange carries two packets.
    let rts_per_data = |s: &Summary| {
        let f = &s.mac.frames_sent;
        f["rts"] as f64 / (f["data"] + f.get("data_ack").copied().unwrap_or(0)) as f64
    };
    assert!(
        rts_per_data(&on) < 0.9 * rts_per_data(&off),
        "{} vs {}",
        rts_per_data(&on),
        rts_per_data(&off)
    );
    eprintln!(
        "qe {qe:?}; throughput on {:.1} off {:.1} kbit/s",
        on.flows[0].throughput_kbps, off.flows[0].throughput_kbps
    );
}

/// Fast-forward on a 4-hop chain under UDP (Berger et al. §3.2, Table 1's
/// setting) and under TCP with quick-exchange too: relays send packets on
/// with ACK-RTS frames and every packet is accounted for.
#[test]
fn fast_forward_moves_packets_on_along_a_chain() {
    let text = |ff: bool, qe: bool, transport: &str| {
        format!(
            r#"
duration_s = 20.0
[mac.quick_exchange]
enabled = {qe}
[mac.fast_forward]
enabled = {ff}
[topology]
kind = "chain"
nodes = 5
spacing_m = 200.0
[[flow]]
src = 0
dst = 4
transport = "{transport}"
app = "{app}"
{rate}
"#,
            app = if transport == "udp" { "cbr" } else { "ftp" },
            rate = if transport == "udp" { "rate_kbps = 800.0" } else { "" },
        )
    };
    // One UDP flow: the flow policy picks exactly the packets the link
    // policy picks, so the runs are the same.
    let policy =
        |p: &str| text(true, false, "udp").replace("enabled = true", &format!("enabled = true\npolicy = \"{p}\""));
    let (link, _) = run(scenario(&policy("link")));
    let (flow, _) = run(scenario(&policy("flow")));
    assert_eq!(format!("{link:?}"), format!("{flow:?}"));
    for (qe, transport) in [(false, "udp"), (true, "tcp-newreno")] {
        let (on, _) = run(scenario(&text(true, qe, transport)));
        let (off, _) = run(scenario(&text(false, qe, transport)));
        assert!(on.ledger.balanced && off.ledger.balanced);
        assert!(off.mac.ff.is_none());
        let ff = on.mac.ff.clone().unwrap();
        assert!(ff.attempted > 100, "{transport}: {ff:?}");
        // Every ACK-RTS ends in one of three ways, or is under way at the
        // end (at most one per relay); no limit, nothing limited.
        let ended = ff.completed + ff.no_cts + ff.data_failed;
        assert!(ended <= ff.attempted && ff.attempted <= ended + 3, "{ff:?}");
        assert!(ff.completed > 0 && ff.limited == 0, "{ff:?}");
        // ACK-RTS frames are counted apart from ACKs.
        assert_eq!(on.mac.frames_sent["ack_rts"], ff.attempted);
        assert_eq!(on.mac.frames_sent.contains_key("data_ack"), qe);
        assert!(!off.mac.frames_sent.contains_key("ack_rts"));
        eprintln!(
            "{transport} qe {qe}: ff {ff:?}; throughput on {:.1} off {:.1} kbit/s",
            on.flows[0].throughput_kbps, off.flows[0].throughput_kbps
        );
    }
}

/// OPET on a 5-hop chain with two TCP connections (Zhai et al.'s setting
/// in small), with either resume: negative CTSs block the upstream nodes,
/// ready-to-receive frames resume them, relays never hold more than q_bp
/// packets of a flow, every packet is accounted for; with OPET off the
/// summary has no OPET counters and no OPET frame kinds. Pulling each
/// packet with a ready-to-receive frame needs fewer negative CTSs.
#[test]
fn opet_backpressures_and_resumes_on_a_chain() {
    let text = |on: bool, resume: &str| {
        format!(
            r#"
duration_s = 20.0
[mac.opet]
enabled = {on}
resume = "{resume}"
[tcp]
delayed_ack = false
[topology]
kind = "chain"
nodes = 6
spacing_m = 200.0
[[flow]]
src = 0
dst = 5
transport = "tcp-newreno"
app = "ftp"
start_s = 1.0
[[flow]]
src = 0
dst = 5
transport = "tcp-newreno"
app = "ftp"
start_s = 1.1
"#
        )
    };
    let mut ncts = Vec::new();
    for resume in ["unblock", "pull"] {
        let mut sim = Simulator::new(scenario(&text(true, resume)));
        let mut t = SimTime::ZERO;
        let mut worst = 0;
        while !sim.run_until(t) {
            for node in 1..5u32 {
                for label in 0..4 {
                    let n = &sim.nodes()[node as usize];
                    let held = n.mac.held_msdus().filter(|(m, _)| m.label == Some(label)).count();
                    worst = worst.max(n.queue.label_len(label) + held);
                }
            }
            t += Duration::from_millis(10);
        }
        assert!(
            worst <= 1,
            "{resume}: a relay held {worst} packets of one flow (q_bp = 1)"
        );
        assert!(sim.ledger_balanced(), "{resume}: {:?}", sim.ledger());
        let on = sim.summary(0.0);
        let o = on.mac.opet.clone().unwrap();
        assert!(
            o.ncts_sent > 20 && o.blocks > 0 && o.rtr_sent > 0 && o.resumes > 0,
            "{resume}: {o:?}"
        );
        assert!(o.resumes <= o.rtr_sent && o.rtr_abandoned <= o.rtr_sent);
        assert_eq!(on.mac.frames_sent["ncts"], o.ncts_sent);
        assert_eq!(on.mac.frames_sent["rtr"], o.rtr_sent);
        assert!(
            on.flows.iter().all(|f| f.throughput_kbps > 20.0),
            "{resume}: {:?}",
            on.flows
        );
        eprintln!(
            "{resume}: {o:?}; throughput {:.1}, drops {}",
            on.aggregate_kbps, on.ledger.dropped
        );
        ncts.push(o.ncts_sent);
    }
    assert!(ncts[1] < ncts[0], "pull refuses less often: {ncts:?}");
    let (off, _) = run(scenario(&text(false, "unblock")));
    assert!(off.mac.opet.is_none() && !off.mac.frames_sent.contains_key("ncts"));
    eprintln!(
        "off: throughput {:.1}, drops {}",
        off.aggregate_kbps, off.ledger.dropped
    );
}

/// OPET on the 9-node chain with one TCP connection (opet-fig10's first
/// point): every packet is accounted for, including those whose DATA
/// arrived but whose ACK was lost before they were handed back to the queue.
#[test]
fn opet_ledger_balances_on_the_paper_chain() {
    let text = r#"
duration_s = 150.0
seed = 1
[mac.opet]
enabled = true
[tcp]
delayed_ack = false
[topology]
kind = "chain"
nodes = 9
spacing_m = 200.0
[[flow]]
src = 0
dst = 8
transport = "tcp-newreno"
app = "ftp"
start_s = 1.0
"#;
    let mut sim = Simulator::new(scenario(text));
    sim.run();
    assert!(sim.ledger_balanced(), "{:?}", sim.ledger());
}

/// OPET with pull resume, two TCP connections on the 9-node chain, the
/// seed whose run once delivered a packet twice: a retransmission after a
/// lost ACK came 188 ms later, after more MSDUs from the same transmitter
/// than the sequence cache keeps, and must still count as a duplicate.
#[test]
fn opet_pull_never_delivers_a_packet_twice() {
    let mut text = String::from(
        r#"
duration_s = 300.0
seed = 5
[mac.opet]
enabled = true
resume = "pull"
[tcp]
delayed_ack = false
[topology]
kind = "chain"
nodes = 9
spacing_m = 200.0
"#,
    );
    for start in ["1.0", "1.1"] {
        text += &format!("[[flow]]\nsrc = 0\ndst = 8\ntransport = \"tcp-newreno\"\napp = \"ftp\"\nstart_s = {start}\n");
    }
    let mut sim = Simulator::new(scenario(&text));
    sim.run();
    assert!(sim.ledger_balanced(), "{:?}", sim.ledger());
    assert!(sim.summary(0.0).mac.duplicates > 0);
}

/// `[mac] count_first_rts`: the summary counts the MSDUs whose first RTS
/// went out and those whose first RTS got no CTS (Berger et al. §3.2, "a
/// significant portion (20%) of transmission attempts fail to acquire the
/// channel on their first attempt"); without the key neither field appears
/// and the rest of the summary is the same.
#[test]
fn first_rts_failures_are_counted_on_request() {
    let text = |count: bool| {
        format!(
            r#"
duration_s = 10.0
[mac]
count_first_rts = {count}
[topology]
kind = "chain"
nodes = 6
spacing_m = 240.0
[[flow]]
src = 0
dst = 5
transport = "tcp-newreno"
app = "ftp"
"#
        )
    };
    let (on, _) = run(scenario(&text(true)));
    let (off, _) = run(scenario(&text(false)));
    let (started, failed) = (on.mac.msdus_started.unwrap(), on.mac.first_rts_failed.unwrap());
    assert!(started > 500 && failed > 0 && failed < started, "{failed} of {started}");
    // Every MSDU started sent an RTS; retransmitted RTSs are not counted.
    assert!(started <= on.mac.frames_sent["rts"]);
    assert!(off.mac.msdus_started.is_none() && off.mac.first_rts_failed.is_none());
    let json = serde_json::to_string(&off).unwrap();
    assert!(!json.contains("first_rts") && !json.contains("msdus_started"));
    let mut same = on.clone();
    same.mac.msdus_started = None;
    same.mac.first_rts_failed = None;
    same.wall_s = off.wall_s;
    same.name = off.name.clone();
    assert_eq!(format!("{same:?}"), format!("{off:?}"));
    eprintln!("first RTS failed for {failed} of {started} MSDUs");
}

/// Berger et al. §3.2: a relay fast-forwards only "if the next hop can be
/// determined *without the need to generate route discovery or address
/// resolution traffic*". On a 4-node chain (p = 1, the `any` policy, which
/// would send on whatever heads the relay's queue) node 0 hands node 1 a
/// data packet for `dst` straight from its queue at 1 s, as if it had a
/// route. With `relay_busy`, node 1 sends UDP to node 2 from 0.5 s on at
/// more than the channel carries (with AODV, after its discovery of node
/// 2), so that it holds packets for node 2 when node 0's arrives. Static
/// routes are a flow's: there the packet belongs to a flow 0 → 3 that sends
/// one packet of its own at 2.9 s. Returns the summary,
/// whether anyone sent an ACK-RTS and whether node 1 acknowledged node 0
/// with a plain ACK.
fn relay_case(protocol: &str, relay_busy: bool, dst: Option<u32>) -> (Summary, bool, bool) {
    let static_flow = protocol == "static";
    let flow_table = match (static_flow, relay_busy) {
        (true, _) => "[[flow]]\nsrc = 0\ndst = 3\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 8.0\nstart_s = 2.9\n",
        (false, true) => {
            "[[flow]]\nsrc = 1\ndst = 2\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 1600.0\nstart_s = 0.5\n"
        }
        (false, false) => "",
    };
    let sc = scenario(&format!(
        r#"
duration_s = 3.0
[mac.fast_forward]
enabled = true
p = 1.0
policy = "any"
[routing]
protocol = "{protocol}"
[topology]
kind = "chain"
nodes = 4
spacing_m = 200.0
{flow_table}"#
    ));
    let mut sim = Simulator::new(sc);
    sim.enable_trace(Default::default());
    let packet = |dst: u32, now: SimTime| Packet {
        uid: 0,
        kind: PacketKind::Data,
        flow: if static_flow { 0 } else { crate::net::packet::NO_FLOW },
        src: 0,
        dst,
        bytes: 1028,
        payload_bytes: 1000,
        created: now,
        ttl: DEFAULT_TTL,
        hops: 0,
        ff_run: 0,
        body: Body::Udp { seq: 0 },
    };
    sim.run_until(SimTime::from_secs_f64(1.0));
    if let Some(dst) = dst {
        let now = sim.now();
        sim.inject(0, packet(dst, now), 1);
    }
    sim.run();
    let trace = sim.take_trace();
    let mut ack_rts = false;
    let mut plain_ack_to_0 = false;
    for line in trace.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let ev: serde_json::Value = serde_json::from_slice(line).unwrap();
        if ev["event"] == "tx_start" {
            ack_rts |= ev["frame"] == "ack_rts";
            plain_ack_to_0 |= ev["node"] == 1 && ev["frame"] == "ack" && ev["ra"] == 0;
        }
    }
    (sim.summary(0.0), ack_rts, plain_ack_to_0)
}

#[test]
fn a_relay_without_a_route_does_not_fast_forward() {
    let rreq = |s: &Summary| s.routing.by_type.get("rreq").copied().unwrap_or(0);
    // AODV: node 1 has a route to node 2 and packets for it in hand, but
    // none to node 3. Node 0's packet for node 3 gets a plain ACK, nothing
    // is fast-forwarded, the packet is dropped for want of a route (node 1
    // reports it with a RERR) and no route discovery follows: the RREQs are
    // those of node 1's own discovery, as many as without node 0's packet.
    let (s, ack_rts, plain) = relay_case("aodv", true, Some(3));
    let (alone, _, _) = relay_case("aodv", true, None);
    assert!(!ack_rts && plain, "the relay acknowledged with a plain ACK");
    let ff = s.mac.ff.clone().unwrap();
    assert_eq!((ff.attempted, s.mac.frames_sent["ack_rts"]), (0, 0));
    assert_eq!(s.drops["no_route"], 1);
    assert!(
        rreq(&alone) > 0 && rreq(&s) == rreq(&alone),
        "{} vs {}",
        rreq(&s),
        rreq(&alone)
    );
    assert!(s.ledger.balanced);
    // The same relay with nothing discovered at all: no RREQ anywhere.
    let (bare, ack_rts, plain) = relay_case("aodv", false, Some(3));
    assert!(!ack_rts && plain && rreq(&bare) == 0 && bare.drops["no_route"] == 1);
    // Node 0's packet for node 2, whose route node 1 knows: it is
    // acknowledged by an ACK-RTS and something goes on by fast-forward,
    // again without a discovery of its own.
    let (known, ack_rts, _) = relay_case("aodv", true, Some(2));
    assert!(
        ack_rts && known.mac.ff.clone().unwrap().attempted >= 1,
        "{:?}",
        known.mac.ff
    );
    assert_eq!((rreq(&known), known.drops["no_route"]), (rreq(&alone), 0));
    assert!(known.ledger.balanced);
    // Static routes always know the next hop.
    let (st, ack_rts, _) = relay_case("static", false, Some(3));
    assert!(ack_rts && st.mac.ff.unwrap().completed >= 1);
    assert_eq!(st.drops["no_route"], 0);
}
