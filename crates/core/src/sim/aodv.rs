//! Glue between the simulator and each node's AODV state machine
//! (`net::aodv`, docs/aodv.md): AODV messages become routing packets in the
//! ledger, its actions become queue entries, drops and timer events.

use super::{Armed, Event, Simulator, DEFAULT_TTL};
use crate::mac::dcf::MacAction;
use crate::mac::frame::BROADCAST;
use crate::net::aodv::{AodvAction, AodvMessage};
use crate::net::packet::{Body, DropCause, Packet, PacketKind, NO_FLOW};
use crate::time::SimTime;

impl Simulator {
    /// Runs `f` on `node`'s AODV instance and carries out its actions.
    fn aodv_call<R>(
        &mut self,
        now: SimTime,
        node: u32,
        out: &mut Vec<MacAction>,
        f: impl FnOnce(&mut crate::net::aodv::Aodv<u32>, &mut Vec<AodvAction<u32>>) -> R,
    ) -> R {
        let mut acts = std::mem::take(&mut self.aodv_scratch);
        let aodv = self.nodes[node as usize].aodv.as_mut().expect("AODV node");
        let r = f(aodv, &mut acts);
        for a in acts.drain(..) {
            match a {
                AodvAction::Broadcast { msg, ttl, jitter } => {
                    let id = self.aodv_packet(now, node, BROADCAST, msg, ttl);
                    if jitter.as_nanos() == 0 {
                        self.enqueue(now, node, id, BROADCAST, out);
                    } else {
                        self.q.schedule(now + jitter, Event::AodvJitter { node, packet: id });
                    }
                }
                AodvAction::Unicast { next_hop, msg } => {
                    let id = self.aodv_packet(now, node, next_hop, msg, DEFAULT_TTL);
                    self.enqueue(now, node, id, next_hop, out);
                }
                AodvAction::SendData { packet, next_hop } => self.enqueue(now, node, packet, next_hop, out),
                AodvAction::DropData { packet, cause } => {
                    self.packets.drop_packet(packet, cause.into());
                }
            }
        }
        self.aodv_scratch = acts;
        self.aodv_rearm(now, node);
        r
    }

    fn aodv_rearm(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        let want = n.aodv.as_ref().and_then(|a| a.poll_timeout());
        let armed: &mut Armed = &mut n.aodv_timer;
        if armed.at != want {
            armed.gen = armed.gen.wrapping_add(1);
            armed.at = want;
            if let Some(t) = want {
                let gen = armed.gen;
                self.q.schedule(t.max(now), Event::AodvTimer { node, gen });
            }
        }
    }

    /// A routing packet carrying `msg` from `node` to a neighbour or to all.
    fn aodv_packet(&mut self, now: SimTime, node: u32, dst: u32, msg: AodvMessage, ttl: u8) -> u32 {
        let bytes = msg.wire_bytes();
        self.aodv_msgs.push(msg);
        self.packets.create(Packet {
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
            body: Body::Aodv((self.aodv_msgs.len() - 1) as u32),
        })
    }

    pub(super) fn aodv_message(
        &mut self,
        now: SimTime,
        node: u32,
        from: u32,
        msg: u32,
        ttl: u8,
        out: &mut Vec<MacAction>,
    ) {
        let m = self.aodv_msgs[msg as usize].clone();
        self.aodv_call(now, node, out, |a, acts| a.handle_message(now, from, &m, ttl, acts));
    }

    /// Next hop of a data packet at `node`, or None if AODV buffered or dropped it.
    pub(super) fn aodv_route(&mut self, now: SimTime, node: u32, id: u32, out: &mut Vec<MacAction>) -> Option<u32> {
        let p = *self.packets.get(id);
        let here = p.src == node;
        self.aodv_call(now, node, out, |a, acts| a.route_data(now, p.dst, id, here, acts))
    }

    pub(super) fn aodv_timer(&mut self, now: SimTime, node: u32, gen: u32) {
        let armed = self.nodes[node as usize].aodv_timer;
        if armed.gen != gen || armed.at.is_none() {
            return;
        }
        self.nodes[node as usize].aodv_timer.at = None;
        self.with_out(node, |s, out| {
            s.aodv_call(now, node, out, |a, acts| a.handle_timeout(now, acts))
        });
    }

    /// The MAC gave up on `id` towards `next_hop` (RFC 3561 §6.11): AODV
    /// learns the link broke; packets still queued for that neighbour are
    /// routed afresh (own packets wait for a new discovery, forwarded ones
    /// are dropped with a RERR).
    pub(super) fn aodv_tx_failed(&mut self, now: SimTime, node: u32, id: u32, next_hop: u32, out: &mut Vec<MacAction>) {
        let p = *self.packets.get(id);
        if self.packets.is_handed_over(id) {
            self.packets.drop_packet(id, DropCause::MacRetry);
            self.aodv_call(now, node, out, |a, acts| a.handle_link_failure(now, next_hop, acts));
        } else if matches!(p.body, Body::Aodv(_)) {
            self.packets.drop_packet(id, DropCause::MacRetry);
            self.aodv_call(now, node, out, |a, acts| a.handle_link_failure(now, next_hop, acts));
        } else {
            let back = self.aodv_call(now, node, out, |a, acts| {
                a.handle_data_failure(now, next_hop, p.src, p.dst, id, acts)
            });
            if let Some(id) = back {
                self.packets.drop_packet(id, DropCause::MacRetry);
            }
        }
        let stranded = self.nodes[node as usize].queue.remove_for_next_hop(now, next_hop);
        for q in stranded {
            if matches!(self.packets.get(q.packet).body, Body::Aodv(_) | Body::Ncn { .. }) {
                self.packets.drop_packet(q.packet, DropCause::NoRoute);
            } else if let Some(nh) = self.aodv_route(now, node, q.packet, out) {
                self.enqueue(now, node, q.packet, nh, out);
            }
        }
    }
}
