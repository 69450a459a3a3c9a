//! Congestion control: the seam where TCP variants differ. One enum,
//! dispatched by `match` (no `dyn`), with per-variant state. The sender owns
//! loss detection, recovery bookkeeping and the RTO; it asks the variant how
//! the window reacts and whether a pacing gate holds the next segment back.
//!
//! To add a variant (Westwood, TCP-AP, M-TCP): a struct with its state, an
//! arm in each `match` below, and a [`super::TcpVariant`] name.

use super::TcpVariant;
use crate::time::{Duration, SimTime};

/// The congestion state the variants act on, in packets (as ns-2 and the
/// papers count it).
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    pub cwnd: f64,
    pub ssthresh: f64,
    /// Growth stops here: the advertised window bounds what can be sent, so
    /// a larger cwnd would only inflate the next reduction.
    pub max_cwnd: f64,
}

/// What an ACK that acknowledges new data tells the congestion control.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    pub now: SimTime,
    pub acked_bytes: u64,
    pub mss: u32,
    /// Valid RTT measurement carried by this ACK (Karn's rule applied).
    pub rtt_sample: Option<Duration>,
    pub srtt: Option<Duration>,
}

/// A congestion-control variant with its own state.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    NewReno(NewReno),
    Reno(Reno),
}

/// RFC 6582 NewReno: Reno's window rules, recovery lasts until all data
/// outstanding at the loss is acknowledged.
#[derive(Clone, Debug, Default)]
pub struct NewReno;

/// RFC 5681 Reno: the first new ACK ends fast recovery.
#[derive(Clone, Debug, Default)]
pub struct Reno;

/// Slow start below ssthresh (+1 packet per new ACK, RFC 5681 §3.1 with
/// ns-2's per-ACK counting), congestion avoidance above (+1/cwnd per new
/// ACK, about one packet per RTT).
fn aimd_increase(w: &mut Window) {
    if w.cwnd < w.ssthresh {
        w.cwnd += 1.0;
    } else {
        w.cwnd += 1.0 / w.cwnd;
    }
    w.cwnd = w.cwnd.min(w.max_cwnd);
}

/// ssthresh = max(FlightSize / 2, 2) packets (RFC 5681 eq. 4), whole
/// packets as in ns-2.
fn half_flight(flight_pkts: u64) -> f64 {
    ((flight_pkts / 2) as f64).max(2.0)
}

impl CongestionControl {
    pub fn new(variant: TcpVariant) -> Self {
        match variant {
            TcpVariant::NewReno => CongestionControl::NewReno(NewReno),
            TcpVariant::Reno => CongestionControl::Reno(Reno),
        }
    }

    pub fn variant(&self) -> TcpVariant {
        match self {
            CongestionControl::NewReno(_) => TcpVariant::NewReno,
            CongestionControl::Reno(_) => TcpVariant::Reno,
        }
    }

    /// New data acknowledged outside fast recovery.
    pub fn on_ack(&mut self, w: &mut Window, _ack: &AckInfo) {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => aimd_increase(w),
        }
    }

    /// The `dupack_threshold`-th duplicate ACK: set ssthresh and the
    /// inflated window cwnd = ssthresh + dupacks (RFC 5681 §3.2 steps 2-3,
    /// RFC 6582 §3.2 step 2).
    pub fn on_fast_retransmit(&mut self, w: &mut Window, flight_pkts: u64, dupacks: u32) {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => {
                w.ssthresh = half_flight(flight_pkts);
                w.cwnd = w.ssthresh + dupacks as f64;
            }
        }
    }

    /// A further duplicate ACK during fast recovery inflates cwnd by one
    /// packet (RFC 5681 §3.2 step 4).
    pub fn on_recovery_dupack(&mut self, w: &mut Window) {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => w.cwnd += 1.0,
        }
    }

    /// Whether a partial ACK (below `recover`) ends fast recovery: Reno yes,
    /// NewReno no (RFC 6582 §3.2 step 5).
    pub fn partial_ack_ends_recovery(&self) -> bool {
        match self {
            CongestionControl::NewReno(_) => false,
            CongestionControl::Reno(_) => true,
        }
    }

    /// A partial ACK that keeps recovery going: deflate by the packets
    /// acknowledged, add one back if at least one MSS was acknowledged
    /// (RFC 6582 §3.2 step 5).
    pub fn on_partial_ack(&mut self, w: &mut Window, acked_bytes: u64, mss: u32) {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => {
                let acked_pkts = acked_bytes as f64 / mss as f64;
                w.cwnd -= acked_pkts;
                if acked_bytes >= mss as u64 {
                    w.cwnd += 1.0;
                }
                w.cwnd = w.cwnd.max(1.0);
            }
        }
    }

    /// Fast recovery ends: deflate to ssthresh (RFC 5681 §3.2 step 6,
    /// RFC 6582 §3.2 step 5 full ACK, first option).
    pub fn on_recovery_exit(&mut self, w: &mut Window) {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => {
                w.cwnd = w.ssthresh.min(w.max_cwnd).max(1.0);
            }
        }
    }

    /// The retransmission timer expired: cwnd = 1 packet (loss window,
    /// RFC 5681 §3.1); ssthresh halves the flight on the first expiry and
    /// is held over repeated expiries of the same data (RFC 5681 §3.1).
    pub fn on_rto(&mut self, w: &mut Window, flight_pkts: u64, first_expiry: bool) {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => {
                if first_expiry {
                    w.ssthresh = half_flight(flight_pkts);
                }
                w.cwnd = 1.0;
            }
        }
    }

    /// A segment (new or retransmitted) left at `now`.
    pub fn on_sent(&mut self, _now: SimTime) {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => {}
        }
    }

    /// Earliest time the next segment may leave, for pacing variants;
    /// `None` when the window alone decides.
    pub fn pacing_release(&self) -> Option<SimTime> {
        match self {
            CongestionControl::NewReno(_) | CongestionControl::Reno(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn win(cwnd: f64, ssthresh: f64) -> Window {
        Window {
            cwnd,
            ssthresh,
            max_cwnd: 1000.0,
        }
    }

    fn ack() -> AckInfo {
        AckInfo {
            now: SimTime::ZERO,
            acked_bytes: 1000,
            mss: 1000,
            rtt_sample: None,
            srtt: None,
        }
    }

    #[test]
    fn slow_start_then_avoidance() {
        let mut cc = CongestionControl::new(TcpVariant::NewReno);
        let mut w = win(1.0, 4.0);
        for _ in 0..3 {
            cc.on_ack(&mut w, &ack());
        }
        assert_eq!(w.cwnd, 4.0);
        // Four ACKs at cwnd ~4 add about one packet.
        for _ in 0..4 {
            cc.on_ack(&mut w, &ack());
        }
        assert!(w.cwnd > 4.9 && w.cwnd < 5.0, "cwnd {}", w.cwnd);
    }

    #[test]
    fn growth_stops_at_max_cwnd() {
        let mut cc = CongestionControl::new(TcpVariant::Reno);
        let mut w = Window {
            cwnd: 1.0,
            ssthresh: 100.0,
            max_cwnd: 3.0,
        };
        for _ in 0..10 {
            cc.on_ack(&mut w, &ack());
        }
        assert_eq!(w.cwnd, 3.0);
    }

    #[test]
    fn losses_halve_the_flight_with_floor_two() {
        let mut cc = CongestionControl::new(TcpVariant::NewReno);
        let mut w = win(10.0, 64.0);
        cc.on_fast_retransmit(&mut w, 10, 3);
        assert_eq!((w.ssthresh, w.cwnd), (5.0, 8.0));
        cc.on_rto(&mut w, 3, true);
        assert_eq!((w.ssthresh, w.cwnd), (2.0, 1.0));
        let mut w = win(10.0, 64.0);
        cc.on_rto(&mut w, 12, true);
        cc.on_rto(&mut w, 1, false);
        assert_eq!((w.ssthresh, w.cwnd), (6.0, 1.0));
    }

    #[test]
    fn partial_ack_deflation() {
        let mut cc = CongestionControl::new(TcpVariant::NewReno);
        let mut w = win(12.0, 5.0);
        cc.on_partial_ack(&mut w, 3000, 1000);
        assert_eq!(w.cwnd, 10.0);
        assert!(!cc.partial_ack_ends_recovery());
        assert!(CongestionControl::new(TcpVariant::Reno).partial_ack_ends_recovery());
    }
}
