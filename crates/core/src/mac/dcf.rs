//! The distributed coordination function (IEEE 802.11-2012 §9.3) as a state
//! machine without I/O. The caller feeds it carrier-sense changes, decoded
//! and corrupted frames, the end of its own transmissions, fired timers and
//! MSDUs from the interface queue; it returns actions.
//!
//! Channel access is computed in closed form, as ns-3's channel access
//! manager does: the MAC remembers when the medium last became idle, when
//! the NAV ends and how many backoff slots remain, and arms one access
//! timer at `max(idle + DIFS|EIFS, NAV end + DIFS) + slots × aSlotTime`.
//! When the medium turns busy the slots that fully elapsed are subtracted
//! (the backoff freezes) and the timer is cancelled. No event per slot.

use super::frame::{Frame, FrameKind, Msdu, ACK_BYTES, BROADCAST, CTS_BYTES, DATA_OVERHEAD_BYTES, RTS_BYTES};
use super::nav::Nav;
use crate::phy::Rate;
use crate::time::{Duration, SimTime};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// MAC parameters of 802.11b DSSS (§17.4.4, Table 17-14) and the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct DcfConfig {
    pub slot: Duration,
    pub sifs: Duration,
    pub cw_min: u32,
    pub cw_max: u32,
    pub short_retry_limit: u32,
    pub long_retry_limit: u32,
    /// MSDUs whose data frame is longer than this are sent after RTS/CTS;
    /// 0 means before every unicast data frame.
    pub rts_threshold_bytes: u32,
    pub data_rate: Rate,
    pub basic_rate: Rate,
    /// Rate of ACK frames: the basic rate as ns-2 and the papers; ns-3
    /// answers at the data rate (for comparisons with it).
    pub ack_rate: Rate,
}

impl Default for DcfConfig {
    fn default() -> Self {
        DcfConfig {
            slot: Duration::from_micros(20),
            sifs: Duration::from_micros(10),
            cw_min: 31,
            cw_max: 1023,
            short_retry_limit: 7,
            long_retry_limit: 4,
            rts_threshold_bytes: 0,
            data_rate: Rate::MBPS_2,
            basic_rate: Rate::MBPS_1,
            ack_rate: Rate::MBPS_1,
        }
    }
}

impl DcfConfig {
    /// DIFS = SIFS + 2 × aSlotTime (§9.3.7).
    pub fn difs(&self) -> Duration {
        self.sifs + self.slot.mul(2)
    }
    /// EIFS = SIFS + ACK time at the lowest basic rate + DIFS (§9.3.7).
    pub fn eifs(&self) -> Duration {
        self.sifs + self.basic_rate.airtime(ACK_BYTES) + self.difs()
    }
    pub fn cts_time(&self) -> Duration {
        self.basic_rate.airtime(CTS_BYTES)
    }
    pub fn ack_time(&self) -> Duration {
        self.ack_rate.airtime(ACK_BYTES)
    }
    /// Response timeout after the end of a frame that solicits a CTS or
    /// ACK: SIFS + the response's air time + one slot (§9.3.2.6, §9.3.2.8),
    /// which also covers twice the longest propagation delay.
    fn response_timeout(&self, response: Duration) -> Duration {
        self.sifs + response + self.slot
    }
}

/// The MAC's timers, one slot each in its timer table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum MacTimer {
    /// IFS plus remaining backoff slots elapsed: the station may transmit.
    Access = 0,
    /// SIFS before a CTS, DATA (after a CTS) or ACK.
    Response = 1,
    /// CTS or ACK timeout.
    Timeout = 2,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MacAction {
    /// Put this frame on the air now; call `handle_tx_end` when it ends.
    Transmit(Frame),
    /// Arm `timer` at `at`; on firing, call `handle_timer(now, timer, gen)`.
    SetTimer { timer: MacTimer, at: SimTime, gen: u32 },
    /// A data frame for this node (or broadcast) decoded, not a duplicate.
    Deliver { msdu: Msdu, from: u32 },
    /// A data frame for another node decoded (promiscuous overhearing).
    Overheard(Frame),
    /// The MSDU was acknowledged (or, if broadcast, sent).
    TxDone { msdu: Msdu, next_hop: u32 },
    /// The retry limit was reached: the MSDU is dropped and the link to
    /// `next_hop` is reported as failed to the network layer.
    TxFailed { msdu: Msdu, next_hop: u32 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exchange {
    /// Not in a frame exchange of our own.
    None,
    /// Our RTS is on the air / we wait for the CTS.
    Rts,
    WaitCts,
    /// Our DATA is on the air / we wait for the ACK.
    Data,
    WaitAck,
}

#[derive(Clone, Copy, Debug)]
struct Current {
    msdu: Msdu,
    next_hop: u32,
    seq: u16,
    use_rts: bool,
    /// Short retry count (RTS, or data frames not protected by RTS).
    src: u32,
    /// Long retry count (data frames sent after RTS/CTS).
    lrc: u32,
    attempts: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct TimerSlot {
    at: Option<SimTime>,
    gen: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DcfStats {
    pub retry_drops: u64,
    pub duplicates: u64,
}

pub struct Dcf {
    me: u32,
    cfg: DcfConfig,
    rng: Pcg64Mcg,
    phy_busy: bool,
    phy_idle_since: SimTime,
    use_eifs: bool,
    nav: Nav,
    cw: u32,
    backoff_slots: u32,
    backoff_pending: bool,
    /// When the current countdown's first slot starts (IFS end), if counting.
    counting_from: Option<SimTime>,
    current: Option<Current>,
    exchange: Exchange,
    /// A CTS, DATA or ACK to send when the Response timer fires.
    response: Option<Frame>,
    /// Our CTS or ACK is on the air.
    responding: bool,
    next_seq: u16,
    /// Last sequence number received from each transmitter (§9.3.2.10).
    dup_cache: Vec<(u32, u16)>,
    timers: [TimerSlot; 3],
    pub stats: DcfStats,
}

impl Dcf {
    pub fn new(me: u32, cfg: DcfConfig, rng: Pcg64Mcg) -> Self {
        let cw = cfg.cw_min;
        Dcf {
            me,
            cfg,
            rng,
            phy_busy: false,
            phy_idle_since: SimTime::ZERO,
            use_eifs: false,
            nav: Nav::default(),
            cw,
            backoff_slots: 0,
            backoff_pending: false,
            counting_from: None,
            current: None,
            exchange: Exchange::None,
            response: None,
            responding: false,
            next_seq: 0,
            dup_cache: Vec::new(),
            timers: [TimerSlot::default(); 3],
            stats: DcfStats::default(),
        }
    }

    pub fn config(&self) -> &DcfConfig {
        &self.cfg
    }

    pub fn nav(&self) -> &Nav {
        &self.nav
    }

    pub fn cw(&self) -> u32 {
        self.cw
    }

    pub fn backoff_slots(&self) -> u32 {
        self.backoff_slots
    }

    /// The MAC has no MSDU in hand and will take one from the queue.
    pub fn wants_msdu(&self) -> bool {
        self.current.is_none()
    }

    /// The MSDU in hand and its next hop, if any (for queue disciplines
    /// that count it, e.g. as part of a node's backlog).
    pub fn current_msdu(&self) -> Option<(Msdu, u32)> {
        self.current.map(|c| (c.msdu, c.next_hop))
    }

    // ---- timers -------------------------------------------------------

    fn set_timer(&mut self, t: MacTimer, at: SimTime, out: &mut Vec<MacAction>) {
        let slot = &mut self.timers[t as usize];
        if slot.at == Some(at) {
            return;
        }
        slot.gen = slot.gen.wrapping_add(1);
        slot.at = Some(at);
        out.push(MacAction::SetTimer {
            timer: t,
            at,
            gen: slot.gen,
        });
    }

    fn cancel_timer(&mut self, t: MacTimer) {
        let slot = &mut self.timers[t as usize];
        if slot.at.is_some() {
            slot.gen = slot.gen.wrapping_add(1);
            slot.at = None;
        }
    }

    // ---- channel access -----------------------------------------------

    fn draw_backoff(&mut self) {
        self.backoff_slots = self.rng.gen_range(0..=self.cw);
        self.backoff_pending = true;
    }

    /// Busy for our purposes: a frame exchange or response of our own.
    fn in_exchange(&self) -> bool {
        self.exchange != Exchange::None || self.response.is_some() || self.responding
    }

    /// When the first backoff slot may start: an IFS after the medium went
    /// idle (EIFS after a frame received in error) and DIFS after the NAV.
    fn ifs_end(&self) -> SimTime {
        let ifs = if self.use_eifs {
            self.cfg.eifs()
        } else {
            self.cfg.difs()
        };
        (self.phy_idle_since + ifs).max(self.nav.end() + self.cfg.difs())
    }

    /// The medium became (virtually) busy: slots that fully elapsed are used up.
    fn freeze(&mut self, now: SimTime) {
        if let Some(from) = self.counting_from.take() {
            if now > from {
                let elapsed = ((now - from).as_nanos() / self.cfg.slot.as_nanos()) as u32;
                self.backoff_slots -= elapsed.min(self.backoff_slots);
            }
        }
        self.cancel_timer(MacTimer::Access);
    }

    /// Re-arms the access timer if the station contends (has an MSDU or a
    /// post-transmission backoff pending) and the medium is idle.
    fn reschedule_access(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if self.phy_busy || self.in_exchange() || !(self.backoff_pending || self.current.is_some()) {
            self.counting_from = None;
            self.cancel_timer(MacTimer::Access);
            return;
        }
        let from = self.ifs_end();
        self.counting_from = Some(from);
        let at = (from + self.cfg.slot.mul(self.backoff_slots as u64)).max(now);
        self.set_timer(MacTimer::Access, at, out);
    }

    // ---- inputs -------------------------------------------------------

    /// An MSDU from the interface queue (only when `wants_msdu()`).
    pub fn handle_msdu(&mut self, now: SimTime, msdu: Msdu, next_hop: u32, out: &mut Vec<MacAction>) {
        debug_assert!(self.current.is_none());
        let frame_bytes = msdu.bytes + DATA_OVERHEAD_BYTES;
        self.current = Some(Current {
            msdu,
            next_hop,
            seq: self.next_seq,
            use_rts: next_hop != BROADCAST && frame_bytes > self.cfg.rts_threshold_bytes,
            src: 0,
            lrc: 0,
            attempts: 0,
        });
        self.next_seq = (self.next_seq + 1) % 4096;
        // §9.3.4.2: a frame that finds the medium idle may go once the
        // medium has been idle for DIFS; one that finds it busy backs off.
        if !self.backoff_pending {
            let idle_now = !self.phy_busy && !self.nav.is_set(now) && !self.in_exchange();
            if idle_now {
                self.backoff_slots = 0;
            } else {
                self.draw_backoff();
            }
        }
        self.reschedule_access(now, out);
    }

    pub fn handle_medium_busy(&mut self, now: SimTime) {
        self.phy_busy = true;
        self.freeze(now);
    }

    pub fn handle_medium_idle(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        self.phy_busy = false;
        self.phy_idle_since = now;
        self.reschedule_access(now, out);
    }

    /// A frame ended that could not be decoded: use EIFS (§9.3.7).
    pub fn handle_rx_error(&mut self, _now: SimTime) {
        self.use_eifs = true;
    }

    /// A frame was decoded correctly.
    pub fn handle_rx(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        self.use_eifs = false;
        if f.rx != self.me && f.rx != BROADCAST {
            // §9.3.2.4: every frame for another station updates the NAV.
            self.nav.update(now, now + f.duration);
            if f.kind == FrameKind::Data {
                out.push(MacAction::Overheard(*f));
            }
            self.reschedule_access(now, out);
            return;
        }
        match f.kind {
            FrameKind::Rts => {
                // §9.3.2.6: answer an RTS with a CTS only if the NAV is clear.
                if !self.in_exchange() && !self.nav.is_set(now) {
                    let dur = f
                        .duration
                        .as_nanos()
                        .saturating_sub((self.cfg.sifs + self.cfg.cts_time()).as_nanos());
                    self.respond(now, self.control(FrameKind::Cts, f.tx, Duration(dur)), out);
                }
            }
            FrameKind::Cts => {
                if self.exchange == Exchange::WaitCts && self.current.is_some_and(|c| c.next_hop == f.tx) {
                    self.cancel_timer(MacTimer::Timeout);
                    let c = self.current.as_mut().expect("checked");
                    c.src = 0;
                    let data = self.data_frame();
                    self.exchange = Exchange::None;
                    self.respond(now, data, out);
                }
            }
            FrameKind::Data => {
                if f.rx == self.me {
                    // The ACK goes after SIFS whatever the NAV says (§9.3.2.8).
                    self.respond(now, self.control(FrameKind::Ack, f.tx, Duration::ZERO), out);
                }
                if self.is_duplicate(f) {
                    self.stats.duplicates += 1;
                } else if let Some(msdu) = f.msdu {
                    out.push(MacAction::Deliver { msdu, from: f.tx });
                }
            }
            FrameKind::Ack => {
                if self.exchange == Exchange::WaitAck {
                    self.cancel_timer(MacTimer::Timeout);
                    let c = self.current.take().expect("waiting for an ACK without a frame");
                    out.push(MacAction::TxDone {
                        msdu: c.msdu,
                        next_hop: c.next_hop,
                    });
                    self.finish_exchange(now, out);
                }
            }
        }
        self.reschedule_access(now, out);
    }

    /// Our own transmission ended.
    pub fn handle_tx_end(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        if self.responding {
            self.responding = false;
        } else {
            match self.exchange {
                Exchange::Rts => {
                    self.exchange = Exchange::WaitCts;
                    let to = self.cfg.response_timeout(self.cfg.cts_time());
                    self.set_timer(MacTimer::Timeout, now + to, out);
                }
                Exchange::Data => {
                    let c = self.current.expect("data on the air without a frame");
                    if c.next_hop == BROADCAST {
                        self.current = None;
                        out.push(MacAction::TxDone {
                            msdu: c.msdu,
                            next_hop: c.next_hop,
                        });
                        self.finish_exchange(now, out);
                    } else {
                        self.exchange = Exchange::WaitAck;
                        let to = self.cfg.response_timeout(self.cfg.ack_time());
                        self.set_timer(MacTimer::Timeout, now + to, out);
                    }
                }
                _ => {}
            }
        }
        self.reschedule_access(now, out);
    }

    pub fn handle_timer(&mut self, now: SimTime, timer: MacTimer, gen: u32, out: &mut Vec<MacAction>) {
        let slot = &mut self.timers[timer as usize];
        if slot.gen != gen || slot.at.is_none() {
            return; // stale: cancelled or re-armed since
        }
        slot.at = None;
        match timer {
            MacTimer::Access => {
                self.counting_from = None;
                self.backoff_slots = 0;
                self.backoff_pending = false;
                if self.current.is_some() {
                    self.start_exchange(out);
                }
            }
            MacTimer::Response => {
                let f = self.response.take().expect("response timer without a response");
                if f.kind == FrameKind::Data {
                    self.exchange = Exchange::Data;
                } else {
                    self.responding = true;
                }
                out.push(MacAction::Transmit(f));
            }
            MacTimer::Timeout => self.handle_response_timeout(now, out),
        }
    }

    // ---- frame exchanges ----------------------------------------------

    fn control(&self, kind: FrameKind, rx: u32, duration: Duration) -> Frame {
        Frame {
            kind,
            tx: self.me,
            rx,
            duration,
            seq: 0,
            retry: false,
            msdu: None,
            bytes: match kind {
                FrameKind::Rts => RTS_BYTES,
                FrameKind::Cts => CTS_BYTES,
                _ => ACK_BYTES,
            },
            rate: if kind == FrameKind::Ack {
                self.cfg.ack_rate
            } else {
                self.cfg.basic_rate
            },
        }
    }

    fn data_frame(&self) -> Frame {
        let c = self.current.expect("no frame in hand");
        let broadcast = c.next_hop == BROADCAST;
        Frame {
            kind: FrameKind::Data,
            tx: self.me,
            rx: c.next_hop,
            // §9.2.5.2: a unicast data frame reserves SIFS + ACK.
            duration: if broadcast {
                Duration::ZERO
            } else {
                self.cfg.sifs + self.cfg.ack_time()
            },
            seq: c.seq,
            retry: c.attempts > 0,
            msdu: Some(c.msdu),
            bytes: c.msdu.bytes + DATA_OVERHEAD_BYTES,
            // Broadcasts go at the basic rate so every station can decode them.
            rate: if broadcast {
                self.cfg.basic_rate
            } else {
                self.cfg.data_rate
            },
        }
    }

    fn start_exchange(&mut self, out: &mut Vec<MacAction>) {
        let c = self.current.expect("checked by caller");
        let frame = if c.use_rts {
            let data = self.data_frame();
            // RTS reserves CTS + DATA + ACK and three SIFS (§9.2.5.2).
            let dur = self.cfg.sifs.mul(3) + self.cfg.cts_time() + data.airtime() + self.cfg.ack_time();
            self.exchange = Exchange::Rts;
            let mut rts = self.control(FrameKind::Rts, c.next_hop, dur);
            rts.retry = c.src > 0;
            rts
        } else {
            self.exchange = Exchange::Data;
            self.data_frame()
        };
        if let Some(cur) = self.current.as_mut() {
            if !cur.use_rts {
                cur.attempts += 1;
            }
        }
        out.push(MacAction::Transmit(frame));
    }

    fn respond(&mut self, now: SimTime, f: Frame, out: &mut Vec<MacAction>) {
        if f.kind == FrameKind::Data {
            if let Some(c) = self.current.as_mut() {
                c.attempts += 1;
            }
        }
        self.response = Some(f);
        self.set_timer(MacTimer::Response, now + self.cfg.sifs, out);
    }

    fn handle_response_timeout(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        let waited_cts = self.exchange == Exchange::WaitCts;
        self.exchange = Exchange::None;
        let cfg = &self.cfg;
        let c = self.current.as_mut().expect("timeout without a frame");
        // §9.3.4.4: RTS failures and unprotected data count against the short
        // retry limit, data sent after RTS/CTS against the long one.
        let exhausted = if waited_cts || !c.use_rts {
            c.src += 1;
            c.src >= cfg.short_retry_limit
        } else {
            c.lrc += 1;
            c.lrc >= cfg.long_retry_limit
        };
        if exhausted {
            let c = self.current.take().expect("checked");
            self.stats.retry_drops += 1;
            out.push(MacAction::TxFailed {
                msdu: c.msdu,
                next_hop: c.next_hop,
            });
            self.finish_exchange(now, out);
        } else {
            self.cw = (2 * self.cw + 1).min(self.cfg.cw_max);
            self.draw_backoff();
            self.reschedule_access(now, out);
        }
    }

    /// After success or a drop: reset CW, and back off again (§9.3.4.3:
    /// a backoff follows every transmission attempt).
    fn finish_exchange(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        self.exchange = Exchange::None;
        self.cw = self.cfg.cw_min;
        self.draw_backoff();
        self.reschedule_access(now, out);
    }

    fn is_duplicate(&mut self, f: &Frame) -> bool {
        match self.dup_cache.iter_mut().find(|(tx, _)| *tx == f.tx) {
            Some(entry) => {
                let dup = f.retry && entry.1 == f.seq;
                entry.1 = f.seq;
                dup
            }
            None => {
                self.dup_cache.push((f.tx, f.seq));
                false
            }
        }
    }
}

#[cfg(test)]
mod tests;
