//! The one timer idiom of every sans-IO entity (TCP ends, AODV, queue
//! disciplines, schemes). An entity says when it next wants to be woken
//! (`poll_timeout`); the engine keeps one `Armed` per entity and schedules
//! one event per change of that instant. A re-arm bumps the generation, so
//! an event made stale by it is recognised and ignored when it pops: lazy
//! cancellation, as in nexosim's scheduler, with no search of the queue.

use crate::time::SimTime;

/// One entity's wake-up instant and the generation of the event scheduled
/// for it; the default is disarmed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Armed {
    at: Option<SimTime>,
    gen: u32,
}

impl Armed {
    /// The entity now wants to be woken at `want` (None: not at all).
    /// Returns the instant and generation of the event to schedule, or None
    /// if nothing changed or the timer was disarmed.
    #[must_use]
    pub fn rearm(&mut self, want: Option<SimTime>) -> Option<(SimTime, u32)> {
        if self.at == want {
            return None;
        }
        self.gen = self.gen.wrapping_add(1);
        self.at = want;
        want.map(|t| (t, self.gen))
    }

    /// An event of generation `gen` popped. True if it is the live one,
    /// which disarms the timer: the entity is then woken.
    #[must_use]
    pub fn fire(&mut self, gen: u32) -> bool {
        if self.gen != gen || self.at.is_none() {
            return false;
        }
        self.at = None;
        true
    }

    /// The instant the live event fires, if armed.
    pub fn at(&self) -> Option<SimTime> {
        self.at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rearm_makes_the_earlier_event_stale() {
        let mut a = Armed::default();
        let (t1, g1) = a.rearm(Some(SimTime(100))).unwrap();
        assert_eq!(t1, SimTime(100));
        // The same instant again: no new event.
        assert_eq!(a.rearm(Some(SimTime(100))), None);
        let (_, g2) = a.rearm(Some(SimTime(50))).unwrap();
        assert!(!a.fire(g1), "the superseded event is ignored");
        assert!(a.fire(g2));
        assert!(!a.fire(g2), "a fired timer is disarmed");
        // Disarming schedules nothing, and the old event is stale.
        let (_, g3) = a.rearm(Some(SimTime(10))).unwrap();
        assert_eq!(a.rearm(None), None);
        assert!(!a.fire(g3));
    }
}
