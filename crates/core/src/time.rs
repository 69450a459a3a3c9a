//! Simulated time: integer nanoseconds (DESIGN.md principle 2). No floating
//! point time inside the core; seconds appear only at the edges.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Converts seconds at the edge (scenario files); rounds to the nearest ns.
    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime((s * 1e9).round() as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    pub fn from_secs_f64(s: f64) -> Duration {
        Duration((s * 1e9).round() as u64)
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    pub const fn mul(self, k: u64) -> Duration {
        Duration(self.0 * k)
    }
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Sub<SimTime> for SimTime {
    type Output = Duration;
    fn sub(self, o: SimTime) -> Duration {
        debug_assert!(self.0 >= o.0, "negative duration");
        Duration(self.0 - o.0)
    }
}
impl Add for Duration {
    type Output = Duration;
    fn add(self, o: Duration) -> Duration {
        Duration(self.0 + o.0)
    }
}
impl AddAssign for Duration {
    fn add_assign(&mut self, o: Duration) {
        self.0 += o.0;
    }
}
impl Sub for Duration {
    type Output = Duration;
    fn sub(self, o: Duration) -> Duration {
        Duration(self.0 - o.0)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}
impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ns", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_trip_at_the_edge() {
        assert_eq!(SimTime::from_secs_f64(1.5).as_nanos(), 1_500_000_000);
        assert_eq!(Duration::from_micros(192).as_nanos(), 192_000);
        assert_eq!(SimTime(10) + Duration(5), SimTime(15));
        assert_eq!(SimTime(15) - SimTime(10), Duration(5));
        assert_eq!(SimTime(5).saturating_since(SimTime(10)), Duration::ZERO);
    }
}
