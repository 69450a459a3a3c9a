//! The link: what lies between a node's interface queue and its MAC.
//!
//! The DCF (`mac::dcf`) is a state machine that knows no queue. When it
//! wants its next MSDU, or when one of its extensions needs the node's
//! queue or flow state (a reverse packet for a combined exchange, a
//! packet to send on at once, an MSDU it gives back, an RTS to admit or
//! refuse, a ready-to-receive to answer), it returns a `MacAction`. The
//! simulator carries out the actions of the air (frames, timers,
//! deliveries, outcomes) and hands every other one to `Link::answer`,
//! which reads and changes the node's queue and MAC and says whether the
//! MAC wants feeding again. The extensions that answer are private
//! modules of this one, so the simulator cannot name them: each remedy
//! keeps here its per-run state and its summary section.

mod fast_forward;
mod opet;
mod quick_exchange;
#[cfg(test)]
mod tests;

use crate::flow::FlowSpec;
use crate::mac::dcf::{DcfConfig, MacAction, Retries};
use crate::mac::frame::{FrameKind, FrameType, Msdu};
use crate::metrics::summary::MacSummary;
use crate::net::packet::{Packet, PacketStore};
use crate::net::queue::{Queued, Select};
use crate::stack::NodeStack;
use crate::time::SimTime;
use crate::trace::events::{Event as TraceEvent, Kind as TraceKind, TraceSink};
use std::collections::HashMap;

/// What an answer touches: the run's node stacks, its packets and the
/// packet-event trace, borrowed from the simulator for one call.
pub struct Parts<'a> {
    /// Every node's radio, MAC and interface queue.
    pub nodes: &'a mut [NodeStack],
    /// The packet slab and ledger.
    pub packets: &'a mut PacketStore,
    /// The packet-event trace, when it is on.
    pub trace: Option<&'a mut TraceSink>,
}

/// Retry state of packets a MAC's second slot put back in the queue, by
/// (node, packet id), with the packet's uid (ids are reused): it goes
/// back to the MAC with the packet (`Dcf::handle_msdu_with`).
type Carried = HashMap<(u32, u32), (u64, Retries)>;

/// The link of every node of a run: the state its MAC extensions keep
/// beside the queue.
pub struct Link {
    carried: Carried,
    quick_exchange: bool,
    fast_forward: Option<fast_forward::FastForwarding>,
    opet: Option<opet::OpetAgent>,
}

impl Link {
    /// The link of `nodes` nodes under MAC options `dcf`, carrying
    /// `flows`; `seed` is the run's (each extension draws from its own
    /// streams).
    pub fn new(dcf: &DcfConfig, flows: &[FlowSpec], nodes: usize, seed: u64) -> Self {
        Link {
            carried: HashMap::new(),
            quick_exchange: dcf.quick_exchange.enabled,
            fast_forward: dcf
                .fast_forward
                .enabled
                .then(|| fast_forward::FastForwarding::new(dcf.fast_forward, nodes, seed)),
            opet: dcf.opet.enabled.then(|| opet::OpetAgent::new(dcf.opet, nodes, flows)),
        }
    }

    /// Hands `node`'s MAC its next MSDU if it has none. Returns when the
    /// queue's discipline next releases a packet it holds back, if the
    /// MAC is left without a frame (the caller arms the queue timer).
    pub fn feed(&mut self, now: SimTime, node: u32, p: &mut Parts, out: &mut Vec<MacAction>) -> Option<SimTime> {
        let n = &mut p.nodes[node as usize];
        n.queue.expire_blocks(now);
        if n.mac.wants_msdu() {
            if let Some(q) = n.queue.dequeue(now, Select::Any) {
                trace_dequeue(p, now, node, &q);
                let msdu = msdu_of(p.packets, &q);
                let retries = take_carried(&mut self.carried, p.packets, node, q.packet);
                let mac = &mut p.nodes[node as usize].mac;
                mac.handle_msdu_with(now, msdu, q.next_hop, retries, out);
            }
        }
        // Only a MAC without a frame needs waking when a held packet is released.
        let n = &mut p.nodes[node as usize];
        if n.mac.wants_msdu() {
            n.queue.poll_timeout(now)
        } else {
            None
        }
    }

    /// Answers a request of `node`'s MAC (any `MacAction` other than a
    /// transmission, a timer, a delivery, an overheard frame or an
    /// exchange's outcome). True if the MAC is to be fed afterwards.
    pub fn answer(&mut self, now: SimTime, node: u32, a: MacAction, p: &mut Parts, out: &mut Vec<MacAction>) -> bool {
        match a {
            MacAction::WantReverse { peer, max_bytes } => {
                quick_exchange::offer_reverse(&mut self.carried, now, node, peer, max_bytes, p);
                false
            }
            MacAction::WantForward { .. } => {
                if let Some(ff) = self.fast_forward.as_mut() {
                    ff.forward(&mut self.carried, now, node, p);
                }
                false
            }
            MacAction::Requeue {
                msdu,
                next_hop,
                retries,
            } => {
                // Back at the head of the queue, without a second admission,
                // and back to the MAC with its retry state: a DATA that
                // arrived but whose ACK was lost goes again under its
                // sequence number with the Retry bit, and the receiver
                // acknowledges the duplicate without delivering it
                // (Berger et al.'s failure table; §9.3.2.10).
                if retries != Retries::default() {
                    let uid = p.packets.get(msdu.packet).uid;
                    self.carried.insert((node, msdu.packet), (uid, retries));
                }
                requeue_front(now, node, msdu, next_hop, p);
                true
            }
            MacAction::Blocked { msdu, next_hop } => {
                let opet = self.opet.as_mut().expect("only OPET blocks a flow");
                opet.blocked(now, node, msdu, next_hop, p, out)
            }
            MacAction::RtsFor { from, label, t_data } => {
                if let Some(opet) = self.opet.as_mut() {
                    opet.admit(node, from, label, t_data, p);
                }
                false
            }
            MacAction::WantRtrData { from, label } => {
                let opet = self.opet.as_mut().expect("only OPET sends ready-to-receive frames");
                opet.rtr_data(&mut self.carried, now, node, from, label, p, out);
                true
            }
            MacAction::RtrAnswered { from, label } => {
                if let Some(opet) = self.opet.as_mut() {
                    opet.answered(node, from, label);
                }
                false
            }
            MacAction::RtrAbandoned { to, label } => {
                if let Some(opet) = self.opet.as_mut() {
                    opet.abandoned(node, to, label);
                }
                false
            }
            MacAction::Transmit(_)
            | MacAction::SetTimer { .. }
            | MacAction::Deliver { .. }
            | MacAction::Overheard(_)
            | MacAction::TxDone { .. }
            | MacAction::TxFailed { .. } => unreachable!("the simulator carries out {a:?}"),
        }
    }

    /// An MSDU of flow label `label` left `node` (sent on, or dropped):
    /// an extension that counts a flow's packets at a node may owe
    /// upstream nodes a frame now.
    pub fn msdu_left(&mut self, now: SimTime, node: u32, label: Option<u32>, p: &mut Parts, out: &mut Vec<MacAction>) {
        if let (Some(opet), Some(label)) = (self.opet.as_ref(), label) {
            opet.count_fell(now, node, label, p, out);
        }
    }

    /// The label a packet is queued under: its flow and direction, where
    /// an extension serves flows apart (None otherwise, or for packets of
    /// no flow).
    pub fn label(&self, p: &Packet) -> Option<u32> {
        self.opet.as_ref().and_then(|a| a.label(p))
    }

    /// Whether a packet `node` originated, queued under `label`, enters
    /// the queue beyond its capacity (an unbounded source buffer).
    pub fn unbounded(&self, label: Option<u32>, local: bool) -> bool {
        label.is_some() && local && self.opet.as_ref().is_some_and(|o| o.unbounded_source())
    }

    /// `node` just took in a packet that routing sends on to `next_hop`
    /// without discovery: the MAC may ask to send it on at once.
    pub fn taken_in(&mut self, node: u32, next_hop: u32, flow: u32) {
        if let Some(ff) = self.fast_forward.as_mut() {
            ff.taken_in = Some((node, next_hop, flow));
        }
    }

    /// A frame was handed up: what was taken in before is no longer the
    /// latest packet.
    pub fn handed_up(&mut self) {
        if let Some(ff) = self.fast_forward.as_mut() {
            ff.taken_in = None;
        }
    }

    /// A relay queued a packet to send on: an extension may give the
    /// relay's MAC a shorter contention.
    pub fn relay_queued(&self, now: SimTime, n: &mut NodeStack, out: &mut Vec<MacAction>) {
        if self.opet.is_some() {
            // OPET's fast relay: a packet to forward gets the relay window.
            n.mac.prioritize(now, out);
        }
    }

    /// The frame types the summary counts: the standard kinds, those an
    /// extension adds, and the combined frames counted apart.
    pub fn frame_types(&self) -> impl Iterator<Item = FrameType> {
        let kinds: &[FrameKind] = if self.opet.is_some() {
            &FrameKind::ALL
        } else {
            &FrameKind::STANDARD
        };
        // Berger et al.'s combined frames are counted apart from ACK and
        // DATA, with their scheme on.
        let combined = [
            (self.fast_forward.is_some(), FrameType::AckRts),
            (self.quick_exchange, FrameType::DataAck),
        ];
        kinds
            .iter()
            .map(|&k| FrameType::Kind(k))
            .chain(combined.into_iter().filter(|&(on, _)| on).map(|(_, t)| t))
    }

    /// Adds each extension's section to the MAC summary at `now`.
    pub fn summary(&self, now: SimTime, nodes: &[NodeStack], mac: &mut MacSummary) {
        if self.quick_exchange {
            mac.qe = Some(quick_exchange::summary(nodes));
        }
        if self.fast_forward.is_some() {
            mac.ff = Some(fast_forward::summary(nodes));
        }
        if self.opet.is_some() {
            mac.opet = Some(opet::summary(now, nodes));
        }
    }
}

/// The MAC took `q` from `node`'s queue: for its next exchange, or
/// inside one (a combined exchange's reverse packet, a packet sent on).
fn trace_dequeue(p: &mut Parts, now: SimTime, node: u32, q: &Queued) {
    if let Some(t) = p.trace.as_mut() {
        let pk = p.packets.get(q.packet);
        t.record(
            now,
            TraceEvent::new(TraceKind::Dequeue, node)
                .packet(Some(pk))
                .peer(q.next_hop),
        );
    }
}

/// The MSDU the MAC is handed for a queued packet.
fn msdu_of(packets: &PacketStore, q: &Queued) -> Msdu {
    Msdu {
        packet: q.packet,
        bytes: q.bytes,
        label: q.label,
        ff_run: packets.get(q.packet).ff_run,
    }
}

/// Puts an MSDU the MAC gave back at the head of `node`'s queue (the
/// caller feeds the MAC again).
fn requeue_front(now: SimTime, node: u32, msdu: Msdu, next_hop: u32, p: &mut Parts) {
    let pk = p.packets.get(msdu.packet);
    let q = Queued {
        packet: msdu.packet,
        next_hop,
        bytes: msdu.bytes,
        control: pk.is_control(),
        flow: pk.flow,
        local: pk.src == node,
        label: msdu.label,
    };
    p.nodes[node as usize].queue.push_front(now, q);
}

/// The retry state a packet carried back to `node`'s queue, if any
/// (and if the id still names that packet).
fn take_carried(carried: &mut Carried, packets: &PacketStore, node: u32, packet: u32) -> Retries {
    if carried.is_empty() {
        return Retries::default();
    }
    match carried.remove(&(node, packet)) {
        Some((uid, r)) if uid == packets.get(packet).uid => r,
        _ => Retries::default(),
    }
}
