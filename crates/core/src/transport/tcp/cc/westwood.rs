//! TCP Westwood (Mascolo et al., MobiCom 2001) and Westwood+ (Grieco and
//! Mascolo, CCR 2004): the sender estimates the bandwidth from the rate of
//! returning ACKs and, after a loss, sets ssthresh to the window that
//! estimate fills at the minimum RTT instead of halving:
//!
//! ```text
//! ssthresh = max(2, BWE · RTT_min / MSS)     after 3 duplicate ACKs and after an RTO
//! ```
//!
//! Westwood samples every ACK, b_k = acked_k / (t_k − t_{k−1}), through the
//! Tustin filter BWE_k = 0.9 BWE_{k−1} + 0.1 (b_k + b_{k−1}) / 2 (ns-3's
//! fixed coefficient; the 2001 paper's time-varying one needs a τ it does
//! not give). Westwood+ counts the bytes acknowledged over one RTT (at
//! least 50 ms, as Linux) and feeds one sample per window through two
//! cascaded 7/8 EWMAs (Linux `tcp_westwood.c`), which resists ACK
//! compression. Both count a duplicate ACK as one MSS delivered and take
//! that credit back from the next cumulative ACK (the Linux rule). Window
//! growth is Reno's.

use serde::{Deserialize, Serialize};

use super::{AckInfo, Base, Controller, Window};
use crate::time::{Duration, SimTime};

/// Westwood+ closes a sampling window no sooner than this (Linux
/// `TCP_WESTWOOD_RTT_MIN`).
const MIN_WINDOW: Duration = Duration::from_millis(50);

/// The `[tcp.westwood]` table, shared by both variants.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct WestwoodConfig {
    /// Loss recovery the estimate runs on. Unset: Reno for Westwood (the
    /// paper's standard TCP, whose traces it calls identical), NewReno for
    /// Westwood+ (as ns-3's and Linux's implementations recover).
    pub base: Option<Base>,
}

/// Bandwidth estimate and RTT_min of one sender.
#[derive(Clone, Debug)]
pub struct Westwood {
    plus: bool,
    base: Base,
    mss: u32,
    /// BWE in bytes per second; 0 before the first sample.
    bwe: f64,
    /// Westwood: b_{k−1}. Westwood+: the first EWMA stage.
    prev: f64,
    sampled: bool,
    /// Duplicate-ACK credit not yet taken back (bytes).
    accounted: u64,
    /// Westwood: time of the last sample and the bytes counted since.
    /// Westwood+: start of the sampling window and its bytes.
    mark: Option<SimTime>,
    bytes: u64,
    /// Westwood+: the latest RTT, which sets the window length.
    rtt: Option<Duration>,
    rtt_min: Option<Duration>,
}

impl Westwood {
    /// Westwood+ if `plus`, else Westwood; no estimate yet.
    pub fn new(plus: bool, cfg: &WestwoodConfig, mss: u32) -> Self {
        let default = if plus { Base::NewReno } else { Base::Reno };
        Westwood {
            plus,
            base: cfg.base.unwrap_or(default),
            mss: mss.max(1),
            bwe: 0.0,
            prev: 0.0,
            sampled: false,
            accounted: 0,
            mark: None,
            bytes: 0,
            rtt: None,
            rtt_min: None,
        }
    }

    /// Whether this is Westwood+ (one sample per RTT).
    pub fn is_plus(&self) -> bool {
        self.plus
    }
    /// The bandwidth estimate, bytes per second.
    pub fn bwe(&self) -> f64 {
        self.bwe
    }
    /// The smallest RTT seen, the propagation delay the ssthresh rule
    /// multiplies BWE by.
    pub fn rtt_min(&self) -> Option<Duration> {
        self.rtt_min
    }

    /// ssthresh after a loss: max(2, BWE · RTT_min / MSS) whole packets.
    pub fn bw_rtt_min_pkts(&self) -> f64 {
        let rtt_min = self.rtt_min.map_or(0.0, |d| d.as_secs_f64());
        // Whole packets; the epsilon keeps an exact product from rounding
        // down through binary fractions.
        (self.bwe * rtt_min / self.mss as f64 + 1e-9).floor().max(2.0)
    }

    /// Bytes this ACK reports delivered: a duplicate counts one MSS, which
    /// a later cumulative ACK gives back (Linux `westwood_acked_count`).
    fn acked_count(&mut self, ack: &AckInfo) -> u64 {
        let mss = ack.mss as u64;
        let mut cumul = ack.acked_bytes;
        if cumul == 0 {
            if ack.dupacks == 0 {
                return 0;
            }
            self.accounted += mss;
            cumul = mss;
        }
        if cumul > mss {
            if self.accounted >= cumul {
                self.accounted -= cumul;
                cumul = mss;
            } else {
                cumul -= self.accounted;
                self.accounted = 0;
            }
        }
        cumul
    }

    fn tustin(&mut self, b: f64) {
        if self.sampled {
            self.bwe = 0.9 * self.bwe + 0.1 * (b + self.prev) / 2.0;
        } else {
            self.bwe = b;
            self.sampled = true;
        }
        self.prev = b;
    }

    fn two_stage(&mut self, b: f64) {
        if self.sampled {
            self.prev = (7.0 * self.prev + b) / 8.0;
            self.bwe = (7.0 * self.bwe + self.prev) / 8.0;
        } else {
            self.prev = b;
            self.bwe = b;
            self.sampled = true;
        }
    }

    /// Westwood: one sample per ACK that brings time forward.
    fn per_ack(&mut self, now: SimTime, count: u64) {
        self.bytes += count;
        match self.mark {
            None => {
                // No inter-arrival time before the first ACK.
                self.mark = Some(now);
                self.bytes = 0;
            }
            Some(t) if now > t => {
                let dt = now.saturating_since(t).as_secs_f64();
                let b = self.bytes as f64 / dt;
                self.tustin(b);
                self.mark = Some(now);
                self.bytes = 0;
            }
            Some(_) => {}
        }
    }

    /// Westwood+: close the window once it spans an RTT, then count.
    fn per_rtt(&mut self, now: SimTime, count: u64) {
        match self.mark {
            None => self.mark = Some(now),
            Some(t) => {
                let span = now.saturating_since(t);
                if let Some(rtt) = self.rtt {
                    if span > rtt.max(MIN_WINDOW) {
                        self.two_stage(self.bytes as f64 / span.as_secs_f64());
                        self.bytes = 0;
                        self.mark = Some(now);
                    }
                }
                self.bytes += count;
            }
        }
    }
}

impl Controller for Westwood {
    fn base(&self) -> Base {
        self.base
    }

    fn on_ack_received(&mut self, _w: &Window, ack: &AckInfo) {
        let rtt = ack.echo_rtt();
        if rtt > Duration::ZERO {
            self.rtt = Some(rtt);
            self.rtt_min = Some(self.rtt_min.map_or(rtt, |m| m.min(rtt)));
        }
        let count = self.acked_count(ack);
        if self.plus {
            self.per_rtt(ack.now, count);
        } else if count > 0 {
            self.per_ack(ack.now, count);
        }
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, _flight_pkts: u64, dupacks: u32) {
        // Classic fast recovery from the estimate: inflate by the duplicates,
        // deflate to ssthresh when recovery ends.
        w.ssthresh = self.bw_rtt_min_pkts();
        w.cwnd = w.ssthresh + dupacks as f64;
    }

    fn on_rto(&mut self, w: &mut Window, _flight_pkts: u64, _first_expiry: bool) -> bool {
        w.ssthresh = self.bw_rtt_min_pkts();
        w.cwnd = 1.0;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ack, win};
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    /// An ACK of `bytes` new bytes at `t` ms echoing a segment sent `rtt` ms
    /// earlier.
    fn new_ack(t: u64, bytes: u64, rtt: u64) -> AckInfo {
        AckInfo {
            now: ms(t),
            acked_bytes: bytes,
            ts_echo: ms(t - rtt),
            ..ack()
        }
    }

    #[test]
    fn westwood_filter_converges_to_a_constant_ack_rate() {
        // 1000 B every 4 ms: 250 kB/s.
        let mut w = Westwood::new(false, &WestwoodConfig::default(), 1000);
        let window = win(10.0, 20.0);
        w.on_ack_received(&window, &new_ack(10, 1000, 10));
        assert_eq!(w.bwe(), 0.0, "one ACK gives no inter-arrival time");
        w.on_ack_received(&window, &new_ack(14, 1000, 10));
        assert!(
            (w.bwe() - 250_000.0).abs() < 1e-6,
            "the first sample initialises the filter"
        );
        // A step to 1000 B every 2 ms (500 kB/s): after k more samples the
        // Tustin filter is within 0.9^k of the new rate.
        let mut t = 14;
        for _ in 0..60 {
            t += 2;
            w.on_ack_received(&window, &new_ack(t, 1000, 10));
        }
        let err = (w.bwe() - 500_000.0).abs() / 500_000.0;
        assert!(err < 0.01, "bwe {} after 60 samples", w.bwe());
        // Exactly the recursion: one more sample at the same rate.
        let before = w.bwe();
        w.on_ack_received(&window, &new_ack(t + 2, 1000, 10));
        assert!((w.bwe() - (0.9 * before + 0.1 * 500_000.0)).abs() < 1e-6);
    }

    #[test]
    fn westwood_plus_takes_one_sample_per_rtt_through_two_ewmas() {
        // 1000 B every 10 ms with a 100 ms RTT: 100 kB/s.
        let mut w = Westwood::new(true, &WestwoodConfig::default(), 1000);
        let window = win(10.0, 20.0);
        let mut estimates = Vec::new();
        for k in 0..=40u64 {
            w.on_ack_received(&window, &new_ack(100 + 10 * k, 1000, 100));
            estimates.push(w.bwe());
        }
        // The window opened at 100 ms and closes at the first ACK more than
        // an RTT later (210 ms), over the 10 ACKs counted since 100 ms:
        // 10 kB / 110 ms.
        assert_eq!(estimates[10], 0.0);
        let first = 10_000.0 / 0.110;
        assert!((estimates[11] - first).abs() < 1e-6, "{}", estimates[11]);
        // Later windows span 110 ms and hold 11 ACKs: exactly 100 kB/s,
        // which both stages approach.
        assert!(estimates[40] > first && estimates[40] < 100_000.0);
        let mut w2 = w.clone();
        for k in 41..2000u64 {
            w2.on_ack_received(&window, &new_ack(100 + 10 * k, 1000, 100));
        }
        assert!((w2.bwe() - 100_000.0).abs() / 100_000.0 < 0.005, "bwe {}", w2.bwe());
    }

    #[test]
    fn duplicate_acks_count_one_mss_taken_back_later() {
        let mut w = Westwood::new(false, &WestwoodConfig::default(), 1000);
        let dup = |t: u64, n: u32| AckInfo {
            now: ms(t),
            acked_bytes: 0,
            dupacks: n,
            ..ack()
        };
        assert_eq!(w.acked_count(&dup(1, 1)), 1000);
        assert_eq!(w.acked_count(&dup(2, 2)), 1000);
        // The cumulative ACK covers the hole and the two segments the
        // duplicates already counted: 4000 − 2000 credit.
        assert_eq!(w.acked_count(&new_ack(3, 4000, 1)), 2000);
        assert_eq!(w.accounted, 0);
        // An ACK that is neither new nor a duplicate counts nothing.
        assert_eq!(w.acked_count(&dup(4, 0)), 0);
    }

    #[test]
    fn ssthresh_after_a_loss_is_bwe_times_rtt_min() {
        // 250 kB/s and RTT_min 40 ms: 10 kB, 10 packets of 1000 B.
        let mut w = Westwood::new(false, &WestwoodConfig::default(), 1000);
        let window = win(10.0, 20.0);
        for k in 0..50u64 {
            let rtt = if k == 7 { 40 } else { 60 };
            w.on_ack_received(&window, &new_ack(100 + 4 * k, 1000, rtt));
        }
        assert_eq!(w.rtt_min(), Some(Duration::from_millis(40)));
        assert!((w.bwe() - 250_000.0).abs() < 1e-3);
        let mut after = win(16.0, 20.0);
        w.on_fast_retransmit(&mut after, 16, 3);
        assert_eq!((after.ssthresh, after.cwnd), (10.0, 13.0));
        w.on_recovery_exit(&mut after);
        assert_eq!(after.cwnd, 10.0);
        let mut after = win(16.0, 20.0);
        assert!(w.on_rto(&mut after, 16, true));
        assert_eq!((after.ssthresh, after.cwnd), (10.0, 1.0));
        // No estimate yet: the floor of two packets.
        let fresh = Westwood::new(true, &WestwoodConfig::default(), 1000);
        assert_eq!(fresh.bw_rtt_min_pkts(), 2.0);
    }

    #[test]
    fn bases_follow_the_variant_unless_set() {
        assert_eq!(
            Westwood::new(false, &WestwoodConfig::default(), 1000).base(),
            Base::Reno
        );
        assert_eq!(
            Westwood::new(true, &WestwoodConfig::default(), 1000).base(),
            Base::NewReno
        );
        let cfg = WestwoodConfig {
            base: Some(Base::NewReno),
        };
        let w = Westwood::new(false, &cfg, 1000);
        assert!(w.guards_recover() && !w.partial_ack_ends_recovery());
    }
}
