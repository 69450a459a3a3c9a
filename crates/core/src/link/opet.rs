//! OPET's per-node agent (Zhai et al.; docs/opet.md): the upstream records
//! a congested node keeps for the flows it refused, and the flow labels.
//! The blocked table lives in the interface queue (`net/queue/`), the
//! frames and the ready-to-receive contention in the DCF (`mac/dcf.rs`).
//! Here: admitting or refusing an RTS by the flow's count at the node,
//! blocking a refused flow, answering a ready-to-receive, and owing one
//! when the count falls.

use super::{msdu_of, requeue_front, take_carried, Carried, Parts};
use crate::flow::FlowSpec;
use crate::mac::dcf::{DcfStats, MacAction};
use crate::mac::frame::Msdu;
use crate::mac::opet::{Opet, Resume, SourceBuffer};
use crate::metrics::summary::OpetSummary;
use crate::net::packet::{Packet, NO_FLOW};
use crate::net::queue::Select;
use crate::stack::NodeStack;
use crate::time::{Duration, SimTime};

/// Node `node` refused an RTS of flow `label` from `upstream`: it owes
/// that node a ready-to-receive frame once its count of the flow falls
/// below the threshold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Record {
    label: u32,
    upstream: u32,
    /// Airtime of the DATA the refused RTS announced.
    t_data: Duration,
}

/// OPET over a run: its options, the records and the flows' ends.
pub(super) struct OpetAgent {
    cfg: Opet,
    /// Upstream records, per node.
    records: Vec<Vec<Record>>,
    /// Each flow's (source, destination).
    ends: Vec<(u32, u32)>,
}

impl OpetAgent {
    pub(super) fn new(cfg: Opet, nodes: usize, flows: &[FlowSpec]) -> Self {
        OpetAgent {
            cfg,
            records: vec![Vec::new(); nodes],
            ends: flows.iter().map(|f| (f.src, f.dst)).collect(),
        }
    }

    /// A packet's flow label: its flow and direction (a TCP connection's
    /// data and its ACKs are two flows); None for packets of no flow.
    pub(super) fn label(&self, p: &Packet) -> Option<u32> {
        if p.flow == NO_FLOW || p.is_control() {
            return None;
        }
        let (_, dst) = *self.ends.get(p.flow as usize)?;
        Some(p.flow * 2 + u32::from(p.dst != dst))
    }

    /// The node where flow `label` ends; it is never congested.
    fn destination(&self, label: u32) -> Option<u32> {
        let (src, dst) = *self.ends.get((label / 2) as usize)?;
        Some(if label % 2 == 0 { dst } else { src })
    }

    /// Remembers that `node` refused `label` from `upstream`.
    fn record(&mut self, node: u32, r: Record) {
        let rs = &mut self.records[node as usize];
        match rs.iter_mut().find(|x| x.label == r.label && x.upstream == r.upstream) {
            Some(x) => x.t_data = r.t_data,
            None => rs.push(r),
        }
    }

    /// Forgets the record of (`label`, `upstream`) at `node`; true if one was kept.
    fn clear(&mut self, node: u32, label: u32, upstream: u32) -> bool {
        let rs = &mut self.records[node as usize];
        let before = rs.len();
        rs.retain(|x| !(x.label == label && x.upstream == upstream));
        rs.len() != before
    }

    /// The records of `label` at `node`.
    fn records_of(&self, node: u32, label: u32) -> impl Iterator<Item = Record> + '_ {
        self.records[node as usize]
            .iter()
            .copied()
            .filter(move |r| r.label == label)
    }

    /// Whether a source's own packets enter beyond the queue's capacity.
    pub(super) fn unbounded_source(&self) -> bool {
        self.cfg.source_buffer == SourceBuffer::Unbounded
    }

    /// Packets of flow `label` that `node` holds, in its queue and in its
    /// MAC (n_f of docs/opet.md).
    fn count(node: &NodeStack, label: u32) -> usize {
        node.queue.label_len(label) + node.mac.held_msdus().filter(|(m, _)| m.label == Some(label)).count()
    }

    /// An RTS of flow `label` from `from` reached `node`, which refuses it
    /// with a negative CTS if it holds at least q_bp packets of the flow
    /// and is not the flow's destination, and then keeps a record to
    /// resume `from` later. An RTS it accepts ends any resume owed to
    /// `from` for the flow: the flow is moving again.
    pub(super) fn admit(&mut self, node: u32, from: u32, label: u32, t_data: Duration, p: &mut Parts) {
        let destination = self.destination(label) == Some(node);
        let n = &mut p.nodes[node as usize];
        let congested = !destination && Self::count(n, label) >= self.cfg.bp_threshold_pkts as usize;
        if congested {
            n.mac.refuse();
            self.record(
                node,
                Record {
                    label,
                    upstream: from,
                    t_data,
                },
            );
        } else if self.clear(node, label, from) {
            n.mac.cancel_rtr(from, label);
        }
    }

    /// A packet of flow `label` left `node` (sent on, or dropped). If the
    /// count fell below q_bp, every upstream refused for the flow is owed a
    /// ready-to-receive frame.
    pub(super) fn count_fell(&self, now: SimTime, node: u32, label: u32, p: &mut Parts, out: &mut Vec<MacAction>) {
        let n = &mut p.nodes[node as usize];
        if Self::count(n, label) >= self.cfg.bp_threshold_pkts as usize {
            return;
        }
        for r in self.records_of(node, label) {
            n.mac.request_rtr(now, r.upstream, label, r.t_data, out);
        }
    }

    /// The MAC was refused towards `next_hop` and gave `msdu` back: it
    /// goes back to the head of its flow's queue, and the flow waits for a
    /// ready-to-receive frame or the block timeout. If the next hop already
    /// has it (our DATA arrived, its ACK was lost), it is done instead:
    /// sending it again after a resume would deliver it twice, under a new
    /// sequence number. True: the MAC is to be fed.
    pub(super) fn blocked(
        &mut self,
        now: SimTime,
        node: u32,
        msdu: Msdu,
        next_hop: u32,
        p: &mut Parts,
        out: &mut Vec<MacAction>,
    ) -> bool {
        if let Some(label) = msdu.label {
            let until = now + Duration::from_secs_f64(self.cfg.block_timeout_s);
            p.nodes[node as usize].queue.block(now, label, next_hop, until);
        }
        if p.packets.is_handed_over(msdu.packet) {
            p.packets.release_copy(msdu.packet);
            if let Some(label) = msdu.label {
                self.count_fell(now, node, label, p, out);
            }
            return true;
        }
        requeue_front(now, node, msdu, next_hop, p);
        true
    }

    /// `from` sent `node` a ready-to-receive for flow `label`: the flow is
    /// unblocked towards it (or, under pull resume, blocked anew), and the
    /// MAC answers with the flow's packet in hand or the queue's next one.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rtr_data(
        &mut self,
        carried: &mut Carried,
        now: SimTime,
        node: u32,
        from: u32,
        label: u32,
        p: &mut Parts,
        out: &mut Vec<MacAction>,
    ) {
        let n = &mut p.nodes[node as usize];
        match self.cfg.resume {
            Resume::Unblock => {
                n.queue.unblock(now, label, from);
            }
            Resume::Pull => {
                let until = now + Duration::from_secs_f64(self.cfg.block_timeout_s);
                n.queue.renew_block(now, label, from, until);
            }
        }
        let current = n.mac.current_msdu();
        if current.is_some_and(|(m, h)| m.label == Some(label) && h == from) {
            n.mac.answer_rtr(now, out);
        } else if n.mac.side_free() && n.mac.idle() {
            if let Some(q) = n.queue.dequeue(now, Select::Label(label, from)) {
                let msdu = msdu_of(p.packets, &q);
                let retries = take_carried(carried, p.packets, node, q.packet);
                let n = &mut p.nodes[node as usize];
                n.mac.send_from_second_slot(now, msdu, from, retries, out);
            }
        }
    }

    /// The ready-to-receive `node` sent `from` for `label` was answered.
    /// Under pull resume the record stays, and the packet just taken in
    /// pulls the next one when it leaves (`count_fell`).
    pub(super) fn answered(&mut self, node: u32, from: u32, label: u32) {
        if self.cfg.resume != Resume::Pull {
            self.clear(node, label, from);
        }
    }

    /// `node` gave up sending `to` a ready-to-receive for `label`.
    pub(super) fn abandoned(&mut self, node: u32, to: u32, label: u32) {
        self.clear(node, label, to);
    }
}

/// The run's OPET counts at `now` (`mac.opet`).
pub(super) fn summary(now: SimTime, nodes: &[NodeStack]) -> OpetSummary {
    let sum = |f: fn(&DcfStats) -> u64| nodes.iter().map(|n| f(&n.mac.stats)).sum();
    let blocks: Vec<_> = nodes.iter().filter_map(|n| n.queue.block_stats(now)).collect();
    OpetSummary {
        ncts_sent: sum(|s| s.ncts_sent),
        blocks: sum(|s| s.ncts_received),
        block_timeouts: blocks.iter().map(|b| b.timeouts).sum(),
        blocked_time_s: blocks.iter().map(|b| b.blocked.as_secs_f64()).sum(),
        rtr_sent: sum(|s| s.rtr_sent),
        resumes: sum(|s| s.rtr_answered),
        rtr_lost: sum(|s| s.rtr_timeouts),
        rtr_abandoned: sum(|s| s.rtr_abandoned),
    }
}
