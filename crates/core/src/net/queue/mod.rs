//! The interface queue between the network layer and the MAC: a stateful
//! queue discipline. Routing and control packets go ahead of data (as
//! ns-2's priority interface queue). The discipline decides admission and
//! order: DropTail, or RED (`net/red.rs`); NRED's drop is a scheme at the
//! admission seam (`scheme`) over a DropTail queue. The ingress-throttling
//! scheduler of Osipov and Tschudin (`ingress.rs`) keeps the
//! packets this node originated apart from forwarded ones and spaces its
//! shaped flows; OPET's per-flow queues plug in as a further variant.
//!
//! The MAC asks for its next packet through a `Select`or, reads per-flow
//! lengths, and a discipline that holds packets back (a non-work-conserving
//! one) says through `poll_timeout` when it releases one, so the engine can
//! feed the MAC again then.
//!
//! OPET's per-flow queues (Zhai et al.; docs/opet.md) are a service order
//! over the same arrival-ordered deque: a flow's queue is its packets in
//! that order and they share the capacity; `Select::Any` serves the flows
//! round-robin, skipping a flow whose head is blocked towards its next hop
//! by a negative CTS. A block ends when lifted or at its timeout, which
//! `poll_timeout` reports so that the MAC is fed again then.

mod entry;
pub mod ingress;

use super::packet::DropCause;
use super::red::Red;
use crate::mac::opet::Scheduler;
use crate::time::{Duration, SimTime};
pub use entry::{Queued, Select};
use ingress::{Ingress, Spacing};
use std::collections::VecDeque;

/// The interface queue's discipline (`mac.queue`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
    /// One drop-tail FIFO (ns-2's priority queue without RED).
    DropTail,
    /// Floyd & Jacobson's RED on this queue (`[red]`, net/red.rs).
    Red,
    /// DropTail locally; NRED's distributed drop decides before packets
    /// enter (`[nred]`, net/nred/).
    Nred,
    /// Local and forward drop-tail queues, local first, with the spacing of
    /// shaped flows (`[throttle]`, net/throttle/).
    Throttle,
}

crate::names::named!(QueueKind, "a queue discipline", [
    QueueKind::DropTail => "droptail",
    QueueKind::Red => "red",
    QueueKind::Nred => "nred",
    QueueKind::Throttle => "throttle",
]);

impl QueueKind {
    /// Every discipline's name.
    pub const NAMES: &'static [&'static str] = &["droptail", "red", "nred", "throttle"];
    /// The discipline named `s`, if any.
    pub fn parse(s: &str) -> Option<QueueKind> {
        match s {
            "droptail" => Some(QueueKind::DropTail),
            "red" => Some(QueueKind::Red),
            "nred" => Some(QueueKind::Nred),
            "throttle" => Some(QueueKind::Throttle),
            _ => None,
        }
    }
}

/// The discipline's own state.
enum Discipline {
    DropTail,
    Red(Box<Red>),
    /// The two-stage ingress scheduler; `data` is its forward queue.
    Throttle(Box<Ingress>),
}

/// A node's interface queue: control packets ahead of data, and the data under its discipline.
pub struct InterfaceQueue {
    kind: QueueKind,
    capacity: usize,
    control: VecDeque<Queued>,
    data: VecDeque<Queued>,
    /// ∫ length dt since the last reading, for time-averaged traces.
    area: u128,
    last_change: SimTime,
    discipline: Discipline,
    /// OPET's per-flow service and blocked table, when it is on.
    per_flow: Option<Box<PerFlow>>,
}

/// A flow blocked towards a next hop by a negative CTS.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Block {
    label: u32,
    next_hop: u32,
    since: SimTime,
    until: SimTime,
}

/// OPET's per-flow service state.
#[derive(Debug)]
struct PerFlow {
    scheduler: Scheduler,
    /// The key of the flow served last (the round-robin cursor).
    last: Option<u64>,
    blocks: Vec<Block>,
    stats: BlockStats,
}

/// What the blocked table did over a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockStats {
    /// Blocks set by a negative CTS.
    pub blocks: u64,
    /// Blocks that ran out without being lifted.
    pub timeouts: u64,
    /// Σ over ended blocks of the time they lasted.
    pub blocked: Duration,
}

/// A flow's key in the service order: its label, packets of no flow last.
fn key(q: &Queued) -> u64 {
    q.label.map_or(u64::MAX, u64::from)
}

impl InterfaceQueue {
    /// A `kind` queue of `capacity` packets (DropTail or NRED's DropTail).
    pub fn new(kind: QueueKind, capacity: usize) -> Self {
        InterfaceQueue {
            kind,
            capacity,
            control: VecDeque::new(),
            data: VecDeque::new(),
            area: 0,
            last_change: SimTime::ZERO,
            discipline: Discipline::DropTail,
            per_flow: None,
        }
    }

    /// A DropTail queue served per flow (OPET), with a shared capacity.
    pub fn with_per_flow(capacity: usize, scheduler: Scheduler) -> Self {
        InterfaceQueue {
            per_flow: Some(Box::new(PerFlow {
                scheduler,
                last: None,
                blocks: Vec::new(),
                stats: BlockStats::default(),
            })),
            ..InterfaceQueue::new(QueueKind::DropTail, capacity)
        }
    }

    /// Queued packets with this flow label.
    pub fn label_len(&self, label: u32) -> usize {
        self.data.iter().filter(|q| q.label == Some(label)).count()
    }

    /// Blocks `label` towards `next_hop` until `until` (OPET: a negative
    /// CTS came back). A block already set is extended.
    pub fn block(&mut self, now: SimTime, label: u32, next_hop: u32, until: SimTime) {
        self.expire_blocks(now);
        let Some(pf) = self.per_flow.as_mut() else { return };
        pf.stats.blocks += 1;
        match pf
            .blocks
            .iter_mut()
            .find(|b| b.label == label && b.next_hop == next_hop)
        {
            Some(b) => b.until = b.until.max(until),
            None => pf.blocks.push(Block {
                label,
                next_hop,
                since: now,
                until,
            }),
        }
    }

    /// Keeps `label` blocked towards `next_hop` until `until` (OPET's
    /// pull resume: a ready-to-receive frame renews the block), setting it
    /// if it had ended; not counted as a new block.
    pub fn renew_block(&mut self, now: SimTime, label: u32, next_hop: u32, until: SimTime) {
        self.expire_blocks(now);
        let Some(pf) = self.per_flow.as_mut() else { return };
        match pf
            .blocks
            .iter_mut()
            .find(|b| b.label == label && b.next_hop == next_hop)
        {
            Some(b) => b.until = until,
            None => pf.blocks.push(Block {
                label,
                next_hop,
                since: now,
                until,
            }),
        }
    }

    /// Lifts the block of `label` towards `next_hop`; true if there was one
    /// still in force.
    pub fn unblock(&mut self, now: SimTime, label: u32, next_hop: u32) -> bool {
        self.expire_blocks(now);
        let Some(pf) = self.per_flow.as_mut() else { return false };
        let Some(i) = pf
            .blocks
            .iter()
            .position(|b| b.label == label && b.next_hop == next_hop)
        else {
            return false;
        };
        let b = pf.blocks.swap_remove(i);
        pf.stats.blocked += now.saturating_since(b.since);
        true
    }

    /// `label` is blocked towards `next_hop`.
    pub fn is_blocked(&self, label: u32, next_hop: u32) -> bool {
        self.per_flow
            .as_ref()
            .is_some_and(|pf| pf.blocks.iter().any(|b| b.label == label && b.next_hop == next_hop))
    }

    /// Ends the blocks whose timeout has come. Blocks end lazily: here,
    /// when the MAC is fed (the queue timer wakes an idle MAC at the
    /// earliest `until`; a busy one feeds itself when its frame ends), and
    /// before any change to the table, so that a block outlived by its
    /// timeout counts as a timeout of `block_timeout_s`, not as a longer
    /// block lifted late.
    pub fn expire_blocks(&mut self, now: SimTime) {
        let Some(pf) = self.per_flow.as_mut() else { return };
        let mut i = 0;
        while i < pf.blocks.len() {
            let b = pf.blocks[i];
            if b.until <= now {
                pf.blocks.swap_remove(i);
                pf.stats.timeouts += 1;
                pf.stats.blocked += b.until.saturating_since(b.since);
            } else {
                i += 1;
            }
        }
        // Keep a fixed order: the table decides nothing by its order, but
        // equal runs should hold equal state.
        pf.blocks.sort_by_key(|b| (b.label, b.next_hop));
    }

    /// The blocks set, as (label, next hop, since, until).
    pub fn blocks(&self) -> impl Iterator<Item = (u32, u32, SimTime, SimTime)> + '_ {
        self.per_flow
            .iter()
            .flat_map(|pf| pf.blocks.iter().map(|b| (b.label, b.next_hop, b.since, b.until)))
    }

    /// The blocked table's counters; blocks still set count until `now`.
    pub fn block_stats(&self, now: SimTime) -> Option<BlockStats> {
        self.per_flow.as_ref().map(|pf| {
            let mut s = pf.stats;
            for b in &pf.blocks {
                s.blocked += now.min(b.until).saturating_since(b.since);
            }
            s
        })
    }

    /// A RED queue (`QueueKind::Red`) with a physical limit of `capacity`.
    pub fn with_red(capacity: usize, red: Red) -> Self {
        InterfaceQueue {
            discipline: Discipline::Red(Box::new(red)),
            ..InterfaceQueue::new(QueueKind::Red, capacity)
        }
    }

    /// The ingress scheduler (`QueueKind::Throttle`): at most
    /// `local_capacity` packets originated here, and `capacity` forwarded
    /// and control packets together (ns-2's one priority queue, of which
    /// the local packets are split off).
    pub fn with_ingress(capacity: usize, local_capacity: usize, spacing: Spacing) -> Self {
        InterfaceQueue {
            discipline: Discipline::Throttle(Box::new(Ingress::new(local_capacity, spacing))),
            ..InterfaceQueue::new(QueueKind::Throttle, capacity)
        }
    }

    /// RED's average queue, if this is a RED queue.
    pub fn red_avg(&self) -> Option<f64> {
        match &self.discipline {
            Discipline::Red(r) => Some(r.avg()),
            _ => None,
        }
    }

    /// Sets the release spacing Δ of `flow`'s packets originated here (eq. 3);
    /// zero releases them as they come. Only the ingress scheduler shapes:
    /// false for any other discipline.
    pub fn set_shaper(&mut self, flow: u32, delta: crate::time::Duration) -> bool {
        match &mut self.discipline {
            Discipline::Throttle(ing) => {
                ing.set_delta(flow, delta);
                true
            }
            _ => false,
        }
    }

    /// The release spacing of `flow` here, if it is shaped.
    pub fn shaper(&self, flow: u32) -> Option<crate::time::Duration> {
        match &self.discipline {
            Discipline::Throttle(ing) => ing.delta(flow),
            _ => None,
        }
    }

    /// Queued packets whose next hop satisfies `f` (for neighborhood-queue traces).
    pub fn count_next_hops(&self, f: impl Fn(u32) -> bool) -> usize {
        self.iter().filter(|q| f(q.next_hop)).count()
    }

    /// Queued packets of `flow`.
    pub fn flow_len(&self, flow: u32) -> usize {
        self.iter().filter(|q| q.flow == flow).count()
    }

    fn iter(&self) -> impl Iterator<Item = &Queued> {
        let local = match &self.discipline {
            Discipline::Throttle(ing) => Some(ing.iter()),
            _ => None,
        };
        self.control
            .iter()
            .chain(local.into_iter().flatten())
            .chain(self.data.iter())
    }

    fn local_len(&self) -> usize {
        match &self.discipline {
            Discipline::Throttle(ing) => ing.len(),
            _ => 0,
        }
    }

    /// The discipline's kind.
    pub fn kind(&self) -> QueueKind {
        self.kind
    }

    /// Packets held, control and data.
    pub fn len(&self) -> usize {
        self.control.len() + self.data.len() + self.local_len()
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn account(&mut self, now: SimTime) {
        self.area += self.len() as u128 * now.saturating_since(self.last_change).as_nanos() as u128;
        self.last_change = now;
    }

    /// Adds a packet beyond the capacity (OPET's unbounded source buffer).
    pub fn enqueue_unbounded(&mut self, now: SimTime, q: Queued) {
        self.account(now);
        if q.control {
            self.control.push_back(q);
        } else {
            self.data.push_back(q);
        }
    }

    /// Adds a packet, or returns it with the reason it was refused.
    pub fn enqueue(&mut self, now: SimTime, q: Queued) -> Result<(), (Queued, DropCause)> {
        // With the ingress scheduler, locally originated data goes to the
        // local queue; routing and control packets keep their place ahead.
        if q.local && !q.control && matches!(self.discipline, Discipline::Throttle(_)) {
            self.account(now);
            let Discipline::Throttle(ing) = &mut self.discipline else {
                unreachable!()
            };
            return ing.enqueue(now, q);
        }
        let len = self.control.len() + self.data.len();
        if let Discipline::Red(red) = &mut self.discipline {
            // F&J: the average is updated on every arrival; routing and
            // control packets are never dropped early.
            if q.control {
                red.update_avg(now, len);
            } else if red.handle_arrival(now, len) {
                return Err((q, DropCause::Aqm));
            }
        }
        if len >= self.capacity {
            return Err((q, DropCause::QueueOverflow));
        }
        if let Discipline::Red(red) = &mut self.discipline {
            red.handle_queue_busy();
        }
        self.account(now);
        if q.control {
            self.control.push_back(q);
        } else {
            self.data.push_back(q);
        }
        Ok(())
    }

    /// Puts back at the head a packet the MAC had taken and gives back
    /// (an MSDU of its second slot that failed with retries left). It was
    /// admitted once, so no admission test runs and the capacity may be
    /// exceeded by the packets the MAC held. A local packet of the ingress
    /// scheduler was released already: it goes back ahead of the local
    /// queue, not through its flow's spacing again.
    pub fn push_front(&mut self, now: SimTime, q: Queued) {
        self.account(now);
        if q.control {
            self.control.push_front(q);
        } else if let (true, Discipline::Throttle(ing)) = (q.local, &mut self.discipline) {
            ing.push_front(q);
        } else {
            self.data.push_front(q);
        }
    }

    /// The next packet `select` admits, control packets first (then, with
    /// the ingress scheduler, eligible local packets before forwarded ones).
    pub fn dequeue(&mut self, now: SimTime, select: Select) -> Option<Queued> {
        self.account(now);
        let q = if let Discipline::Throttle(ing) = &mut self.discipline {
            take_first(&mut self.control, &select)
                .or_else(|| ing.dequeue(now, &select))
                .or_else(|| take_first(&mut self.data, &select))
        } else {
            match select {
                Select::Any if self.per_flow.is_some() => self.control.pop_front().or_else(|| self.next_per_flow()),
                Select::Any => self.control.pop_front().or_else(|| self.data.pop_front()),
                _ => take_first(&mut self.control, &select).or_else(|| take_first(&mut self.data, &select)),
            }
        };
        self.note_if_empty(now);
        q
    }

    /// The packet `dequeue(now, select)` would return, left in place (no
    /// accounting, no state change): fast-forward looks at its candidate
    /// before the MAC accepts it. Not for OPET's per-flow order, which
    /// only `Select::Any` uses and fast-forward never runs with.
    pub fn peek(&self, now: SimTime, select: Select) -> Option<Queued> {
        debug_assert!(!(select == Select::Any && self.per_flow.is_some()));
        let first = |q: &VecDeque<Queued>| q.iter().find(|x| select.admits(x)).copied();
        if let Discipline::Throttle(ing) = &self.discipline {
            first(&self.control)
                .or_else(|| ing.peek(now, &select).copied())
                .or_else(|| first(&self.data))
        } else {
            first(&self.control).or_else(|| first(&self.data))
        }
    }

    /// OPET: the next data packet in per-flow order. Round-robin: the
    /// flow after the last served (by key) whose head is not blocked;
    /// FIFO: the oldest packet whose flow is not blocked.
    fn next_per_flow(&mut self) -> Option<Queued> {
        let pf = self.per_flow.as_mut()?;
        let blocked = |q: &Queued| {
            q.label
                .is_some_and(|l| pf.blocks.iter().any(|b| b.label == l && b.next_hop == q.next_hop))
        };
        let pick = match pf.scheduler {
            Scheduler::Fifo => self.data.iter().position(|q| !blocked(q)),
            Scheduler::RoundRobin => {
                let mut seen: Vec<u64> = Vec::new();
                // (key, index) of the next flow after the cursor, and of the lowest.
                let mut after: Option<(u64, usize)> = None;
                let mut lowest: Option<(u64, usize)> = None;
                for (i, q) in self.data.iter().enumerate() {
                    let k = key(q);
                    if seen.contains(&k) {
                        continue; // not its flow's head
                    }
                    seen.push(k);
                    if blocked(q) {
                        continue;
                    }
                    if pf.last.is_none_or(|l| k > l) && after.is_none_or(|(a, _)| k < a) {
                        after = Some((k, i));
                    }
                    if lowest.is_none_or(|(a, _)| k < a) {
                        lowest = Some((k, i));
                    }
                }
                after.or(lowest).map(|(_, i)| i)
            }
        }?;
        let q = self.data.remove(pick)?;
        pf.last = Some(key(&q));
        Some(q)
    }

    /// When, after `now`, a discipline that holds packets back next
    /// releases one (None: work-conserving, or nothing held). The engine
    /// then feeds the MAC again. OPET: the first block timeout.
    pub fn poll_timeout(&self, now: SimTime) -> Option<SimTime> {
        if let Some(pf) = &self.per_flow {
            return pf.blocks.iter().map(|b| b.until).min();
        }
        match &self.discipline {
            Discipline::DropTail | Discipline::Red(_) => None,
            Discipline::Throttle(ing) => ing.next_release(now),
        }
    }

    fn note_if_empty(&mut self, now: SimTime) {
        if self.is_empty() {
            if let Discipline::Red(red) = &mut self.discipline {
                red.handle_queue_empty(now);
            }
        }
    }
    /// Removes every packet for `next_hop` (a broken link), in queue order,
    /// and lifts the blocks towards it.
    pub fn remove_for_next_hop(&mut self, now: SimTime, next_hop: u32) -> Vec<Queued> {
        self.account(now);
        let labels: Vec<u32> = self
            .per_flow
            .iter()
            .flat_map(|pf| pf.blocks.iter().filter(|b| b.next_hop == next_hop).map(|b| b.label))
            .collect();
        for l in labels {
            self.unblock(now, l, next_hop);
        }
        let mut out = Vec::new();
        for q in [&mut self.control, &mut self.data] {
            q.retain(|x| {
                if x.next_hop == next_hop {
                    out.push(*x);
                    false
                } else {
                    true
                }
            });
        }
        if let Discipline::Throttle(ing) = &mut self.discipline {
            ing.remove_for_next_hop(next_hop, &mut out);
        }
        self.note_if_empty(now);
        out
    }

    /// Mean length since the previous call (for 1 s traces).
    pub fn take_mean_len(&mut self, now: SimTime, since: SimTime) -> f64 {
        self.account(now);
        let span = now.saturating_since(since).as_nanos();
        let mean = if span == 0 {
            self.len() as f64
        } else {
            self.area as f64 / span as f64
        };
        self.area = 0;
        mean
    }
}

fn take_first(q: &mut VecDeque<Queued>, select: &Select) -> Option<Queued> {
    let i = q.iter().position(|x| select.admits(x))?;
    q.remove(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(p: u32, control: bool) -> Queued {
        Queued {
            packet: p,
            next_hop: p % 2,
            bytes: 100,
            control,
            flow: p % 3,
            local: false,
            label: Some(p % 3),
        }
    }

    #[test]
    fn droptail_with_control_first() {
        let mut iq = InterfaceQueue::new(QueueKind::DropTail, 3);
        let t = SimTime::ZERO;
        iq.enqueue(t, q(1, false)).unwrap();
        iq.enqueue(t, q(2, false)).unwrap();
        iq.enqueue(t, q(3, true)).unwrap();
        assert_eq!(iq.enqueue(t, q(4, true)), Err((q(4, true), DropCause::QueueOverflow)));
        assert_eq!(iq.dequeue(t, Select::Any).unwrap().packet, 3);
        assert_eq!(iq.dequeue(t, Select::Any).unwrap().packet, 1);
        let removed = iq.remove_for_next_hop(t, 0);
        assert_eq!(removed.iter().map(|x| x.packet).collect::<Vec<_>>(), vec![2]);
        assert!(iq.is_empty());
    }

    #[test]
    fn red_queue_drops_data_early_but_not_control() {
        use crate::engine::{stream, Purpose};
        use crate::net::red::RedConfig;
        let cfg = RedConfig {
            min_th: 1.0,
            max_th: 2.0,
            w_q: 1.0,
            ..RedConfig::default()
        };
        let mut iq = InterfaceQueue::with_red(10, Red::new(cfg, stream(1, 0, Purpose::Queue)));
        let t = SimTime::ZERO;
        iq.enqueue(t, q(1, false)).unwrap();
        iq.enqueue(t, q(2, false)).unwrap();
        // Two queued: avg = 2 = max_th, so data drops and control passes.
        assert_eq!(iq.enqueue(t, q(3, false)), Err((q(3, false), DropCause::Aqm)));
        iq.enqueue(t, q(4, true)).unwrap();
        assert_eq!(iq.red_avg(), Some(2.0));
        assert_eq!(iq.count_next_hops(|h| h == 0), 2);
    }

    #[test]
    fn time_averaged_length() {
        let mut iq = InterfaceQueue::new(QueueKind::DropTail, 10);
        iq.enqueue(SimTime(0), q(1, false)).unwrap();
        iq.enqueue(SimTime(500), q(2, false)).unwrap();
        // 1 packet for 500 ns, 2 packets for 500 ns.
        assert!((iq.take_mean_len(SimTime(1000), SimTime(0)) - 1.5).abs() < 1e-9);
    }

    #[test]
    fn each_selector_takes_what_it_names() {
        let t = SimTime::ZERO;
        let fill = || {
            let mut iq = InterfaceQueue::new(QueueKind::DropTail, 10);
            // packet: next hop p % 2, flow p % 3; packet 6 is control.
            for p in [1, 2, 3, 4, 5] {
                iq.enqueue(t, q(p, false)).unwrap();
            }
            iq.enqueue(t, q(6, true)).unwrap();
            iq
        };
        // `peek` names the packet `dequeue` then takes.
        let take = |iq: &mut InterfaceQueue, s: Select| {
            let seen = iq.peek(t, s);
            let taken = iq.dequeue(t, s);
            assert_eq!(seen, taken, "{s:?}");
            taken.map(|x| x.packet)
        };

        // Any: control first, then data in arrival order.
        let mut iq = fill();
        assert_eq!(take(&mut iq, Select::Any), Some(6));
        assert_eq!(take(&mut iq, Select::Any), Some(1));

        // NextHop: the first packet for that neighbour, control included.
        let mut iq = fill();
        assert_eq!(take(&mut iq, Select::NextHop(1)), Some(1));
        assert_eq!(take(&mut iq, Select::NextHop(0)), Some(6));
        assert_eq!(take(&mut iq, Select::NextHop(0)), Some(2));
        assert_eq!(take(&mut iq, Select::NextHop(7)), None);

        // NotFlows: skips the blocked flows (6 is flow 0, control).
        let mut iq = fill();
        assert_eq!(iq.flow_len(1), 2);
        assert_eq!(take(&mut iq, Select::NotFlows(&[0, 1])), Some(2));
        assert_eq!(take(&mut iq, Select::NotFlows(&[0, 1])), Some(5));
        assert_eq!(take(&mut iq, Select::NotFlows(&[0, 1])), None);
        assert_eq!(iq.flow_len(2), 0);

        // Flow: that flow for that next hop (control packets too).
        let mut iq = fill();
        assert_eq!(take(&mut iq, Select::Flow(1, 0)), Some(4));
        assert_eq!(take(&mut iq, Select::Flow(1, 1)), Some(1));
        assert_eq!(take(&mut iq, Select::Flow(1, 1)), None);
        assert_eq!(take(&mut iq, Select::Flow(0, 0)), Some(6));
        assert_eq!(take(&mut iq, Select::Flow(0, 0)), None);

        // Packet: that one, out of order, and only once.
        let mut iq = fill();
        assert_eq!(take(&mut iq, Select::Packet(4)), Some(4));
        assert_eq!(take(&mut iq, Select::Packet(4)), None);
        assert_eq!(iq.len(), 5);
        assert_eq!(iq.poll_timeout(t), None, "DropTail never holds packets back");
    }

    fn lq(p: u32, label: u32, next_hop: u32) -> Queued {
        Queued {
            packet: p,
            next_hop,
            bytes: 1040,
            control: false,
            flow: label / 2,
            local: false,
            label: Some(label),
        }
    }

    #[test]
    fn per_flow_round_robin_skips_blocked_flows() {
        let t = SimTime::ZERO;
        let mut iq = InterfaceQueue::with_per_flow(50, Scheduler::RoundRobin);
        // Arrival order: flow 4 three times, then flows 2 and 6.
        for (p, l) in [(1, 4), (2, 4), (3, 4), (4, 2), (5, 6)] {
            iq.enqueue(t, lq(p, l, 9)).unwrap();
        }
        iq.enqueue(t, q(6, true)).unwrap();
        let take = |iq: &mut InterfaceQueue| iq.dequeue(t, Select::Any).map(|x| x.packet);
        // Control first, then flows 2, 4, 6, 4, 4 in turn.
        assert_eq!(take(&mut iq), Some(6));
        assert_eq!(take(&mut iq), Some(4));
        assert_eq!(take(&mut iq), Some(1));
        iq.block(t, 6, 9, SimTime(1000));
        assert!(iq.is_blocked(6, 9) && !iq.is_blocked(6, 8));
        // Flow 6 is blocked towards 9: flow 4 goes on, then nothing.
        assert_eq!(take(&mut iq), Some(2));
        assert_eq!(take(&mut iq), Some(3));
        assert_eq!(take(&mut iq), None);
        assert_eq!(iq.label_len(6), 1);
        assert!(iq.unblock(SimTime(400), 6, 9));
        assert_eq!(take(&mut iq), Some(5));
        assert_eq!(iq.block_stats(SimTime(400)).unwrap().blocked, Duration(400));

        // FIFO: the oldest packet whose flow is not blocked.
        let mut iq = InterfaceQueue::with_per_flow(50, Scheduler::Fifo);
        for (p, l) in [(1, 4), (2, 4), (3, 2)] {
            iq.enqueue(t, lq(p, l, 9)).unwrap();
        }
        iq.block(t, 4, 9, SimTime(1000));
        assert_eq!(take(&mut iq), Some(3));
        assert_eq!(take(&mut iq), None);
        // The answer to a ready-to-receive frame takes the flow's head.
        assert_eq!(iq.dequeue(t, Select::Label(4, 9)).map(|x| x.packet), Some(1));
    }

    /// A block set by a negative CTS at 748 µs with the 0.1 s timeout:
    ///
    /// ```text
    ///  U: NCTS|-------- flow 3 blocked towards I: 100 ms --------|served again
    ///       748                                               100748
    /// ```
    #[test]
    fn block_times_out_and_is_reported_for_the_next_feed() {
        let us = |x: u64| SimTime(x * 1000);
        let mut iq = InterfaceQueue::with_per_flow(50, Scheduler::RoundRobin);
        iq.enqueue(us(0), lq(1, 3, 1)).unwrap();
        iq.block(us(748), 3, 1, us(100_748));
        assert_eq!(iq.poll_timeout(us(748)), Some(us(100_748)));
        iq.expire_blocks(us(100_747));
        assert!(iq.dequeue(us(100_747), Select::Any).is_none());
        iq.expire_blocks(us(100_748));
        assert_eq!(iq.poll_timeout(us(100_748)), None);
        assert_eq!(iq.dequeue(us(100_748), Select::Any).map(|x| x.packet), Some(1));
        let s = iq.block_stats(us(200_000)).unwrap();
        assert_eq!((s.blocks, s.timeouts, s.blocked), (1, 1, Duration::from_millis(100)));
    }

    /// A block outlived by its timeout while the MAC was busy (nothing fed
    /// the queue) ends as a timeout at its `until`, whatever changes the
    /// table next: a late ready-to-receive frame lifts nothing, and a late
    /// negative CTS or renewal starts a block of its own.
    #[test]
    fn a_stale_block_counts_as_a_timeout() {
        let ms = |x: u64| SimTime(x * 1_000_000);
        let mut iq = InterfaceQueue::with_per_flow(50, Scheduler::RoundRobin);
        iq.block(ms(0), 3, 1, ms(100));
        assert!(!iq.unblock(ms(150), 3, 1));
        let s = iq.block_stats(ms(150)).unwrap();
        assert_eq!((s.blocks, s.timeouts, s.blocked), (1, 1, Duration::from_millis(100)));

        iq.block(ms(200), 3, 1, ms(300));
        iq.renew_block(ms(350), 3, 1, ms(450));
        assert_eq!(iq.blocks().collect::<Vec<_>>(), vec![(3, 1, ms(350), ms(450))]);
        iq.block(ms(500), 3, 1, ms(600));
        assert_eq!(iq.blocks().collect::<Vec<_>>(), vec![(3, 1, ms(500), ms(600))]);
        let s = iq.block_stats(ms(500)).unwrap();
        assert_eq!((s.blocks, s.timeouts, s.blocked), (3, 3, Duration::from_millis(300)));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            /// Whatever the arrivals and blocks (each flow has one next
            /// hop, as under static routes), the per-flow service never
            /// hands out a packet of a flow blocked towards its next hop,
            /// leaves no unblocked flow waiting, and loses no packet.
            #[test]
            fn round_robin_never_serves_a_blocked_flow(
                ops in proptest::collection::vec((0u8..4, 0u32..5, 0u32..2), 1..200),
                fifo: bool,
            ) {
                let sched = if fifo { Scheduler::Fifo } else { Scheduler::RoundRobin };
                let mut iq = InterfaceQueue::with_per_flow(20, sched);
                let (mut next, mut held, mut out) = (0u32, 0usize, 0usize);
                for (i, &(op, label, hop)) in ops.iter().enumerate() {
                    let now = SimTime(i as u64);
                    match op {
                        0 => {
                            next += 1;
                            if iq.enqueue(now, lq(next, label, label % 2)).is_ok() {
                                held += 1;
                            }
                        }
                        1 => iq.block(now, label, hop, SimTime(i as u64 + 50)),
                        2 => { iq.unblock(now, label, hop); }
                        _ => {
                            iq.expire_blocks(now);
                            let waiting: Vec<u32> = iq.data.iter()
                                .filter(|x| !iq.is_blocked(x.label.unwrap(), x.next_hop))
                                .map(|x| x.label.unwrap()).collect();
                            match iq.dequeue(now, Select::Any) {
                                Some(x) => {
                                    out += 1;
                                    prop_assert!(!iq.is_blocked(x.label.unwrap(), x.next_hop));
                                }
                                None => prop_assert!(waiting.is_empty(), "{waiting:?} unserved"),
                            }
                        }
                    }
                }
                prop_assert_eq!(held, out + iq.len());
            }
        }
    }
}
