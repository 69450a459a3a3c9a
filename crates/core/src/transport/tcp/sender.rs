//! The sending side of a TCP connection: window, loss detection, fast
//! retransmit and recovery (RFC 5681, RFC 6582), retransmission timer
//! (RFC 6298). Congestion reactions are delegated to [`CongestionControl`];
//! pacing variants send through a [`Pacer`].

use super::cc::{AckInfo, CongestionControl, Controller, Window};
use super::pacer::Pacer;
use super::rtt::RttEstimator;
use super::{Segment, TcpConfig, TcpVariant};
use crate::time::{Duration, SimTime};

/// Counters of one sender, for metrics and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data segments handed to the network, retransmissions included.
    pub data_segments: u64,
    /// Of those, segments carrying bytes sent before.
    pub retransmitted_segments: u64,
    /// Entries into fast retransmit / fast recovery.
    pub fast_retransmits: u64,
    /// Expiries of the retransmission timer.
    pub timeouts: u64,
}

/// One TCP sender. Sequence space: bytes `0..` of the application stream.
#[derive(Clone, Debug)]
pub struct TcpSender {
    mss: u32,
    dupack_threshold: u32,
    max_window_pkts: u64,
    cc: CongestionControl,
    win: Window,
    rtt: RttEstimator,
    /// Oldest unacknowledged byte (RFC 793 SND.UNA).
    snd_una: u64,
    /// Next byte to send; reset to `snd_una` after an RTO (go-back-N).
    snd_nxt: u64,
    /// One past the highest byte ever sent.
    snd_max: u64,
    /// Bytes the application has made available (finite sources).
    app_end: u64,
    /// FTP-like source with data always waiting.
    backlogged: bool,
    dupacks: u32,
    in_recovery: bool,
    /// `snd_max` when the last fast recovery or RTO began: the RFC 6582
    /// `recover` variable plus one.
    recover: u64,
    /// A partial ACK already restarted the timer in this recovery (RFC 6582
    /// §3.2 step 5, the "Impatient" variant).
    partial_ack_seen: bool,
    /// A hole to retransmit at once, outside the window (fast retransmit,
    /// NewReno partial ACK).
    rexmit_pending: Option<u64>,
    rto_deadline: Option<SimTime>,
    /// Timer expiries since the last ACK of new data.
    consecutive_rtos: u32,
    /// The segment being timed for an RTT sample: (ACK that covers it, time
    /// sent). One at a time, never a retransmitted one (Karn's rule).
    rtt_timing: Option<(u64, SimTime)>,
    /// Restart window after idle (RFC 5681 §4.1), if enabled.
    idle_restart_pkts: Option<f64>,
    /// When the last data segment left, for the idle test.
    last_send: Option<SimTime>,
    /// Segments released by the window, waiting for their pacing slot.
    pacer: Pacer,
    /// ns-2's RTO rule (`TcpConfig::ns2_rto`).
    ns2_rto: bool,
    stats: SenderStats,
}

impl TcpSender {
    /// A sender of `variant` with nothing sent: cwnd at the initial window,
    /// ssthresh at the advertised window (RFC 5681 §3.1).
    pub fn new(cfg: &TcpConfig, variant: TcpVariant, mss: u32, _now: SimTime) -> Self {
        Self::with_controller(cfg, CongestionControl::new(variant, cfg, mss), mss)
    }

    /// A sender with a controller built by the caller.
    pub fn with_controller(cfg: &TcpConfig, cc: CongestionControl, mss: u32) -> Self {
        assert!(mss > 0, "TCP MSS must be positive");
        let max_window = cfg.max_window_pkts.max(1) as f64;
        TcpSender {
            mss,
            dupack_threshold: cfg.dupack_threshold.max(1),
            max_window_pkts: cfg.max_window_pkts.max(1) as u64,
            cc,
            win: Window {
                cwnd: (cfg.initial_cwnd_pkts.max(1) as f64).min(max_window),
                // "Arbitrarily high" (RFC 5681 §3.1): the advertised window.
                ssthresh: max_window,
                max_cwnd: max_window,
            },
            rtt: RttEstimator::new(cfg),
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            app_end: 0,
            backlogged: false,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            partial_ack_seen: false,
            rexmit_pending: None,
            rto_deadline: None,
            consecutive_rtos: 0,
            rtt_timing: None,
            idle_restart_pkts: cfg
                .slow_start_after_idle
                .then(|| (cfg.initial_cwnd_pkts.max(1) as f64).min(max_window)),
            last_send: None,
            pacer: Pacer::default(),
            ns2_rto: cfg.ns2_rto,
            stats: SenderStats::default(),
        }
    }

    /// An FTP source: while on, there is always data to send. Turning it
    /// off stops new data; what was sent is still delivered reliably.
    pub fn set_backlogged(&mut self, on: bool) {
        if self.backlogged && !on {
            self.app_end = self.app_end.max(self.snd_max);
        }
        self.backlogged = on;
    }

    /// A finite source hands `n` more bytes to TCP. After an idle period
    /// longer than the RTO, cwnd restarts from min(IW, cwnd) when
    /// `slow_start_after_idle` is on (RFC 5681 §4.1).
    pub fn push_app_bytes(&mut self, now: SimTime, n: u64) {
        if let (Some(rw), Some(last)) = (self.idle_restart_pkts, self.last_send) {
            let idle = self.snd_una >= self.snd_max;
            if idle && now.saturating_since(last) > self.rtt.rto() {
                self.win.cwnd = self.win.cwnd.min(rw);
            }
        }
        self.app_end = self.app_end.saturating_add(n);
    }

    fn data_end(&self) -> u64 {
        if self.backlogged {
            u64::MAX
        } else {
            self.app_end.max(self.snd_max)
        }
    }

    fn pkts(&self, bytes: u64) -> u64 {
        bytes.div_ceil(self.mss as u64)
    }

    /// Packets between `snd_una` and `snd_nxt`: sent and not yet acknowledged.
    pub fn outstanding_pkts(&self) -> u64 {
        self.pkts(self.snd_nxt - self.snd_una)
    }

    /// Usable window: min(cwnd, advertised window), whole packets, >= 1.
    pub fn window_pkts(&self) -> u64 {
        (self.win.cwnd.floor() as u64).clamp(1, self.max_window_pkts)
    }

    fn can_send_new(&self) -> bool {
        self.snd_nxt < self.data_end() && self.outstanding_pkts() < self.window_pkts()
    }

    /// ACK from the receiver, when the number of hops it travelled is not
    /// known.
    pub fn handle_ack(&mut self, now: SimTime, seg: &Segment) {
        self.handle_ack_hops(now, seg, None);
    }

    /// ACK from the receiver that travelled `hops` hops (as the network
    /// layer counts them).
    pub fn handle_ack_hops(&mut self, now: SimTime, seg: &Segment, hops: Option<u8>) {
        if !seg.is_ack {
            return;
        }
        let ack = seg.ack;
        if ack > self.snd_max {
            // Acknowledges bytes never sent (RFC 793 §3.9): ignore.
            return;
        }
        let new = ack > self.snd_una;
        let dup = !new && ack == self.snd_una && seg.len == 0 && self.snd_max > self.snd_una;
        let rtt_sample = if new { self.take_rtt_sample(now, ack) } else { None };
        if dup {
            self.dupacks += 1;
        }
        let info = AckInfo {
            now,
            acked_bytes: ack.saturating_sub(self.snd_una),
            mss: self.mss,
            rtt_sample,
            srtt: self.rtt.srtt(),
            hops,
            ts_echo: seg.ts_echo,
            dupacks: if new { 0 } else { self.dupacks },
        };
        self.cc.on_ack_received(&self.win, &info);
        if new {
            self.on_new_ack(now, ack, &info);
        } else if dup {
            self.on_dupack();
        }
    }

    /// The RTT sample of the timed segment, if this ACK covers it (Karn's
    /// rule: retransmissions cancel the timing).
    fn take_rtt_sample(&mut self, now: SimTime, ack: u64) -> Option<Duration> {
        let (covers, sent) = self.rtt_timing?;
        if ack < covers {
            return None;
        }
        let r = now.saturating_since(sent);
        self.rtt.on_sample(r);
        self.rtt_timing = None;
        Some(r)
    }

    fn on_new_ack(&mut self, now: SimTime, ack: u64, info: &AckInfo) {
        let acked_bytes = info.acked_bytes;
        self.snd_una = ack;
        self.pacer.discard_acked(ack);
        self.snd_nxt = self.snd_nxt.max(ack);
        self.dupacks = 0;
        self.consecutive_rtos = 0;
        let mut restart_timer = true;
        if self.in_recovery {
            if ack >= self.recover || self.cc.partial_ack_ends_recovery() {
                // Full ACK (RFC 6582 §3.2 step 5), or Reno's first new ACK
                // (RFC 5681 §3.2 step 6).
                self.in_recovery = false;
                self.cc.on_recovery_exit(&mut self.win);
            } else {
                // Partial ACK: retransmit the next hole, stay in recovery.
                self.cc.on_partial_ack(&mut self.win, acked_bytes, self.mss);
                self.rexmit_pending = Some(self.snd_una);
                restart_timer = !self.partial_ack_seen;
                self.partial_ack_seen = true;
            }
        } else {
            self.cc.on_ack(&mut self.win, info);
        }
        self.cc.on_ack_processed(&self.win, info);
        if self.snd_una >= self.snd_max {
            // All data acknowledged: stop the timer (RFC 6298 §5.2).
            self.rto_deadline = None;
        } else if restart_timer {
            // New data acknowledged: restart the timer (RFC 6298 §5.3).
            self.rto_deadline = Some(now + self.rtt.rto());
        }
    }

    fn on_dupack(&mut self) {
        if self.in_recovery {
            self.cc.on_recovery_dupack(&mut self.win);
            return;
        }
        if self.dupacks != self.dupack_threshold {
            return;
        }
        // RFC 6582 §3.2 step 2: only if the ACK covers more than `recover`,
        // so that the duplicates a go-back-N retransmission provokes do not
        // halve the window again. Reno (RFC 5681) has no such guard.
        if self.cc.guards_recover() && self.snd_una < self.recover {
            return;
        }
        let flight = self.pkts(self.snd_max - self.snd_una);
        self.in_recovery = true;
        self.partial_ack_seen = false;
        self.recover = self.snd_max;
        self.cc.on_fast_retransmit(&mut self.win, flight, self.dupacks);
        self.flush_pacer();
        self.rexmit_pending = Some(self.snd_una);
        self.stats.fast_retransmits += 1;
    }

    /// Segments still waiting for their pacing slot never left: give their
    /// bytes back to the window.
    fn flush_pacer(&mut self) {
        if let Some(first) = self.pacer.flush() {
            self.snd_nxt = self.snd_nxt.min(first.max(self.snd_una));
        }
    }

    /// The retransmission timer, at or after [`Self::poll_timeout`].
    pub fn handle_timeout(&mut self, now: SimTime) {
        match self.rto_deadline {
            Some(d) if d <= now => {}
            _ => return,
        }
        if self.snd_una >= self.snd_max {
            self.rto_deadline = None;
            return;
        }
        self.flush_pacer();
        let (halved, first_expiry) = if self.ns2_rto {
            (self.ns2_window(), true)
        } else {
            (self.pkts(self.snd_nxt - self.snd_una), self.consecutive_rtos == 0)
        };
        let back_off = self.cc.on_rto(&mut self.win, halved, first_expiry);
        self.consecutive_rtos += 1;
        self.stats.timeouts += 1;
        // Back off (RFC 6298 §5.5), unless the variant vetoes it, and
        // restart the timer (§5.6).
        if back_off {
            self.rtt.on_timeout();
        }
        self.rto_deadline = Some(now + self.rtt.rto());
        // Go-back-N from the oldest unacknowledged byte (§5.4).
        self.snd_nxt = self.snd_una;
        self.in_recovery = false;
        self.dupacks = 0;
        self.rexmit_pending = None;
        self.recover = self.snd_max;
        self.rtt_timing = None;
    }

    /// What ns-2.35 halves at an RTO instead of the flight: `window()`,
    /// min(cwnd, wnd) in whole packets (`tcp.cc` :890-901), with cwnd
    /// taken without fast recovery's inflation, which ns-2's NewReno keeps
    /// apart in `dupwnd_`: ssthresh during recovery.
    fn ns2_window(&self) -> u64 {
        let cwnd = if self.in_recovery {
            self.win.ssthresh
        } else {
            self.win.cwnd
        };
        cwnd.min(self.max_window_pkts as f64).max(0.0) as u64
    }

    /// The next segment to send now, if any; call until `None`.
    /// Retransmissions of a hole (fast retransmit, NewReno partial ACK) leave
    /// at once; new data and go-back-N resends wait for their pacing slot
    /// when the variant paces.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        if let Some(seq) = self.rexmit_pending.take() {
            if seq >= self.snd_una && seq < self.snd_max {
                let len = (self.snd_max - seq).min(self.mss as u64) as u32;
                return Some(self.emit(now, seq, len));
            }
        }
        let Some(gap) = self.cc.pacing_interval(&self.win) else {
            if !self.pacer.is_empty() {
                self.flush_pacer();
            }
            if !self.can_send_new() {
                return None;
            }
            let (seq, len) = self.take_new();
            return Some(self.emit(now, seq, len));
        };
        while self.can_send_new() {
            let (seq, len) = self.take_new();
            self.pacer.push(seq, len);
        }
        let (seq, len) = self.pacer.pop(now, gap, self.snd_una)?;
        Some(self.emit(now, seq, len))
    }

    /// Takes the next window's worth of the stream: one segment from
    /// `snd_nxt`.
    fn take_new(&mut self) -> (u64, u32) {
        let seq = self.snd_nxt;
        let len = (self.data_end() - seq).min(self.mss as u64) as u32;
        self.snd_nxt += len as u64;
        (seq, len)
    }

    fn emit(&mut self, now: SimTime, seq: u64, len: u32) -> Segment {
        let retransmit = seq < self.snd_max;
        if retransmit {
            // Karn: an ACK after a retransmission is ambiguous.
            self.rtt_timing = None;
            self.stats.retransmitted_segments += 1;
        } else if self.rtt_timing.is_none() {
            self.rtt_timing = Some((seq + len as u64, now));
        }
        self.snd_max = self.snd_max.max(seq + len as u64);
        self.stats.data_segments += 1;
        self.last_send = Some(now);
        if self.rto_deadline.is_none() {
            // RFC 6298 §5.1.
            self.rto_deadline = Some(now + self.rtt.rto());
        }
        self.cc.on_sent(now);
        Segment {
            seq,
            ack: 0,
            len,
            is_ack: false,
            retransmit,
            sent_at: now,
            ts_echo: SimTime::ZERO,
        }
    }

    /// When the caller must call back: the retransmission timer, or the
    /// pacing instant when a segment is waiting for it.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let pacing = match self.cc.pacing_interval(&self.win) {
            Some(gap) if !self.pacer.is_empty() || self.can_send_new() => self.pacer.release_at(gap),
            _ => None,
        };
        match (self.rto_deadline, pacing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Congestion window, packets.
    pub fn cwnd_pkts(&self) -> f64 {
        self.win.cwnd
    }
    /// Slow-start threshold, packets.
    pub fn ssthresh_pkts(&self) -> f64 {
        self.win.ssthresh
    }
    /// Smoothed RTT (RFC 6298 §2); `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.rtt.srtt()
    }
    /// RTT variation (RFC 6298 §2); `None` before the first sample.
    pub fn rttvar(&self) -> Option<Duration> {
        self.rtt.rttvar()
    }
    /// The current (backed-off) retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }
    /// Oldest unacknowledged byte (RFC 793 SND.UNA).
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }
    /// Next byte to send (RFC 793 SND.NXT); back at SND.UNA after an RTO.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }
    /// One past the highest byte ever sent.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
    }
    /// Maximum segment size, bytes.
    pub fn mss(&self) -> u32 {
        self.mss
    }
    /// In fast recovery (RFC 5681 §3.2, RFC 6582 §3.2).
    pub fn in_recovery(&self) -> bool {
        self.in_recovery
    }
    /// The congestion-control variant.
    pub fn variant(&self) -> TcpVariant {
        self.cc.variant()
    }
    #[cfg(test)]
    pub(crate) fn congestion_control_mut(&mut self) -> &mut CongestionControl {
        &mut self.cc
    }
    /// The variant's state (estimators, pacing), for summaries and tests.
    pub fn congestion_control(&self) -> &CongestionControl {
        &self.cc
    }
    /// Counters so far.
    pub fn stats(&self) -> &SenderStats {
        &self.stats
    }
    /// Segments released by the window and waiting for their pacing slot.
    pub fn paced_backlog(&self) -> usize {
        self.pacer.len()
    }
    /// Every byte the application gave has been acknowledged.
    pub fn all_acked(&self) -> bool {
        !self.backlogged && self.snd_una >= self.data_end()
    }
    #[cfg(test)]
    pub(crate) fn set_ssthresh_pkts(&mut self, s: f64) {
        self.win.ssthresh = s;
    }
}
