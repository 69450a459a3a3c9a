//! Congestion control: the seam where TCP variants differ.
//!
//! A variant is a struct implementing [`Controller`]. Every hook has a body
//! with Reno's rule (RFC 5681), so a variant overrides only what it changes.
//! [`CongestionControl`] holds one variant and dispatches with `match`, not
//! `dyn` (smoltcp's `Controller` and `AnyController`). The sender owns loss
//! detection, the recovery bookkeeping, the RTO and the pacing queue; it asks
//! the controller how the window reacts, whether the RTO backs off and how
//! far apart paced segments leave.
//!
//! To add a variant: a struct with its state and its `impl Controller`, an
//! arm in [`CongestionControl`] and in `dispatch!`, and a
//! [`super::TcpVariant`] name.

pub mod mtcp;
#[cfg(test)]
pub mod probe;
pub mod tcp_ap;
pub mod westwood;

pub use mtcp::Mtcp;
pub use tcp_ap::TcpAp;
pub use westwood::Westwood;

use super::{TcpConfig, TcpVariant};
use crate::time::{Duration, SimTime};

/// The congestion state the variants act on, in packets (as ns-2 and the
/// papers count it).
#[derive(Clone, Debug, PartialEq)]
pub struct Window {
    /// Congestion window, fractional so that congestion avoidance grows it
    /// by 1/cwnd per ACK (RFC 5681 §3.1, eq. (3)).
    pub cwnd: f64,
    /// Slow-start threshold: below it cwnd grows by one per ACK.
    pub ssthresh: f64,
    /// Growth stops here: the advertised window bounds what can be sent, so
    /// a larger cwnd would only inflate the next reduction.
    pub max_cwnd: f64,
}

/// What an arriving ACK tells the congestion control.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo {
    /// When the ACK arrived.
    pub now: SimTime,
    /// Bytes newly acknowledged; 0 for a duplicate ACK.
    pub acked_bytes: u64,
    /// The sender's MSS, bytes: what one packet of the window stands for.
    pub mss: u32,
    /// The sender's own RTT measurement carried by this ACK: one timed
    /// segment at a time, Karn's rule applied.
    pub rtt_sample: Option<Duration>,
    /// The smoothed RTT after this ACK's sample (RFC 6298 §2).
    pub srtt: Option<Duration>,
    /// Hops the ACK travelled (what a TTL would tell); `None` when the caller
    /// does not know.
    pub hops: Option<u8>,
    /// The send time of the data segment the receiver echoes (a timestamp
    /// echo, RFC 7323 TSecr in spirit): `now - ts_echo` is an RTT sample
    /// for every ACK, retransmissions included.
    pub ts_echo: SimTime,
    /// Duplicate ACKs counted so far in a row, this one included (0 for an
    /// ACK of new data).
    pub dupacks: u32,
}

impl AckInfo {
    /// Whether the ACK acknowledges new data.
    pub fn is_new(&self) -> bool {
        self.acked_bytes > 0
    }
    /// RTT from the echoed timestamp.
    pub fn echo_rtt(&self) -> Duration {
        self.now.saturating_since(self.ts_echo)
    }
}

/// The loss-recovery rules a variant builds on. It decides whether a partial
/// ACK ends fast recovery and whether RFC 6582's `recover` guard applies,
/// so a variant states its base once and cannot drop the guard by omission.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Base {
    /// RFC 5681: the first new ACK ends fast recovery; no `recover` guard.
    Reno,
    /// RFC 6582: recovery lasts until all data outstanding at the loss is
    /// acknowledged; fast retransmit only above `recover`.
    NewReno,
}

/// Slow start below ssthresh (+1 packet per new ACK, RFC 5681 §3.1 with
/// ns-2's per-ACK counting), congestion avoidance above (+1/cwnd per new
/// ACK, about one packet per RTT).
pub fn aimd_increase(w: &mut Window) {
    if w.cwnd < w.ssthresh {
        w.cwnd += 1.0;
    } else {
        w.cwnd += 1.0 / w.cwnd;
    }
    w.cwnd = w.cwnd.min(w.max_cwnd);
}

/// ssthresh = max(FlightSize / 2, 2) packets (RFC 5681 eq. 4), whole
/// packets as in ns-2.
pub fn half_flight(flight_pkts: u64) -> f64 {
    ((flight_pkts / 2) as f64).max(2.0)
}

/// Reno's fast retransmit (RFC 5681 §3.2 steps 2-3): ssthresh halves the
/// flight, cwnd = ssthresh + the duplicates.
pub fn reno_fast_retransmit(w: &mut Window, flight_pkts: u64, dupacks: u32) {
    w.ssthresh = half_flight(flight_pkts);
    w.cwnd = w.ssthresh + dupacks as f64;
}

/// Reno's timeout (RFC 5681 §3.1): ssthresh halves the flight on the first
/// expiry and holds over repeated ones; cwnd = 1.
pub fn reno_rto(w: &mut Window, flight_pkts: u64, first_expiry: bool) {
    if first_expiry {
        w.ssthresh = half_flight(flight_pkts);
    }
    w.cwnd = 1.0;
}

/// The hooks of a congestion-control variant. The bodies are Reno's
/// (RFC 5681) and NewReno's (RFC 6582) rules; the sender calls them in this
/// order for one ACK: `on_ack_received`, then one of `on_ack`,
/// `on_partial_ack`, `on_recovery_exit` (new data) or `on_fast_retransmit`,
/// `on_recovery_dupack` (duplicates), then `on_ack_processed`.
pub trait Controller {
    /// The recovery rules this variant builds on. No default: every variant
    /// says which, so the `recover` guard follows from it.
    fn base(&self) -> Base;

    /// Every ACK, new or duplicate, before the sender acts on it: where a
    /// variant takes its samples.
    fn on_ack_received(&mut self, _w: &Window, _ack: &AckInfo) {}

    /// New data acknowledged outside fast recovery.
    fn on_ack(&mut self, w: &mut Window, _ack: &AckInfo) {
        aimd_increase(w);
    }

    /// Every ACK of new data, inside recovery or not, after the window
    /// changed: a pacing variant recomputes its interval here.
    fn on_ack_processed(&mut self, _w: &Window, _ack: &AckInfo) {}

    /// The `dupack_threshold`-th duplicate ACK: set ssthresh and the
    /// inflated window cwnd = ssthresh + dupacks (RFC 5681 §3.2 steps 2-3,
    /// RFC 6582 §3.2 step 2).
    fn on_fast_retransmit(&mut self, w: &mut Window, flight_pkts: u64, dupacks: u32) {
        reno_fast_retransmit(w, flight_pkts, dupacks);
    }

    /// A further duplicate ACK during fast recovery inflates cwnd by one
    /// packet (RFC 5681 §3.2 step 4).
    fn on_recovery_dupack(&mut self, w: &mut Window) {
        w.cwnd += 1.0;
    }

    /// Whether a partial ACK (below `recover`) ends fast recovery: Reno yes,
    /// NewReno no (RFC 6582 §3.2 step 5).
    fn partial_ack_ends_recovery(&self) -> bool {
        self.base() == Base::Reno
    }

    /// Whether fast retransmit waits until an ACK covers `recover`, so that
    /// the duplicates a go-back-N retransmission provokes do not halve the
    /// window again (RFC 6582 §3.2 step 2). Reno has no such guard.
    fn guards_recover(&self) -> bool {
        self.base() == Base::NewReno
    }

    /// A partial ACK that keeps recovery going: deflate by the packets
    /// acknowledged, add one back if at least one MSS was acknowledged
    /// (RFC 6582 §3.2 step 5).
    fn on_partial_ack(&mut self, w: &mut Window, acked_bytes: u64, mss: u32) {
        let acked_pkts = acked_bytes as f64 / mss as f64;
        w.cwnd -= acked_pkts;
        if acked_bytes >= mss as u64 {
            w.cwnd += 1.0;
        }
        w.cwnd = w.cwnd.max(1.0);
    }

    /// Fast recovery ends: deflate to ssthresh (RFC 5681 §3.2 step 6,
    /// RFC 6582 §3.2 step 5 full ACK, first option).
    fn on_recovery_exit(&mut self, w: &mut Window) {
        w.cwnd = w.ssthresh.min(w.max_cwnd).max(1.0);
    }

    /// The retransmission timer expired: cwnd = 1 packet (loss window,
    /// RFC 5681 §3.1); ssthresh halves the flight on the first expiry and
    /// is held over repeated expiries of the same data (RFC 5681 §3.1).
    /// Returns whether the RTO backs off (RFC 6298 §5.5).
    fn on_rto(&mut self, w: &mut Window, flight_pkts: u64, first_expiry: bool) -> bool {
        reno_rto(w, flight_pkts, first_expiry);
        true
    }

    /// A segment (new or retransmitted) left at `now`.
    fn on_sent(&mut self, _now: SimTime) {}

    /// The least time between two segments leaving the sender's pacing
    /// queue; `None` when the window alone decides (no pacing queue).
    fn pacing_interval(&self, _w: &Window) -> Option<Duration> {
        None
    }
}

/// RFC 6582 NewReno: Reno's window rules, recovery lasts until all data
/// outstanding at the loss is acknowledged.
#[derive(Clone, Debug, Default)]
pub struct NewReno;

impl Controller for NewReno {
    fn base(&self) -> Base {
        Base::NewReno
    }
}

/// RFC 5681 Reno: the first new ACK ends fast recovery.
#[derive(Clone, Debug, Default)]
pub struct Reno;

impl Controller for Reno {
    fn base(&self) -> Base {
        Base::Reno
    }
}

/// A congestion-control variant with its own state.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    /// RFC 5681 with RFC 6582's fast recovery.
    NewReno(NewReno),
    /// RFC 5681 alone.
    Reno(Reno),
    /// Yahia and Bíró's pacing by T_interval = RTT × CW / x.
    Mtcp(Mtcp),
    /// ElRakabawy et al.'s adaptive pacing by (1 + 2 cov) · FHD.
    TcpAp(TcpAp),
    /// Westwood and Westwood+ (one estimator, two filters).
    Westwood(Westwood),
    /// Test double for the seam itself.
    #[cfg(test)]
    Probe(probe::Probe),
}

/// Calls a [`Controller`] method on whichever variant is held.
macro_rules! dispatch {
    ($self:expr, $c:ident => $call:expr) => {
        match $self {
            CongestionControl::NewReno($c) => $call,
            CongestionControl::Reno($c) => $call,
            CongestionControl::Mtcp($c) => $call,
            CongestionControl::TcpAp($c) => $call,
            CongestionControl::Westwood($c) => $call,
            #[cfg(test)]
            CongestionControl::Probe($c) => $call,
        }
    };
}

impl CongestionControl {
    /// The variant's controller, with its keys from `cfg` (validated) and
    /// the sender's MSS.
    pub fn new(variant: TcpVariant, cfg: &TcpConfig, mss: u32) -> Self {
        match variant {
            TcpVariant::NewReno => CongestionControl::NewReno(NewReno),
            TcpVariant::Reno => CongestionControl::Reno(Reno),
            TcpVariant::Mtcp => CongestionControl::Mtcp(Mtcp::new(&cfg.mtcp)),
            TcpVariant::TcpAp => CongestionControl::TcpAp(TcpAp::new(&cfg.ap, mss)),
            TcpVariant::Westwood => CongestionControl::Westwood(Westwood::new(false, &cfg.westwood, mss)),
            TcpVariant::WestwoodPlus => CongestionControl::Westwood(Westwood::new(true, &cfg.westwood, mss)),
        }
    }

    /// The scenario's name for the variant held.
    pub fn variant(&self) -> TcpVariant {
        match self {
            CongestionControl::NewReno(_) => TcpVariant::NewReno,
            CongestionControl::Reno(_) => TcpVariant::Reno,
            CongestionControl::Mtcp(_) => TcpVariant::Mtcp,
            CongestionControl::TcpAp(_) => TcpVariant::TcpAp,
            CongestionControl::Westwood(w) if w.is_plus() => TcpVariant::WestwoodPlus,
            CongestionControl::Westwood(_) => TcpVariant::Westwood,
            #[cfg(test)]
            CongestionControl::Probe(_) => TcpVariant::NewReno,
        }
    }
}

impl Controller for CongestionControl {
    fn base(&self) -> Base {
        dispatch!(self, c => c.base())
    }
    fn on_ack_received(&mut self, w: &Window, ack: &AckInfo) {
        dispatch!(self, c => c.on_ack_received(w, ack))
    }
    fn on_ack(&mut self, w: &mut Window, ack: &AckInfo) {
        dispatch!(self, c => c.on_ack(w, ack))
    }
    fn on_ack_processed(&mut self, w: &Window, ack: &AckInfo) {
        dispatch!(self, c => c.on_ack_processed(w, ack))
    }
    fn on_fast_retransmit(&mut self, w: &mut Window, flight_pkts: u64, dupacks: u32) {
        dispatch!(self, c => c.on_fast_retransmit(w, flight_pkts, dupacks))
    }
    fn on_recovery_dupack(&mut self, w: &mut Window) {
        dispatch!(self, c => c.on_recovery_dupack(w))
    }
    fn partial_ack_ends_recovery(&self) -> bool {
        dispatch!(self, c => c.partial_ack_ends_recovery())
    }
    fn guards_recover(&self) -> bool {
        dispatch!(self, c => c.guards_recover())
    }
    fn on_partial_ack(&mut self, w: &mut Window, acked_bytes: u64, mss: u32) {
        dispatch!(self, c => c.on_partial_ack(w, acked_bytes, mss))
    }
    fn on_recovery_exit(&mut self, w: &mut Window) {
        dispatch!(self, c => c.on_recovery_exit(w))
    }
    fn on_rto(&mut self, w: &mut Window, flight_pkts: u64, first_expiry: bool) -> bool {
        dispatch!(self, c => c.on_rto(w, flight_pkts, first_expiry))
    }
    fn on_sent(&mut self, now: SimTime) {
        dispatch!(self, c => c.on_sent(now))
    }
    fn pacing_interval(&self, w: &Window) -> Option<Duration> {
        dispatch!(self, c => c.pacing_interval(w))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn win(cwnd: f64, ssthresh: f64) -> Window {
        Window {
            cwnd,
            ssthresh,
            max_cwnd: 1000.0,
        }
    }

    pub(crate) fn ack() -> AckInfo {
        AckInfo {
            now: SimTime::ZERO,
            acked_bytes: 1000,
            mss: 1000,
            rtt_sample: None,
            srtt: None,
            hops: None,
            ts_echo: SimTime::ZERO,
            dupacks: 0,
        }
    }

    fn cc(v: TcpVariant) -> CongestionControl {
        CongestionControl::new(v, &TcpConfig::default(), 1000)
    }

    #[test]
    fn slow_start_then_avoidance() {
        let mut cc = cc(TcpVariant::NewReno);
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
        let mut cc = cc(TcpVariant::Reno);
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
        let mut cc = cc(TcpVariant::NewReno);
        let mut w = win(10.0, 64.0);
        cc.on_fast_retransmit(&mut w, 10, 3);
        assert_eq!((w.ssthresh, w.cwnd), (5.0, 8.0));
        assert!(cc.on_rto(&mut w, 3, true), "Reno's rules back the RTO off");
        assert_eq!((w.ssthresh, w.cwnd), (2.0, 1.0));
        let mut w = win(10.0, 64.0);
        cc.on_rto(&mut w, 12, true);
        cc.on_rto(&mut w, 1, false);
        assert_eq!((w.ssthresh, w.cwnd), (6.0, 1.0));
    }

    #[test]
    fn partial_ack_deflation() {
        let mut cc = cc(TcpVariant::NewReno);
        let mut w = win(12.0, 5.0);
        cc.on_partial_ack(&mut w, 3000, 1000);
        assert_eq!(w.cwnd, 10.0);
        assert!(!cc.partial_ack_ends_recovery());
    }

    #[test]
    fn the_base_decides_recovery_and_the_recover_guard() {
        for v in TcpVariant::ALL {
            let c = cc(v);
            let newreno = c.base() == Base::NewReno;
            assert_eq!(c.guards_recover(), newreno, "{v}");
            assert_eq!(c.partial_ack_ends_recovery(), !newreno, "{v}");
            assert_eq!(c.variant(), v);
        }
        for v in [
            TcpVariant::Reno,
            TcpVariant::NewReno,
            TcpVariant::Westwood,
            TcpVariant::WestwoodPlus,
        ] {
            assert_eq!(cc(v).pacing_interval(&win(4.0, 8.0)), None, "{v} does not pace");
        }
        for v in [TcpVariant::Mtcp, TcpVariant::TcpAp] {
            assert!(cc(v).pacing_interval(&win(4.0, 8.0)).is_some(), "{v} paces");
        }
        assert_eq!(cc(TcpVariant::Reno).base(), Base::Reno);
        assert_eq!(cc(TcpVariant::NewReno).base(), Base::NewReno);
    }
}
