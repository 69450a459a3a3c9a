//! TCP with Adaptive Pacing (ElRakabawy, Klemm, Lindemann, MobiHoc 2005):
//! a NewReno sender that spaces the segments its window releases by
//!
//! ```text
//! interval = (1 + 2 · cov) · FHD
//! ```
//!
//! FHD is the four-hop propagation delay, the time a segment needs until the
//! fourth hop after it may transmit again without interfering, estimated
//! from the RTT of each ACK and the hops that ACK travelled. cov is the
//! variation of the recent FHD samples, a sign of incipient congestion.
//! Arithmetic and constants follow the authors' ns-2 code
//! (`tcp-ap.cc`), restated in `specs`-style notation:
//!
//! ```text
//! q   = ½ (RTT/h − (S_d + S_a)/B)     per-hop queueing delay; above the bound, the average
//! d₁  = q + S_d/B                      one-hop delay
//! FHD sample = 4·d₁ if h ≥ 4, else d₁
//! ```
//!
//! with S_d = MSS + 112 B, S_a = 112 B of assumed headers, B the link rate.
//! Samples in (0, bound) feed an EWMA (weight α on the old value) and a
//! window of the last `history`, whose mean absolute deviation over its
//! mean (the code's choice, default) or standard deviation over its mean is
//! cov. Before the first sample the interval is 50 ms.
//!
//! Fast retransmit and the RTO stop pacing until the next ACK (the sender
//! flushes its pacing queue); the reference code stalls until an RTO when
//! its queue is empty at a fast retransmit, which this does not copy. The
//! reference does not back off the RTO either (`rto_backoff = false`).

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use super::{reno_fast_retransmit, reno_rto, AckInfo, Base, Controller, Window};
use crate::time::Duration;

/// Header bytes the reference adds to a segment and takes as an ACK's size.
const OVERHEAD_BYTES: f64 = 112.0;
/// The interval before the first FHD estimate.
const INITIAL_INTERVAL_S: f64 = 0.05;

/// How cov is computed from the FHD samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Variation {
    /// Mean absolute deviation over the mean (the reference code).
    Mad,
    /// Population standard deviation over the mean (the paper's CoV).
    Std,
}

/// The `[tcp.ap]` table: the reference code's constants.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpApConfig {
    /// Hops apart that may transmit at once (`n_factor_`).
    pub n_factor: u32,
    /// FHD samples in the variation window (`history_`).
    pub history: u32,
    /// EWMA weight on the old FHD (`alpha_`).
    pub alpha: f64,
    /// EWMA weight on the old per-hop queueing delay (`gamma_`).
    pub gamma: f64,
    /// Outlier bound on queueing delays and FHD samples (`delaybound_`).
    pub delaybound_s: f64,
    /// Link rate for transmission times (`ll_bandwidth_`).
    pub ll_bandwidth_bps: f64,
    /// How cov is computed: the reference code's MAD or the paper's CoV.
    pub cov: Variation,
    /// Back off the RTO on expiry (RFC 6298 §5.5); the reference does not.
    pub rto_backoff: bool,
}

impl Default for TcpApConfig {
    fn default() -> Self {
        TcpApConfig {
            n_factor: 4,
            history: 50,
            alpha: 0.7,
            gamma: 0.5,
            delaybound_s: 0.5,
            ll_bandwidth_bps: 2e6,
            cov: Variation::Mad,
            rto_backoff: false,
        }
    }
}

impl TcpApConfig {
    /// Checks each key's range; the message names the offending key.
    pub fn validate(&self) -> Result<(), String> {
        let int = |key: &str, v: u32, max: u32| {
            if v < 1 || v > max {
                return Err(format!("tcp.ap.{key} = {v}: must be an integer in 1..={max}"));
            }
            Ok(())
        };
        int("n_factor", self.n_factor, 64)?;
        int("history", self.history, 10_000)?;
        for (key, v) in [("alpha", self.alpha), ("gamma", self.gamma)] {
            if !(0.0..1.0).contains(&v) {
                return Err(format!("tcp.ap.{key} = {v}: must be a number >= 0 and < 1"));
            }
        }
        // Through the one time validator: a bound that rounds to 0 ns is refused.
        crate::time::Span::POSITIVE
            .at_most(crate::time::Duration::from_secs_f64(86_400.0))
            .check("tcp.ap.delaybound_s", self.delaybound_s, crate::time::Unit::Seconds)?;
        if !(self.ll_bandwidth_bps.is_finite() && self.ll_bandwidth_bps >= 1.0 && self.ll_bandwidth_bps <= 1e12) {
            return Err(format!(
                "tcp.ap.ll_bandwidth_bps = {}: must be a number of bit/s >= 1 and <= 1e12",
                self.ll_bandwidth_bps
            ));
        }
        Ok(())
    }
}

/// TCP-AP's estimator and pacing switch.
#[derive(Clone, Debug)]
pub struct TcpAp {
    cfg: TcpApConfig,
    mss: u32,
    /// Average per-hop queueing delay, s.
    avg_queuing: f64,
    /// EWMA of the FHD samples, s; 0 before the first.
    fhd: f64,
    samples: VecDeque<f64>,
    /// cov of the window (by `cfg.cov`); kept while the samples are all equal.
    variation: f64,
    /// Pacing is off from a fast retransmit or an RTO to the next ACK.
    paced: bool,
}

impl TcpAp {
    /// No FHD sample yet: the interval is 50 ms until the first.
    pub fn new(cfg: &TcpApConfig, mss: u32) -> Self {
        TcpAp {
            cfg: cfg.clone(),
            mss,
            avg_queuing: 0.0,
            fhd: 0.0,
            samples: VecDeque::with_capacity(cfg.history as usize),
            variation: 0.0,
            paced: true,
        }
    }

    /// The smoothed four-hop propagation delay, s; 0 before a sample.
    pub fn fhd_s(&self) -> f64 {
        self.fhd
    }
    /// cov of the FHD window, by `cfg.cov`.
    pub fn variation(&self) -> f64 {
        self.variation
    }
    /// The average per-hop queueing delay q, s.
    pub fn avg_queuing_s(&self) -> f64 {
        self.avg_queuing
    }

    /// The pacing interval (1 + 2 · cov) · FHD, 50 ms before any sample.
    pub fn interval_s(&self) -> f64 {
        if self.fhd > 0.0 {
            (1.0 + 2.0 * self.variation) * self.fhd
        } else {
            INITIAL_INTERVAL_S
        }
    }

    /// One ACK's RTT (s) over `hops` hops: the FHD sample it gives, and the
    /// estimator updated with it. Returns the sample.
    pub fn estimate(&mut self, rtt_s: f64, hops: u32) -> f64 {
        let h = hops.max(1) as f64;
        let bytes_per_s = self.cfg.ll_bandwidth_bps / 8.0;
        let s_d = self.mss as f64 + OVERHEAD_BYTES;
        let s_a = OVERHEAD_BYTES;
        let mut q = 0.5 * (rtt_s / h - (s_d + s_a) / bytes_per_s);
        if q > self.cfg.delaybound_s {
            q = self.avg_queuing;
        }
        self.avg_queuing = self.cfg.gamma * self.avg_queuing + (1.0 - self.cfg.gamma) * q;
        let one_hop = q + s_d / bytes_per_s;
        let sample = if hops >= self.cfg.n_factor {
            self.cfg.n_factor as f64 * one_hop
        } else {
            one_hop
        };
        if sample > 0.0 && sample < self.cfg.delaybound_s {
            self.fhd = if self.fhd == 0.0 {
                sample
            } else {
                self.cfg.alpha * self.fhd + (1.0 - self.cfg.alpha) * sample
            };
            if self.samples.len() == self.cfg.history as usize {
                self.samples.pop_front();
            }
            self.samples.push_back(sample);
            self.update_variation();
        }
        sample
    }

    fn update_variation(&mut self) {
        let n = self.samples.len() as f64;
        let mean = self.samples.iter().sum::<f64>() / n;
        let mad = self.samples.iter().map(|x| (x - mean).abs()).sum::<f64>() / n;
        if mad <= 0.0 {
            return;
        }
        self.variation = match self.cfg.cov {
            Variation::Mad => mad / mean,
            Variation::Std => (self.samples.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt() / mean,
        };
    }
}

impl Controller for TcpAp {
    fn base(&self) -> Base {
        Base::NewReno
    }

    /// Every ACK, duplicates included, is a sample (the reference's `recv`).
    fn on_ack_received(&mut self, _w: &Window, ack: &AckInfo) {
        self.paced = true;
        let hops = ack.hops.map_or(1, u32::from);
        self.estimate(ack.echo_rtt().as_secs_f64(), hops);
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, flight_pkts: u64, dupacks: u32) {
        reno_fast_retransmit(w, flight_pkts, dupacks);
        self.paced = false;
    }

    fn on_rto(&mut self, w: &mut Window, flight_pkts: u64, first_expiry: bool) -> bool {
        reno_rto(w, flight_pkts, first_expiry);
        self.paced = false;
        self.cfg.rto_backoff
    }

    fn pacing_interval(&self, _w: &Window) -> Option<Duration> {
        self.paced.then(|| Duration::from_secs_f64(self.interval_s()))
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::win;
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn fhd_sample_arithmetic() {
        // MSS 1000: S_d = 1112 B, S_a = 112 B, B = 250 kB/s, so
        // (S_d + S_a)/B = 4.896 ms and S_d/B = 4.448 ms.
        let mut ap = TcpAp::new(&TcpApConfig::default(), 1000);
        // One hop, RTT 20 ms: q = ½(20 − 4.896) = 7.552 ms; d₁ = 12 ms.
        assert!(close(ap.estimate(0.020, 1), 0.012));
        assert!(close(ap.fhd_s(), 0.012), "the first sample initialises the EWMA");
        assert!(close(ap.avg_queuing_s(), 0.5 * 0.007_552));
        // Four hops, RTT 80 ms: q = ½(20 − 4.896) again, FHD sample 4 d₁.
        assert!(close(ap.estimate(0.080, 4), 0.048));
        assert!(close(ap.fhd_s(), 0.7 * 0.012 + 0.3 * 0.048));
        // Three hops count as one (fewer than n_factor).
        assert!(close(ap.estimate(0.060, 3), 0.012));
    }

    #[test]
    fn outliers_take_the_average_queueing_delay_and_are_not_sampled() {
        let mut ap = TcpAp::new(&TcpApConfig::default(), 1000);
        ap.estimate(0.020, 1);
        let avg = ap.avg_queuing_s();
        let fhd = ap.fhd_s();
        // RTT 2 s on one hop: q ≈ 0.998 s > 0.5 s bound, replaced by the
        // average; the sample d₁ = avg + 4.448 ms is in range.
        let s = ap.estimate(2.0, 1);
        assert!(close(s, avg + 0.004_448));
        // Four hops, RTT 1.6 s: q = ½(0.4 − 0.004896) s is below the bound,
        // but the FHD sample 4 d₁ = 0.808 s is not: no sample, the FHD stays.
        let before = ap.fhd_s();
        assert!(close(ap.estimate(1.6, 4), 0.808));
        assert!(close(ap.fhd_s(), before));
        assert!(before != fhd);
    }

    #[test]
    fn variation_and_rate() {
        let mut ap = TcpAp::new(&TcpApConfig::default(), 1000);
        assert!(close(ap.interval_s(), 0.05), "50 ms before the first estimate");
        // FHD samples 12 and 48 ms: mean 30, MAD 18 → 0.6; std 18 → 0.6.
        ap.estimate(0.020, 1);
        assert_eq!(ap.variation(), 0.0, "one sample has no spread");
        ap.estimate(0.080, 4);
        assert!(close(ap.variation(), 0.6));
        let fhd = 0.7 * 0.012 + 0.3 * 0.048;
        assert!(close(ap.interval_s(), (1.0 + 1.2) * fhd));
        // A third, 12 ms: mean 24, MAD (12+24+12)/3 = 16 → 2/3; std
        // sqrt((144+576+144)/3) = 16.97 → 0.7071.
        ap.estimate(0.020, 1);
        assert!(close(ap.variation(), 2.0 / 3.0));
        let mut std = TcpAp::new(
            &TcpApConfig {
                cov: Variation::Std,
                ..TcpApConfig::default()
            },
            1000,
        );
        for (r, h) in [(0.020, 1), (0.080, 4), (0.020, 1)] {
            std.estimate(r, h);
        }
        assert!((std.variation() - 288f64.sqrt() / 24.0).abs() < 1e-12);
        // The window keeps the last `history` samples.
        let mut short = TcpAp::new(
            &TcpApConfig {
                history: 2,
                ..TcpApConfig::default()
            },
            1000,
        );
        for (r, h) in [(0.080, 4), (0.020, 1), (0.020, 1)] {
            short.estimate(r, h);
        }
        assert!(
            close(short.variation(), 0.6),
            "the 48 ms sample left the window; equal samples keep the last value"
        );
    }

    #[test]
    fn losses_stop_pacing_until_the_next_ack_and_the_rto_does_not_back_off() {
        let mut ap = TcpAp::new(&TcpApConfig::default(), 1000);
        let w = win(8.0, 20.0);
        assert_eq!(ap.pacing_interval(&w), Some(Duration::from_millis(50)));
        let mut w2 = w.clone();
        ap.on_fast_retransmit(&mut w2, 8, 3);
        assert_eq!((w2.ssthresh, w2.cwnd), (4.0, 7.0));
        assert_eq!(ap.pacing_interval(&w2), None);
        let a = AckInfo {
            hops: Some(4),
            ..super::super::tests::ack()
        };
        ap.on_ack_received(&w2, &a);
        assert!(ap.pacing_interval(&w2).is_some());
        assert!(!ap.on_rto(&mut w2, 8, true), "the reference does not back off");
        assert_eq!(ap.pacing_interval(&w2), None);
        let mut backing = TcpAp::new(
            &TcpApConfig {
                rto_backoff: true,
                ..TcpApConfig::default()
            },
            1000,
        );
        assert!(backing.on_rto(&mut w2, 8, true));
        assert!(backing.guards_recover(), "NewReno's recover guard");
        assert!(TcpApConfig {
            alpha: 1.0,
            ..TcpApConfig::default()
        }
        .validate()
        .unwrap_err()
        .starts_with("tcp.ap.alpha = 1:"));
    }
}
