//! TCP as a sans-IO state machine, one direction of a bulk or on/off
//! transfer: a [`TcpSender`] at the source and a [`TcpReceiver`] at the
//! sink. Handlers take `now` and an input; `poll_transmit` and
//! `poll_timeout` tell the caller what to send and when to call back.
//!
//! Byte sequence numbers start at 0 (no handshake, as in ns-2's one-way
//! agents); windows are counted in MSS-sized packets, as the papers do.
//! Congestion control is a [`CongestionControl`] variant, so new variants
//! plug in without touching loss recovery or the RTO (DESIGN.md principle 6).

mod cc;
mod pacer;
mod receiver;
mod rtt;
mod sender;

pub use cc::mtcp::{CwSource, MtcpConfig, RttSource};
pub use cc::tcp_ap::{TcpApConfig, Variation};
pub use cc::westwood::WestwoodConfig;
pub use cc::{AckInfo, Base, CongestionControl, Controller, Mtcp, NewReno, Reno, TcpAp, Westwood, Window};
pub use pacer::Pacer;
pub use receiver::TcpReceiver;
pub use rtt::RttEstimator;
pub use sender::TcpSender;

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

use crate::time::{Duration, SimTime, Span, Unit};

/// Bytes of a TCP header without options (RFC 793 §3.1).
pub const TCP_HEADER_BYTES: u32 = 20;
/// Bytes of an IPv4 header without options (RFC 791 §3.1).
pub const IP_HEADER_BYTES: u32 = 20;

/// The scenario's `[tcp]` table. Defaults and their sources are listed in
/// `docs/tcp.md`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TcpConfig {
    /// Congestion window at the start, in packets (ns-2 `windowInit_` = 1).
    pub initial_cwnd_pkts: u32,
    /// Receiver's advertised window, in packets: never more than
    /// min(cwnd, this) outstanding (ns-2 `window_` = 20).
    pub max_window_pkts: u32,
    /// Lower bound of the RTO (RFC 6298 §2.4: 1 s).
    pub min_rto_s: f64,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s).
    pub initial_rto_s: f64,
    /// Upper bound of the RTO, also of its backoff (RFC 6298 §2.5: >= 60 s).
    pub max_rto_s: f64,
    /// Clock granularity G in RTO = SRTT + max(G, 4 RTTVAR) (RFC 6298 §2.3).
    pub clock_granularity_s: f64,
    /// Delay ACKs (RFC 5681 §4.2); `false` ACKs every segment at once.
    pub delayed_ack: bool,
    /// Longest time an ACK is held back (RFC 5681 §4.2: < 500 ms).
    pub delayed_ack_timeout_s: f64,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 §3.2: 3).
    pub dupack_threshold: u32,
    /// Restart from the initial window when new data comes after the
    /// connection was idle longer than one RTO (RFC 5681 §4.1; ns-2
    /// `slow_start_restart_` = true). Only on/off sources go idle.
    pub slow_start_after_idle: bool,
    /// `[tcp.mtcp]`: M-TCP's keys (`tcp-mtcp`).
    pub mtcp: MtcpConfig,
    /// `[tcp.ap]`: TCP-AP's keys (`tcp-ap`).
    pub ap: TcpApConfig,
    /// `[tcp.westwood]`: TCP Westwood's and Westwood+'s keys.
    pub westwood: WestwoodConfig,
    /// ns-2.35's RTO rule (`[ns2] rto_ssthresh_window`, set by the
    /// scenario, not a `[tcp]` key): every expiry sets ssthresh to half of
    /// min(cwnd, window) without NewReno's inflation, at least 2.
    #[serde(skip)]
    pub ns2_rto: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        TcpConfig {
            initial_cwnd_pkts: 1,
            max_window_pkts: 20,
            min_rto_s: 1.0,
            initial_rto_s: 1.0,
            max_rto_s: 60.0,
            clock_granularity_s: 0.01,
            delayed_ack: true,
            delayed_ack_timeout_s: 0.1,
            dupack_threshold: 3,
            slow_start_after_idle: true,
            mtcp: MtcpConfig::default(),
            ap: TcpApConfig::default(),
            westwood: WestwoodConfig::default(),
            ns2_rto: false,
        }
    }
}

/// Largest time a `[tcp]` key may give, so that doubling and nanosecond
/// conversion stay far from overflow (one simulated day).
const MAX_SECONDS: Duration = Duration::from_millis(86_400_000);

fn check_int(key: &str, v: u32, min: u32, max: u32) -> Result<(), String> {
    if v < min || v > max {
        return Err(format!("tcp.{key} = {v}: must be an integer in {min}..={max}"));
    }
    Ok(())
}

/// Times go through the one time validator: a positive time (the RTO is a
/// repeating timer) is at least 1 µs, so it never rounds to 0 ns.
fn check_secs(key: &str, v: f64, zero_ok: bool) -> Result<(), String> {
    let span = if zero_ok { Span::NON_NEGATIVE } else { Span::POSITIVE };
    span.at_most(MAX_SECONDS)
        .check(&format!("tcp.{key}"), v, Unit::Seconds)
        .map(|_| ())
}

impl TcpConfig {
    /// Checks every key; the message names the key, its value and what is
    /// allowed.
    pub fn validate(&self) -> Result<(), String> {
        check_int("initial_cwnd_pkts", self.initial_cwnd_pkts, 1, 1 << 20)?;
        check_int("max_window_pkts", self.max_window_pkts, 1, 1 << 20)?;
        check_int("dupack_threshold", self.dupack_threshold, 1, 1000)?;
        check_secs("min_rto_s", self.min_rto_s, true)?;
        check_secs("initial_rto_s", self.initial_rto_s, false)?;
        check_secs("max_rto_s", self.max_rto_s, false)?;
        check_secs("clock_granularity_s", self.clock_granularity_s, true)?;
        check_secs("delayed_ack_timeout_s", self.delayed_ack_timeout_s, false)?;
        if self.max_rto_s < self.min_rto_s {
            return Err(format!(
                "tcp.max_rto_s = {}: must be >= tcp.min_rto_s = {}",
                self.max_rto_s, self.min_rto_s
            ));
        }
        if self.initial_rto_s < self.min_rto_s || self.initial_rto_s > self.max_rto_s {
            return Err(format!(
                "tcp.initial_rto_s = {}: must lie between tcp.min_rto_s = {} and tcp.max_rto_s = {}",
                self.initial_rto_s, self.min_rto_s, self.max_rto_s
            ));
        }
        self.mtcp.validate()?;
        self.ap.validate()?;
        Ok(())
    }

    pub(crate) fn min_rto(&self) -> Duration {
        Duration::from_secs_f64(self.min_rto_s)
    }
    pub(crate) fn initial_rto(&self) -> Duration {
        Duration::from_secs_f64(self.initial_rto_s)
    }
    pub(crate) fn max_rto(&self) -> Duration {
        Duration::from_secs_f64(self.max_rto_s)
    }
    pub(crate) fn clock_granularity(&self) -> Duration {
        Duration::from_secs_f64(self.clock_granularity_s)
    }
    pub(crate) fn delayed_ack_timeout(&self) -> Duration {
        Duration::from_secs_f64(self.delayed_ack_timeout_s)
    }
}

/// The TCP flavour of a flow, named as in the scenario's `transport` key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
pub enum TcpVariant {
    /// RFC 6582 fast recovery (partial ACKs stay in recovery).
    #[serde(rename = "tcp-newreno")]
    NewReno,
    /// RFC 5681 fast recovery (any new ACK ends recovery).
    #[serde(rename = "tcp-reno")]
    Reno,
    /// M-TCP pacing on Reno (Yahia and Bíró 2007), keys in `[tcp.mtcp]`.
    #[serde(rename = "tcp-mtcp")]
    Mtcp,
    /// TCP with Adaptive Pacing on NewReno (ElRakabawy et al. 2005), keys
    /// in `[tcp.ap]`.
    #[serde(rename = "tcp-ap")]
    TcpAp,
    /// TCP Westwood, per-ACK bandwidth samples (Mascolo et al. 2001).
    #[serde(rename = "tcp-westwood")]
    Westwood,
    /// TCP Westwood+, one bandwidth sample per RTT (Grieco and Mascolo 2004).
    #[serde(rename = "tcp-westwood-plus")]
    WestwoodPlus,
}

impl TcpVariant {
    /// Every variant, in the order error messages list them.
    pub const ALL: [TcpVariant; 6] = [
        TcpVariant::NewReno,
        TcpVariant::Reno,
        TcpVariant::Mtcp,
        TcpVariant::TcpAp,
        TcpVariant::Westwood,
        TcpVariant::WestwoodPlus,
    ];

    /// The scenario name of the variant.
    pub fn name(self) -> &'static str {
        match self {
            TcpVariant::NewReno => "tcp-newreno",
            TcpVariant::Reno => "tcp-reno",
            TcpVariant::Mtcp => "tcp-mtcp",
            TcpVariant::TcpAp => "tcp-ap",
            TcpVariant::Westwood => "tcp-westwood",
            TcpVariant::WestwoodPlus => "tcp-westwood-plus",
        }
    }
}

impl fmt::Display for TcpVariant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for TcpVariant {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        TcpVariant::ALL.into_iter().find(|v| v.name() == s).ok_or_else(|| {
            let names: Vec<&str> = TcpVariant::ALL.iter().map(|v| v.name()).collect();
            format!("unknown TCP variant {s:?}: expected one of {}", names.join(", "))
        })
    }
}

/// A TCP segment: a data segment (`is_ack == false`, `len > 0`) from sender
/// to receiver, or a pure cumulative ACK (`is_ack == true`, `len == 0`)
/// back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First byte carried (data segments).
    pub seq: u64,
    /// Next byte expected by the receiver (ACKs): everything below is held.
    pub ack: u64,
    /// Payload bytes.
    pub len: u32,
    /// A pure ACK from the receiver rather than data from the sender.
    pub is_ack: bool,
    /// The segment carries bytes that were sent before (for traces; the
    /// receiver does not need it).
    pub retransmit: bool,
    /// When the sender sent it (data) or the receiver sent it (ACK).
    pub sent_at: SimTime,
    /// ACKs: the `sent_at` of the latest data segment the receiver got, a
    /// timestamp echo that gives the sender an RTT sample per ACK.
    pub ts_echo: SimTime,
}

impl Segment {
    /// Bytes on the wire at the network layer: payload plus TCP and IP
    /// headers.
    pub fn wire_bytes(&self) -> u32 {
        self.len + TCP_HEADER_BYTES + IP_HEADER_BYTES
    }
    /// One past the last byte carried.
    pub fn end(&self) -> u64 {
        self.seq + self.len as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::Rng;
    use rand_pcg::Pcg64Mcg;
    use std::collections::BTreeMap;

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    fn ack(a: u64) -> Segment {
        Segment {
            seq: 0,
            ack: a,
            len: 0,
            is_ack: true,
            retransmit: false,
            sent_at: SimTime::ZERO,
            ts_echo: SimTime::ZERO,
        }
    }

    fn drain(s: &mut TcpSender, now: SimTime) -> Vec<Segment> {
        std::iter::from_fn(|| s.poll_transmit(now)).collect()
    }

    enum Ev {
        ToReceiver(Segment),
        ToSender(Segment),
    }

    /// A two-endpoint network on a virtual clock. `channel` returns the
    /// one-way delay of a segment, or `None` to drop it.
    struct Net<F: FnMut(&Segment) -> Option<Duration>> {
        now: SimTime,
        queue: BTreeMap<(SimTime, u64), Ev>,
        seq: u64,
        channel: F,
        sender: TcpSender,
        receiver: TcpReceiver,
        delivered: u64,
        sent: Vec<(SimTime, Segment)>,
    }

    impl<F: FnMut(&Segment) -> Option<Duration>> Net<F> {
        fn new(cfg: &TcpConfig, variant: TcpVariant, mss: u32, channel: F) -> Self {
            Net {
                now: SimTime::ZERO,
                queue: BTreeMap::new(),
                seq: 0,
                channel,
                sender: TcpSender::new(cfg, variant, mss, SimTime::ZERO),
                receiver: TcpReceiver::new(cfg, SimTime::ZERO),
                delivered: 0,
                sent: Vec::new(),
            }
        }

        fn flush(&mut self) {
            while let Some(s) = self.sender.poll_transmit(self.now) {
                self.sent.push((self.now, s));
                if let Some(d) = (self.channel)(&s) {
                    self.seq += 1;
                    self.queue.insert((self.now + d, self.seq), Ev::ToReceiver(s));
                }
            }
            while let Some(a) = self.receiver.poll_transmit(self.now) {
                if let Some(d) = (self.channel)(&a) {
                    self.seq += 1;
                    self.queue.insert((self.now + d, self.seq), Ev::ToSender(a));
                }
            }
        }

        /// Runs one event (a delivery or a timer); false when nothing is left
        /// or the next event lies beyond `until`.
        fn step(&mut self, until: SimTime) -> bool {
            self.flush();
            let next = [
                self.queue.keys().next().map(|k| k.0),
                self.sender.poll_timeout(),
                self.receiver.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(t) = next else { return false };
            if t > until {
                return false;
            }
            self.now = self.now.max(t);
            let now = self.now;
            if let Some(entry) = self.queue.first_entry() {
                if entry.key().0 <= now {
                    match entry.remove() {
                        Ev::ToReceiver(s) => self.delivered += self.receiver.handle_segment(now, &s),
                        Ev::ToSender(a) => self.sender.handle_ack(now, &a),
                    }
                    return true;
                }
            }
            if self.sender.poll_timeout().is_some_and(|d| d <= now) {
                self.sender.handle_timeout(now);
            }
            if self.receiver.poll_timeout().is_some_and(|d| d <= now) {
                self.receiver.handle_timeout(now);
            }
            true
        }

        fn run_until(&mut self, until: SimTime) {
            while self.step(until) {}
            self.now = self.now.max(until);
        }
    }

    fn no_delack() -> TcpConfig {
        TcpConfig {
            delayed_ack: false,
            max_window_pkts: 64,
            min_rto_s: 0.2,
            ..TcpConfig::default()
        }
    }

    /// New segments sent in each RTT round of a fixed-delay path.
    fn per_round(sent: &[(SimTime, Segment)], rtt: Duration, rounds: u64) -> Vec<usize> {
        (0..rounds)
            .map(|k| sent.iter().filter(|(t, s)| !s.retransmit && t.0 / rtt.0 == k).count())
            .collect()
    }

    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut net = Net::new(&no_delack(), TcpVariant::NewReno, 1000, |_| {
            Some(Duration::from_millis(50))
        });
        net.sender.set_backlogged(true);
        net.run_until(ms(599));
        assert_eq!(
            per_round(&net.sent, Duration::from_millis(100), 6),
            vec![1, 2, 4, 8, 16, 32]
        );
        assert_eq!(net.sender.cwnd_pkts(), 32.0);
        // The advertised window caps cwnd and what is outstanding.
        net.run_until(ms(1000));
        assert_eq!(net.sender.outstanding_pkts(), 64);
        assert_eq!(net.sender.cwnd_pkts(), 64.0);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_rtt() {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 10,
            ..no_delack()
        };
        let mut net = Net::new(&cfg, TcpVariant::NewReno, 1000, |_| Some(Duration::from_millis(50)));
        net.sender.set_ssthresh_pkts(10.0);
        net.sender.set_backlogged(true);
        let mut cwnds = Vec::new();
        for k in 0..12 {
            net.run_until(ms(100 * k + 1));
            cwnds.push(net.sender.cwnd_pkts());
        }
        for w in cwnds.windows(2) {
            let growth = w[1] - w[0];
            // Sum of 1/cwnd over about cwnd ACKs: a little under one.
            assert!((0.85..=1.0).contains(&growth), "per-RTT growth {growth} in {cwnds:?}");
        }
        let rounds = per_round(&net.sent, Duration::from_millis(100), 11);
        assert_eq!(rounds[0], 10);
        for w in rounds.windows(2) {
            assert!(w[1] == w[0] || w[1] == w[0] + 1, "rounds {rounds:?}");
        }
        assert!(rounds[10] >= 18, "rounds {rounds:?}");
    }

    /// A sender with `n` full segments out and the first one acknowledged.
    fn sender_with_flight(variant: TcpVariant, n: u32) -> TcpSender {
        let cfg = TcpConfig {
            initial_cwnd_pkts: n,
            max_window_pkts: 64,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&cfg, variant, 1000, SimTime::ZERO);
        s.set_ssthresh_pkts(n as f64);
        s.set_backlogged(true);
        assert_eq!(drain(&mut s, ms(0)).len(), n as usize);
        s
    }

    #[test]
    fn fast_retransmit_on_third_duplicate_ack_not_second() {
        for variant in [TcpVariant::NewReno, TcpVariant::Reno] {
            let mut s = sender_with_flight(variant, 10);
            s.handle_ack(ms(100), &ack(1000));
            // Segment 1000..2000 is lost: the window slid by one (cwnd 10.1).
            assert_eq!(drain(&mut s, ms(100)).len(), 1);
            for _ in 0..2 {
                s.handle_ack(ms(101), &ack(1000));
                assert!(drain(&mut s, ms(101)).is_empty(), "{variant}");
                assert!(!s.in_recovery());
            }
            s.handle_ack(ms(102), &ack(1000));
            assert!(s.in_recovery());
            let out = drain(&mut s, ms(102));
            assert_eq!(out.len(), 1, "{variant}");
            assert_eq!((out[0].seq, out[0].len, out[0].retransmit), (1000, 1000, true));
            // ssthresh = 10 packets in flight / 2; cwnd = ssthresh + 3.
            assert_eq!(s.ssthresh_pkts(), 5.0);
            assert_eq!(s.cwnd_pkts(), 8.0);
            assert_eq!(s.stats().fast_retransmits, 1);
            // Further duplicates inflate the window and release new data
            // once it exceeds the 10 packets outstanding.
            for _ in 0..2 {
                s.handle_ack(ms(103), &ack(1000));
            }
            assert!(drain(&mut s, ms(103)).is_empty());
            s.handle_ack(ms(103), &ack(1000));
            let out = drain(&mut s, ms(103));
            assert_eq!(out.len(), 1);
            assert_eq!((out[0].seq, out[0].retransmit), (11_000, false));
        }
    }

    #[test]
    fn partial_ack_keeps_newreno_in_recovery_and_ends_reno() {
        for variant in [TcpVariant::NewReno, TcpVariant::Reno] {
            let mut s = sender_with_flight(variant, 10);
            // Segments 0..1000 and 3000..4000 lost.
            for _ in 0..3 {
                s.handle_ack(ms(100), &ack(0));
            }
            assert_eq!(drain(&mut s, ms(100))[0].seq, 0);
            assert_eq!(s.ssthresh_pkts(), 5.0);
            // The retransmission fills the first hole: ACK up to the second.
            s.handle_ack(ms(200), &ack(3000));
            let out = drain(&mut s, ms(200));
            match variant {
                TcpVariant::NewReno => {
                    assert!(s.in_recovery());
                    assert_eq!(out.len(), 1);
                    assert_eq!((out[0].seq, out[0].retransmit), (3000, true));
                    // cwnd 8 deflated by 3 acknowledged, plus 1.
                    assert_eq!(s.cwnd_pkts(), 6.0);
                    // The full ACK ends recovery with cwnd = ssthresh.
                    s.handle_ack(ms(300), &ack(10_000));
                    assert!(!s.in_recovery());
                    assert_eq!(s.cwnd_pkts(), 5.0);
                }
                _ => {
                    assert!(!s.in_recovery());
                    assert_eq!(s.cwnd_pkts(), 5.0);
                    // 7 packets still out, window 5: nothing to send.
                    assert!(out.is_empty());
                }
            }
        }
    }

    /// An RTO taken in fast recovery: 10 segments out, the third duplicate
    /// set ssthresh 5 and cwnd 8 (inflated); two more duplicates make it
    /// 10. RFC 5681 halves the flight (10 -> 5) and holds ssthresh over a
    /// second expiry; ns-2.35 halves min(cwnd, window) without the
    /// inflation, ssthresh 5 -> 2, and halves again at every expiry (cwnd
    /// 1 -> ssthresh 2, its floor).
    #[test]
    fn an_rto_in_fast_recovery_halves_the_uninflated_window_under_ns2() {
        for ns2 in [false, true] {
            let cfg = TcpConfig {
                initial_cwnd_pkts: 10,
                max_window_pkts: 64,
                ns2_rto: ns2,
                ..TcpConfig::default()
            };
            let mut s = TcpSender::new(&cfg, TcpVariant::NewReno, 1000, SimTime::ZERO);
            s.set_ssthresh_pkts(10.0);
            s.set_backlogged(true);
            assert_eq!(drain(&mut s, ms(0)).len(), 10);
            for _ in 0..5 {
                s.handle_ack(ms(100), &ack(0));
            }
            assert!(s.in_recovery());
            assert_eq!((s.ssthresh_pkts(), s.cwnd_pkts()), (5.0, 10.0));
            let rto = s.poll_timeout().unwrap();
            s.handle_timeout(rto);
            assert_eq!(s.cwnd_pkts(), 1.0);
            assert_eq!(s.ssthresh_pkts(), if ns2 { 2.0 } else { 5.0 });
            let again = s.poll_timeout().unwrap();
            s.handle_timeout(again);
            assert_eq!(s.ssthresh_pkts(), if ns2 { 2.0 } else { 5.0 });
        }
    }

    /// Outside recovery ns-2 halves min(cwnd, window): cwnd 12 of window
    /// 8 gives ssthresh 4, where RFC 5681 halves the 8 packets in flight.
    #[test]
    fn an_rto_halves_min_of_cwnd_and_window_under_ns2() {
        let cfg = TcpConfig {
            initial_cwnd_pkts: 12,
            max_window_pkts: 8,
            ns2_rto: true,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&cfg, TcpVariant::NewReno, 1000, SimTime::ZERO);
        s.set_backlogged(true);
        assert_eq!(drain(&mut s, ms(0)).len(), 8);
        let rto = s.poll_timeout().unwrap();
        s.handle_timeout(rto);
        assert_eq!(s.ssthresh_pkts(), 4.0);
    }

    #[test]
    fn newreno_does_not_fast_retransmit_below_recover_after_rto() {
        let mut s = sender_with_flight(TcpVariant::NewReno, 8);
        let rto = s.poll_timeout().unwrap();
        s.handle_timeout(rto);
        assert_eq!(s.stats().timeouts, 1);
        let out = drain(&mut s, rto);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].seq, out[0].retransmit), (0, true));
        // Duplicates of the go-back-N episode (ACK below recover = 8000).
        s.handle_ack(rto + Duration::from_millis(10), &ack(2000));
        for _ in 0..5 {
            s.handle_ack(rto + Duration::from_millis(20), &ack(2000));
        }
        assert!(!s.in_recovery());
        assert_eq!(s.stats().fast_retransmits, 0);
    }

    #[test]
    fn rto_backoff_doubles_caps_and_resets_on_new_sample() {
        let cfg = TcpConfig {
            min_rto_s: 0.2,
            max_rto_s: 2.0,
            ..TcpConfig::default()
        };
        let mut s = TcpSender::new(&cfg, TcpVariant::NewReno, 1000, SimTime::ZERO);
        s.set_backlogged(true);
        assert_eq!(drain(&mut s, ms(0)).len(), 1);
        assert_eq!(s.poll_timeout(), Some(ms(1000)), "initial RTO");
        s.handle_ack(ms(100), &ack(1000));
        // SRTT 100 ms, RTTVAR 50 ms: RTO 300 ms.
        assert_eq!(s.rto(), Duration::from_millis(300));
        assert_eq!(drain(&mut s, ms(100)).len(), 2);
        assert_eq!(s.poll_timeout(), Some(ms(400)));
        // Nothing comes back: 300 -> 600 -> 1200 -> 2000 (cap) -> 2000.
        let mut t = ms(400);
        let mut gaps = Vec::new();
        for _ in 0..5 {
            s.handle_timeout(t);
            let out = drain(&mut s, t);
            assert_eq!(out.len(), 1, "cwnd is one packet after an RTO");
            assert_eq!((out[0].seq, out[0].retransmit), (1000, true));
            let next = s.poll_timeout().unwrap();
            gaps.push((next - t).as_nanos() / 1_000_000);
            t = next;
        }
        assert_eq!(gaps, vec![600, 1200, 2000, 2000, 2000]);
        assert_eq!(s.cwnd_pkts(), 1.0);
        // ssthresh halved once (2 packets out -> 2), then held.
        assert_eq!(s.ssthresh_pkts(), 2.0);
        // The ACK of the retransmitted segment gives no sample (Karn).
        s.handle_ack(t, &ack(2000));
        assert_eq!(s.rto(), Duration::from_millis(2000));
        assert_eq!(s.srtt(), Some(Duration::from_millis(100)));
        // A new segment, timed and acknowledged: the backoff is gone.
        let out = drain(&mut s, t);
        assert!(out.iter().any(|x| !x.retransmit));
        let end = out.iter().map(|x| x.end()).max().unwrap();
        s.handle_ack(t + Duration::from_millis(100), &ack(end));
        assert!(s.rto() < Duration::from_millis(600), "rto {}", s.rto());
    }

    fn probe_sender(gap: Option<Duration>, no_backoff: bool, n: u32) -> TcpSender {
        let cfg = TcpConfig {
            initial_cwnd_pkts: n,
            max_window_pkts: 64,
            min_rto_s: 0.2,
            ..TcpConfig::default()
        };
        let probe = cc::probe::Probe {
            gap,
            no_backoff,
            seen: Vec::new(),
        };
        let mut s = TcpSender::with_controller(&cfg, CongestionControl::Probe(probe), 1000);
        s.set_ssthresh_pkts(n as f64);
        s.set_backlogged(true);
        s
    }

    fn probe_seen(s: &mut TcpSender) -> Vec<AckInfo> {
        match s.congestion_control_mut() {
            CongestionControl::Probe(p) => std::mem::take(&mut p.seen),
            _ => unreachable!("a probe sender"),
        }
    }

    #[test]
    fn the_controller_sees_hops_the_echoed_timestamp_and_the_duplicate_count() {
        let mut s = probe_sender(None, false, 4);
        assert_eq!(drain(&mut s, ms(0)).len(), 4);
        let mut a = ack(1000);
        a.ts_echo = ms(0);
        s.handle_ack_hops(ms(30), &a, Some(3));
        for k in 0..3u64 {
            s.handle_ack_hops(
                ms(31 + k),
                &Segment {
                    ts_echo: ms(2),
                    ..ack(1000)
                },
                Some(4),
            );
        }
        let seen = probe_seen(&mut s);
        let row: Vec<_> = seen
            .iter()
            .map(|i| (i.acked_bytes, i.dupacks, i.hops, i.echo_rtt()))
            .collect();
        assert_eq!(
            row,
            vec![
                (1000, 0, Some(3), Duration::from_millis(30)),
                (0, 1, Some(4), Duration::from_millis(29)),
                (0, 2, Some(4), Duration::from_millis(30)),
                (0, 3, Some(4), Duration::from_millis(31)),
            ]
        );
        // The first ACK covered the timed segment: a Karn sample of 30 ms.
        assert_eq!(seen[0].rtt_sample, Some(Duration::from_millis(30)));
        assert!(seen[1..].iter().all(|i| i.rtt_sample.is_none() && !i.is_new()));
        // Without hops, the plain entry point says so.
        s.handle_ack(ms(40), &ack(1000));
        assert_eq!(probe_seen(&mut s)[0].hops, None);
    }

    #[test]
    fn pacing_queue_spaces_segments_and_flushes_on_fast_retransmit() {
        let gap = Duration::from_millis(10);
        let mut s = probe_sender(Some(gap), false, 4);
        // The window releases four segments; one leaves, three wait.
        let out = drain(&mut s, ms(0));
        assert_eq!(out.iter().map(|x| x.seq).collect::<Vec<_>>(), vec![0]);
        assert_eq!(s.paced_backlog(), 3);
        assert_eq!(s.outstanding_pkts(), 4, "queued segments hold their window slots");
        assert_eq!(s.poll_timeout(), Some(ms(10)));
        assert!(drain(&mut s, ms(9)).is_empty());
        assert_eq!(
            drain(&mut s, ms(10)).iter().map(|x| x.seq).collect::<Vec<_>>(),
            vec![1000]
        );
        assert_eq!(
            drain(&mut s, ms(20)).iter().map(|x| x.seq).collect::<Vec<_>>(),
            vec![2000]
        );
        assert_eq!(s.snd_max(), 3000);
        // Three duplicates: the hole leaves at once, ahead of the pacing
        // slot, and the waiting segment goes back to the window.
        for t in 21..24 {
            s.handle_ack(ms(t), &ack(0));
        }
        assert!(s.in_recovery());
        assert_eq!(s.paced_backlog(), 0);
        assert_eq!(s.snd_nxt(), 3000);
        // cwnd = ssthresh 2 + 3 = 5 against 3 outstanding: two new segments
        // fit. Pacing restarted with the flush, so the first goes at once.
        let out = drain(&mut s, ms(23));
        assert_eq!(
            out.iter().map(|x| (x.seq, x.retransmit)).collect::<Vec<_>>(),
            vec![(0, true), (3000, false)]
        );
        assert_eq!(s.paced_backlog(), 1);
        assert_eq!(s.poll_timeout(), Some(ms(33)));
    }

    #[test]
    fn mtcp_spaces_segments_by_rtt_times_cw_over_x_until_the_window_binds() {
        // RTT 100 ms, window capped at 5 packets: the window alone would send
        // 50 segments/s. x = 10 gives T = 100 ms × 5 / 10 = 50 ms (20/s);
        // x = 50 gives 10 ms, and pacing stops binding (CW = 5 < √50).
        for (x, per_2s) in [(10.0, 40), (50.0, 100)] {
            let cfg = TcpConfig {
                max_window_pkts: 5,
                initial_cwnd_pkts: 5,
                mtcp: MtcpConfig {
                    x,
                    ..MtcpConfig::default()
                },
                ..no_delack()
            };
            let mut net = Net::new(&cfg, TcpVariant::Mtcp, 1000, |_| Some(Duration::from_millis(50)));
            net.sender.set_backlogged(true);
            net.run_until(ms(3000));
            let times: Vec<SimTime> = net
                .sent
                .iter()
                .filter(|(t, _)| *t >= ms(1000) && *t < ms(3000))
                .map(|(t, _)| *t)
                .collect();
            assert!(net.sent.iter().all(|(_, s)| !s.retransmit));
            assert_eq!(times.len(), per_2s, "x = {x}");
            let gaps: Vec<u64> = times.windows(2).map(|w| (w[1] - w[0]).as_nanos() / 1_000_000).collect();
            if x == 10.0 {
                assert!(gaps.iter().all(|&g| g == 50), "x = {x}: gaps {gaps:?}");
            } else {
                // Five segments 10 ms apart, then the window waits for ACKs.
                assert_eq!(&gaps[..5], &[10, 10, 10, 10, 60], "x = {x}");
            }
        }
    }

    #[test]
    fn a_controller_can_veto_the_rto_backoff() {
        for no_backoff in [false, true] {
            let mut s = probe_sender(None, no_backoff, 2);
            drain(&mut s, ms(0));
            let mut t = s.poll_timeout().unwrap();
            let mut gaps = Vec::new();
            for _ in 0..3 {
                s.handle_timeout(t);
                drain(&mut s, t);
                let next = s.poll_timeout().unwrap();
                gaps.push((next - t).as_nanos() / 1_000_000);
                t = next;
            }
            let expect = if no_backoff {
                vec![1000, 1000, 1000]
            } else {
                vec![2000, 4000, 8000]
            };
            assert_eq!(gaps, expect, "no_backoff {no_backoff}");
        }
    }

    #[test]
    fn timer_stops_when_everything_is_acknowledged() {
        let mut s = TcpSender::new(&TcpConfig::default(), TcpVariant::Reno, 500, SimTime::ZERO);
        s.push_app_bytes(SimTime::ZERO, 1200);
        let out = drain(&mut s, ms(0));
        assert_eq!(out.iter().map(|x| x.len).collect::<Vec<_>>(), vec![500]);
        s.handle_ack(ms(50), &ack(500));
        let out = drain(&mut s, ms(50));
        assert_eq!(out.iter().map(|x| x.len).collect::<Vec<_>>(), vec![500, 200]);
        s.handle_ack(ms(100), &ack(1200));
        assert!(s.all_acked());
        assert_eq!(s.poll_timeout(), None);
        assert!(drain(&mut s, ms(100)).is_empty());
    }

    #[test]
    fn slow_start_after_idle_restarts_the_window_when_enabled() {
        for enabled in [false, true] {
            let cfg = TcpConfig {
                slow_start_after_idle: enabled,
                delayed_ack: false,
                ..TcpConfig::default()
            };
            let mut net = Net::new(&cfg, TcpVariant::NewReno, 1000, |_| Some(Duration::from_millis(50)));
            net.sender.push_app_bytes(SimTime::ZERO, 15_000);
            net.run_until(ms(2000));
            assert!(net.sender.all_acked());
            let grown = net.sender.cwnd_pkts();
            assert!(grown >= 8.0, "cwnd {grown}");
            // Idle for 2 s (RTO is 1 s, its minimum) then a new object.
            net.sender.push_app_bytes(ms(2000), 5_000);
            let expect = if enabled { 1.0 } else { grown };
            assert_eq!(net.sender.cwnd_pkts(), expect);
            let sent = drain(&mut net.sender, ms(2000)).len();
            assert_eq!(sent, if enabled { 1 } else { 5 });
        }
    }

    #[test]
    fn wire_sizes() {
        let mut s = TcpSender::new(&TcpConfig::default(), TcpVariant::NewReno, 512, SimTime::ZERO);
        s.set_backlogged(true);
        assert_eq!(s.poll_transmit(ms(0)).unwrap().wire_bytes(), 552);
        assert_eq!(ack(512).wire_bytes(), 40);
    }

    #[test]
    fn config_defaults_parse_and_validate() {
        let c: TcpConfig = toml::from_str("").unwrap();
        assert_eq!(c, TcpConfig::default());
        assert_eq!(c.validate(), Ok(()));
        let c: TcpConfig = toml::from_str("max_window_pkts = 32\ndelayed_ack = false\nmin_rto_s = 0.2").unwrap();
        assert_eq!((c.max_window_pkts, c.delayed_ack, c.min_rto_s), (32, false, 0.2));
        assert_eq!(c.initial_cwnd_pkts, 1);
        assert!(toml::from_str::<TcpConfig>("max_window = 3").is_err());
    }

    #[test]
    fn config_validation_messages() {
        let bad = |c: TcpConfig| c.validate().unwrap_err();
        let d = TcpConfig::default;
        assert_eq!(
            bad(TcpConfig {
                max_window_pkts: 0,
                ..d()
            }),
            "tcp.max_window_pkts = 0: must be an integer in 1..=1048576"
        );
        assert!(bad(TcpConfig {
            initial_cwnd_pkts: 0,
            ..d()
        })
        .starts_with("tcp.initial_cwnd_pkts = 0:"));
        assert!(bad(TcpConfig {
            dupack_threshold: 0,
            ..d()
        })
        .starts_with("tcp.dupack_threshold = 0:"));
        assert_eq!(
            bad(TcpConfig {
                delayed_ack_timeout_s: 0.0,
                ..d()
            }),
            "tcp.delayed_ack_timeout_s = 0: must be positive; allowed: 1e-6 to 86400 s"
        );
        // The reproducer of a hang: an RTO that rounds to 0 ns.
        assert!(bad(TcpConfig {
            initial_rto_s: 1e-10,
            max_rto_s: 1e-10,
            min_rto_s: 0.0,
            ..d()
        })
        .starts_with("tcp.initial_rto_s = 1e-10: rounds to 0 ns"));
        assert!(bad(TcpConfig { min_rto_s: -1.0, ..d() }).starts_with("tcp.min_rto_s = -1:"));
        assert!(bad(TcpConfig {
            clock_granularity_s: f64::NAN,
            ..d()
        })
        .starts_with("tcp.clock_granularity_s = NaN:"));
        assert_eq!(
            bad(TcpConfig { max_rto_s: 0.5, ..d() }),
            "tcp.max_rto_s = 0.5: must be >= tcp.min_rto_s = 1"
        );
        assert!(bad(TcpConfig {
            initial_rto_s: 0.5,
            ..d()
        })
        .starts_with("tcp.initial_rto_s = 0.5: must lie between"));
    }

    #[test]
    fn variant_names() {
        for v in TcpVariant::ALL {
            assert_eq!(v.name().parse::<TcpVariant>(), Ok(v));
            #[derive(Deserialize)]
            struct T {
                t: TcpVariant,
            }
            let t: T = toml::from_str(&format!("t = {:?}", v.name())).unwrap();
            assert_eq!(t.t, v);
        }
        let e = "tcp-vegas".parse::<TcpVariant>().unwrap_err();
        assert!(
            e.contains("tcp-newreno, tcp-reno, tcp-mtcp, tcp-ap, tcp-westwood, tcp-westwood-plus"),
            "{e}"
        );
    }

    /// The proptest below is only as good as the trouble its channel makes:
    /// one fixed case shows losses, reordering, fast retransmits and
    /// timeouts all happen, for every variant.
    #[test]
    fn lossy_channel_exercises_every_recovery_path() {
        for variant in TcpVariant::ALL {
            let cfg = TcpConfig {
                max_window_pkts: 32,
                min_rto_s: 0.2,
                ..TcpConfig::default()
            };
            let mut rng = Pcg64Mcg::new(42);
            let mut net = Net::new(&cfg, variant, 1000, move |_| {
                if rng.gen_range(0..100) < 8 {
                    None
                } else {
                    Some(Duration::from_millis(10 + rng.gen_range(0..=15)))
                }
            });
            let total = 2_000_000;
            net.sender.push_app_bytes(SimTime::ZERO, total);
            while !net.sender.all_acked() {
                assert!(net.step(SimTime::MAX));
            }
            assert_eq!(net.delivered, total);
            let st = net.sender.stats();
            assert!(st.fast_retransmits > 10, "{variant}: {st:?}");
            assert!(st.timeouts > 0, "{variant}: {st:?}");
            assert!(st.retransmitted_segments > st.fast_retransmits);
            let rs = net.receiver.stats();
            assert!(rs.out_of_order_segments > 100, "{variant}: {rs:?}");
            assert!(rs.duplicate_segments > 0, "{variant}: {rs:?}");
        }
    }

    /// Two cases the property below once found: TCP-AP's go-back-N resends
    /// waited in the pacing queue while the ACK for them arrived, and the
    /// queue kept asking for a pacing wake-up with every byte acknowledged.
    #[test]
    fn acknowledged_segments_leave_the_pacing_queue() {
        let cases = [
            (
                18329035717367919906u64,
                19833u64,
                536u32,
                10u32,
                15u64,
                6u32,
                2u32,
                true,
            ),
            (89938414188755760, 125001, 1000, 16, 54, 3, 1, false),
        ];
        for (seed, total, mss, drop_pct, jitter_ms, max_window_pkts, initial_cwnd_pkts, delayed_ack) in cases {
            let cfg = TcpConfig {
                delayed_ack,
                max_window_pkts,
                initial_cwnd_pkts,
                dupack_threshold: 2,
                min_rto_s: 0.2,
                max_rto_s: 5.0,
                ..TcpConfig::default()
            };
            let mut rng = Pcg64Mcg::new(seed as u128 | 1);
            let mut net = Net::new(&cfg, TcpVariant::TcpAp, mss, move |_| {
                if rng.gen_range(0..100) < drop_pct {
                    None
                } else {
                    Some(Duration::from_millis(10 + rng.gen_range(0..=jitter_ms)))
                }
            });
            net.sender.push_app_bytes(SimTime::ZERO, total);
            while !net.sender.all_acked() {
                assert!(net.step(SimTime::MAX));
            }
            assert_eq!(net.delivered, total);
            assert_eq!(net.sender.poll_timeout(), None, "seed {seed}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        /// Over a channel that drops and reorders in both directions, the
        /// receiver gets the whole stream, in order, exactly once, and the
        /// exchange ends with every byte acknowledged.
        #[test]
        fn lossy_reordering_channel_delivers_the_stream(
            seed in any::<u64>(),
            total in 1u64..150_000,
            mss in prop::sample::select(vec![100u32, 512, 536, 1000, 1460]),
            drop_pct in 0u32..30,
            jitter_ms in 0u64..80,
            variant in prop::sample::select(TcpVariant::ALL.to_vec()),
            uncapped_mtcp in any::<bool>(),
            delayed_ack in any::<bool>(),
            max_window_pkts in 1u32..40,
            initial_cwnd_pkts in 1u32..5,
            dupack_threshold in 1u32..5,
        ) {
            let cfg = TcpConfig {
                delayed_ack,
                max_window_pkts,
                initial_cwnd_pkts,
                dupack_threshold,
                min_rto_s: 0.2,
                max_rto_s: 5.0,
                mtcp: MtcpConfig {
                    x: 5.0,
                    cw_source: if uncapped_mtcp { CwSource::Ns2Unbounded } else { CwSource::Effective },
                    ..MtcpConfig::default()
                },
                ..TcpConfig::default()
            };
            let mut rng = Pcg64Mcg::new(seed as u128 | 1);
            let mut net = Net::new(&cfg, variant, mss, move |_| {
                if rng.gen_range(0..100) < drop_pct {
                    None
                } else {
                    Some(Duration::from_millis(10 + rng.gen_range(0..=jitter_ms)))
                }
            });
            net.sender.push_app_bytes(SimTime::ZERO, total);
            let mut steps = 0u64;
            while !net.sender.all_acked() {
                prop_assert!(net.step(SimTime::MAX), "stalled with data unacknowledged");
                steps += 1;
                prop_assert!(steps < 2_000_000, "no termination");
            }
            prop_assert_eq!(net.delivered, total);
            prop_assert_eq!(net.receiver.rcv_nxt(), total);
            prop_assert_eq!(net.receiver.buffered_bytes(), 0);
            prop_assert_eq!(net.sender.poll_timeout(), None);
            // Every segment stays within the stream and the MSS.
            for (_, s) in &net.sent {
                prop_assert!(s.len >= 1 && s.len <= mss && s.end() <= total);
            }
        }
    }
}
