//! The routing seam: the one interface through which the simulator asks a
//! node's routing for a next hop, hands it routing messages and link
//! failures, and wakes it. Static shortest paths answer from a table; AODV
//! (RFC 3561, `net::aodv`) answers from each node's state machine, and its
//! messages become routing packets in the ledger. The simulator carries out
//! the returned `RoutingAction`s and knows nothing of the protocol.

use super::aodv::AodvConfig;
use super::aodv::{Aodv, AodvAction, AodvMessage};
use super::packet::{Body, DropCause, Packet, PacketKind, NO_FLOW};
use super::static_routes::StaticRoutes;
use crate::engine::{stream, Armed, Purpose};
use crate::flow::FlowSpec;
use crate::mac::frame::BROADCAST;
use crate::metrics::summary::RoutingSummary;
use crate::time::{Duration, SimTime};

/// IP TTL of packets a node creates.
pub const DEFAULT_TTL: u8 = 64;

/// `routing.protocol`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutingKind {
    /// Shortest hop-count paths over the transmission-range graph, fixed at the start.
    Static,
    /// RFC 3561 (`[routing.aodv]`, docs/aodv.md).
    Aodv,
}
crate::names::named!(RoutingKind, "a routing protocol", [RoutingKind::Static => "static", RoutingKind::Aodv => "aodv"]);

/// What the simulator must do after a routing call.
#[derive(Clone, Debug, PartialEq)]
pub enum RoutingAction {
    /// A routing packet from this node to a neighbour (or `BROADCAST`),
    /// into the interface queue after `jitter`.
    Send {
        /// The routing packet.
        packet: Packet,
        /// Its neighbour, or `BROADCAST`.
        next_hop: u32,
        /// How long it waits before entering the queue.
        jitter: Duration,
    },
    /// A data packet (by id) that waited for a route now has one.
    Forward {
        /// The packet's id.
        packet: u32,
        /// Its next hop.
        next_hop: u32,
    },
    /// A data packet routing gives up on.
    Drop {
        /// The packet's id.
        packet: u32,
        /// Why.
        cause: DropCause,
    },
}

/// Routing for every node of a run.
pub struct Routing {
    statics: StaticRoutes,
    /// Per node, its AODV state machine and its timer (AODV runs only).
    aodv: Vec<AodvNode>,
    /// AODV messages carried by packets, by index (append-only: messages are few).
    msgs: Vec<AodvMessage>,
    acts: Vec<AodvAction<u32>>,
}

/// Boxed: the AODV agent is large, and most runs route statically.
struct AodvNode {
    agent: Box<Aodv<u32>>,
    timer: Armed,
}

impl Routing {
    /// Routing `kind` for `flows` over the transmission-range graph `adj`
    /// (one list per node); AODV's agents take `aodv` and draw from
    /// streams of `seed`.
    pub fn new(kind: RoutingKind, aodv: &AodvConfig, flows: &[FlowSpec], seed: u64, adj: &[Vec<u32>]) -> Self {
        let (statics, aodv) = match kind {
            RoutingKind::Static => {
                let flows_: Vec<(u32, u32, Option<&[u32]>)> =
                    flows.iter().map(|f| (f.src, f.dst, f.route.as_deref())).collect();
                let changes: Vec<&[(SimTime, Vec<u32>)]> = flows.iter().map(|f| &f.route_changes[..]).collect();
                (StaticRoutes::with_changes(adj, &flows_, &changes), Vec::new())
            }
            RoutingKind::Aodv => (
                StaticRoutes::default(),
                (0..adj.len() as u32)
                    .map(|i| AodvNode {
                        agent: Box::new(Aodv::new(i, aodv, stream(seed, i as u64, Purpose::Routing))),
                        timer: Armed::default(),
                    })
                    .collect(),
            ),
        };
        Routing {
            statics,
            aodv,
            msgs: Vec::new(),
            acts: Vec::new(),
        }
    }

    /// Static routes: a flow's path is known before the run.
    pub fn is_static(&self) -> bool {
        self.aodv.is_empty()
    }

    /// Hops of a flow's static route.
    pub fn static_hops(&self, flow: u32) -> Option<u32> {
        self.statics.hops(flow)
    }

    /// The routing message a packet carries (for traces).
    pub fn message(&self, msg: u32) -> &AodvMessage {
        &self.msgs[msg as usize]
    }

    /// Next hop at `node` of the data packet `id`, or None if routing
    /// buffered it or gave up (then an action says so).
    pub fn route(&mut self, now: SimTime, node: u32, id: u32, p: &Packet, out: &mut Vec<RoutingAction>) -> Option<u32> {
        if self.is_static() {
            let flow = (p.flow != NO_FLOW).then_some(p.flow);
            let nh = self.statics.next_hop(now, node, p.dst, flow);
            if nh.is_none() {
                out.push(RoutingAction::Drop {
                    packet: id,
                    cause: DropCause::NoRoute,
                });
            }
            return nh;
        }
        let here = p.src == node;
        self.with_aodv(now, node, out, |a, acts| a.route_data(now, p.dst, id, here, acts))
    }

    /// Data from neighbour `from`, originated by `src`, keeps the reverse
    /// route alive (RFC 3561 §6.2).
    pub fn note_data_from(&mut self, now: SimTime, node: u32, src: u32, from: u32) {
        if let Some(n) = self.aodv.get_mut(node as usize) {
            n.agent.note_route_used(now, src, from);
        }
    }

    /// A routing message (`Body::Aodv(msg)`) from neighbour `from` with IP TTL `ttl`.
    pub fn handle_message(
        &mut self,
        now: SimTime,
        node: u32,
        from: u32,
        msg: u32,
        ttl: u8,
        out: &mut Vec<RoutingAction>,
    ) {
        let m = self.msgs[msg as usize].clone();
        self.with_aodv(now, node, out, |a, acts| a.handle_message(now, from, &m, ttl, acts));
    }

    /// The MAC gave up on packet `id` towards `next_hop` (§6.11). With
    /// `link_only` (a routing packet, or a data packet the next hop already
    /// has) routing only learns that the link broke; otherwise it may keep
    /// the packet for a local repair. Returns the packet if the caller must
    /// drop it.
    #[allow(clippy::too_many_arguments)]
    pub fn handle_tx_failed(
        &mut self,
        now: SimTime,
        node: u32,
        id: u32,
        p: &Packet,
        link_only: bool,
        next_hop: u32,
        out: &mut Vec<RoutingAction>,
    ) -> Option<u32> {
        if self.is_static() {
            return (!link_only).then_some(id);
        }
        if link_only {
            self.with_aodv(now, node, out, |a, acts| a.handle_link_failure(now, next_hop, acts));
            None
        } else {
            self.with_aodv(now, node, out, |a, acts| {
                a.handle_data_failure(now, next_hop, p.src, p.dst, id, acts)
            })
        }
    }

    /// `node`'s timer event of generation `gen` popped.
    pub fn handle_timer(&mut self, now: SimTime, node: u32, gen: u32, out: &mut Vec<RoutingAction>) {
        let live = self.aodv.get_mut(node as usize).is_some_and(|n| n.timer.fire(gen));
        if live {
            self.with_aodv(now, node, out, |a, acts| a.handle_timeout(now, acts));
        }
    }

    /// After a call: the timer event to schedule for `node`, if its wake-up moved.
    pub fn rearm(&mut self, node: u32) -> Option<(SimTime, u32)> {
        let n = self.aodv.get_mut(node as usize)?;
        n.timer.rearm(n.agent.poll_timeout())
    }

    /// Routing overhead over the run (CONTRACT §3 `routing`).
    pub fn summary(&self, protocol: String) -> RoutingSummary {
        let mut s = RoutingSummary {
            protocol,
            ..RoutingSummary::default()
        };
        for a in self.aodv.iter().map(|n| &n.agent) {
            let c = a.counters();
            s.control_packets += a.control_packets_sent();
            s.control_bytes += c.control_bytes;
            for (k, v) in [
                ("rreq", c.rreq_originated + c.rreq_forwarded),
                ("rrep", c.rrep_originated + c.rrep_forwarded),
                ("rerr", c.rerr_sent),
                ("hello", c.hello_sent),
            ] {
                *s.by_type.entry(k).or_default() += v;
            }
        }
        s
    }

    /// Runs `f` on `node`'s AODV agent and turns its actions into routing actions.
    fn with_aodv<R>(
        &mut self,
        now: SimTime,
        node: u32,
        out: &mut Vec<RoutingAction>,
        f: impl FnOnce(&mut Aodv<u32>, &mut Vec<AodvAction<u32>>) -> R,
    ) -> R {
        let mut acts = std::mem::take(&mut self.acts);
        let r = f(&mut self.aodv[node as usize].agent, &mut acts);
        for a in acts.drain(..) {
            out.push(match a {
                AodvAction::Broadcast { msg, ttl, jitter } => RoutingAction::Send {
                    packet: self.packet(now, node, BROADCAST, msg, ttl),
                    next_hop: BROADCAST,
                    jitter,
                },
                AodvAction::Unicast { next_hop, msg, ttl } => RoutingAction::Send {
                    packet: self.packet(now, node, next_hop, msg, ttl),
                    next_hop,
                    jitter: Duration::ZERO,
                },
                AodvAction::SendData { packet, next_hop } => RoutingAction::Forward { packet, next_hop },
                AodvAction::DropData { packet, cause } => RoutingAction::Drop {
                    packet,
                    cause: cause.into(),
                },
            });
        }
        self.acts = acts;
        r
    }

    /// A routing packet carrying `msg` from `node` to a neighbour or to all.
    fn packet(&mut self, now: SimTime, node: u32, dst: u32, msg: AodvMessage, ttl: u8) -> Packet {
        let bytes = msg.wire_bytes();
        self.msgs.push(msg);
        Packet {
            uid: 0,
            kind: PacketKind::Routing,
            flow: NO_FLOW,
            src: node,
            dst,
            bytes,
            payload_bytes: 0,
            created: now,
            ttl,
            hops: 0,
            ff_run: 0,
            body: Body::Aodv((self.msgs.len() - 1) as u32),
        }
    }
}
