//! Scenario tests: several `Aodv` instances joined by an adjacency list and
//! a virtual clock. Every frame arrives one millisecond after it is sent (a
//! broadcast after its jitter too); a unicast to a node that is not linked
//! stands for the MAC exhausting its retries and calls `handle_link_failure`.

use super::*;
use crate::engine::rng::{stream, Purpose};
use std::collections::VecDeque;

const DELAY: Duration = Duration::from_millis(1);

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn at_ms(v: u64) -> SimTime {
    SimTime::ZERO + ms(v)
}

#[derive(Clone, Debug)]
enum Ev {
    Msg {
        to: usize,
        from: usize,
        msg: AodvMessage,
        ttl: u8,
    },
    Data {
        to: usize,
        from: usize,
        pkt: u32,
    },
}

/// A RERR as sent: (sender, unicast recipient, unreachable destinations).
type RerrLog = (usize, Option<usize>, Vec<(NodeAddr, u32)>);

/// A control message as it left a node.
#[derive(Clone, Debug)]
struct Sent {
    at: SimTime,
    node: usize,
    /// `None` for a broadcast.
    to: Option<usize>,
    msg: AodvMessage,
    ttl: u8,
}

struct Net {
    now: SimTime,
    nodes: Vec<Aodv<u32>>,
    links: BTreeSet<(usize, usize)>,
    events: BTreeMap<(SimTime, u64), Ev>,
    next_seq: u64,
    /// Packet id -> (source, destination).
    packets: Vec<(usize, NodeAddr)>,
    sent: Vec<Sent>,
    delivered: Vec<(SimTime, usize, u32)>,
    dropped: Vec<(SimTime, usize, u32, DropCause)>,
    mac_drops: Vec<(SimTime, usize, u32)>,
    /// Transmissions per packet so far; a routing loop would grow it without bound.
    hops: Vec<u32>,
}

impl Net {
    fn new(n: usize, edges: &[(usize, usize)], cfg: impl Fn(usize) -> AodvConfig) -> Net {
        let nodes = (0..n)
            .map(|i| Aodv::new(i as NodeAddr, &cfg(i), stream(7, i as u64, Purpose::Routing)))
            .collect();
        let mut net = Net {
            now: SimTime::ZERO,
            nodes,
            links: BTreeSet::new(),
            events: BTreeMap::new(),
            next_seq: 0,
            packets: Vec::new(),
            sent: Vec::new(),
            delivered: Vec::new(),
            dropped: Vec::new(),
            mac_drops: Vec::new(),
            hops: Vec::new(),
        };
        for &(a, b) in edges {
            net.link(a, b);
        }
        net
    }

    fn chain(n: usize, cfg: impl Fn(usize) -> AodvConfig) -> Net {
        let edges: Vec<_> = (1..n).map(|i| (i - 1, i)).collect();
        Net::new(n, &edges, cfg)
    }

    fn link(&mut self, a: usize, b: usize) {
        self.links.insert((a, b));
        self.links.insert((b, a));
    }

    fn cut(&mut self, a: usize, b: usize) {
        self.links.remove(&(a, b));
        self.links.remove(&(b, a));
    }

    fn neighbours(&self, a: usize) -> Vec<usize> {
        self.links.range((a, 0)..(a + 1, 0)).map(|&(_, b)| b).collect()
    }

    fn schedule(&mut self, at: SimTime, ev: Ev) {
        self.events.insert((at, self.next_seq), ev);
        self.next_seq += 1;
    }

    /// `src` originates a data packet to `dst`; returns its id.
    fn send(&mut self, src: usize, dst: NodeAddr) -> u32 {
        let pkt = self.packets.len() as u32;
        self.packets.push((src, dst));
        self.hops.push(0);
        let mut out = Vec::new();
        let now = self.now;
        if let Some(nh) = self.nodes[src].route_data(now, dst, pkt, true, &mut out) {
            self.transmit(src, nh as usize, pkt);
        }
        self.apply(src, out);
        pkt
    }

    fn transmit(&mut self, node: usize, next_hop: usize, pkt: u32) {
        self.hops[pkt as usize] += 1;
        assert!(
            self.hops[pkt as usize] <= 2 * self.nodes.len() as u32,
            "packet {pkt} loops"
        );
        if self.links.contains(&(node, next_hop)) {
            self.schedule(
                self.now + DELAY,
                Ev::Data {
                    to: next_hop,
                    from: node,
                    pkt,
                },
            );
        } else {
            // The MAC gave up: AODV may keep the packet for a local repair.
            let (src, dst) = self.packets[pkt as usize];
            let mut out = Vec::new();
            let now = self.now;
            let back =
                self.nodes[node].handle_data_failure(now, next_hop as NodeAddr, src as NodeAddr, dst, pkt, &mut out);
            if let Some(p) = back {
                self.mac_drops.push((now, node, p));
            }
            self.apply(node, out);
        }
    }

    fn mac_failure(&mut self, node: usize, next_hop: usize) {
        let mut out = Vec::new();
        let now = self.now;
        self.nodes[node].handle_link_failure(now, next_hop as NodeAddr, &mut out);
        self.apply(node, out);
    }

    fn apply(&mut self, node: usize, out: Vec<AodvAction<u32>>) {
        for a in out {
            match a {
                AodvAction::Broadcast { msg, ttl, jitter } => {
                    self.sent.push(Sent {
                        at: self.now,
                        node,
                        to: None,
                        msg: msg.clone(),
                        ttl,
                    });
                    for nb in self.neighbours(node) {
                        self.schedule(
                            self.now + jitter + DELAY,
                            Ev::Msg {
                                to: nb,
                                from: node,
                                msg: msg.clone(),
                                ttl,
                            },
                        );
                    }
                }
                AodvAction::Unicast { next_hop, msg, ttl } => {
                    let to = next_hop as usize;
                    self.sent.push(Sent {
                        at: self.now,
                        node,
                        to: Some(to),
                        msg: msg.clone(),
                        ttl,
                    });
                    if self.links.contains(&(node, to)) {
                        self.schedule(
                            self.now + DELAY,
                            Ev::Msg {
                                to,
                                from: node,
                                msg,
                                ttl,
                            },
                        );
                    } else {
                        self.mac_failure(node, to);
                    }
                }
                AodvAction::SendData { packet, next_hop } => self.transmit(node, next_hop as usize, packet),
                AodvAction::DropData { packet, cause } => self.dropped.push((self.now, node, packet, cause)),
            }
        }
    }

    fn deliver(&mut self, ev: Ev) {
        let now = self.now;
        let mut out = Vec::new();
        match ev {
            Ev::Msg { to, from, msg, ttl } => {
                self.nodes[to].handle_message(now, from as NodeAddr, &msg, ttl, &mut out);
                self.apply(to, out);
            }
            Ev::Data { to, from, pkt } => {
                let (src, dst) = self.packets[pkt as usize];
                if dst as usize == to {
                    self.nodes[to].note_route_used(now, src as NodeAddr, from as NodeAddr);
                    self.delivered.push((now, to, pkt));
                    return;
                }
                self.nodes[to].note_route_used(now, src as NodeAddr, from as NodeAddr);
                if let Some(nh) = self.nodes[to].route_data(now, dst, pkt, false, &mut out) {
                    self.transmit(to, nh as usize, pkt);
                }
                self.apply(to, out);
            }
        }
    }

    fn run_until(&mut self, end: SimTime) {
        loop {
            let ev_t = self.events.first_key_value().map(|(k, _)| k.0);
            let tm_t = self.nodes.iter().filter_map(|n| n.poll_timeout()).min();
            let Some(t) = [ev_t, tm_t].into_iter().flatten().min() else {
                break;
            };
            if t > end {
                break;
            }
            assert!(t >= self.now, "time went backwards");
            self.now = t;
            if ev_t == Some(t) {
                let (_, ev) = self.events.pop_first().expect("event");
                self.deliver(ev);
            } else {
                for i in 0..self.nodes.len() {
                    if self.nodes[i].poll_timeout().is_some_and(|d| d <= t) {
                        let mut out = Vec::new();
                        self.nodes[i].handle_timeout(t, &mut out);
                        self.apply(i, out);
                    }
                }
            }
        }
        self.now = end;
    }

    /// RREQs `node` originated: (time, TTL, message).
    fn rreqs_from(&self, node: usize) -> Vec<(SimTime, u8, Rreq)> {
        self.sent
            .iter()
            .filter_map(|s| match &s.msg {
                AodvMessage::Rreq(r) if s.node == node && r.orig == node as NodeAddr && r.hop_count == 0 => {
                    Some((s.at, s.ttl, *r))
                }
                _ => None,
            })
            .collect()
    }

    /// Nodes that rebroadcast the RREQ (orig, id), once per rebroadcast.
    fn forwarders(&self, orig: usize, id: u32) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .sent
            .iter()
            .filter(|s| {
                matches!(&s.msg, AodvMessage::Rreq(r)
                    if r.orig == orig as NodeAddr && r.rreq_id == id && s.node != orig)
            })
            .map(|s| s.node)
            .collect();
        v.sort_unstable();
        v
    }

    fn delivered_to(&self, node: usize) -> Vec<u32> {
        self.delivered.iter().filter(|d| d.1 == node).map(|d| d.2).collect()
    }

    /// RERRs sent after `since`: (sender, unicast recipient, unreachable list).
    fn rerrs_since(&self, since: SimTime) -> Vec<RerrLog> {
        self.sent
            .iter()
            .filter(|s| s.at >= since)
            .filter_map(|s| match &s.msg {
                AodvMessage::Rerr(e) => Some((s.node, s.to, e.unreachable.clone())),
                _ => None,
            })
            .collect()
    }

    /// RREPs (not HELLOs) sent after `since`: (sender, recipient, message).
    fn rreps_since(&self, since: SimTime) -> Vec<(usize, usize, Rrep)> {
        self.sent
            .iter()
            .filter(|s| s.at >= since)
            .filter_map(|s| match &s.msg {
                AodvMessage::Rrep(r) if !r.is_hello() => Some((s.node, s.to.expect("unicast"), *r)),
                _ => None,
            })
            .collect()
    }
}

fn no_jitter() -> AodvConfig {
    AodvConfig {
        broadcast_jitter_ms: 0.0,
        ..AodvConfig::default()
    }
}

#[test]
fn discovery_over_a_five_hop_chain_releases_the_buffer_in_order() {
    let mut net = Net::chain(6, |_| AodvConfig::default());
    let pkts: Vec<u32> = (0..4).map(|_| net.send(0, 5)).collect();
    assert_eq!(net.nodes[0].buffered(), 4);
    assert!(net.nodes[0].discovery_in_progress(5));
    net.run_until(at_ms(3000));

    assert_eq!(net.delivered_to(5), pkts);
    assert!(net.dropped.is_empty() && net.mac_drops.is_empty());
    assert_eq!(net.nodes[0].buffered(), 0);
    assert!(!net.nodes[0].discovery_in_progress(5));
    let r = net.nodes[0].route(net.now, 5).expect("route to 5");
    assert!(r.active);
    assert_eq!((r.next_hop, r.hop_count), (1, 5));
    for i in 1..5 {
        let fwd = net.nodes[i].route(net.now, 5).expect("forward route");
        assert_eq!((fwd.next_hop, fwd.hop_count), (i as NodeAddr + 1, 5 - i as u8));
        let rev = net.nodes[i].route(net.now, 0).expect("reverse route");
        assert_eq!((rev.next_hop, rev.hop_count), (i as NodeAddr - 1, i as u8));
    }
    // Expanding ring: TTL 5 is the first to reach five hops.
    let ttls: Vec<u8> = net.rreqs_from(0).iter().map(|r| r.1).collect();
    assert_eq!(ttls, vec![1, 3, 5]);
    // The RREP came from the destination, hop by hop.
    let rreps = net.rreps_since(SimTime::ZERO);
    let path: Vec<(usize, usize)> = rreps.iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(path, vec![(5, 4), (4, 3), (3, 2), (2, 1), (1, 0)]);
    assert_eq!(rreps[0].2.hop_count, 0);
    assert_eq!(rreps[4].2.hop_count, 4);
    // Its IP TTL starts at the reverse route's five hops and loses one per
    // forward: just enough to reach the originator.
    let ttls: Vec<u8> = net
        .sent
        .iter()
        .filter(|s| matches!(s.msg, AodvMessage::Rrep(_)) && s.to.is_some())
        .map(|s| s.ttl)
        .collect();
    assert_eq!(ttls, vec![5, 4, 3, 2, 1]);
    // Data left only once the route existed.
    let found = net.sent.iter().find(|s| s.node == 1 && s.to == Some(0)).unwrap().at;
    assert!(net.delivered.iter().all(|d| d.0 > found));
}

#[test]
fn expanding_ring_grows_ttl_as_the_rfc_says() {
    let mut net = Net::chain(12, |_| AodvConfig::default());
    net.send(0, 11);
    net.run_until(at_ms(5000));
    assert_eq!(net.delivered_to(11).len(), 1);

    let rreqs = net.rreqs_from(0);
    let ttls: Vec<u8> = rreqs.iter().map(|r| r.1).collect();
    assert_eq!(ttls, vec![1, 3, 5, 7, 35]);
    // Each wait is RING_TRAVERSAL_TIME = 2 * 40 ms * (TTL + 2).
    let gaps: Vec<Duration> = rreqs.windows(2).map(|w| w[1].0 - w[0].0).collect();
    assert_eq!(gaps, vec![ms(240), ms(400), ms(560), ms(720)]);
    // A RREQ with TTL t is rebroadcast by the t - 1 nodes nearest the source.
    for &(_, ttl, r) in &rreqs[..4] {
        let expect: Vec<usize> = (1..ttl as usize).collect();
        assert_eq!(net.forwarders(0, r.rreq_id), expect, "TTL {ttl}");
    }
    // Own sequence number and RREQ ID go up by one per RREQ (§6.1, §6.3).
    for w in rreqs.windows(2) {
        assert_eq!(w[1].2.orig_seq, w[0].2.orig_seq + 1);
        assert_eq!(w[1].2.rreq_id, w[0].2.rreq_id + 1);
    }
    assert_eq!(net.nodes[0].route(net.now, 11).unwrap().hop_count, 11);
}

#[test]
fn broken_link_is_repaired_through_the_other_path() {
    // 0 - 1 - 2 - 3 and a longer detour 1 - 4 - 5 - 3.
    let edges = [(0, 1), (1, 2), (2, 3), (1, 4), (4, 5), (5, 3)];
    let mut net = Net::new(6, &edges, |_| no_jitter());
    let first = net.send(0, 3);
    net.run_until(at_ms(1000));
    assert_eq!(net.delivered_to(3), vec![first]);
    assert_eq!(net.nodes[0].route(net.now, 3).unwrap().hop_count, 3);
    assert_eq!(net.nodes[1].next_hop(net.now, 3), Some(2));

    net.cut(2, 3);
    let broken = at_ms(1000);
    let lost = net.send(0, 3);
    net.run_until(at_ms(1500));
    // Node 2's MAC gave up; RERRs went 2 -> 1 -> 0.
    assert_eq!(
        net.mac_drops.iter().map(|d| (d.1, d.2)).collect::<Vec<_>>(),
        vec![(2, lost)]
    );
    let rerrs = net.rerrs_since(broken);
    let hops: Vec<(usize, Option<usize>)> = rerrs.iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(hops, vec![(2, Some(1)), (1, Some(0))]);
    assert!(!net.nodes[0].route(net.now, 3).unwrap().active);

    let again = net.send(0, 3);
    net.run_until(at_ms(4000));
    assert_eq!(net.delivered_to(3), vec![first, again]);
    let r = net.nodes[0].route(net.now, 3).unwrap();
    assert!(r.active);
    assert_eq!((r.next_hop, r.hop_count), (1, 4));
    assert_eq!(net.nodes[1].next_hop(net.now, 3), Some(4));
    assert_eq!(net.nodes[4].next_hop(net.now, 3), Some(5));
    // §6.4: the new search starts at the old hop count plus TTL_INCREMENT.
    let after: Vec<u8> = net.rreqs_from(0).iter().filter(|r| r.0 > broken).map(|r| r.1).collect();
    assert_eq!(after[0], 5);
}

#[test]
fn rerr_travels_back_to_the_source_with_incremented_sequence_number() {
    let mut net = Net::chain(5, |_| AodvConfig::default());
    net.send(0, 4);
    net.run_until(at_ms(2000));
    assert_eq!(net.delivered_to(4).len(), 1);
    let before = net.nodes[0].route(net.now, 4).unwrap();
    assert!(before.active && before.valid_seq);

    net.cut(3, 4);
    let t = net.now;
    net.send(0, 4);
    net.run_until(at_ms(2100));
    let rerrs = net.rerrs_since(t);
    let expected: Vec<RerrLog> = vec![
        (3, Some(2), vec![(4, before.seq + 1)]),
        (2, Some(1), vec![(4, before.seq + 1)]),
        (1, Some(0), vec![(4, before.seq + 1)]),
    ];
    assert_eq!(rerrs, expected);
    let delete_period = ms(15_000);
    for (i, node) in net.nodes.iter().enumerate().take(4) {
        let r = node.route(net.now, 4).unwrap();
        assert!(!r.active, "node {i}");
        assert_eq!(r.seq, before.seq + 1, "node {i}");
        if i > 0 {
            // Invalidated when it sent its RERR, deleted DELETE_PERIOD later.
            let sent_at = net
                .sent
                .iter()
                .find(|s| s.node == i && s.at >= t && s.msg.kind() == "RERR")
                .unwrap()
                .at;
            assert_eq!(r.expires, sent_at + delete_period, "node {i}");
        }
    }
    // The source has no precursors for 4, so the RERR stops there.
    assert!(net.rerrs_since(t).iter().all(|r| r.0 != 0));
    // Routes to nodes still reachable are untouched.
    assert!(net.nodes[2].route(net.now, 3).unwrap().active);
    assert!(net.nodes[0].route(net.now, 1).unwrap().active);
}

#[test]
fn each_node_rebroadcasts_a_given_rreq_once() {
    // 3 x 3 grid; node 0 looks for a node that does not exist, so every RREQ
    // at TTL = NET_DIAMETER floods the whole grid.
    let mut edges = Vec::new();
    for r in 0..3 {
        for c in 0..3 {
            let i = r * 3 + c;
            if c < 2 {
                edges.push((i, i + 1));
            }
            if r < 2 {
                edges.push((i, i + 3));
            }
        }
    }
    let mut net = Net::new(9, &edges, |_| AodvConfig::default());
    net.send(0, 99);
    net.run_until(at_ms(30_000));
    let rreqs = net.rreqs_from(0);
    assert_eq!(rreqs.len(), 4 + 3);
    for &(_, ttl, r) in &rreqs {
        let f = net.forwarders(0, r.rreq_id);
        let mut unique = f.clone();
        unique.dedup();
        assert_eq!(f, unique, "a node rebroadcast RREQ {} twice", r.rreq_id);
        if ttl == 35 {
            assert_eq!(f, (1..9).collect::<Vec<_>>());
        }
    }
    // Every RREQ reached several nodes more than once, so suppression was exercised.
    let receptions = net
        .sent
        .iter()
        .filter(|s| matches!(s.msg, AodvMessage::Rreq(_)))
        .map(|s| net.neighbours(s.node).len())
        .sum::<usize>();
    assert!(receptions > 2 * net.sent.len());
}

#[test]
fn duplicate_rreq_is_silently_discarded() {
    let mut a: Aodv<u32> = Aodv::new(1, &no_jitter(), stream(1, 1, Purpose::Routing));
    let rreq = AodvMessage::Rreq(Rreq {
        gratuitous: false,
        dest_only: false,
        unknown_seq: true,
        hop_count: 0,
        rreq_id: 9,
        dst: 50,
        dst_seq: 0,
        orig: 0,
        orig_seq: 3,
    });
    let mut out = Vec::new();
    a.handle_message(SimTime::ZERO, 0, &rreq, 5, &mut out);
    assert_eq!(out.len(), 1);
    let mut out2 = Vec::new();
    a.handle_message(at_ms(10), 2, &rreq, 5, &mut out2);
    assert!(out2.is_empty());
    // After PATH_DISCOVERY_TIME (5.6 s) the pair is forgotten.
    a.handle_message(at_ms(5700), 2, &rreq, 5, &mut out2);
    assert_eq!(out2.len(), 1);
}

/// §6.5 with §6.2: a RREQ updates the reverse route only from a newer
/// originator sequence number or the same one over fewer hops. Node 1 is
/// the destination of RREQs from node 9, two hops or more away; they reach
/// it through its neighbours 0 and 2. Data to 9 keeps the route active
/// past the RREQ's memory (PATH_DISCOVERY_TIME, 5.6 s), so that copies of
/// a RREQ can come back as new.
///
/// ```text
///   t        RREQ (id, seq)  from  hops  route to 9    reply to (TTL)
///   0        (9, 3)          0     2     via 0, 2      0 (2)
///   5.7 s    (9, 3) again    2     4     via 0, 2      0 (2)   not fresher
///   5.8 s    (10, 4)         2     4     via 2, 4      2 (4)   newer
///   11.5 s   (10, 4) again   0     2     via 0, 2      0 (2)   fewer hops
/// ```
#[test]
fn a_rreq_turns_the_reverse_route_only_when_fresher() {
    let mut a: Aodv<u32> = Aodv::new(1, &no_jitter(), stream(1, 1, Purpose::Routing));
    let rreq = |id: u32, orig_seq: u32, hop_count: u8| {
        AodvMessage::Rreq(Rreq {
            gratuitous: false,
            dest_only: false,
            unknown_seq: true,
            hop_count,
            rreq_id: id,
            dst: 1,
            dst_seq: 0,
            orig: 9,
            orig_seq,
        })
    };
    let reply_to = |out: &[AodvAction<u32>]| match out.last() {
        Some(AodvAction::Unicast {
            next_hop,
            msg: AodvMessage::Rrep(_),
            ttl,
        }) => (*next_hop, *ttl),
        other => panic!("expected a RREP, got {other:?}"),
    };
    let via = |a: &Aodv<u32>, t: SimTime| {
        let r = a.route(t, 9).unwrap();
        assert!(r.active);
        (r.next_hop, r.hop_count)
    };
    let mut out = Vec::new();
    a.handle_message(SimTime::ZERO, 0, &rreq(9, 3, 1), 5, &mut out);
    assert_eq!((via(&a, SimTime::ZERO), reply_to(&out)), ((0, 2), (0, 2)));
    a.note_route_used(at_ms(5000), 9, 0);
    a.handle_message(at_ms(5700), 2, &rreq(9, 3, 3), 5, &mut out);
    assert_eq!((via(&a, at_ms(5700)), reply_to(&out)), ((0, 2), (0, 2)));
    a.handle_message(at_ms(5800), 2, &rreq(10, 4, 3), 5, &mut out);
    assert_eq!((via(&a, at_ms(5800)), reply_to(&out)), ((2, 4), (2, 4)));
    a.note_route_used(at_ms(10_000), 9, 2);
    a.handle_message(at_ms(11_500), 0, &rreq(10, 4, 1), 5, &mut out);
    assert_eq!((via(&a, at_ms(11_500)), reply_to(&out)), ((0, 2), (0, 2)));
}

fn dest_only_run(dest_only: bool) -> (Net, SimTime) {
    let mut net = Net::chain(4, |i| AodvConfig {
        destination_only: dest_only && i == 0,
        ..AodvConfig::default()
    });
    net.send(1, 3);
    net.run_until(at_ms(1000));
    assert!(net.nodes[1].next_hop(net.now, 3).is_some());
    assert!(net.nodes[0].route(net.now, 3).is_none());
    let t = net.now;
    net.send(0, 3);
    net.run_until(at_ms(2000));
    assert_eq!(net.delivered_to(3).len(), 2);
    (net, t)
}

#[test]
fn intermediate_with_a_fresh_route_replies_unless_destination_only() {
    let (net, t) = dest_only_run(false);
    let rreps = net.rreps_since(t);
    assert_eq!(rreps.len(), 1);
    assert_eq!((rreps[0].0, rreps[0].1), (1, 0));
    assert_eq!(rreps[0].2.hop_count, 2);
    let ttls: Vec<u8> = net.rreqs_from(0).iter().map(|r| r.1).collect();
    assert_eq!(ttls, vec![1]);

    let (net, t) = dest_only_run(true);
    let rreps = net.rreps_since(t);
    let path: Vec<(usize, usize)> = rreps.iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(path, vec![(3, 2), (2, 1), (1, 0)]);
    let rreqs = net.rreqs_from(0);
    assert!(rreqs.iter().all(|r| r.2.dest_only));
    assert_eq!(rreqs.iter().map(|r| r.1).collect::<Vec<_>>(), vec![1, 3]);
}

#[test]
fn gratuitous_rrep_gives_the_destination_a_route_to_the_originator() {
    let mut net = Net::chain(4, |i| AodvConfig {
        gratuitous_rrep: i == 0,
        ..AodvConfig::default()
    });
    net.send(1, 3);
    net.run_until(at_ms(1000));
    assert!(net.nodes[3].route(net.now, 0).is_none());
    let t = net.now;
    net.send(0, 3);
    net.run_until(at_ms(1100));
    let rreps = net.rreps_since(t);
    let path: Vec<(usize, usize)> = rreps.iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(path, vec![(1, 0), (1, 2), (2, 3)]);
    let r = net.nodes[3].route(net.now, 0).expect("route from gratuitous RREP");
    assert!(r.active);
    assert_eq!((r.next_hop, r.hop_count), (2, 3));
}

#[test]
fn failed_discovery_drops_the_buffered_packets_with_no_route() {
    let mut net = Net::chain(3, |_| AodvConfig::default());
    let pkts: Vec<u32> = (0..3).map(|_| net.send(0, 7)).collect();
    net.run_until(at_ms(40_000));
    let rreqs = net.rreqs_from(0);
    assert_eq!(
        rreqs.iter().map(|r| r.1).collect::<Vec<_>>(),
        vec![1, 3, 5, 7, 35, 35, 35]
    );
    let gaps: Vec<Duration> = rreqs.windows(2).map(|w| w[1].0 - w[0].0).collect();
    // Ring waits, then NET_TRAVERSAL_TIME with binary exponential backoff.
    assert_eq!(gaps, vec![ms(240), ms(400), ms(560), ms(720), ms(2800), ms(5600)]);
    let give_up = rreqs[6].0 + ms(11_200);
    let expected: Vec<_> = pkts.iter().map(|&p| (give_up, 0, p, DropCause::NoRoute)).collect();
    assert_eq!(net.dropped, expected);
    assert!(!net.nodes[0].discovery_in_progress(7));
    assert_eq!(net.nodes[0].buffered(), 0);
    assert_eq!(net.nodes[0].poll_timeout(), None);
}

#[test]
fn buffer_overflow_drops_the_oldest_and_timeout_drops_the_rest() {
    let cfg = AodvConfig {
        buffer_capacity_pkts: 2,
        buffer_timeout_s: 1.0,
        ..AodvConfig::default()
    };
    let mut net = Net::chain(2, |_| cfg.clone());
    let p: Vec<u32> = (0..3).map(|_| net.send(0, 9)).collect();
    assert_eq!(net.dropped, vec![(SimTime::ZERO, 0, p[0], DropCause::BufferFull)]);
    net.run_until(at_ms(2000));
    assert_eq!(
        net.dropped[1..],
        [
            (at_ms(1000), 0, p[1], DropCause::BufferTimeout),
            (at_ms(1000), 0, p[2], DropCause::BufferTimeout)
        ]
    );
    // The discovery itself goes on (as in ns-2).
    assert!(net.nodes[0].discovery_in_progress(9));
}

#[test]
fn rreq_rate_limit_holds_back_the_excess() {
    let cfg = AodvConfig {
        rreq_ratelimit_per_s: 2,
        ..AodvConfig::default()
    };
    let mut net = Net::new(1, &[], |_| cfg.clone());
    for dst in [5, 6, 7] {
        net.send(0, dst);
    }
    net.run_until(at_ms(6000));
    let sent: Vec<(SimTime, NodeAddr)> = net.rreqs_from(0).iter().map(|r| (r.0, r.2.dst)).collect();
    assert_eq!(sent[..2], [(SimTime::ZERO, 5), (SimTime::ZERO, 6)]);
    // Never more than two in any one-second window...
    for (i, &(t, _)) in sent.iter().enumerate() {
        assert!(
            sent[i..].iter().take_while(|s| s.0 < t + ms(1000)).count() <= 2,
            "{sent:?}"
        );
    }
    // ... and the held-back ones still go.
    let first_7 = sent.iter().find(|s| s.1 == 7).expect("RREQ for 7").0;
    assert!(first_7 >= at_ms(1000));
    assert!(sent.len() >= 8);
}

#[test]
fn forwarding_without_a_route_drops_and_sends_rerr() {
    let mut a: Aodv<u32> = Aodv::new(4, &no_jitter(), stream(1, 4, Purpose::Routing));
    let mut out = Vec::new();
    assert_eq!(a.route_data(SimTime::ZERO, 8, 77, false, &mut out), None);
    assert_eq!(
        out[0],
        AodvAction::DropData {
            packet: 77,
            cause: DropCause::NoRoute
        }
    );
    match &out[1] {
        AodvAction::Broadcast {
            msg: AodvMessage::Rerr(e),
            ttl: 1,
            ..
        } => {
            assert_eq!(e.unreachable, vec![(8, 0)])
        }
        other => panic!("expected a broadcast RERR, got {other:?}"),
    }
    assert!(!a.discovery_in_progress(8));
}

#[test]
fn route_updates_compare_sequence_numbers_across_rollover() {
    let mut a: Aodv<u32> = Aodv::new(1, &no_jitter(), stream(1, 1, Purpose::Routing));
    let rrep = |seq: u32, hops: u8| {
        AodvMessage::Rrep(Rrep {
            hop_count: hops,
            dst: 9,
            dst_seq: seq,
            orig: 1,
            lifetime: ms(6000),
        })
    };
    let mut out = Vec::new();
    let now = SimTime::ZERO;
    a.handle_message(now, 7, &rrep(u32::MAX, 2), 1, &mut out);
    assert_eq!(a.next_hop(now, 9), Some(7));
    // Sequence number 0 is newer than u32::MAX: taken even with more hops.
    a.handle_message(now, 8, &rrep(0, 5), 1, &mut out);
    let r = a.route(now, 9).unwrap();
    assert_eq!((r.next_hop, r.seq, r.hop_count), (8, 0, 6));
    // u32::MAX - 1 is older than 0: ignored though shorter.
    a.handle_message(now, 7, &rrep(u32::MAX - 1, 0), 1, &mut out);
    assert_eq!(a.route(now, 9).unwrap().next_hop, 8);
    // Same sequence number, fewer hops: taken.
    a.handle_message(now, 7, &rrep(0, 1), 1, &mut out);
    let r = a.route(now, 9).unwrap();
    assert_eq!((r.next_hop, r.hop_count), (7, 2));
    assert!(out.is_empty(), "the originator forwards nothing: {out:?}");
}

/// Two nodes whose routes towards a reply's originator point at each other
/// (a transient loop): a reply that only confirms the route it follows is
/// forwarded, but each forward spends one of its TTL, so it stops.
#[test]
fn a_reply_in_a_routing_loop_stops_when_its_ttl_is_spent() {
    let mut nodes: Vec<Aodv<u32>> = (1..=2)
        .map(|me| Aodv::new(me, &no_jitter(), stream(1, me.into(), Purpose::Routing)))
        .collect();
    let now = SimTime::ZERO;
    let mut out = Vec::new();
    // A reply about 0 for another originator, 8 (one whose destination is
    // its originator would be a HELLO), and one about 9 for originator 0.
    let about = |dst: u32, dst_seq: u32, hop_count: u8, orig: u32| {
        AodvMessage::Rrep(Rrep {
            hop_count,
            dst,
            dst_seq,
            orig,
            lifetime: ms(6000),
        })
    };
    let (about_0, about_9) = (about(0, 5, 3, 8), about(9, 7, 2, 0));
    // Node 1 reaches 0 through 2, node 2 through 1; both know 9 via 3.
    nodes[0].handle_message(now, 2, &about_0, 1, &mut out);
    nodes[1].handle_message(now, 1, &about_0, 1, &mut out);
    for node in &mut nodes {
        node.handle_message(now, 3, &about_9, 1, &mut out);
    }
    assert_eq!(nodes[0].next_hop(now, 0), Some(2));
    assert_eq!(nodes[1].next_hop(now, 0), Some(1));
    out.clear();
    // The reply about 9, same sequence number, bounced between them from
    // node 1 on, starting with TTL 6.
    let mut hops = Vec::new();
    let (mut at, mut from, mut ttl, mut msg) = (0usize, 2u32, 6u8, about_9);
    loop {
        nodes[at].handle_message(now, from, &msg, ttl, &mut out);
        let Some(AodvAction::Unicast {
            next_hop,
            msg: m,
            ttl: t,
        }) = out.pop()
        else {
            break;
        };
        hops.push((at as u32 + 1, next_hop, t));
        assert!(hops.len() < 10, "the reply keeps circling: {hops:?}");
        (from, at, ttl, msg) = (at as u32 + 1, next_hop as usize - 1, t, m);
        out.clear();
    }
    assert_eq!(hops, vec![(1, 2, 5), (2, 1, 4), (1, 2, 3), (2, 1, 2), (1, 2, 1)]);
}

#[test]
fn destination_takes_the_rreq_sequence_number_when_newer() {
    let mut a: Aodv<u32> = Aodv::new(3, &no_jitter(), stream(1, 3, Purpose::Routing));
    let rreq = |id: u32, dst_seq: u32, unknown: bool| {
        AodvMessage::Rreq(Rreq {
            gratuitous: false,
            dest_only: false,
            unknown_seq: unknown,
            hop_count: 1,
            rreq_id: id,
            dst: 3,
            dst_seq,
            orig: 0,
            orig_seq: 10 + id,
        })
    };
    let reply_seq = |out: &[AodvAction<u32>]| match out.last() {
        Some(AodvAction::Unicast {
            next_hop: 2,
            msg: AodvMessage::Rrep(r),
            ..
        }) => r.dst_seq,
        other => panic!("expected a RREP to 2, got {other:?}"),
    };
    let mut out = Vec::new();
    a.handle_message(SimTime::ZERO, 2, &rreq(1, 0, true), 3, &mut out);
    assert_eq!(reply_seq(&out), 0);
    a.handle_message(SimTime::ZERO, 2, &rreq(2, 1, false), 3, &mut out);
    assert_eq!(reply_seq(&out), 1);
    a.handle_message(SimTime::ZERO, 2, &rreq(3, 0, false), 3, &mut out);
    assert_eq!(reply_seq(&out), 1);
    assert_eq!(a.own_seq(), 1);
    // The reverse route to the originator came with the RREQ.
    assert_eq!(a.route(SimTime::ZERO, 0).unwrap().hop_count, 2);
}

#[test]
fn hello_loss_detects_a_broken_link_without_data() {
    let run = |hello: bool| {
        let mut net = Net::chain(3, |_| AodvConfig {
            hello_enabled: hello,
            ..AodvConfig::default()
        });
        net.send(0, 2);
        net.run_until(at_ms(1500));
        assert_eq!(net.delivered_to(2).len(), 1);
        net.cut(1, 2);
        let t = net.now;
        net.run_until(at_ms(5000));
        (net.rerrs_since(t), net.nodes[0].route(net.now, 2).unwrap())
    };
    let (rerrs, r) = run(true);
    assert_eq!(rerrs.len(), 1);
    assert_eq!((rerrs[0].0, rerrs[0].1), (1, Some(0)));
    assert!(!r.active);
    let (rerrs, _) = run(false);
    assert!(rerrs.is_empty());
}

#[test]
fn jitter_is_bounded_and_reproducible() {
    let draw = |seed: u64| {
        let mut a: Aodv<u32> = Aodv::new(0, &AodvConfig::default(), stream(seed, 0, Purpose::Routing));
        let mut out = Vec::new();
        for dst in 1..40 {
            a.route_data(SimTime::ZERO, dst, dst, true, &mut out);
        }
        out.iter()
            .filter_map(|a| match a {
                AodvAction::Broadcast { jitter, .. } => Some(*jitter),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    let j = draw(3);
    assert_eq!(j.len(), 10, "RREQ_RATELIMIT lets 10 go in the first second");
    assert!(j.iter().all(|&d| d <= ms(10)));
    assert!(j.windows(2).any(|w| w[0] != w[1]));
    assert_eq!(j, draw(3));
    assert_ne!(j, draw(4));
}

#[test]
fn control_counters_add_up() {
    let mut net = Net::chain(4, |_| AodvConfig::default());
    net.send(0, 3);
    net.run_until(at_ms(2000));
    let total: u64 = net.nodes.iter().map(|n| n.control_packets_sent()).sum();
    let hellos = net.sent.iter().filter(|s| s.msg.kind() == "HELLO").count();
    assert_eq!(hellos, 0);
    assert_eq!(total, net.sent.len() as u64);
    let bytes: u64 = net.nodes.iter().map(|n| n.counters().control_bytes).sum();
    assert_eq!(
        bytes,
        net.sent.iter().map(|s| u64::from(s.msg.wire_bytes())).sum::<u64>()
    );
    assert_eq!(net.nodes[3].counters().rrep_originated, 1);
    assert_eq!(net.nodes[0].counters().rreq_originated, 2);
}

/// Hop distances from `src` in the current topology.
fn bfs(net: &Net, src: usize) -> Vec<Option<u32>> {
    let mut dist = vec![None; net.nodes.len()];
    dist[src] = Some(0);
    let mut q = VecDeque::from([src]);
    while let Some(a) = q.pop_front() {
        for b in net.neighbours(a) {
            if dist[b].is_none() {
                dist[b] = Some(dist[a].unwrap() + 1);
                q.push_back(b);
            }
        }
    }
    dist
}

mod random {
    use super::*;
    use proptest::prelude::*;

    /// A topology, packets (time in ms, source, destination) and link
    /// toggles (time in ms, edge index): a drawn link breaks, or comes back.
    type Scenario = (usize, Vec<(usize, usize)>, Vec<(u64, usize, usize)>, Vec<(u64, usize)>);
    /// (time in ms, packet to send (src, dst), link to toggle).
    type Step = (u64, Option<(usize, usize)>, Option<(usize, usize)>);

    fn scenario() -> impl Strategy<Value = Scenario> {
        (3usize..9).prop_flat_map(|n| {
            let pairs: Vec<(usize, usize)> = (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))).collect();
            let m = pairs.len();
            (
                Just(n),
                proptest::sample::subsequence(pairs, 1..=m),
                proptest::collection::vec((0u64..15_000, 0..n, 0..n), 1..40),
                proptest::collection::vec((0u64..15_000, 0usize..64), 0..8),
            )
        })
    }

    fn run(
        n: usize,
        edges: &[(usize, usize)],
        sends: &[(u64, usize, usize)],
        cuts: &[(u64, usize)],
        local_repair: bool,
    ) -> Net {
        let mut net = Net::new(n, edges, |_| AodvConfig {
            local_repair,
            ..AodvConfig::default()
        });
        let mut script: Vec<Step> = sends
            .iter()
            .filter(|s| s.1 != s.2)
            .map(|&(t, a, b)| (t, Some((a, b)), None))
            .chain(cuts.iter().map(|&(t, e)| (t, None, Some(edges[e % edges.len()]))))
            .collect();
        script.sort();
        for (t, send, cut) in script {
            net.run_until(at_ms(t));
            if let Some((a, b)) = send {
                net.send(a, b as NodeAddr);
            }
            if let Some((a, b)) = cut {
                // A link that broke comes back the second time it is drawn.
                if net.links.contains(&(a, b)) {
                    net.cut(a, b);
                } else {
                    net.link(a, b);
                }
            }
        }
        net.run_until(at_ms(15_000));
        net
    }

    /// Every packet ends exactly once: delivered, dropped by AODV, or
    /// dropped by the MAC (nothing is left after 60 s).
    fn check_ledger(net: &Net) {
        let mut ends = vec![0u32; net.packets.len()];
        for &(_, node, p) in &net.delivered {
            assert_eq!(net.packets[p as usize].1 as usize, node);
            ends[p as usize] += 1;
        }
        for &(_, _, p, _) in &net.dropped {
            ends[p as usize] += 1;
        }
        for &(_, _, p) in &net.mac_drops {
            ends[p as usize] += 1;
        }
        assert!(ends.iter().all(|&e| e == 1), "{ends:?}");
        assert!(net.nodes.iter().all(|a| a.buffered() == 0));
    }

    proptest! {
        // A fixed seed keeps the suite reproducible; PROPTEST_RNG_SEED and
        // PROPTEST_CASES are ignored here, so change these to explore more.
        #![proptest_config(ProptestConfig {
            cases: 64,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x00A0_D5EE),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn static_networks_account_for_every_packet_without_loops(
            (n, edges, sends, _cuts) in scenario()
        ) {
            let mut net = run(n, &edges, &sends, &[], false);
            // Routes never claim fewer hops than the shortest path.
            let mut checked = 0;
            for a in 0..n {
                let dist = bfs(&net, a);
                for (b, d) in dist.iter().enumerate() {
                    if let Some(r) = net.nodes[a].route(net.now, b as NodeAddr) {
                        let d = d.expect("a route to a node out of reach");
                        prop_assert!(u32::from(r.hop_count) >= d);
                        prop_assert!(net.links.contains(&(a, r.next_hop as usize)));
                        checked += 1;
                    }
                }
            }
            prop_assert!(checked > 0 || net.delivered.is_empty());
            net.run_until(at_ms(60_000));
            check_ledger(&net);
            prop_assert!(net.mac_drops.is_empty());
            for (p, &(src, dst)) in net.packets.iter().enumerate() {
                let reachable = bfs(&net, src)[dst as usize].is_some();
                let delivered = net.delivered.iter().any(|d| d.2 == p as u32);
                // Unreachable destinations are never reached; reachable ones
                // fail only when a route expired on the way (§6.11 case ii).
                prop_assert!(reachable || !delivered);
                if reachable && !delivered {
                    prop_assert!(net.dropped.iter().any(|d| d.2 == p as u32 && d.1 != src));
                }
            }
        }

        #[test]
        fn broken_links_leave_no_packet_unaccounted(
            (n, edges, sends, cuts) in scenario(),
            local_repair in any::<bool>(),
        ) {
            let mut net = run(n, &edges, &sends, &cuts, local_repair);
            net.run_until(at_ms(60_000));
            check_ledger(&net);
        }
    }
}

/// Found by the random tests: node 0 gave node 3 a route to 1 through
/// itself; when 0's own route expired, 3 still held it with the same
/// sequence number and answered 0's RREQ, a two-node loop. Expiry now
/// increments the sequence number as a break does.
#[test]
fn an_expired_route_is_not_answered_by_a_neighbour_that_routes_through_us() {
    let edges = [(0, 1), (0, 3), (1, 2), (1, 3), (2, 3)];
    let mut net = Net::new(4, &edges, |_| AodvConfig::default());
    for (t, a, b) in [(0, 1, 2), (4299, 0, 2), (5515, 1, 0), (8510, 2, 1), (8514, 1, 0)] {
        net.run_until(at_ms(t));
        net.send(a, b);
    }
    net.run_until(at_ms(8515));
    net.cut(0, 1);
    net.run_until(at_ms(11_363));
    net.send(1, 3);
    net.run_until(at_ms(11_515));
    let t = net.now;
    let p = net.send(0, 1);
    net.run_until(at_ms(13_000));
    assert_eq!(net.delivered.last().map(|d| d.2), Some(p));
    assert_eq!(net.hops[p as usize], 2);
    // The answer came from the destination, not from node 3.
    let rreps = net.rreps_since(t);
    assert_eq!(rreps.first().map(|r| r.0), Some(1));
}

fn with_local_repair() -> AodvConfig {
    AodvConfig {
        local_repair: true,
        ..AodvConfig::default()
    }
}

#[test]
fn local_repair_finds_a_detour_and_only_warns_the_source() {
    // 0 - 1 - 2 - 3 with a detour 2 - 4 - 3 around the link that breaks.
    let edges = [(0, 1), (1, 2), (2, 3), (2, 4), (4, 3)];
    let mut net = Net::new(5, &edges, |_| with_local_repair());
    net.send(0, 3);
    net.run_until(at_ms(1000));
    assert_eq!(net.nodes[2].next_hop(net.now, 3), Some(3));
    let before = net.nodes[0].route(net.now, 3).unwrap();

    net.cut(2, 3);
    let t = net.now;
    let p = net.send(0, 3);
    net.run_until(at_ms(1500));
    assert_eq!(net.delivered.last().map(|d| d.2), Some(p));
    assert!(net.mac_drops.is_empty() && net.dropped.is_empty());
    // Node 2 searched (TTL = max(1, 2 / 2) + LOCAL_ADD_TTL = 3), not the source.
    let ttls: Vec<u8> = net.rreqs_from(2).iter().filter(|r| r.0 >= t).map(|r| r.1).collect();
    assert_eq!(ttls, vec![3]);
    assert!(net.rreqs_from(0).iter().all(|r| r.0 < t));
    assert_eq!(net.nodes[2].next_hop(net.now, 3), Some(4));
    // The new route is longer: a RERR with the N flag, which deletes nothing.
    let rerrs: Vec<(usize, Option<usize>, bool)> = net
        .sent
        .iter()
        .filter(|s| s.at >= t)
        .filter_map(|s| match &s.msg {
            AodvMessage::Rerr(e) => Some((s.node, s.to, e.no_delete)),
            _ => None,
        })
        .collect();
    assert_eq!(rerrs, vec![(2, Some(1), true), (1, Some(0), true)]);
    let after = net.nodes[0].route(net.now, 3).unwrap();
    assert!(after.active);
    assert_eq!((after.next_hop, after.seq), (before.next_hop, before.seq));
}

#[test]
fn failed_local_repair_drops_the_packet_and_sends_rerr() {
    let mut net = Net::chain(4, |_| with_local_repair());
    net.send(0, 3);
    net.run_until(at_ms(1000));
    net.cut(2, 3);
    let t = net.now;
    let p = net.send(0, 3);
    net.run_until(at_ms(2000));
    let rreq = net.rreqs_from(2).into_iter().find(|r| r.0 >= t).expect("repair RREQ");
    // One RREQ, a RING_TRAVERSAL_TIME wait for TTL 3, then §6.11.
    let give_up = rreq.0 + ms(400);
    assert_eq!(net.dropped, vec![(give_up, 2, p, DropCause::NoRoute)]);
    let rerrs = net.rerrs_since(t);
    let hops: Vec<(usize, Option<usize>)> = rerrs.iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(hops, vec![(2, Some(1)), (1, Some(0))]);
    assert!(!net.nodes[0].route(net.now, 3).unwrap().active);
}

#[test]
fn the_source_does_not_repair_locally() {
    let mut net = Net::chain(3, |_| with_local_repair());
    net.send(0, 2);
    net.run_until(at_ms(1000));
    net.cut(0, 1);
    let p = net.send(0, 2);
    assert_eq!(net.mac_drops.iter().map(|d| d.2).collect::<Vec<_>>(), vec![p]);
    assert!(!net.nodes[0].discovery_in_progress(2));
}

#[test]
fn same_seed_same_run() {
    let run = |seed: u64| {
        let edges: Vec<(usize, usize)> = (0..16)
            .flat_map(|i| {
                let (r, c) = (i / 4, i % 4);
                let mut e = Vec::new();
                if c < 3 {
                    e.push((i, i + 1));
                }
                if r < 3 {
                    e.push((i, i + 4));
                }
                e
            })
            .collect();
        let mut net = Net::new(16, &edges, |_| AodvConfig::default());
        for (i, node) in net.nodes.iter_mut().enumerate() {
            *node = Aodv::new(
                i as NodeAddr,
                &AodvConfig::default(),
                stream(seed, i as u64, Purpose::Routing),
            );
        }
        for (src, dst) in [(0, 15), (3, 12), (5, 10)] {
            net.send(src, dst);
        }
        net.run_until(at_ms(3000));
        assert_eq!(net.delivered.len(), 3);
        net.sent
            .iter()
            .map(|s| (s.at, s.node, s.to, s.msg.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
}
