//! Quick-exchange (Berger et al. §3.1): the addressee of a DATA sends its
//! own packet for the sender back in the same exchange (DATA2+ACK1). The
//! DCF asks for that reverse packet (`MacAction::WantReverse`); it comes
//! from the queue, for the peer and within the size the peer announced.

use super::{msdu_of, take_carried, trace_dequeue, Carried, Parts};
use crate::mac::dcf::DcfStats;
use crate::metrics::summary::QuickExchangeSummary;
use crate::net::queue::Select;
use crate::stack::NodeStack;
use crate::time::SimTime;

/// Offers `node`'s MAC the first queued packet for `peer` of at most
/// `max_bytes`, if there is one.
pub(super) fn offer_reverse(carried: &mut Carried, now: SimTime, node: u32, peer: u32, max_bytes: u32, p: &mut Parts) {
    let n = &mut p.nodes[node as usize];
    if let Some(q) = n.queue.dequeue(now, Select::NextHopUpTo(peer, max_bytes)) {
        trace_dequeue(p, now, node, &q);
        let msdu = msdu_of(p.packets, &q);
        let retries = take_carried(carried, p.packets, node, q.packet);
        p.nodes[node as usize].mac.offer_reverse(msdu, q.next_hop, retries);
    }
}

/// The run's quick-exchange counts (`mac.qe`).
pub(super) fn summary(nodes: &[NodeStack]) -> QuickExchangeSummary {
    let sum = |f: fn(&DcfStats) -> u64| nodes.iter().map(|n| f(&n.mac.stats)).sum();
    QuickExchangeSummary {
        requested: sum(|s| s.qe_requested),
        honored: sum(|s| s.qe_honored),
        completed: sum(|s| s.qe_completed),
        failed: sum(|s| s.qe_failed),
        fallen_back: sum(|s| s.qe_fallen_back),
    }
}
