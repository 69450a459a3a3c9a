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

use super::{Base, Controller, Window};
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

/// The `[tcp.mtcp]` table.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MtcpConfig {
    /// The scale x of T_interval = RTT × CW / x (§3.2).
    pub x: f64,
    pub rtt_source: RttSource,
    /// Loss recovery under the pacing; the paper's standard TCP is Reno.
    pub base: Base,
}

impl Default for MtcpConfig {
    fn default() -> Self {
        MtcpConfig {
            // The paper's best value in the cross scenarios (§4.2.1).
            x: 35.0,
            rtt_source: RttSource::Sample,
            base: Base::Reno,
        }
    }
}

impl MtcpConfig {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.x.is_finite() && self.x > 0.0 && self.x <= 1e6) {
            return Err(format!("tcp.mtcp.x = {}: must be a number > 0 and <= 1000000", self.x));
        }
        Ok(())
    }
}

/// M-TCP's sender state: the RTT it paces with.
#[derive(Clone, Debug)]
pub struct Mtcp {
    x: f64,
    rtt_source: RttSource,
    base: Base,
    /// The RTT of T_interval; `None` until the first measurement, when
    /// segments leave as the window releases them.
    rtt: Option<Duration>,
}

impl Mtcp {
    pub fn new(cfg: &MtcpConfig) -> Self {
        Mtcp {
            x: cfg.x,
            rtt_source: cfg.rtt_source,
            base: cfg.base,
            rtt: None,
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

    fn on_ack_processed(&mut self, _w: &Window, ack: &super::AckInfo) {
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
        Some(self.rtt.map_or(Duration::ZERO, |r| Mtcp::interval(r, w.cwnd, self.x)))
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
