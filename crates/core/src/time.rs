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
    /// The start of the run.
    pub const ZERO: SimTime = SimTime(0);
    /// The instant that never comes: a disarmed timer, an endless run.
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Converts seconds at the edge (scenario files); rounds to the nearest ns.
    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime((s * 1e9).round() as u64)
    }
    /// Seconds, for output at the edge (summaries, traces).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Nanoseconds since the start of the run.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// `self + d` for instants of a run, which `MAX_SPAN` keeps far from
    /// u64's limit: a plain addition, where `+` saturates (for `MAX`, the
    /// instant that never comes). Two instructions fewer where it counts:
    /// the signal walks (`Simulator::signal_starts`), one per receiver, the
    /// DCF's access timer (`Dcf::arm_access`), at every idle edge, and the
    /// NAV a frame for another station sets (`Dcf::rx_nav_only`).
    #[inline(always)]
    pub fn plus(self, d: Duration) -> SimTime {
        debug_assert!(self.0.checked_add(d.0).is_some(), "time past u64");
        SimTime(self.0.wrapping_add(d.0))
    }
    /// Time elapsed since `earlier`, or zero if `earlier` is later.
    pub fn saturating_since(self, earlier: SimTime) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// No time at all.
    pub const ZERO: Duration = Duration(0);
    /// `ns` nanoseconds.
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    /// `us` microseconds: the unit 802.11 gives its slot, SIFS and PLCP
    /// times in (IEEE 802.11-2012 Table 17-14).
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    /// `ms` milliseconds.
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    /// Converts seconds at the edge (scenario files); rounds to the nearest
    /// ns, and a negative or NaN value gives zero.
    pub fn from_secs_f64(s: f64) -> Duration {
        Duration((s * 1e9).round() as u64)
    }
    /// Seconds, for output at the edge and for the rate arithmetic of the
    /// TCP variants.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// The span in nanoseconds.
    pub fn as_nanos(self) -> u64 {
        self.0
    }
    /// `k` times the span (the slots of a backoff, a backed-off RTO).
    pub const fn mul(self, k: u64) -> Duration {
        Duration(self.0 * k)
    }
}

/// Longest span of simulated time a scenario may give anywhere (a run's
/// `duration_s`, a start time, a period): 10^7 s, about 115 days. Far
/// inside u64 nanoseconds (584 years), so sums of such times never wrap.
pub const MAX_SPAN: Duration = Duration(10_000_000 * 1_000_000_000);

/// Shortest positive span a scenario may give: 1 µs. Every repeating timer
/// (a tick, a position update, an RTO, a CBR gap) is at least this long, so
/// that simulated time always advances; the shortest interval of the
/// modelled 802.11b stack (SIFS, 10 µs) is ten times longer.
pub const MIN_SPAN: Duration = Duration::from_micros(1);

/// The unit a scenario key gives a time in (its name ends in `_s` or `_ms`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A key ending in `_s`.
    Seconds,
    /// A key ending in `_ms`.
    Millis,
}

impl Unit {
    fn ns(self) -> f64 {
        match self {
            Unit::Seconds => 1e9,
            Unit::Millis => 1e6,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::Millis => "ms",
        }
    }
}

/// The range a time-valued scenario key accepts. Every such key goes through
/// [`Span::check`] once, where the scenario is read: NaN and infinities are
/// refused, and so are values that round to fewer nanoseconds than `min` (a
/// period that rounds to 0 ns would never let time advance) or exceed `max`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Whether exactly 0 is allowed (a start time, a pause), besides `min..=max`.
    pub zero: bool,
    /// Smallest positive value accepted.
    pub min: Duration,
    /// Largest value accepted.
    pub max: Duration,
}

impl Span {
    /// A positive span: `MIN_SPAN..=MAX_SPAN`.
    pub const POSITIVE: Span = Span {
        zero: false,
        min: MIN_SPAN,
        max: MAX_SPAN,
    };
    /// 0, or a positive span.
    pub const NON_NEGATIVE: Span = Span {
        zero: true,
        min: MIN_SPAN,
        max: MAX_SPAN,
    };

    /// The same span with a tighter upper bound.
    pub const fn at_most(self, max: Duration) -> Span {
        Span { max, ..self }
    }

    /// `value` (in `unit`) as integer nanoseconds, or a message
    /// `key = value: why; allowed: ...` naming the range.
    pub fn check(self, key: &str, value: f64, unit: Unit) -> Result<Duration, String> {
        let ns = value * unit.ns();
        let why = if value.is_nan() {
            Some("not a number")
        } else if value.is_infinite() {
            Some("not finite")
        } else if value < 0.0 {
            Some("negative")
        } else if value == 0.0 {
            (!self.zero).then_some("must be positive")
        } else if ns.round() < 1.0 {
            Some("rounds to 0 ns")
        } else if ns.round() < self.min.0 as f64 {
            Some("below the shortest allowed")
        } else if ns.round() > self.max.0 as f64 {
            Some("above the longest allowed")
        } else {
            None
        };
        match why {
            None => Ok(Duration(ns.round() as u64)),
            Some(why) => Err(format!(
                "{key} = {}: {why}; allowed: {}",
                Num(value),
                self.describe(unit)
            )),
        }
    }

    /// The allowed range in words, e.g. `0 or 1e-6 to 1e7 s`.
    pub fn describe(self, unit: Unit) -> String {
        let lo = Num(self.min.0 as f64 / unit.ns());
        let hi = Num(self.max.0 as f64 / unit.ns());
        let zero = if self.zero { "0 or " } else { "" };
        format!("{zero}{lo} to {hi} {}", unit.name())
    }
}

/// A number as a person writes it: plain for everyday magnitudes; beyond
/// them the shorter of plain and scientific (`1e-12`, `1e7`, `1e300`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Num(pub f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.0;
        let a = v.abs();
        let plain = format!("{v}");
        if !v.is_finite() || a == 0.0 || (1e-4..1e6).contains(&a) {
            return f.write_str(&plain);
        }
        let sci = format!("{v:e}");
        f.write_str(if sci.len() < plain.len() { &sci } else { &plain })
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

    #[test]
    fn plus_is_the_saturating_sum_wherever_a_run_can_reach() {
        let end = SimTime(0) + MAX_SPAN;
        for (t, d) in [
            (SimTime(10), Duration(5)),
            (end, MAX_SPAN),
            (SimTime(7), Duration::ZERO),
        ] {
            assert_eq!(t.plus(d), t + d);
        }
        assert_eq!(SimTime::MAX + Duration(1), SimTime::MAX);
    }

    #[test]
    fn spans_refuse_what_rounds_to_zero_or_exceeds_the_bound() {
        let s = Span::POSITIVE;
        assert_eq!(s.check("k", 0.1, Unit::Seconds), Ok(Duration(100_000_000)));
        assert_eq!(s.check("k", 2.5, Unit::Millis), Ok(Duration(2_500_000)));
        assert_eq!(s.check("k", 1e7, Unit::Seconds), Ok(MAX_SPAN));
        let err = |v: f64| s.check("nred.t_ncn_s", v, Unit::Seconds).unwrap_err();
        assert_eq!(
            err(1e-12),
            "nred.t_ncn_s = 1e-12: rounds to 0 ns; allowed: 1e-6 to 1e7 s"
        );
        assert!(err(1e-7).contains("below the shortest allowed"), "{}", err(1e-7));
        assert!(err(1e13).starts_with("nred.t_ncn_s = 1e13: above the longest allowed"));
        assert!(err(f64::NAN).starts_with("nred.t_ncn_s = NaN: not a number; allowed: 1e-6"));
        assert!(err(f64::INFINITY).contains("= inf: not finite"));
        assert!(err(-1.0).contains("= -1: negative"));
        assert!(err(0.0).contains("= 0: must be positive"));
        let z = Span::NON_NEGATIVE;
        assert_eq!(z.check("k", 0.0, Unit::Seconds), Ok(Duration::ZERO));
        assert!(z.check("k", 1e-12, Unit::Seconds).unwrap_err().contains("0 or 1e-6 to"));
        assert_eq!(
            Span::POSITIVE.at_most(Duration::from_millis(5)).describe(Unit::Millis),
            "0.001 to 5 ms"
        );
        assert_eq!(Num(12345678.0).to_string(), "12345678");
        assert_eq!(Num(200.0).to_string(), "200");
    }
}
