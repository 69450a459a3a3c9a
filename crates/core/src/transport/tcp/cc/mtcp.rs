//! M-TCP (Yahia and Bíró 2007, §3): rate-based sending within the window of
//! a Reno sender. On every ACK the sender paces new segments with
//!
//! ```text
//! T_interval = RTT × 1/x × CW            (§3.1, unnumbered)
//! ```
//!
//! with CW the congestion window in packets, RTT the recently measured
//! round-trip time and x a scale the user sets (§3.2). Not Brown and Singh's
//! 1997 mobile TCP of the same name.
//!
//! Paced, a flow sends at most x / (CW · RTT) segments per second where the
//! window alone would allow CW / RTT: pacing binds once CW > √x, and with
//! the window at its cap W about x / W segments stay in flight.

use serde::{Deserialize, Serialize};

use super::{aimd_increase, reno_fast_retransmit, reno_rto, AckInfo, Base, Controller, Window};
use crate::time::Duration;

/// Which RTT enters T_interval: the paper says "recently measured".
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RttSource {
    /// The latest Karn-valid sample (one timed segment per RTT).
    Sample,
    /// The smoothed RTT of RFC 6298.
    Srtt,
}

/// Which CW enters T_interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum CwSource {
    /// The sender's congestion window, which stops growing at the advertised
    /// window (`max_window_pkts`).
    #[serde(rename = "effective")]
    Effective,
    /// A window kept by the same rules without that cap, as ns-2's `cwnd_`
    /// (its `maxcwnd_` is 0 by default): it keeps growing while no loss
    /// comes, so the interval keeps lengthening.
    #[serde(rename = "ns2-unbounded")]
    Ns2Unbounded,
}

/// The `[tcp.mtcp]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MtcpConfig {
    /// The scale x of T_interval = RTT × CW / x (§3.2).
    pub x: f64,
    /// Which RTT T_interval uses.
    pub rtt_source: RttSource,
    /// Which CW T_interval uses.
    pub cw_source: CwSource,
    /// Loss recovery under the pacing; the paper's standard TCP is Reno.
    pub base: Base,
}

impl Default for MtcpConfig {
    fn default() -> Self {
        MtcpConfig {
            // The paper's best value in the cross scenarios (§4.2.1).
            x: 35.0,
            rtt_source: RttSource::Sample,
            cw_source: CwSource::Effective,
            base: Base::Reno,
        }
    }
}

impl MtcpConfig {
    /// Refuses an x outside (0, 10^6] (at 0 or below T_interval is
    /// infinite or negative); the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.x.is_finite() && self.x > 0.0 && self.x <= 1e6) {
            return Err(format!("tcp.mtcp.x = {}: must be a number > 0 and <= 1000000", self.x));
        }
        Ok(())
    }
}

/// M-TCP's sender state: the RTT it paces with, and the uncapped window
/// when CW is ns-2's.
#[derive(Clone, Debug)]
pub struct Mtcp {
    x: f64,
    rtt_source: RttSource,
    cw_source: CwSource,
    /// `Ns2Unbounded`: the window that follows the sender's rules without
    /// the cap; set from the sender's window at the first event.
    shadow: Option<Window>,
    base: Base,
    /// The RTT of T_interval; `None` until the first measurement, when
    /// segments leave as the window releases them.
    rtt: Option<Duration>,
}

impl Mtcp {
    /// Before any RTT is measured, so segments leave unpaced.
    pub fn new(cfg: &MtcpConfig) -> Self {
        Mtcp {
            x: cfg.x,
            rtt_source: cfg.rtt_source,
            cw_source: cfg.cw_source,
            shadow: None,
            base: cfg.base,
            rtt: None,
        }
    }

    /// The uncapped window, started from the sender's (only for
    /// `Ns2Unbounded`).
    fn shadow(&mut self, w: &Window) -> Option<&mut Window> {
        if self.cw_source != CwSource::Ns2Unbounded {
            return None;
        }
        Some(self.shadow.get_or_insert_with(|| Window {
            max_cwnd: f64::INFINITY,
            ..w.clone()
        }))
    }

    /// The CW of T_interval.
    pub fn cw(&self, w: &Window) -> f64 {
        match (&self.shadow, self.cw_source) {
            (Some(s), CwSource::Ns2Unbounded) => s.cwnd,
            _ => w.cwnd,
        }
    }

    /// T_interval = RTT × 1/x × CW, CW in packets.
    pub fn interval(rtt: Duration, cwnd_pkts: f64, x: f64) -> Duration {
        Duration::from_secs_f64(rtt.as_secs_f64() * cwnd_pkts / x)
    }
}

impl Controller for Mtcp {
    fn base(&self) -> Base {
        self.base
    }

    fn on_ack(&mut self, w: &mut Window, _ack: &AckInfo) {
        aimd_increase(w);
        if let Some(s) = self.shadow(w) {
            aimd_increase(s);
        }
    }

    fn on_fast_retransmit(&mut self, w: &mut Window, flight_pkts: u64, dupacks: u32) {
        reno_fast_retransmit(w, flight_pkts, dupacks);
        if let Some(s) = self.shadow(w) {
            s.ssthresh = w.ssthresh;
            s.cwnd = w.cwnd;
        }
    }

    fn on_recovery_dupack(&mut self, w: &mut Window) {
        w.cwnd += 1.0;
        if let Some(s) = self.shadow(w) {
            s.cwnd += 1.0;
        }
    }

    fn on_partial_ack(&mut self, w: &mut Window, acked_bytes: u64, mss: u32) {
        super::Reno.on_partial_ack(w, acked_bytes, mss);
        if let Some(s) = self.shadow(w) {
            s.cwnd = w.cwnd;
        }
    }

    fn on_recovery_exit(&mut self, w: &mut Window) {
        w.cwnd = w.ssthresh.min(w.max_cwnd).max(1.0);
        if let Some(s) = self.shadow(w) {
            s.cwnd = s.ssthresh.max(1.0);
        }
    }

    fn on_rto(&mut self, w: &mut Window, flight_pkts: u64, first_expiry: bool) -> bool {
        reno_rto(w, flight_pkts, first_expiry);
        if let Some(s) = self.shadow(w) {
            s.ssthresh = w.ssthresh;
            s.cwnd = w.cwnd;
        }
        true
    }

    fn on_ack_processed(&mut self, _w: &Window, ack: &AckInfo) {
        let rtt = match self.rtt_source {
            RttSource::Sample => ack.rtt_sample,
            RttSource::Srtt => ack.srtt,
        };
        if rtt.is_some() {
            self.rtt = rtt;
        }
    }

    /// Read when a slot is due, so the interval follows every change of the
    /// window (after an RTO, CW = 1 gives RTT / x).
    fn pacing_interval(&self, w: &Window) -> Option<Duration> {
        Some(
            self.rtt
                .map_or(Duration::ZERO, |r| Mtcp::interval(r, self.cw(w), self.x)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{ack, win};
    use super::*;
    use crate::time::SimTime;

    #[test]
    fn interval_is_rtt_times_cw_over_x() {
        // 40 ms × 20 / 5 = 160 ms; 40 ms × 20 / 50 = 16 ms; 8 ms × 1 / 35.
        assert_eq!(
            Mtcp::interval(Duration::from_millis(40), 20.0, 5.0),
            Duration::from_millis(160)
        );
        assert_eq!(
            Mtcp::interval(Duration::from_millis(40), 20.0, 50.0),
            Duration::from_millis(16)
        );
        assert_eq!(
            Mtcp::interval(Duration::from_millis(8), 1.0, 35.0),
            Duration::from_nanos(228_571)
        );
    }

    #[test]
    fn paces_with_the_latest_sample_or_srtt_and_the_current_window() {
        let mut m = Mtcp::new(&MtcpConfig {
            x: 10.0,
            ..MtcpConfig::default()
        });
        assert_eq!(m.pacing_interval(&win(4.0, 8.0)), Some(Duration::ZERO), "no RTT yet");
        let mut a = ack();
        a.rtt_sample = Some(Duration::from_millis(50));
        a.srtt = Some(Duration::from_millis(80));
        m.on_ack_processed(&win(4.0, 8.0), &a);
        assert_eq!(m.pacing_interval(&win(4.0, 8.0)), Some(Duration::from_millis(20)));
        // An ACK without a sample keeps the last one; the window moves it.
        a.rtt_sample = None;
        m.on_ack_processed(&win(6.0, 8.0), &a);
        assert_eq!(m.pacing_interval(&win(6.0, 8.0)), Some(Duration::from_millis(30)));
        let mut s = Mtcp::new(&MtcpConfig {
            x: 10.0,
            rtt_source: RttSource::Srtt,
            ..MtcpConfig::default()
        });
        a.now = SimTime(1);
        s.on_ack_processed(&win(5.0, 8.0), &a);
        assert_eq!(s.pacing_interval(&win(5.0, 8.0)), Some(Duration::from_millis(40)));
    }

    #[test]
    fn ns2_unbounded_cw_keeps_growing_past_the_cap() {
        let cfg = MtcpConfig {
            x: 10.0,
            cw_source: CwSource::Ns2Unbounded,
            ..MtcpConfig::default()
        };
        let mut m = Mtcp::new(&cfg);
        let mut w = Window {
            cwnd: 18.0,
            ssthresh: 10.0,
            max_cwnd: 20.0,
        };
        let mut a = ack();
        a.rtt_sample = Some(Duration::from_millis(10));
        for _ in 0..200 {
            m.on_ack(&mut w, &a);
            m.on_ack_processed(&w, &a);
        }
        // The sender's window stops at 20; the shadow grows by 1/cw per ACK:
        // 18² + 2·200 = 724, so about 26.9 packets.
        assert_eq!(w.cwnd, 20.0);
        assert!((m.cw(&w) - 724f64.sqrt()).abs() < 0.05, "cw {}", m.cw(&w));
        let gap = m.pacing_interval(&w).unwrap();
        assert_eq!(gap, Mtcp::interval(Duration::from_millis(10), m.cw(&w), 10.0));
        // A loss brings both back to the same ssthresh-based window.
        m.on_fast_retransmit(&mut w, 20, 3);
        assert_eq!(m.cw(&w), w.cwnd);
        m.on_recovery_exit(&mut w);
        assert_eq!((m.cw(&w), w.cwnd), (10.0, 10.0));
        assert!(m.on_rto(&mut w, 10, true));
        assert_eq!(m.cw(&w), 1.0);
    }

    #[test]
    fn reno_base_and_standard_rto() {
        let mut m = Mtcp::new(&MtcpConfig::default());
        assert_eq!(m.base(), Base::Reno);
        assert!(!m.guards_recover());
        let mut w = win(10.0, 20.0);
        assert!(m.on_rto(&mut w, 10, true));
        assert_eq!((w.cwnd, w.ssthresh), (1.0, 5.0));
        assert!(MtcpConfig {
            x: 0.0,
            ..MtcpConfig::default()
        }
        .validate()
        .unwrap_err()
        .starts_with("tcp.mtcp.x = 0:"));
    }
}
