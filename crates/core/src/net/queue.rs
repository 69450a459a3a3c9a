//! The interface queue between the network layer and the MAC: a stateful
//! queue discipline. Routing and control packets go ahead of data (as
//! ns-2's priority interface queue). The discipline decides admission and
//! order: DropTail, or RED (`net/red.rs`); NRED's drop is a scheme at the
//! admission seam (`scheme`) over a DropTail queue. The ingress-throttling
//! scheduler of Osipov and Tschudin (`net/throttle/ingress.rs`) keeps the
//! packets this node originated apart from forwarded ones and spaces its
//! shaped flows; OPET's per-flow queues plug in as a further variant.
//!
//! The MAC asks for its next packet through a `Select`or, reads per-flow
//! lengths, and a discipline that holds packets back (a non-work-conserving
//! one) says through `poll_timeout` when it releases one, so the engine can
//! feed the MAC again then.

use super::packet::DropCause;
use super::red::Red;
use super::throttle::ingress::{Ingress, Spacing};
use crate::time::SimTime;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    pub packet: u32,
    pub next_hop: u32,
    pub bytes: u32,
    pub control: bool,
    /// The packet's flow (`NO_FLOW` for routing and control packets).
    pub flow: u32,
    /// Originated at this node (its source address is the node's own).
    pub local: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueKind {
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

impl QueueKind {
    pub const NAMES: &'static [&'static str] = &["droptail", "red", "nred", "throttle"];
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

/// Which packet the MAC may take next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select<'a> {
    /// The head of the queue (control first).
    Any,
    /// The first packet for this next hop only (quick-exchange's reverse
    /// packet, Berger et al.).
    NextHop(u32),
    /// The first packet for this next hop of at most this many bytes
    /// (quick-exchange's reverse packet under its size cap).
    NextHopUpTo(u32, u32),
    /// The first packet of a flow not in this list (OPET: flows blocked by
    /// a negative CTS).
    NotFlows(&'a [u32]),
    /// This packet, wherever it is (fast-forward's packet to relay).
    Packet(u32),
}

impl Select<'_> {
    pub(crate) fn admits(&self, q: &Queued) -> bool {
        match *self {
            Select::Any => true,
            Select::NextHop(h) => q.next_hop == h,
            Select::NextHopUpTo(h, max) => q.next_hop == h && q.bytes <= max,
            Select::NotFlows(blocked) => !blocked.contains(&q.flow),
            Select::Packet(p) => q.packet == p,
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

pub struct InterfaceQueue {
    kind: QueueKind,
    capacity: usize,
    control: VecDeque<Queued>,
    data: VecDeque<Queued>,
    /// ∫ length dt since the last reading, for time-averaged traces.
    area: u128,
    last_change: SimTime,
    discipline: Discipline,
}

impl InterfaceQueue {
    pub fn new(kind: QueueKind, capacity: usize) -> Self {
        InterfaceQueue {
            kind,
            capacity,
            control: VecDeque::new(),
            data: VecDeque::new(),
            area: 0,
            last_change: SimTime::ZERO,
            discipline: Discipline::DropTail,
        }
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

    pub fn kind(&self) -> QueueKind {
        self.kind
    }

    pub fn len(&self) -> usize {
        self.control.len() + self.data.len() + self.local_len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn account(&mut self, now: SimTime) {
        self.area += self.len() as u128 * now.saturating_since(self.last_change).as_nanos() as u128;
        self.last_change = now;
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
        let q = match (select, &mut self.discipline) {
            (_, Discipline::Throttle(ing)) => take_first(&mut self.control, &select)
                .or_else(|| ing.dequeue(now, &select))
                .or_else(|| take_first(&mut self.data, &select)),
            (Select::Any, _) => self.control.pop_front().or_else(|| self.data.pop_front()),
            _ => take_first(&mut self.control, &select).or_else(|| take_first(&mut self.data, &select)),
        };
        self.note_if_empty(now);
        q
    }

    /// When, after `now`, a discipline that holds packets back next
    /// releases one (None: work-conserving, or nothing held). The engine
    /// then feeds the MAC again.
    pub fn poll_timeout(&self, now: SimTime) -> Option<SimTime> {
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
    /// Removes every packet for `next_hop` (a broken link), in queue order.
    pub fn remove_for_next_hop(&mut self, now: SimTime, next_hop: u32) -> Vec<Queued> {
        self.account(now);
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
        let take = |iq: &mut InterfaceQueue, s: Select| iq.dequeue(t, s).map(|x| x.packet);

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

        // Packet: that one, out of order, and only once.
        let mut iq = fill();
        assert_eq!(take(&mut iq, Select::Packet(4)), Some(4));
        assert_eq!(take(&mut iq, Select::Packet(4)), None);
        assert_eq!(iq.len(), 5);
        assert_eq!(iq.poll_timeout(t), None, "DropTail never holds packets back");
    }
}
