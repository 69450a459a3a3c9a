//! The two-stage ingress scheduler of Osipov and Tschudin (2007), §4.3 and
//! Fig. 4, as a queue discipline: packets from routing are sorted by their
//! source address into two drop-tail queues, one for packets this node
//! originated (local) and one for the rest (forward).
//!
//! Stage 1 spaces the releases of each shaped local flow Δ = MSS / r apart
//! (eq. 3). The paper calls it a "fixed delay non-work-conserving
//! scheduler"; a fixed delay per packet would not bound the rate (a window
//! of W segments would still leave at W·MSS / (RTT + Δ)), so Δ is read as
//! the spacing between releases: packet k of a flow becomes eligible at
//!
//! ```text
//! e_k = max(a_k, e_{k-1} + Δ)          (a_k: its arrival)
//! ```
//!
//! Stage 2 (Σ) is non-preemptive and work-conserving: eligible local
//! packets first, in order of eligibility, then forwarded ones. With Δ = 0
//! the whole is "a scheduler with three priorities": routing and control
//! packets (kept ahead by the interface queue, as ns-2's priority queue
//! does) > local > forward.
//!
//! A node may source several flows (the testbed of §5.5 gave each its own
//! logical queue and delay): each shaped flow has its own FIFO and Δ, and
//! the local class shares one capacity.

use super::entry::{Queued, Select};
use crate::net::packet::DropCause;
use crate::time::{Duration, SimTime};
use std::collections::VecDeque;

/// When the next packet of a shaped flow may leave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Spacing {
    /// Δ after the previous packet became eligible (spec-throttle.md G2):
    /// the long-run rate is at most MSS / Δ even when the MAC is slow to
    /// take a packet.
    Eligibility,
    /// Δ after the previous packet was handed to the MAC.
    Departure,
}

impl Spacing {
    /// The names of `throttle.spacing`.
    pub const NAMES: &'static [&'static str] = &["eligibility", "departure"];
    /// The spacing named `s`, if any.
    pub fn parse(s: &str) -> Option<Spacing> {
        match s {
            "eligibility" => Some(Spacing::Eligibility),
            "departure" => Some(Spacing::Departure),
            _ => None,
        }
    }
}

/// One shaped local flow: its FIFO and its stage-1 state.
#[derive(Clone, Debug)]
struct Shaper {
    flow: u32,
    delta: Duration,
    /// Eligibility (or departure) time of the previous packet released.
    prev: Option<SimTime>,
    queue: VecDeque<(Queued, SimTime)>,
}

impl Shaper {
    /// When the head may leave.
    fn head_eligible(&self) -> Option<SimTime> {
        let (_, arrived) = self.queue.front()?;
        Some(match self.prev {
            Some(p) => (*arrived).max(p + self.delta),
            None => *arrived,
        })
    }
}

/// The local and forward queues of one node and the shapers of the flows it
/// sources. Routing and control packets stay in the interface queue's own
/// control FIFO, ahead of both.
#[derive(Clone, Debug)]
pub struct Ingress {
    local_capacity: usize,
    spacing: Spacing,
    /// Local packets of flows without a shaper, with their arrival.
    unshaped: VecDeque<(Queued, SimTime)>,
    shapers: Vec<Shaper>,
    local_len: usize,
}

impl Ingress {
    /// An empty scheduler: `local_capacity` packets for the local class.
    pub fn new(local_capacity: usize, spacing: Spacing) -> Self {
        Ingress {
            local_capacity,
            spacing,
            unshaped: VecDeque::new(),
            shapers: Vec::new(),
            local_len: 0,
        }
    }

    /// Packets in the local queue.
    pub fn len(&self) -> usize {
        self.local_len
    }

    /// Whether no packet waits in either stage.
    pub fn is_empty(&self) -> bool {
        self.local_len == 0
    }

    /// Sets flow `flow`'s spacing Δ (zero: released as it comes). A change
    /// applies from the next release on; the previous release is kept.
    pub fn set_delta(&mut self, flow: u32, delta: Duration) {
        match self.shapers.iter_mut().find(|s| s.flow == flow) {
            Some(s) => s.delta = delta,
            None => self.shapers.push(Shaper {
                flow,
                delta,
                prev: None,
                queue: VecDeque::new(),
            }),
        }
    }

    /// The spacing of `flow`, if it has a shaper here.
    pub fn delta(&self, flow: u32) -> Option<Duration> {
        self.shapers.iter().find(|s| s.flow == flow).map(|s| s.delta)
    }

    /// A locally originated packet enters the local drop-tail queue.
    pub fn enqueue(&mut self, now: SimTime, q: Queued) -> Result<(), (Queued, DropCause)> {
        if self.local_len >= self.local_capacity {
            return Err((q, DropCause::QueueOverflow));
        }
        match self.shapers.iter_mut().find(|s| s.flow == q.flow) {
            Some(s) => s.queue.push_back((q, now)),
            None => self.unshaped.push_back((q, now)),
        }
        self.local_len += 1;
        Ok(())
    }

    /// A released packet the MAC gave back: first in the local queue, eligible at once.
    pub fn push_front(&mut self, q: Queued) {
        self.unshaped.push_front((q, SimTime::ZERO));
        self.local_len += 1;
    }

    /// The eligible local packet `select` admits with the earliest
    /// eligibility (ties: earlier arrival, then unshaped before shaped).
    /// Within a shaped flow only the head may leave, so its spacing holds.
    pub fn dequeue(&mut self, now: SimTime, select: &Select) -> Option<Queued> {
        let (e, which, pos) = self.pick(now, select)?;
        self.local_len -= 1;
        match which {
            None => self.unshaped.remove(pos).map(|(q, _)| q),
            Some(i) => {
                let s = &mut self.shapers[i];
                s.prev = Some(match self.spacing {
                    Spacing::Eligibility => e,
                    Spacing::Departure => now,
                });
                s.queue.pop_front().map(|(q, _)| q)
            }
        }
    }

    /// The packet `dequeue` would return, left in place.
    pub fn peek(&self, now: SimTime, select: &Select) -> Option<&Queued> {
        let (_, which, pos) = self.pick(now, select)?;
        match which {
            None => self.unshaped.get(pos).map(|(q, _)| q),
            Some(i) => self.shapers[i].queue.front().map(|(q, _)| q),
        }
    }

    /// Where `dequeue`'s packet is: (eligible at, None = unshaped or
    /// Some(shaper), position).
    fn pick(&self, now: SimTime, select: &Select) -> Option<(SimTime, Option<usize>, usize)> {
        // (eligible at, arrived, which: None = unshaped, Some(i) = shaper i, position)
        let mut best: Option<(SimTime, SimTime, Option<usize>, usize)> = None;
        let mut consider = |cand: (SimTime, SimTime, Option<usize>, usize)| {
            if best.is_none_or(|b| (cand.0, cand.1) < (b.0, b.1)) {
                best = Some(cand);
            }
        };
        if let Some(pos) = self.unshaped.iter().position(|(q, _)| select.admits(q)) {
            let at = self.unshaped[pos].1;
            consider((at, at, None, pos));
        }
        for (i, s) in self.shapers.iter().enumerate() {
            if let (Some(e), Some((q, arrived))) = (s.head_eligible(), s.queue.front()) {
                if e <= now && select.admits(q) {
                    consider((e, *arrived, Some(i), 0));
                }
            }
        }
        best.map(|(e, _, which, pos)| (e, which, pos))
    }

    /// The earliest instant after `now` at which a held packet becomes eligible.
    pub fn next_release(&self, now: SimTime) -> Option<SimTime> {
        self.shapers
            .iter()
            .filter_map(Shaper::head_eligible)
            .filter(|&e| e > now)
            .min()
    }

    /// Every packet it holds: unshaped local, shaped local, forward.
    pub fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.unshaped
            .iter()
            .chain(self.shapers.iter().flat_map(|s| s.queue.iter()))
            .map(|(q, _)| q)
    }

    /// Removes the local packets for `next_hop` (a broken link), appending them to `out`.
    pub fn remove_for_next_hop(&mut self, next_hop: u32, out: &mut Vec<Queued>) {
        let before = out.len();
        for q in std::iter::once(&mut self.unshaped).chain(self.shapers.iter_mut().map(|s| &mut s.queue)) {
            q.retain(|(x, _)| {
                if x.next_hop == next_hop {
                    out.push(*x);
                    false
                } else {
                    true
                }
            });
        }
        self.local_len -= out.len() - before;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::{InterfaceQueue, QueueKind};

    const MS: u64 = 1_000_000;

    fn pkt(p: u32, flow: u32, local: bool, control: bool) -> Queued {
        Queued {
            packet: p,
            next_hop: 9,
            bytes: 640,
            control,
            flow,
            local,
            label: None,
        }
    }

    fn t(ms: u64) -> SimTime {
        SimTime(ms * MS)
    }

    /// Five packets of a flow with Δ = 10 ms arrive together at 0:
    ///
    /// ```text
    /// arrivals  |||||
    /// releases  |         |         |         |         |
    ///           0        10        20        30        40 ms
    /// ```
    #[test]
    fn a_shaped_flow_leaves_delta_apart() {
        let mut ing = Ingress::new(50, Spacing::Eligibility);
        ing.set_delta(0, Duration::from_millis(10));
        for p in 0..5 {
            ing.enqueue(t(0), pkt(p, 0, true, false)).unwrap();
        }
        let mut released = Vec::new();
        let mut now = t(0);
        while let Some(q) = ing.dequeue(now, &Select::Any) {
            released.push((q.packet, now.as_nanos() / MS));
            // Nothing else is eligible yet: the next release is Δ later.
            assert_eq!(ing.dequeue(now, &Select::Any), None);
            match ing.next_release(now) {
                Some(next) => now = next,
                None => break,
            }
        }
        assert_eq!(released, vec![(0, 0), (1, 10), (2, 20), (3, 30), (4, 40)]);
        assert!(ing.is_empty());
    }

    /// The MAC takes the packet eligible at 10 ms only at 25 ms. Eligibility
    /// spacing keeps the schedule (next at 20, so at once); departure
    /// spacing restarts it (next at 35).
    #[test]
    fn eligibility_and_departure_spacing_differ_after_a_late_take() {
        for (spacing, next) in [(Spacing::Eligibility, t(25)), (Spacing::Departure, t(35))] {
            let mut ing = Ingress::new(50, spacing);
            ing.set_delta(0, Duration::from_millis(10));
            for p in 0..3 {
                ing.enqueue(t(0), pkt(p, 0, true, false)).unwrap();
            }
            assert_eq!(ing.dequeue(t(0), &Select::Any).map(|q| q.packet), Some(0));
            assert_eq!(ing.dequeue(t(25), &Select::Any).map(|q| q.packet), Some(1));
            let when = ing.next_release(t(25)).unwrap_or(t(25));
            assert_eq!(when, next, "{spacing:?}");
        }
    }

    #[test]
    fn a_later_arrival_is_not_held_by_an_old_schedule() {
        let mut ing = Ingress::new(50, Spacing::Eligibility);
        ing.set_delta(0, Duration::from_millis(10));
        ing.enqueue(t(0), pkt(0, 0, true, false)).unwrap();
        assert!(ing.dequeue(t(0), &Select::Any).is_some());
        // Arrives at 50 ms, long after 0 + Δ: leaves at once.
        ing.enqueue(t(50), pkt(1, 0, true, false)).unwrap();
        assert_eq!(ing.dequeue(t(50), &Select::Any).map(|q| q.packet), Some(1));
    }

    #[test]
    fn two_flows_from_one_source_are_spaced_each_on_its_own() {
        let mut ing = Ingress::new(50, Spacing::Eligibility);
        ing.set_delta(0, Duration::from_millis(10));
        ing.set_delta(1, Duration::from_millis(15));
        for p in 0..3 {
            ing.enqueue(t(0), pkt(p, 0, true, false)).unwrap();
            ing.enqueue(t(0), pkt(10 + p, 1, true, false)).unwrap();
        }
        let mut order = Vec::new();
        let mut now = t(0);
        loop {
            while let Some(q) = ing.dequeue(now, &Select::Any) {
                order.push((q.packet, now.as_nanos() / MS));
            }
            match ing.next_release(now) {
                Some(n) => now = n,
                None => break,
            }
        }
        // Eligible at: flow 0 at 0, 10, 20; flow 1 at 0, 15, 30. Ties go to the earlier arrival.
        assert_eq!(order, vec![(0, 0), (10, 0), (1, 10), (11, 15), (2, 20), (12, 30)]);
    }

    /// Control > local > forward, and a held local packet lets forwarded ones pass.
    #[test]
    fn priority_control_then_local_then_forward() {
        let mut iq = InterfaceQueue::with_ingress(10, 10, Spacing::Eligibility);
        assert_eq!(iq.kind(), QueueKind::Throttle);
        iq.enqueue(t(0), pkt(1, 7, false, false)).unwrap(); // forwarded
        iq.enqueue(t(0), pkt(2, 0, true, false)).unwrap(); // local, unshaped
        iq.enqueue(t(0), pkt(3, 5, false, true)).unwrap(); // control
        iq.enqueue(t(0), pkt(4, 7, false, false)).unwrap(); // forwarded
        iq.enqueue(t(0), pkt(5, 0, true, false)).unwrap(); // local
                                                           // `peek` names the packet `dequeue` then takes, shaping included.
        let take = |iq: &mut InterfaceQueue, at| {
            let seen = iq.peek(at, Select::Any);
            let taken = iq.dequeue(at, Select::Any);
            assert_eq!(seen, taken);
            taken.map(|q| q.packet)
        };
        assert_eq!(take(&mut iq, t(0)), Some(3));
        assert_eq!(take(&mut iq, t(0)), Some(2));
        assert_eq!(take(&mut iq, t(0)), Some(5));
        assert_eq!(take(&mut iq, t(0)), Some(1));
        assert_eq!(take(&mut iq, t(0)), Some(4));
        assert!(iq.is_empty());

        // A shaped local packet not yet eligible: the forwarded one goes first.
        assert!(iq.set_shaper(0, Duration::from_millis(10)));
        iq.enqueue(t(0), pkt(6, 0, true, false)).unwrap();
        iq.enqueue(t(0), pkt(7, 0, true, false)).unwrap();
        iq.enqueue(t(0), pkt(8, 7, false, false)).unwrap();
        assert_eq!(take(&mut iq, t(0)), Some(6));
        assert_eq!(take(&mut iq, t(1)), Some(8));
        assert_eq!(iq.poll_timeout(t(1)), Some(t(10)));
        assert_eq!(take(&mut iq, t(1)), None);
        assert_eq!(iq.len(), 1);
        assert_eq!(take(&mut iq, t(10)), Some(7));
        assert_eq!(iq.poll_timeout(t(10)), None);
    }

    #[test]
    fn local_and_forward_queues_fill_on_their_own() {
        let mut iq = InterfaceQueue::with_ingress(2, 1, Spacing::Eligibility);
        iq.enqueue(t(0), pkt(1, 0, true, false)).unwrap();
        assert_eq!(
            iq.enqueue(t(0), pkt(2, 0, true, false)).unwrap_err().1,
            DropCause::QueueOverflow
        );
        iq.enqueue(t(0), pkt(3, 7, false, false)).unwrap();
        iq.enqueue(t(0), pkt(4, 5, false, true)).unwrap();
        // Forward and control share the forward capacity of 2.
        assert!(iq.enqueue(t(0), pkt(5, 7, false, false)).is_err());
        assert_eq!(iq.len(), 3);
        assert_eq!(iq.flow_len(0), 1);
        // A broken link to 9 takes every packet for it, local ones included.
        let gone = iq.remove_for_next_hop(t(0), 9);
        assert_eq!(gone.len(), 3);
        assert!(iq.is_empty());
    }

    #[test]
    fn other_disciplines_do_not_shape() {
        let mut iq = InterfaceQueue::new(QueueKind::DropTail, 5);
        assert!(!iq.set_shaper(0, Duration::from_millis(10)));
        assert_eq!(iq.shaper(0), None);
    }
}
