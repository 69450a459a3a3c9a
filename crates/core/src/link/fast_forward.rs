//! Fast-forward (Berger et al. §3.2): a relay that just took in a packet
//! sends it, or another queued one, on at once with an ACK-RTS. The DCF
//! asks (`MacAction::WantForward`); the coin, the policy and the route
//! check are decided here, since they need the queue and routing.

use super::{msdu_of, take_carried, trace_dequeue, Carried, Parts};
use crate::engine::{stream, Purpose};
use crate::mac::dcf::{DcfStats, Forward, Retries};
use crate::mac::fast_forward::{FastForward, Policy};
use crate::mac::frame::BROADCAST;
use crate::metrics::summary::FastForwardSummary;
use crate::net::queue::Select;
use crate::stack::NodeStack;
use crate::time::SimTime;
use rand::Rng;

/// Fast-forward's state over a run.
pub(super) struct FastForwarding {
    cfg: FastForward,
    /// Per node, the coin's stream.
    rngs: Vec<rand_pcg::Pcg64Mcg>,
    /// The node, next hop and flow of the packet just taken in to be
    /// forwarded.
    pub(super) taken_in: Option<(u32, u32, u32)>,
}

impl FastForwarding {
    pub(super) fn new(cfg: FastForward, nodes: usize, seed: u64) -> Self {
        FastForwarding {
            cfg,
            rngs: (0..nodes as u64)
                .map(|i| stream(seed, i, Purpose::FastForward))
                .collect(),
            taken_in: None,
        }
    }

    /// The packet `node` just took in goes on at once if routing knew its
    /// next hop without discovery, the coin (probability `p`) says so, and
    /// the policy finds a packet: the MSDU in hand first, then the queue
    /// (`link`: for the same next hop; `any`: the head). The MAC may still
    /// refuse it (`consecutive_limit`); a queued packet leaves the queue
    /// only once the MAC took it.
    pub(super) fn forward(&mut self, carried: &mut Carried, now: SimTime, node: u32, p: &mut Parts) {
        let Some((_, nh, flow)) = self.taken_in.take().filter(|&(n, _, _)| n == node) else {
            return;
        };
        let ff = self.cfg;
        if self.rngs[node as usize].gen::<f64>() >= ff.p {
            return;
        }
        let n = &mut p.nodes[node as usize];
        let current = n.mac.current_msdu().map(|(m, h)| (h, p.packets.get(m.packet).flow));
        match (current, ff.policy) {
            (Some((h, _)), Policy::Any) if h != BROADCAST => {
                n.mac.forward(Forward::Current);
            }
            (Some((h, _)), Policy::Link) if h == nh => {
                n.mac.forward(Forward::Current);
            }
            (Some((h, f)), Policy::Flow) if h == nh && f == flow => {
                n.mac.forward(Forward::Current);
            }
            (Some(_), Policy::Any) => {}
            (_, policy) => {
                let select = match policy {
                    Policy::Link => Select::NextHop(nh),
                    Policy::Flow => Select::Flow(flow, nh),
                    Policy::Any => Select::Any,
                };
                let Some(q) = n.queue.peek(now, select).filter(|q| q.next_hop != BROADCAST) else {
                    return;
                };
                let msdu = msdu_of(p.packets, &q);
                let kept = carried.get(&(node, q.packet)).copied();
                let retries = match kept {
                    Some((uid, r)) if uid == p.packets.get(q.packet).uid => r,
                    _ => Retries::default(),
                };
                let n = &mut p.nodes[node as usize];
                let next_hop = q.next_hop;
                if n.mac.forward(Forward::Queued {
                    msdu,
                    next_hop,
                    retries,
                }) {
                    let taken = n.queue.dequeue(now, Select::Packet(q.packet));
                    debug_assert_eq!(taken, Some(q));
                    trace_dequeue(p, now, node, &q);
                    take_carried(carried, p.packets, node, q.packet);
                }
            }
        }
    }
}

/// The run's fast-forward counts (`mac.ff`).
pub(super) fn summary(nodes: &[NodeStack]) -> FastForwardSummary {
    let sum = |f: fn(&DcfStats) -> u64| nodes.iter().map(|n| f(&n.mac.stats)).sum();
    FastForwardSummary {
        attempted: sum(|s| s.ff_attempted),
        completed: sum(|s| s.ff_completed),
        no_cts: sum(|s| s.ff_no_cts),
        data_failed: sum(|s| s.ff_data_failed),
        limited: sum(|s| s.ff_limited),
    }
}
