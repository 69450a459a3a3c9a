//! The network allocation vector: virtual carrier sense (IEEE 802.11-2012
//! §9.3.2.4). It also keeps the total time the NAV has been set, which NRED
//! reads as part of the channel's busy time.

use crate::time::{Duration, SimTime};

/// The network allocation vector: virtual carrier sense from the Duration
/// fields of frames heard for other stations.
#[derive(Clone, Debug, Default)]
pub struct Nav {
    end: SimTime,
    /// Measure of the union of all NAV intervals set so far (it may run
    /// ahead of `now` up to `end`).
    total: Duration,
}

impl Nav {
    /// The instant until which the medium is virtually busy.
    pub fn end(&self) -> SimTime {
        self.end
    }

    /// Whether the medium is virtually busy at `now`.
    pub fn is_set(&self, now: SimTime) -> bool {
        self.end > now
    }

    /// Updates from an overheard Duration field: the NAV only ever grows.
    pub fn update(&mut self, now: SimTime, until: SimTime) {
        if until > self.end {
            let from = self.end.max(now);
            self.total += until - from;
            self.end = until;
        }
    }

    /// Cumulative time the NAV has been set, up to `now`.
    pub fn busy_time(&self, now: SimTime) -> Duration {
        if self.end > now {
            self.total - (self.end - now)
        } else {
            self.total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_of_intervals() {
        let us = |x: u64| SimTime(x * 1000);
        let mut n = Nav::default();
        n.update(us(10), us(20));
        n.update(us(15), us(18)); // inside: no growth
        assert_eq!(n.end(), us(20));
        n.update(us(15), us(30));
        assert_eq!(n.busy_time(us(25)), Duration::from_micros(15));
        assert_eq!(n.busy_time(us(100)), Duration::from_micros(20));
        n.update(us(40), us(45));
        assert_eq!(n.busy_time(us(50)), Duration::from_micros(25));
        assert!(n.is_set(us(44)) && !n.is_set(us(45)));
    }
}
