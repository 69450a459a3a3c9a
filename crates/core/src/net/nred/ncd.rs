//! Neighborhood Congestion Detection (Xu et al. §5.1): every T_interval the
//! node reads how long its radio spent transmitting, receiving and idle,
//! turns the three utilisation ratios into queue-size indices q = U·W/C and
//! keeps their RED-style moving averages.

use crate::time::{Duration, SimTime};

fn minus(a: Duration, b: Duration) -> Duration {
    Duration(a.0.saturating_sub(b.0))
}

/// The queue-size index of a utilisation ratio: q = U · W / C (§5.1), with
/// W the channel bandwidth (bit/s) and C the average packet size (bits).
pub fn queue_index(u: f64, w_bps: f64, c_bits: f64) -> f64 {
    u * w_bps / c_bits
}

/// Cumulative time the medium was idle both physically (radio idle) and
/// virtually (NAV clear): the paper's state 5. The radio reports its
/// busy/idle edges with the NAV's cumulative busy time at that instant;
/// within a radio-idle stretch the NAV's growth is subtracted.
#[derive(Clone, Debug)]
pub struct IdleMeter {
    total: Duration,
    /// Start of the current radio-idle stretch and the NAV's total then.
    idle_from: Option<(SimTime, Duration)>,
}

impl Default for IdleMeter {
    fn default() -> Self {
        IdleMeter {
            total: Duration::ZERO,
            idle_from: Some((SimTime::ZERO, Duration::ZERO)),
        }
    }
}

impl IdleMeter {
    fn stretch(now: SimTime, from: SimTime, nav_from: Duration, nav_now: Duration) -> Duration {
        let span = now.saturating_since(from);
        minus(span, minus(nav_now, nav_from))
    }

    /// The radio became busy (transmitting or a signal on the air).
    pub fn medium_busy(&mut self, now: SimTime, nav_total: Duration) {
        if let Some((from, nav_from)) = self.idle_from.take() {
            self.total += Self::stretch(now, from, nav_from, nav_total);
        }
    }

    /// The radio became idle.
    pub fn medium_idle(&mut self, now: SimTime, nav_total: Duration) {
        if self.idle_from.is_none() {
            self.idle_from = Some((now, nav_total));
        }
    }

    /// Idle time (radio idle and NAV clear) up to `now`.
    pub fn idle_time(&self, now: SimTime, nav_total: Duration) -> Duration {
        match self.idle_from {
            Some((from, nav_from)) => self.total + Self::stretch(now, from, nav_from, nav_total),
            None => self.total,
        }
    }
}

/// Cumulative radio-state times at one instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RadioTimes {
    /// Transmitting (state 1).
    pub tx: Duration,
    /// Receiving frames addressed to this node (state 2, see docs/nred.md).
    pub rx: Duration,
    /// Idle: neither physical nor virtual carrier sense busy (state 5).
    pub idle: Duration,
}

/// The estimator: q, q_tx, q_rx of the last interval and their averages.
#[derive(Clone, Debug)]
pub struct Ncd {
    w_q: f64,
    w_bps: f64,
    c_bits: f64,
    last: RadioTimes,
    last_at: SimTime,
    /// The last interval's neighborhood queue estimate q (§5.1).
    pub q: f64,
    /// Its part sent by this node.
    pub q_tx: f64,
    /// Its part received by this node.
    pub q_rx: f64,
    /// avg, avg_tx, avg_rx (initially 0, §5.1).
    pub avg: f64,
    /// The average of `q_tx`.
    pub avg_tx: f64,
    /// The average of `q_rx`.
    pub avg_rx: f64,
}

impl Ncd {
    /// A detector averaging with weight `w_q`, for a channel of `w_bps` and packets of `c_bits`.
    pub fn new(w_q: f64, w_bps: f64, c_bits: f64) -> Self {
        Ncd {
            w_q,
            w_bps,
            c_bits,
            last: RadioTimes::default(),
            last_at: SimTime::ZERO,
            q: 0.0,
            q_tx: 0.0,
            q_rx: 0.0,
            avg: 0.0,
            avg_tx: 0.0,
            avg_rx: 0.0,
        }
    }

    /// Eqs. (1)-(3) over the interval since the previous sample, then
    /// avg ← (1 − w_q)·avg + w_q·q for each index.
    pub fn sample(&mut self, now: SimTime, t: RadioTimes) {
        let span = now.saturating_since(self.last_at).as_secs_f64();
        if span <= 0.0 {
            return;
        }
        let frac = |a: Duration, b: Duration| (minus(a, b).as_secs_f64() / span).clamp(0.0, 1.0);
        let u_busy = 1.0 - frac(t.idle, self.last.idle);
        let u_tx = frac(t.tx, self.last.tx);
        let u_rx = frac(t.rx, self.last.rx);
        self.q = queue_index(u_busy, self.w_bps, self.c_bits);
        self.q_tx = queue_index(u_tx, self.w_bps, self.c_bits);
        self.q_rx = queue_index(u_rx, self.w_bps, self.c_bits);
        let w = self.w_q;
        self.avg = (1.0 - w) * self.avg + w * self.q;
        self.avg_tx = (1.0 - w) * self.avg_tx + w * self.q_tx;
        self.avg_rx = (1.0 - w) * self.avg_rx + w * self.q_rx;
        self.last = t;
        self.last_at = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn utilisation_to_index() {
        // Full use of 2 Mbit/s with C = 8192 bits: 244.14 "packets".
        assert!((queue_index(1.0, 2e6, 8192.0) - 244.140625).abs() < 1e-9);
        assert!((queue_index(0.41, 2e6, 8192.0) - 100.09765625).abs() < 1e-9);
        assert_eq!(queue_index(0.0, 2e6, 8192.0), 0.0);
    }

    #[test]
    fn one_interval_gives_the_three_indices() {
        let mut n = Ncd::new(1.0, 2e6, 8000.0);
        // 100 ms: 30 ms tx, 20 ms rx, 40 ms idle (so 60 ms busy).
        let t = RadioTimes {
            tx: ms(30),
            rx: ms(20),
            idle: ms(40),
        };
        n.sample(SimTime::ZERO + ms(100), t);
        assert!((n.q - 0.6 * 250.0).abs() < 1e-9);
        assert!((n.q_tx - 0.3 * 250.0).abs() < 1e-9);
        assert!((n.q_rx - 0.2 * 250.0).abs() < 1e-9);
        // The next interval only counts the increments.
        let t2 = RadioTimes {
            tx: ms(30),
            rx: ms(20),
            idle: ms(140),
        };
        n.sample(SimTime::ZERO + ms(200), t2);
        assert_eq!((n.q, n.q_tx, n.q_rx), (0.0, 0.0, 0.0));
    }

    #[test]
    fn averages_use_w_q() {
        let mut n = Ncd::new(0.2, 2e6, 8000.0);
        let mut idle = Duration::ZERO;
        let mut expect = 0.0;
        for k in 1..=10u64 {
            // Busy half of every interval: q = 125.
            idle += ms(50);
            n.sample(
                SimTime::ZERO + ms(100 * k),
                RadioTimes {
                    idle,
                    ..RadioTimes::default()
                },
            );
            expect = 0.8 * expect + 0.2 * 125.0;
            assert!((n.avg - expect).abs() < 1e-9);
        }
    }

    #[test]
    fn idle_meter_excludes_nav_time() {
        let us = |x: u64| SimTime(x * 1000);
        let d = |x: u64| Duration::from_micros(x);
        let mut m = IdleMeter::default();
        // Idle 0..100 us, of which the NAV covered 30 us.
        m.medium_busy(us(100), d(30));
        assert_eq!(m.idle_time(us(150), d(30)), d(70));
        m.medium_idle(us(200), d(30));
        // A repeated edge does not restart the stretch.
        m.medium_idle(us(210), d(30));
        assert_eq!(m.idle_time(us(260), d(40)), d(70 + 50));
        m.medium_busy(us(300), d(50));
        m.medium_busy(us(310), d(50));
        assert_eq!(m.idle_time(us(400), d(80)), d(70 + 80));
    }
}
