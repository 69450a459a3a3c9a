//! Random Early Detection (Floyd & Jacobson, IEEE/ACM ToN 1(4), 1993) as a
//! state machine without I/O: the queue tells it each arrival (with the
//! queue length it found) and when the queue went empty; it answers whether
//! to drop the arrival. Drawn numbers come from the stream it is given.
//!
//! The count-based spreading of drops (`counted_drop`) is shared with NRED's
//! distributed packet drop (Xu et al., MobiCom 2003, Algorithm 5.2).

use crate::time::SimTime;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// The `[red]` table. Defaults are the RED settings of Xu et al. §4.1
/// (min_th 5, max_th 15, w_q 0.002) with F&J's suggested max_p = 1/50.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedConfig {
    /// Minimum threshold on the average queue (packets).
    pub min_th: f64,
    /// Maximum threshold (packets).
    pub max_th: f64,
    /// Drop probability p_b reached at max_th.
    pub max_p: f64,
    /// Queue weight of the exponentially weighted moving average.
    pub w_q: f64,
    /// F&J's `s`: the typical transmission time of a packet, used to age the
    /// average over an idle period (m = idle time / s). Default: one
    /// RTS/CTS/DATA/ACK exchange of a 512-byte TCP segment at 2 Mbit/s.
    pub pkt_time_s: f64,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.02,
            w_q: 0.002,
            pkt_time_s: 0.004,
        }
    }
}

/// Checks the thresholds, probability and weight RED and NRED share; the
/// message starts with the offending key.
pub fn validate_red_params(min_th: f64, max_th: f64, max_p: f64, w_q: f64) -> Result<(), String> {
    if !(min_th.is_finite() && min_th >= 0.0) {
        return Err(format!("min_th = {min_th}: must be a number >= 0"));
    }
    if !(max_th.is_finite() && max_th > min_th) {
        return Err(format!("max_th = {max_th}: must be above min_th = {min_th}"));
    }
    if !(max_p > 0.0 && max_p <= 1.0) {
        return Err(format!("max_p = {max_p}: must be in (0, 1]"));
    }
    if !(w_q > 0.0 && w_q <= 1.0) {
        return Err(format!("w_q = {w_q}: must be in (0, 1]"));
    }
    Ok(())
}

impl RedConfig {
    /// Checks the values; the message starts with the offending key.
    pub fn validate(&self) -> Result<(), String> {
        validate_red_params(self.min_th, self.max_th, self.max_p, self.w_q)?;
        crate::time::Span::POSITIVE.check("pkt_time_s", self.pkt_time_s, crate::time::Unit::Seconds)?;
        Ok(())
    }
}

/// RED's initial drop probability (F&J eq. for p_b; Xu et al. §3.1): 0 below
/// min_th, linear up to max_p at max_th, and 1 at or above max_th.
pub fn red_pb(avg: f64, min_th: f64, max_th: f64, max_p: f64) -> f64 {
    if avg < min_th {
        0.0
    } else if avg < max_th {
        max_p * (avg - min_th) / (max_th - min_th)
    } else {
        1.0
    }
}

/// One arrival of F&J's count mechanism (Xu et al. Algorithm 5.2 has the same
/// steps): with p_b = 0 the count resets to -1 and nothing drops; otherwise
/// count grows, p_a = p_b / (1 - count p_b) (1 once that denominator is not
/// positive, or when p_b >= 1), and `u` (uniform in [0, 1)) below p_a drops
/// the packet and resets count to 0. Spreads drops so that the gap between
/// two drops is roughly uniform on 1 .. 1/p_b arrivals.
pub fn counted_drop(count: &mut i64, p_b: f64, u: f64) -> bool {
    if p_b <= 0.0 {
        *count = -1;
        return false;
    }
    *count += 1;
    let p_a = if p_b >= 1.0 {
        1.0
    } else {
        let d = 1.0 - *count as f64 * p_b;
        if d <= 0.0 {
            1.0
        } else {
            (p_b / d).min(1.0)
        }
    };
    if u < p_a {
        *count = 0;
        true
    } else {
        false
    }
}

/// The expected fraction of arrivals `counted_drop` drops at a constant
/// p_b: one over the mean gap between drops (computed exactly from p_a).
pub fn counted_drop_rate(p_b: f64) -> f64 {
    if p_b <= 0.0 {
        return 0.0;
    }
    if p_b >= 1.0 {
        return 1.0;
    }
    // After a drop the k-th arrival has count = k.
    let (mut survive, mut mean_gap) = (1.0f64, 0.0f64);
    let mut k = 1i64;
    loop {
        let d = 1.0 - k as f64 * p_b;
        let p_a = if d <= 0.0 { 1.0 } else { (p_b / d).min(1.0) };
        mean_gap += k as f64 * survive * p_a;
        survive *= 1.0 - p_a;
        if survive <= 0.0 {
            break;
        }
        k += 1;
    }
    1.0 / mean_gap
}

/// A RED gateway's state for one queue.
#[derive(Clone, Debug)]
pub struct Red {
    cfg: RedConfig,
    avg: f64,
    count: i64,
    /// Start of the current idle period (`q_time`), if the queue is empty.
    idle_since: Option<SimTime>,
    rng: Pcg64Mcg,
}

impl Red {
    /// RED with `cfg`, drawing from `rng`.
    pub fn new(cfg: RedConfig, rng: Pcg64Mcg) -> Self {
        Red {
            cfg,
            avg: 0.0,
            count: -1,
            idle_since: Some(SimTime::ZERO),
            rng,
        }
    }

    /// The average queue length.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// Packets since the last drop (`count` of Floyd & Jacobson).
    pub fn count(&self) -> i64 {
        self.count
    }

    /// F&J Figure 2, first half: the average seen by an arrival that finds
    /// `qlen` packets queued. After an idle period the average decays as if
    /// m = idle / s empty-queue arrivals had been seen.
    pub fn update_avg(&mut self, now: SimTime, qlen: usize) {
        let w = self.cfg.w_q;
        match self.idle_since {
            Some(since) if qlen == 0 => {
                let m = now.saturating_since(since).as_secs_f64() / self.cfg.pkt_time_s;
                self.avg *= (1.0 - w).powf(m);
                // Still idle until a packet is queued; aged up to now.
                self.idle_since = Some(now);
            }
            _ => self.avg = (1.0 - w) * self.avg + w * qlen as f64,
        }
    }

    /// The current p_b.
    pub fn pb(&self) -> f64 {
        red_pb(self.avg, self.cfg.min_th, self.cfg.max_th, self.cfg.max_p)
    }

    /// An arrival that finds `qlen` packets queued: true if RED drops it.
    pub fn handle_arrival(&mut self, now: SimTime, qlen: usize) -> bool {
        self.update_avg(now, qlen);
        let pb = self.pb();
        // Draw only when a drop is possible, so light load uses no numbers.
        let u = if pb > 0.0 { self.rng.gen::<f64>() } else { 1.0 };
        counted_drop(&mut self.count, pb, u)
    }

    /// The queue became empty at `now` (F&J: q_time <- time).
    pub fn handle_queue_empty(&mut self, now: SimTime) {
        self.idle_since = Some(now);
    }

    /// A packet was queued after all: the queue is no longer idle.
    pub fn handle_queue_busy(&mut self) {
        self.idle_since = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, Purpose};

    fn red(cfg: RedConfig) -> Red {
        Red::new(cfg, stream(7, 0, Purpose::Queue))
    }

    #[test]
    fn pb_is_linear_between_thresholds() {
        assert_eq!(red_pb(4.9, 5.0, 15.0, 0.1), 0.0);
        assert_eq!(red_pb(5.0, 5.0, 15.0, 0.1), 0.0);
        assert!((red_pb(10.0, 5.0, 15.0, 0.1) - 0.05).abs() < 1e-12);
        assert!((red_pb(14.999, 5.0, 15.0, 0.1) - 0.1 * 9.999 / 10.0).abs() < 1e-12);
        assert_eq!(red_pb(15.0, 5.0, 15.0, 0.1), 1.0);
    }

    #[test]
    fn ewma_follows_floyd_jacobson() {
        let cfg = RedConfig {
            w_q: 0.1,
            ..RedConfig::default()
        };
        let mut r = red(cfg);
        r.handle_queue_busy();
        let t = SimTime::from_secs_f64(1.0);
        let mut expect = 0.0;
        for q in [3usize, 7, 7, 2, 10] {
            r.update_avg(t, q);
            expect = 0.9 * expect + 0.1 * q as f64;
            assert!((r.avg() - expect).abs() < 1e-12);
        }
    }

    #[test]
    fn idle_period_ages_the_average() {
        let cfg = RedConfig {
            w_q: 0.01,
            pkt_time_s: 0.002,
            ..RedConfig::default()
        };
        let mut r = red(cfg);
        r.handle_queue_busy();
        for _ in 0..500 {
            r.update_avg(SimTime::ZERO, 10);
        }
        let before = r.avg();
        r.handle_queue_empty(SimTime::from_secs_f64(1.0));
        // 0.1 s idle = 50 packet times: avg <- (1 - w)^50 avg.
        r.update_avg(SimTime::from_secs_f64(1.1), 0);
        assert!((r.avg() - before * 0.99f64.powf(50.0)).abs() < 1e-9);
        // An arrival dropped into the idle queue does not end the idle
        // period: the next one ages the average from the previous arrival.
        let aged = r.avg();
        r.update_avg(SimTime::from_secs_f64(1.12), 0);
        assert!((r.avg() - aged * 0.99f64.powf(10.0)).abs() < 1e-9);
        r.handle_queue_busy();
        // Back to the plain average once packets are queued again.
        let a = r.avg();
        r.update_avg(SimTime::from_secs_f64(1.2), 4);
        assert!((r.avg() - (0.99 * a + 0.04)).abs() < 1e-12);
    }

    #[test]
    fn count_spreads_drops_by_pa() {
        // p_b = 0.1: count 1 -> p_a = 0.1 / 0.9; count 9 -> 0.1 / 0.1 = 1.
        let mut c = -1;
        assert!(!counted_drop(&mut c, 0.1, 0.5));
        assert_eq!(c, 0);
        for k in 1..9 {
            let pa = 0.1 / (1.0 - k as f64 * 0.1);
            // Just above p_a: no drop.
            assert!(!counted_drop(&mut c, 0.1, pa + 1e-9), "count {k}");
        }
        assert_eq!(c, 8);
        // count 9: denominator 0.1, p_a = 1: certain drop.
        assert!(counted_drop(&mut c, 0.1, 0.999_999));
        assert_eq!(c, 0);
        assert!(!counted_drop(&mut c, 0.0, 0.0));
        assert_eq!(c, -1);
        assert!(counted_drop(&mut c, 1.0, 0.999_999));
    }

    #[test]
    fn drop_gap_is_uniform_so_rate_is_about_twice_pb() {
        // F&J §7: the gap X between drops is uniform on 1 .. n = 1/p_b - 1
        // here, so the rate is 1 / E[X] = 2 / (n + 1) = 2 p_b.
        for pb in [0.01, 0.05, 0.1, 0.25] {
            let r = counted_drop_rate(pb);
            let n = (1.0 / pb).round() - 1.0;
            assert!((r - 2.0 / (n + 1.0)).abs() < 1e-9, "pb {pb}: {r}");
        }
    }

    #[test]
    fn red_drops_at_the_expected_rate() {
        // Hold the average at 10 (w_q = 1 makes avg = q): p_b = 0.05.
        let cfg = RedConfig {
            w_q: 1.0,
            max_p: 0.1,
            ..RedConfig::default()
        };
        let mut r = red(cfg);
        let n = 200_000;
        let drops = (0..n).filter(|_| r.handle_arrival(SimTime::ZERO, 10)).count();
        let p = counted_drop_rate(0.05);
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        let got = drops as f64 / n as f64;
        // Gaps are less variable than Bernoulli trials, so 4 sd is loose.
        assert!((got - p).abs() < 4.0 * sd, "rate {got}, expected {p}");
        // Above max_th every arrival drops; below min_th none.
        assert!(r.handle_arrival(SimTime::ZERO, 20));
        let mut r = red(RedConfig {
            w_q: 1.0,
            ..RedConfig::default()
        });
        assert!((0..1000).all(|_| !r.handle_arrival(SimTime::ZERO, 4)));
    }
}
