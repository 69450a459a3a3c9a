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
//!
//! The frame exchange is one state machine, `Dcf::step`: a single match on
//! (`Exchange`, `Event`), one arm per transition, each citing the clause
//! it implements. Channel access (above) decides when an exchange may
//! start; the exchange decides what goes on the air and what is awaited.
//!
//! The MAC holds up to two MSDUs: the one in hand (`Slot::Current`), which
//! contends and whose backoff freezes while others use the medium, and a
//! second slot (`Slot::Side`) for an MSDU sent inside an exchange another
//! station opened: quick-exchange's reverse packet, fast-forward's relayed
//! packet, OPET's answer to a ready-to-receive frame. The second slot never
//! contends and leaves the first slot's backoff and retry state untouched.
//!
//! OPET (Zhai et al., `opet.rs`) adds three things: a shorter backoff after
//! a packet to relay (`prioritize`), the negative CTS that refuses an RTS
//! for a congested flow and hands the MSDU back (`MacAction::Blocked`), and
//! the ready-to-receive frame a station contends for on its own
//! (`request_rtr`), answered by DATA after SIFS.

use super::fast_forward::{FastForward, ACK_RTS_BYTES};
use super::frame::{Extensions, Frame, FrameKind, Msdu, ACK_BYTES, BROADCAST, CTS_BYTES, DATA_OVERHEAD_BYTES};
use super::nav::Nav;
use super::opet::{self, Opet};
use super::quick_exchange::{self as qe, QuickExchange, CTS_QE_BYTES};
use crate::phy::Rate;
use crate::time::{Duration, SimTime};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// MAC parameters of 802.11b DSSS (§17.4.4, Table 17-14) and the scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct DcfConfig {
    /// aSlotTime.
    pub slot: Duration,
    /// aSIFSTime.
    pub sifs: Duration,
    /// aCWmin.
    pub cw_min: u32,
    /// aCWmax.
    pub cw_max: u32,
    /// dot11ShortRetryLimit: attempts of frames up to the RTS threshold (and of RTSs).
    pub short_retry_limit: u32,
    /// dot11LongRetryLimit: attempts of longer data frames.
    pub long_retry_limit: u32,
    /// MSDUs whose data frame is longer than this are sent after RTS/CTS;
    /// 0 means before every unicast data frame.
    pub rts_threshold_bytes: u32,
    /// Rate of DATA frames.
    pub data_rate: Rate,
    /// Rate of RTS, CTS and broadcast frames.
    pub basic_rate: Rate,
    /// Rate of ACK frames: the basic rate as ns-2 and the papers; ns-3
    /// answers at the data rate (for comparisons with it).
    pub ack_rate: Rate,
    /// Quick-exchange (Berger et al. §3.1), off by default.
    pub quick_exchange: QuickExchange,
    /// Fast-forward (Berger et al. §3.2), off by default.
    pub fast_forward: FastForward,
    /// OPET (Zhai et al.), off by default.
    pub opet: Opet,
    /// `[mac] count_first_rts`: the summary reports `msdus_started` and
    /// `first_rts_failed` (Berger et al. §3.2's "20% of transmission
    /// attempts fail to acquire the channel on their first attempt").
    /// Counting changes nothing else.
    pub count_first_rts: bool,
    /// ns-2's CTS rule (`[ns2] cts_if_idle`): the CTS goes only if the
    /// station is idle SIFS after the RTS: medium idle and NAV clear.
    pub cts_if_idle: bool,
    /// ns-2's capture deferral (`[ns2] capture_nav`): a weaker frame
    /// captured out during a reception sets the NAV to EIFS plus its
    /// duration (`Dcf::captured`).
    pub capture_nav: bool,
    /// ns-2's EIFS (`[ns2] eifs_nav`): a NAV of EIFS from the end of the
    /// erroneous frame, so DIFS follows it and no RTS is answered under it.
    pub eifs_nav: bool,
    /// MAC header and FCS of a data frame: 28 bytes (§8.3.2.1, three
    /// addresses), or 34 under `[ns2] four_address_header`.
    pub data_overhead_bytes: u32,
    /// Data frames for other stations are reported (`MacAction::Overheard`),
    /// as a driver in promiscuous mode passes them up. On by default; the
    /// simulator turns it off when no scheme reads them (only NRED does):
    /// one action less per data frame at every neighbour in range.
    pub promiscuous: bool,
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
            quick_exchange: QuickExchange::default(),
            fast_forward: FastForward::default(),
            opet: Opet::default(),
            count_first_rts: false,
            cts_if_idle: false,
            capture_nav: false,
            eifs_nav: false,
            data_overhead_bytes: DATA_OVERHEAD_BYTES,
            promiscuous: true,
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
    /// CTS size: with quick-exchange every CTS carries the τ field.
    pub fn cts_bytes(&self) -> u32 {
        if self.quick_exchange.enabled {
            CTS_QE_BYTES
        } else {
            CTS_BYTES
        }
    }
    /// Airtime of a CTS.
    pub fn cts_time(&self) -> Duration {
        self.basic_rate.airtime(self.cts_bytes())
    }
    /// Airtime of an ACK.
    pub fn ack_time(&self) -> Duration {
        self.ack_rate.airtime(ACK_BYTES)
    }
    /// What a data frame's sender waits for: the ACK, or with fast-forward
    /// the longer ACK-RTS that may replace it (the spec's G7).
    fn ack_wait_time(&self) -> Duration {
        if self.fast_forward.enabled {
            self.ack_time().max(self.basic_rate.airtime(ACK_RTS_BYTES))
        } else {
            self.ack_time()
        }
    }
    /// Response timeout after the end of a frame that solicits a CTS or
    /// ACK: SIFS + the response's air time + one slot (§9.3.2.6, §9.3.2.8),
    /// which also covers twice the longest propagation delay.
    fn response_timeout(&self, response: Duration) -> Duration {
        self.sifs + response + self.slot
    }
}

/// The MAC's timers, one slot each in its timer table. One byte, so that
/// the simulator's events stay 12 bytes (`sim::events`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum MacTimer {
    /// IFS plus remaining backoff slots elapsed: the station may transmit.
    Access = 0,
    /// SIFS before a CTS, DATA (after a CTS) or ACK.
    Response = 1,
    /// CTS or ACK timeout.
    Timeout = 2,
}

/// A timer armed: `MacAction::SetTimer`'s fields alone. The one action an
/// idle edge may ask for comes back as this, 16 bytes in two registers,
/// rather than as a whole `MacAction` (88 bytes, copied through memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerSet {
    /// Which timer.
    pub timer: MacTimer,
    /// When it fires.
    pub at: SimTime,
    /// The generation it fires with.
    pub gen: u32,
}

impl From<TimerSet> for MacAction {
    fn from(t: TimerSet) -> Self {
        MacAction::SetTimer {
            timer: t.timer,
            at: t.at,
            gen: t.gen,
        }
    }
}

/// What the DCF asks of the node after a call: the simulator carries out
/// the actions of the air, and `link` answers the requests for the node's
/// queue and flow state.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum MacAction {
    /// Put this frame on the air now; call `handle_tx_end` when it ends.
    Transmit(Frame),
    /// Arm `timer` at `at`; on firing, call `handle_timer(now, timer, gen)`.
    SetTimer {
        /// Which timer.
        timer: MacTimer,
        /// When it fires.
        at: SimTime,
        /// The generation it fires with (a stale one is ignored).
        gen: u32,
    },
    /// A data frame for this node (or broadcast) decoded, not a duplicate.
    Deliver {
        /// The MSDU.
        msdu: Msdu,
        /// The station it came from.
        from: u32,
    },
    /// A data frame for another node decoded (promiscuous overhearing).
    Overheard(Frame),
    /// The MSDU was acknowledged (or, if broadcast, sent).
    TxDone {
        /// The MSDU.
        msdu: Msdu,
        /// The station it was for.
        next_hop: u32,
    },
    /// The retry limit was reached: the MSDU is dropped and the link to
    /// `next_hop` is reported as failed to the network layer.
    TxFailed {
        /// The MSDU.
        msdu: Msdu,
        /// The station it was for.
        next_hop: u32,
    },
    /// Quick-exchange: an RTS from `peer` arrived and the MSDU in hand does
    /// not go back to it. The caller may hand over, before control returns
    /// to the event loop, the first queued packet for `peer` of at most
    /// `max_bytes` with `Dcf::offer_reverse`.
    WantReverse {
        /// The station whose RTS arrived.
        peer: u32,
        /// The largest packet the exchange has room for.
        max_bytes: u32,
    },
    /// Fast-forward: a data frame from `from` was delivered (the
    /// `Deliver` before this action) and an ACK is due. The caller may,
    /// before control returns to the event loop, name a packet to forward
    /// with `Dcf::forward`; the ACK then becomes an ACK-RTS.
    WantForward {
        /// The station it came from.
        from: u32,
    },
    /// An MSDU of the second slot failed with retries left, or was not
    /// sent: it goes back to the head of the interface queue, with its
    /// retry counts.
    Requeue {
        /// The MSDU.
        msdu: Msdu,
        /// The station it was for.
        next_hop: u32,
        /// Its retry counts, carried back to the MAC with it.
        retries: Retries,
    },
    /// OPET: an RTS for flow `label` from `from` arrived and a CTS is due;
    /// `t_data` is the airtime of the DATA it announces. If the flow is
    /// congested here the caller calls `Dcf::refuse` before control
    /// returns to the event loop, and a negative CTS goes instead.
    RtsFor {
        /// The station it came from.
        from: u32,
        /// The flow's label.
        label: u32,
        /// Airtime of the DATA the RTS announced.
        t_data: Duration,
    },
    /// OPET: a negative CTS from `next_hop` refused this MSDU: it goes
    /// back to the head of its flow's queue, and its flow is blocked
    /// towards `next_hop`. No retry was counted.
    Blocked {
        /// The MSDU.
        msdu: Msdu,
        /// The station it was for.
        next_hop: u32,
    },
    /// OPET: a ready-to-receive frame for flow `label` came from `from`.
    /// The caller lifts its block and may, before control returns to the
    /// event loop, answer with a packet of the flow for `from`:
    /// `Dcf::answer_rtr` (the MSDU in hand) or `Dcf::send_from_second_slot`.
    WantRtrData {
        /// The station it came from.
        from: u32,
        /// The flow's label.
        label: u32,
    },
    /// OPET: the DATA our ready-to-receive frame asked `from` for arrived.
    RtrAnswered {
        /// The station it came from.
        from: u32,
        /// The flow's label.
        label: u32,
    },
    /// OPET: our ready-to-receive frames to `to` went unanswered
    /// `rtr_attempts` times; the station stops asking.
    RtrAbandoned {
        /// The upstream station asked.
        to: u32,
        /// The flow's label.
        label: u32,
    },
}

/// Which MSDU an exchange carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// The MSDU in hand, which contends for the medium.
    Current,
    /// The second slot: sent inside an exchange, never contending.
    Side,
}

/// Retry state of one MSDU (§9.3.4.4), carried with it when it goes back
/// to the interface queue from the second slot and comes back to the MAC.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retries {
    /// Short retry count: RTS frames, and data frames not protected by RTS.
    pub short: u32,
    /// Long retry count: data frames sent after RTS/CTS.
    pub long: u32,
    /// The sequence number its data frames went out with, once one did.
    /// A retransmission keeps it and sets the Retry bit (§9.3.2.10), so the
    /// receiver's duplicate filter recognises a copy it already took in
    /// (Berger et al.'s failure table: "ACK2 lost … A acknowledges the
    /// duplicate"). None: no data frame of it was sent yet.
    pub seq: Option<u16>,
}

/// An MSDU held by the MAC, with its transmission state.
#[derive(Clone, Copy, Debug)]
struct Held {
    msdu: Msdu,
    next_hop: u32,
    seq: u16,
    use_rts: bool,
    retries: Retries,
    /// Data frames of this MSDU put on the air (sets the Retry bit).
    attempts: u32,
    /// Fast-forward: this exchange carries it on after an ACK-RTS (Berger
    /// et al. §3.2); its data frame counts one more consecutive
    /// fast-forwarded hop (`Msdu::ff_run`). Cleared when the attempt fails
    /// and the MSDU goes back to contention.
    forwarding: bool,
    /// Its first RTS is on the air or awaits its CTS (`DcfStats::first_rts_failed`).
    first_rts: bool,
}

impl Held {
    /// The retry state it takes back to the queue: its counts, and its
    /// sequence number if a data frame of it was sent.
    fn carried(&self) -> Retries {
        Retries {
            seq: (self.attempts > 0).then_some(self.seq),
            ..self.retries
        }
    }
}

/// A response the station awaits after a frame that solicits one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Wait {
    Cts(Slot),
    Ack(Slot),
    /// Quick-exchange, at the RTS receiver after its CTS(τ): DATA1 from
    /// the slot's next hop, answered with the slot's MSDU as DATA2+ACK1.
    Data1(Slot),
    /// Quick-exchange, at the RTS sender after its extended DATA1:
    /// DATA2+ACK1 (or a plain ACK) for the slot's MSDU.
    DataAck(Slot),
    /// Quick-exchange, at the RTS receiver after DATA2+ACK1: ACK2.
    Ack2(Slot),
    /// OPET, after our ready-to-receive frame: DATA of `label` from `to`.
    RtrData {
        to: u32,
        label: u32,
    },
}

/// A response due SIFS after the frame that solicited it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Response {
    /// A CTS or ACK, built from the soliciting frame.
    Control(Frame),
    /// The CTS to an RTS from `to` whose DATA1 carries `d1_bytes`, built
    /// when SIFS has elapsed: with quick-exchange it may carry τ.
    Cts { to: u32, duration: Duration, d1_bytes: u32 },
    /// DATA of a slot, built when SIFS has elapsed; `tau` extends its
    /// Duration (a quick-exchange the station honours).
    Data { slot: Slot, tau: Duration },
    /// Quick-exchange's DATA2+ACK1 with the slot's MSDU.
    DataAck(Slot),
    /// Fast-forward's ACK-RTS: `ack`, whose second receiver address asks
    /// the slot MSDU's next hop for a CTS.
    AckRts { ack: Frame, slot: Slot },
    /// OPET's negative CTS to an RTS from `to`.
    Ncts { to: u32 },
}

/// The packet fast-forward sends on (the answer to `WantForward`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forward {
    /// The MSDU in hand.
    Current,
    /// A packet taken from the queue (it goes into the second slot), with
    /// the retry state it carried back there, if any.
    Queued {
        /// The packet's MSDU.
        msdu: Msdu,
        /// Its next hop.
        next_hop: u32,
        /// The retry state it carried back to the queue.
        retries: Retries,
    },
}

/// What a data frame of ours solicits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Solicits {
    /// An ACK (nothing, if broadcast).
    Ack,
    /// Quick-exchange's DATA2+ACK1, `tau` after the standard ACK's end.
    DataAck { tau: Duration },
    /// Quick-exchange's ACK2 (the frame is DATA2+ACK1).
    Ack2,
}

/// Where the station is in a frame exchange (§9.3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Exchange {
    /// In no exchange: contending (an MSDU in hand or a post-backoff
    /// pending) or quiet.
    Idle,
    /// Our RTS is on the air; `response`: fast-forward's ACK-RTS, SIFS
    /// after the data frame it acknowledges.
    SendingRts { slot: Slot, response: bool },
    /// Our DATA is on the air; `response`: it was sent SIFS after a CTS
    /// (or an invitation); `then`: what it solicits.
    SendingData { slot: Slot, response: bool, then: Solicits },
    /// Our CTS(τ) is on the air: the slot's MSDU goes back to its sender.
    SendingCtsTau { reverse: Slot, t_data1: Duration },
    /// OPET: our ready-to-receive frame to `to` for `label` is on the air;
    /// the DATA it solicits lasts `t_data`.
    SendingRtr { to: u32, label: u32, t_data: Duration },
    /// Waiting for a CTS or ACK; the Timeout timer is armed.
    Waiting(Wait),
    /// SIFS before a response; the Response timer is armed. `under` is a
    /// wait of our own that goes on beneath an ACK we owe (a data frame
    /// for us ended while we waited for our CTS or ACK).
    Sifs { response: Response, under: Option<Wait> },
    /// Our CTS or ACK is on the air.
    Responding { under: Option<Wait> },
}

/// A response is due with no wait of our own beneath it.
fn under_none(e: Exchange) -> bool {
    matches!(e, Exchange::Sifs { under: None, .. })
}

/// The inputs of the exchange state machine.
#[derive(Clone, Copy, Debug)]
enum Event<'a> {
    /// The Access timer fired: IFS and backoff elapsed on an idle medium.
    AccessGranted,
    /// The Response timer fired: SIFS elapsed.
    SifsElapsed,
    /// The Timeout timer fired: the awaited CTS or ACK did not come.
    ResponseTimeout,
    /// Our own transmission ended.
    TxEnd,
    /// A frame addressed to us (or broadcast) was decoded.
    Rx(&'a Frame),
}

/// How many recent sequence numbers the duplicate filter keeps per
/// transmitter: enough for an MSDU of the second slot to overtake the one
/// in hand, or several, and the retransmission still to be recognised.
pub const DUP_CACHE_DEPTH: usize = 4;

/// The recent sequence numbers received from one transmitter, newest first.
#[derive(Clone, Copy, Debug)]
struct RecentSeqs {
    tx: u32,
    seqs: [u16; DUP_CACHE_DEPTH],
    len: usize,
}

#[derive(Clone, Copy, Debug, Default)]
struct TimerSlot {
    at: Option<SimTime>,
    gen: u32,
}

/// OPET: a ready-to-receive frame the station owes a blocked upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PendingRtr {
    to: u32,
    label: u32,
    /// Airtime of the DATA it solicits (from the refused RTS's Duration).
    t_data: Duration,
    /// Ready-to-receive frames sent for it so far.
    attempts: u32,
}

/// The station's counters for the run summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DcfStats {
    /// MSDUs dropped at the retry limit.
    pub retry_drops: u64,
    /// Retransmitted data frames received again and not delivered (§9.3.2.10).
    pub duplicates: u64,
    /// Quick-exchange, counted at the RTS receiver: CTSs with τ > 0 sent,
    /// DATA1s received extended (honoured), ACK2s received (completed), and
    /// honoured exchanges whose DATA2+ACK1 or ACK2 went missing (failed).
    pub qe_requested: u64,
    /// See `qe_requested`.
    pub qe_honored: u64,
    /// See `qe_requested`.
    pub qe_completed: u64,
    /// See `qe_requested`.
    pub qe_failed: u64,
    /// Quick-exchange, at the RTS receiver: a CTS(τ) answered by a DATA1
    /// whose Duration was not extended (its sender declined), so the
    /// exchange went on as plain 802.11 and the reverse packet was released.
    pub qe_fallen_back: u64,
    /// Fast-forward: ACK-RTSs sent, and packets not fast-forwarded
    /// because they came over `consecutive_limit` fast-forwarded hops.
    pub ff_attempted: u64,
    /// See `ff_attempted`.
    pub ff_limited: u64,
    /// Fast-forward, at the relay: forwarded packets acknowledged by the
    /// next hop, ACK-RTSs that got no CTS, and forwarded DATA that got no
    /// ACK (after its CTS). Each ACK-RTS ends in one of the three (or is
    /// under way when the run ends).
    pub ff_completed: u64,
    /// See `ff_completed`.
    pub ff_no_cts: u64,
    /// See `ff_completed`.
    pub ff_data_failed: u64,
    /// MSDUs whose first RTS (after contention) went on the air, and
    /// those of them whose first RTS got no CTS.
    pub msdus_started: u64,
    /// See `msdus_started`.
    pub first_rts_failed: u64,
    /// OPET: negative CTSs sent and received (blocks), ready-to-receive
    /// frames sent and received, those answered by DATA (resumes), those
    /// that timed out (lost or unanswered), and resumes given up.
    pub ncts_sent: u64,
    /// See `ncts_sent`.
    pub ncts_received: u64,
    /// See `ncts_sent`.
    pub rtr_sent: u64,
    /// See `ncts_sent`.
    pub rtr_received: u64,
    /// See `ncts_sent`.
    pub rtr_answered: u64,
    /// See `ncts_sent`.
    pub rtr_timeouts: u64,
    /// See `ncts_sent`.
    pub rtr_abandoned: u64,
}

/// The DCF of one station (§9.3).
///
/// Laid out for the medium's edges, which reach every station in
/// carrier-sense range of every frame: what they read and write
/// (`handle_medium_busy`, `handle_medium_idle`, `reschedule_access`) comes
/// first, in declaration order (`repr(C)`), so that on large fields an edge
/// loads the first cache lines of the MAC rather than lines all over it:
/// a busy edge only the first (the test `medium_edge_fields_share_a_cache_line`).
#[repr(C)]
pub struct Dcf {
    phy_busy: bool,
    use_eifs: bool,
    /// `DcfConfig::eifs_nav`, beside `use_eifs`, which an error sets
    /// otherwise: read at every frame received in error.
    eifs_nav: bool,
    backoff_pending: bool,
    me: u32,
    backoff_slots: u32,
    cw: u32,
    /// When the current countdown's first slot starts (IFS end), if counting.
    counting_from: Option<SimTime>,
    phy_idle_since: SimTime,
    /// By `MacTimer`: the Access timer's slot ends the first cache line.
    timers: [TimerSlot; 3],
    nav: Nav,
    /// When the pending backoff was drawn: its countdown starts no earlier.
    backoff_drawn: SimTime,
    /// OPET: ready-to-receive frames owed, oldest first.
    pending_rtr: Vec<PendingRtr>,
    current: Option<Held>,
    exchange: Exchange,
    cfg: DcfConfig,
    next_seq: u16,
    rng: Pcg64Mcg,
    side: Option<Held>,
    /// Recent ⟨transmitter, sequence number⟩ tuples (§9.3.2.10), by
    /// increasing transmitter: found by halving, as a station on a dense
    /// field hears data frames (AODV's broadcasts among them) from most
    /// of the field's nodes over a run.
    dup_cache: Vec<RecentSeqs>,
    /// The station's counters.
    pub stats: DcfStats,
}

impl Dcf {
    /// The DCF of station `me` with `cfg`, drawing its backoffs from `rng`.
    pub fn new(me: u32, cfg: DcfConfig, rng: Pcg64Mcg) -> Self {
        let (cw, eifs_nav) = (cfg.cw_min, cfg.eifs_nav);
        Dcf {
            me,
            cfg,
            rng,
            phy_busy: false,
            phy_idle_since: SimTime::ZERO,
            use_eifs: false,
            eifs_nav,
            nav: Nav::default(),
            cw,
            backoff_slots: 0,
            backoff_pending: false,
            backoff_drawn: SimTime::ZERO,
            counting_from: None,
            current: None,
            side: None,
            pending_rtr: Vec::new(),
            exchange: Exchange::Idle,
            next_seq: 0,
            dup_cache: Vec::new(),
            timers: [TimerSlot::default(); 3],
            stats: DcfStats::default(),
        }
    }

    /// Its parameters.
    pub fn config(&self) -> &DcfConfig {
        &self.cfg
    }

    /// Its NAV.
    pub fn nav(&self) -> &Nav {
        &self.nav
    }

    /// The contention window now.
    pub fn cw(&self) -> u32 {
        self.cw
    }

    /// Backoff slots left.
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

    /// Every MSDU the MAC holds, with its next hop: the one in hand and
    /// the second slot's.
    pub fn held_msdus(&self) -> impl Iterator<Item = (Msdu, u32)> + '_ {
        [self.current, self.side]
            .into_iter()
            .flatten()
            .map(|c| (c.msdu, c.next_hop))
    }

    /// The second slot is free (an MSDU can be sent inside an exchange).
    pub fn side_free(&self) -> bool {
        self.side.is_none()
    }

    /// The station is in no frame exchange of its own.
    pub fn idle(&self) -> bool {
        !self.in_exchange()
    }

    /// The frame on the air, if any, is a response: a CTS or ACK, or DATA
    /// sent SIFS after a CTS. Responses go whatever the NAV says.
    pub fn transmitting_response(&self) -> bool {
        matches!(
            self.exchange,
            Exchange::Responding { .. }
                | Exchange::SendingData { response: true, .. }
                | Exchange::SendingRts { response: true, .. }
                | Exchange::SendingCtsTau { .. }
        )
    }

    fn slot(&self, s: Slot) -> &Option<Held> {
        match s {
            Slot::Current => &self.current,
            Slot::Side => &self.side,
        }
    }

    fn slot_mut(&mut self, s: Slot) -> &mut Option<Held> {
        match s {
            Slot::Current => &mut self.current,
            Slot::Side => &mut self.side,
        }
    }

    fn held(&self, s: Slot) -> Held {
        self.slot(s).expect("an exchange for an empty slot")
    }

    // ---- timers -------------------------------------------------------

    fn set_timer(&mut self, t: MacTimer, at: SimTime, out: &mut Vec<MacAction>) {
        out.extend(self.timer_at(t, at).map(MacAction::from));
    }

    /// Arms timer `t` for `at`: what to queue, or none if it is already
    /// armed for that instant.
    fn timer_at(&mut self, t: MacTimer, at: SimTime) -> Option<TimerSet> {
        let slot = &mut self.timers[t as usize];
        if slot.at == Some(at) {
            return None;
        }
        slot.gen = slot.gen.wrapping_add(1);
        slot.at = Some(at);
        Some(TimerSet {
            timer: t,
            at,
            gen: slot.gen,
        })
    }

    fn cancel_timer(&mut self, t: MacTimer) {
        let slot = &mut self.timers[t as usize];
        if slot.at.is_some() {
            slot.gen = slot.gen.wrapping_add(1);
            slot.at = None;
        }
    }

    // ---- channel access -----------------------------------------------

    /// Draws a backoff at `now` from [0, CW] (§9.3.4.3). Its slots are
    /// counted from `now` at the earliest: a backoff invoked at a CTS or
    /// ACK timeout (§9.3.2.6, §9.3.2.8) on a medium idle for longer than
    /// DIFS starts its countdown then, not DIFS after the medium went idle.
    fn draw_backoff(&mut self, now: SimTime) {
        self.backoff_slots = self.rng.gen_range(0..=self.cw);
        self.backoff_pending = true;
        self.backoff_drawn = now;
    }

    /// Busy for our purposes: a frame exchange or response of our own.
    fn in_exchange(&self) -> bool {
        self.exchange != Exchange::Idle
    }

    /// When the first backoff slot may start: an IFS after the medium went
    /// idle (EIFS after a frame received in error), DIFS after the NAV,
    /// and not before the backoff was drawn.
    fn ifs_end(&self) -> SimTime {
        let ifs = if self.use_eifs {
            self.cfg.eifs()
        } else {
            self.cfg.difs()
        };
        // Instants of the run (a NAV lasts at most a Duration field's
        // 32,767 µs), so plain additions (`SimTime::plus`).
        self.phy_idle_since
            .plus(ifs)
            .max(self.nav.end().plus(self.cfg.difs()))
            .max(self.backoff_drawn)
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
    ///
    /// Inlined up to the decision, as it runs at every edge of the medium
    /// at every station in carrier-sense range: most do not contend.
    #[inline]
    fn reschedule_access(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        out.extend(self.access_rescheduled(now).map(MacAction::from));
    }

    /// `reschedule_access`, returning the one action it may ask for (the
    /// access timer armed) instead of pushing it.
    #[inline]
    fn access_rescheduled(&mut self, now: SimTime) -> Option<TimerSet> {
        let contends = self.backoff_pending || self.current.is_some() || !self.pending_rtr.is_empty();
        if self.phy_busy || self.in_exchange() || !contends {
            self.counting_from = None;
            self.cancel_timer(MacTimer::Access);
            return None;
        }
        self.arm_access(now)
    }

    /// Arms the access timer for the end of the backoff on an idle medium.
    #[inline(never)]
    fn arm_access(&mut self, now: SimTime) -> Option<TimerSet> {
        let from = self.ifs_end();
        self.counting_from = Some(from);
        let at = from.plus(self.cfg.slot.mul(self.backoff_slots as u64)).max(now);
        self.timer_at(MacTimer::Access, at)
    }

    // ---- inputs -------------------------------------------------------

    /// Takes an MSDU in; one that already went on the air (it carries its
    /// sequence number back) keeps the number and goes out as a retry.
    fn hold(&mut self, msdu: Msdu, next_hop: u32, retries: Retries) -> Held {
        let frame_bytes = msdu.bytes + self.cfg.data_overhead_bytes;
        let seq = retries.seq.unwrap_or_else(|| {
            let seq = self.next_seq;
            self.next_seq = (self.next_seq + 1) % 4096;
            seq
        });
        Held {
            msdu,
            next_hop,
            seq,
            use_rts: next_hop != BROADCAST && frame_bytes > self.cfg.rts_threshold_bytes,
            retries,
            attempts: u32::from(retries.seq.is_some()),
            forwarding: false,
            first_rts: false,
        }
    }

    /// An MSDU from the interface queue (only when `wants_msdu()`).
    pub fn handle_msdu(&mut self, now: SimTime, msdu: Msdu, next_hop: u32, out: &mut Vec<MacAction>) {
        self.handle_msdu_with(now, msdu, next_hop, Retries::default(), out);
    }

    /// An MSDU from the interface queue with the retry state it carried
    /// back there from the second slot (`MacAction::Requeue`).
    pub fn handle_msdu_with(
        &mut self,
        now: SimTime,
        msdu: Msdu,
        next_hop: u32,
        retries: Retries,
        out: &mut Vec<MacAction>,
    ) {
        debug_assert!(self.current.is_none());
        self.current = Some(self.hold(msdu, next_hop, retries));
        // §9.3.4.2: a frame that finds the medium idle may go once the
        // medium has been idle for DIFS; one that finds it busy backs off.
        if !self.backoff_pending {
            let idle_now = !self.phy_busy && !self.nav.is_set(now) && !self.in_exchange();
            if idle_now {
                self.backoff_slots = 0;
            } else {
                self.draw_backoff(now);
            }
        }
        self.reschedule_access(now, out);
    }

    /// Sends `msdu` from the second slot as DATA SIFS from now, inside an
    /// exchange another station opened, and then awaits its ACK. The MSDU
    /// in hand keeps its frozen backoff and retry counts. This is the
    /// common end of quick-exchange's reverse packet, fast-forward's relayed
    /// packet and OPET's answer to a ready-to-receive frame; `retries` are
    /// the counts it carried back from the queue. Only outside an exchange,
    /// with the second slot free.
    pub fn send_from_second_slot(
        &mut self,
        now: SimTime,
        msdu: Msdu,
        next_hop: u32,
        retries: Retries,
        out: &mut Vec<MacAction>,
    ) {
        debug_assert!(self.side.is_none() && !self.in_exchange() && next_hop != BROADCAST);
        self.freeze(now);
        self.side = Some(self.hold(msdu, next_hop, retries));
        self.exchange = Exchange::Sifs {
            response: Response::Data {
                slot: Slot::Side,
                tau: Duration::ZERO,
            },
            under: None,
        };
        self.set_timer(MacTimer::Response, now + self.cfg.sifs, out);
        self.reschedule_access(now, out);
    }

    /// OPET's fast relay: the next channel access draws its backoff from
    /// [0, cw_relay] if that is shorter than what remains
    /// (`backoff_slots = min(remaining, U[0, cw_relay])`).
    pub fn prioritize(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        self.shorten_backoff(now, self.cfg.opet.cw_relay, out);
    }

    /// Keeps at most `U[0, window]` backoff slots still to count, and
    /// contends. Slots already counted in this idle period stay counted.
    fn shorten_backoff(&mut self, now: SimTime, window: u32, out: &mut Vec<MacAction>) {
        let k = self.rng.gen_range(0..=window);
        let contending = self.backoff_pending || self.current.is_some();
        let elapsed = match self.counting_from {
            Some(from) if now > from => ((now - from).as_nanos() / self.cfg.slot.as_nanos()) as u32,
            _ => 0,
        };
        let elapsed = elapsed.min(self.backoff_slots);
        let left = if contending {
            self.backoff_slots - elapsed
        } else {
            u32::MAX
        };
        self.backoff_slots = elapsed + left.min(k);
        self.backoff_pending = true;
        self.reschedule_access(now, out);
    }

    /// OPET: owe `to` a ready-to-receive frame for flow `label` (its
    /// count here fell below the threshold); `t_data` is the airtime of
    /// the DATA it solicits. It contends with the fast-relay window.
    pub fn request_rtr(&mut self, now: SimTime, to: u32, label: u32, t_data: Duration, out: &mut Vec<MacAction>) {
        if self.pending_rtr.iter().any(|r| r.to == to && r.label == label) {
            return;
        }
        self.pending_rtr.push(PendingRtr {
            to,
            label,
            t_data,
            attempts: 0,
        });
        self.shorten_backoff(now, self.cfg.opet.cw_relay, out);
    }

    /// OPET: the ready-to-receive frame owed to `to` for `label` is no
    /// longer needed (the flow came back by an RTS).
    pub fn cancel_rtr(&mut self, to: u32, label: u32) {
        let on_air = matches!(self.exchange,
            Exchange::SendingRtr { to: t, label: l, .. } | Exchange::Waiting(Wait::RtrData { to: t, label: l })
            if t == to && l == label);
        if !on_air {
            self.pending_rtr.retain(|r| !(r.to == to && r.label == label));
        }
    }

    /// OPET: ready-to-receive frames owed, as (to, label).
    pub fn pending_rtrs(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.pending_rtr.iter().map(|r| (r.to, r.label))
    }

    /// OPET: answer the RTS whose CTS is due with a negative CTS (after
    /// `MacAction::RtsFor`).
    pub fn refuse(&mut self) {
        if let Exchange::Sifs {
            response: Response::Cts { to, .. },
            under,
        } = self.exchange
        {
            self.exchange = Exchange::Sifs {
                response: Response::Ncts { to },
                under,
            };
        }
    }

    /// OPET: answer a ready-to-receive frame with the MSDU in hand, as
    /// DATA SIFS from now (after `MacAction::WantRtrData`). Its retry
    /// state carries on: the DATA counts against the long retry limit.
    pub fn answer_rtr(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        debug_assert!(self.current.is_some() && !self.in_exchange());
        self.freeze(now);
        self.respond(
            now,
            Response::Data {
                slot: Slot::Current,
                tau: Duration::ZERO,
            },
            None,
            out,
        );
        self.reschedule_access(now, out);
    }

    /// Whether the PHY's last word was that the medium is busy (its
    /// carrier sense, §9.3.2.1): the simulator tells the MAC of an idle
    /// edge only after a busy one.
    pub fn phy_busy(&self) -> bool {
        self.phy_busy
    }

    /// The medium turned busy. EIFS, if due, is over: it follows only the
    /// idle period right after the erroneous frame (§9.3.2.3.7); a later
    /// busy period that ends in error sets it again (`handle_rx_error`).
    pub fn handle_medium_busy(&mut self, now: SimTime) {
        self.phy_busy = true;
        self.use_eifs = false;
        self.freeze(now);
    }

    /// The medium turned idle at `now`: contention may resume.
    pub fn handle_medium_idle(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        out.extend(self.medium_idle(now).map(MacAction::from));
    }

    /// `handle_medium_idle` for a caller that carries the action out
    /// itself: an idle edge asks for one at most, the access timer armed
    /// (`reschedule_access`), so it is returned rather than pushed. The
    /// simulator's signal walks take this path at every station in
    /// carrier-sense range of every frame.
    #[inline]
    pub fn medium_idle(&mut self, now: SimTime) -> Option<TimerSet> {
        self.phy_busy = false;
        self.phy_idle_since = now;
        self.access_rescheduled(now)
    }

    /// A frame ended that could not be decoded: use EIFS (§9.3.7). Under
    /// ns-2's rule (`eifs_nav`) EIFS is a NAV from now instead, which DIFS
    /// follows as after any NAV.
    pub fn handle_rx_error(&mut self, now: SimTime) {
        if self.eifs_nav {
            self.nav.update(now, now.plus(self.cfg.eifs()));
        } else {
            self.use_eifs = true;
        }
    }

    /// ns-2's capture deferral (`capture_nav`): a frame lasting `airtime`
    /// started during a reception and was captured out. ns-2.35's
    /// `Mac802_11::capture` sets the NAV to EIFS plus the frame's duration,
    /// which keeps the station from answering an RTS (`cts_if_idle`) and
    /// from contending until then. Without the rule, nothing happens.
    pub fn captured(&mut self, now: SimTime, airtime: Duration) {
        if self.cfg.capture_nav {
            self.nav.update(now, now.plus(self.cfg.eifs() + airtime));
        }
    }

    /// A frame was decoded correctly.
    pub fn handle_rx(&mut self, now: SimTime, f: &Frame, out: &mut Vec<MacAction>) {
        // §9.3.7: a correctly received frame ends EIFS.
        self.use_eifs = false;
        if f.ext.rx2 == Some(self.me) {
            // Berger et al. §3.2: the RTS part of an ACK-RTS is for us; it is
            // answered as an RTS, and sets no NAV here.
            let rts = Frame {
                kind: FrameKind::Rts,
                rx: self.me,
                ext: Extensions::default(),
                ..*f
            };
            self.step(now, Event::Rx(&rts), out);
        } else if self.only_sets_nav(f) {
            // A frame for another station: a promiscuous MAC passes a data
            // frame up, and the NAV is set (`rx_nav_only`).
            if f.kind == FrameKind::Data && self.cfg.promiscuous {
                out.push(MacAction::Overheard(*f));
            }
            out.extend(self.rx_nav_only(now, f).map(MacAction::from));
            return;
        } else {
            if f.ext.rx2.is_some() {
                // Berger et al. §3.2: the ACK-RTS's receiver of the ACK also
                // sets its NAV, so that it stays quiet while the packet moves on.
                self.nav.update(now, now + f.duration);
            }
            self.step(now, Event::Rx(f), out);
        }
        self.reschedule_access(now, out);
    }

    /// Whether decoding `f` does no more than set the NAV (`handle_rx`): a
    /// frame for another station. A promiscuous MAC also passes a data frame
    /// among them up as overheard; a caller that reads what is passed up
    /// (the schemes) hands such frames to `handle_rx`, not `rx_nav_only`.
    pub fn only_sets_nav(&self, f: &Frame) -> bool {
        f.rx != self.me && f.rx != BROADCAST && f.ext.rx2 != Some(self.me)
    }

    /// `handle_rx` for a frame that `only_sets_nav`, returning the one
    /// action it may ask for (the access timer re-armed) instead of
    /// pushing it, and passing nothing up as overheard: most decoded
    /// frames on a busy field are for other stations.
    pub fn rx_nav_only(&mut self, now: SimTime, f: &Frame) -> Option<TimerSet> {
        debug_assert!(self.only_sets_nav(f));
        // §9.3.7: a correctly received frame ends EIFS; §9.3.2.4: every
        // frame for another station updates the NAV.
        self.use_eifs = false;
        self.nav.update(now, now.plus(f.duration));
        self.access_rescheduled(now)
    }

    /// Our own transmission ended.
    pub fn handle_tx_end(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        self.step(now, Event::TxEnd, out);
        self.reschedule_access(now, out);
    }

    /// Whether timer `timer` queued with generation `gen` is still armed:
    /// one cancelled or re-armed since is stale, and ignored when it fires.
    #[inline]
    pub fn timer_live(&self, timer: MacTimer, gen: u32) -> bool {
        let slot = &self.timers[timer as usize];
        slot.gen == gen && slot.at.is_some()
    }

    /// Timer `timer` armed with `gen` fired at `now` (ignored if stale).
    pub fn handle_timer(&mut self, now: SimTime, timer: MacTimer, gen: u32, out: &mut Vec<MacAction>) {
        if !self.timer_live(timer, gen) {
            return; // stale: cancelled or re-armed since
        }
        self.timers[timer as usize].at = None;
        let event = match timer {
            MacTimer::Access => Event::AccessGranted,
            MacTimer::Response => Event::SifsElapsed,
            MacTimer::Timeout => Event::ResponseTimeout,
        };
        self.step(now, event, out);
    }

    // ---- the frame exchange -------------------------------------------

    /// One transition of the exchange state machine.
    fn step(&mut self, now: SimTime, event: Event, out: &mut Vec<MacAction>) {
        use Exchange::{Idle, Responding, SendingCtsTau, SendingData, SendingRtr, SendingRts, Sifs, Waiting};
        match (self.exchange, event) {
            // §9.3.4.3: the backoff reached zero on an idle medium. The
            // MSDU in hand goes, after an RTS if it is longer than the RTS
            // threshold (§9.3.2.6); without one the post-backoff just ends.
            (Idle, Event::AccessGranted) => {
                self.counting_from = None;
                self.backoff_slots = 0;
                self.backoff_pending = false;
                if let Some(r) = self.pending_rtr.first().copied() {
                    self.send_rtr(r, out);
                } else if self.current.is_some() {
                    self.initiate(out);
                }
            }
            // §9.3.2.6, §9.3.2.8: CTS and ACK go SIFS after the frame that
            // solicited them, whatever the medium and the NAV say.
            (
                Sifs {
                    response: Response::Control(f),
                    under,
                },
                Event::SifsElapsed,
            ) => {
                self.exchange = Responding { under };
                out.push(MacAction::Transmit(f));
            }
            // §9.3.2.6 and Berger et al. §3.1: the CTS; with a packet for
            // the RTS's sender that fits the cap it carries τ, and its
            // Duration stays the standard one (the DATA1 advertises τ).
            // ns-2's CTS rule (`cts_if_idle`): the CTS is dropped unless
            // the station is idle now, its medium idle and its NAV clear.
            (
                Sifs {
                    response: Response::Cts { .. },
                    under,
                },
                Event::SifsElapsed,
            ) if self.cfg.cts_if_idle && (self.phy_busy || self.nav.is_set(now)) => {
                self.exchange = under.map_or(Idle, Waiting);
                if self.cfg.quick_exchange.enabled && self.side.is_some() {
                    // The reverse packet reserved for this CTS goes back.
                    self.release(now, Slot::Side, out);
                }
                self.reschedule_access(now, out);
            }
            (
                Sifs {
                    response: Response::Cts { to, duration, d1_bytes },
                    ..
                },
                Event::SifsElapsed,
            ) => {
                let mut cts = self.control(FrameKind::Cts, to, duration);
                cts.bytes = self.cfg.cts_bytes();
                match self.reverse_for(to, d1_bytes) {
                    Some(reverse) => {
                        let d2 = self.held(reverse).msdu.bytes;
                        let data_ack = qe::data_ack_time(self.cfg.data_rate, d2);
                        cts.ext.tau = qe::tau(data_ack, self.cfg.ack_time(), self.cfg.sifs, self.cfg.ack_time());
                        let t_data1 = self.cfg.data_rate.airtime(d1_bytes + self.cfg.data_overhead_bytes);
                        self.exchange = SendingCtsTau { reverse, t_data1 };
                        self.stats.qe_requested += 1;
                    }
                    None => self.exchange = Responding { under: None },
                }
                out.push(MacAction::Transmit(cts));
            }
            // §9.3.2.6: DATA goes SIFS after the CTS (or, from the second
            // slot, after the frame that invited it); Berger et al. §3.1: a
            // quick-exchange the station honours extends its Duration by τ.
            (
                Sifs {
                    response: Response::Data { slot, tau },
                    ..
                },
                Event::SifsElapsed,
            ) => {
                let mut data = self.data_frame(slot);
                data.duration += tau;
                self.count_attempt(slot);
                let then = if tau > Duration::ZERO {
                    Solicits::DataAck { tau }
                } else {
                    Solicits::Ack
                };
                self.exchange = SendingData {
                    slot,
                    response: true,
                    then,
                };
                out.push(MacAction::Transmit(data));
            }
            // Berger et al. §3.2: the ACK goes as an ACK-RTS, which also asks
            // the forwarded packet's next hop for a CTS; its Duration is an
            // RTS's for that packet (3·SIFS + CTS + DATA + ACK).
            (
                Sifs {
                    response: Response::AckRts { mut ack, slot },
                    ..
                },
                Event::SifsElapsed,
            ) => {
                let data = self.data_frame(slot);
                ack.ext.rx2 = Some(data.rx);
                ack.bytes = ACK_RTS_BYTES;
                ack.rate = self.cfg.basic_rate;
                ack.duration = self.cfg.sifs.mul(3) + self.cfg.cts_time() + data.airtime() + self.cfg.ack_time();
                self.stats.ff_attempted += 1;
                self.exchange = SendingRts { slot, response: true };
                out.push(MacAction::Transmit(ack));
            }
            // Berger et al. §3.1: DATA2 with the piggybacked ACK1, one frame
            // (the Data+CF-Ack subtype); its Duration covers SIFS + ACK2.
            (
                Sifs {
                    response: Response::DataAck(slot),
                    ..
                },
                Event::SifsElapsed,
            ) => {
                let mut data = self.data_frame(slot);
                data.ext.piggybacked_ack = true;
                data.bytes = data.msdu.map_or(0, |m| m.bytes) + qe::DATA_ACK_OVERHEAD_BYTES;
                self.count_attempt(slot);
                self.exchange = SendingData {
                    slot,
                    response: true,
                    then: Solicits::Ack2,
                };
                out.push(MacAction::Transmit(data));
            }
            // OPET: the negative CTS, Duration 0, so that it reserves
            // nothing around the congested station.
            (
                Sifs {
                    response: Response::Ncts { to },
                    under,
                },
                Event::SifsElapsed,
            ) => {
                let ncts = self.control(FrameKind::Ncts, to, Duration::ZERO);
                self.stats.ncts_sent += 1;
                self.exchange = Responding { under };
                out.push(MacAction::Transmit(ncts));
            }
            // OPET: after the ready-to-receive frame the station awaits the
            // DATA for SIFS + T(DATA) + slot.
            (SendingRtr { to, label, t_data }, Event::TxEnd) => {
                self.exchange = Waiting(Wait::RtrData { to, label });
                self.set_timer(MacTimer::Timeout, now + self.cfg.response_timeout(t_data), out);
            }
            // OPET: the DATA our ready-to-receive frame asked for: ACK after
            // SIFS, delivered unless a duplicate; the resume is done. A
            // backoff follows, as after every exchange (§9.3.4.3).
            (Waiting(Wait::RtrData { to, label }), Event::Rx(f))
                if f.kind == FrameKind::Data && f.rx == self.me && f.tx == to =>
            {
                self.cancel_timer(MacTimer::Timeout);
                self.pending_rtr.retain(|r| !(r.to == to && r.label == label));
                self.stats.rtr_answered += 1;
                self.draw_backoff(now);
                let ack = self.control(FrameKind::Ack, f.tx, Duration::ZERO);
                self.respond(now, Response::Control(ack), None, out);
                out.push(MacAction::RtrAnswered { from: to, label });
                self.receive_data(f, out);
            }
            // OPET: a negative CTS answers our RTS: not a failure. The
            // short retry count is reset (the RTS was answered), CW stays,
            // the MSDU goes back to its flow's queue and a new backoff is
            // drawn from the current CW for whatever is served next.
            (Waiting(Wait::Cts(slot)), Event::Rx(f))
                if f.kind == FrameKind::Ncts && self.held(slot).next_hop == f.tx =>
            {
                self.cancel_timer(MacTimer::Timeout);
                self.exchange = Idle;
                self.stats.ncts_received += 1;
                let h = self.slot_mut(slot).take().expect("a wait for an empty slot");
                out.push(MacAction::Blocked {
                    msdu: h.msdu,
                    next_hop: h.next_hop,
                });
                self.draw_backoff(now);
                self.reschedule_access(now, out);
            }
            // OPET: a ready-to-receive frame, answered like an RTS only
            // outside an exchange and with the NAV clear; the node stack
            // picks the packet (`MacAction::WantRtrData`).
            (Idle, Event::Rx(f)) if f.kind == FrameKind::Rtr => {
                self.stats.rtr_received += 1;
                if !self.nav.is_set(now) {
                    if let Some(label) = f.ext.flow {
                        out.push(MacAction::WantRtrData { from: f.tx, label });
                    }
                }
            }
            // §9.3.2.6: after an RTS the station awaits the CTS for
            // CTSTimeout = SIFS + CTS + slot.
            (SendingRts { slot, .. }, Event::TxEnd) => {
                self.exchange = Waiting(Wait::Cts(slot));
                let to = self.cfg.response_timeout(self.cfg.cts_time());
                self.set_timer(MacTimer::Timeout, now + to, out);
            }
            // §9.3.6: a group-addressed frame is not acknowledged; it is
            // done once sent.
            (SendingData { slot, .. }, Event::TxEnd) if self.held(slot).next_hop == BROADCAST => {
                self.exchange = Idle;
                self.delivered(now, slot, out);
            }
            // Berger et al. §3.1: after DATA2+ACK1 the station awaits ACK2
            // (ACKTimeout).
            (
                SendingData {
                    slot,
                    then: Solicits::Ack2,
                    ..
                },
                Event::TxEnd,
            ) => {
                self.exchange = Waiting(Wait::Ack2(slot));
                let to = self.cfg.response_timeout(self.cfg.ack_time());
                self.set_timer(MacTimer::Timeout, now + to, out);
            }
            // Berger et al. §3.1: after an extended DATA1 the station awaits
            // DATA2+ACK1, SIFS + T(DATA2+ACK1) + slot, T(DATA2+ACK1) known
            // from τ.
            (
                SendingData {
                    slot,
                    then: Solicits::DataAck { tau },
                    ..
                },
                Event::TxEnd,
            ) => {
                self.exchange = Waiting(Wait::DataAck(slot));
                let ack = self.cfg.ack_time();
                let data_ack = qe::data_ack_time_of(tau, ack, self.cfg.sifs, ack);
                self.set_timer(MacTimer::Timeout, now + self.cfg.response_timeout(data_ack), out);
            }
            // §9.3.2.8: after unicast DATA the station awaits the ACK for
            // ACKTimeout = SIFS + ACK + slot.
            (SendingData { slot, .. }, Event::TxEnd) => {
                self.exchange = Waiting(Wait::Ack(slot));
                let to = self.cfg.response_timeout(self.cfg.ack_wait_time());
                self.set_timer(MacTimer::Timeout, now + to, out);
            }
            // Berger et al. §3.1: after CTS(τ) the RTS receiver awaits DATA1
            // for SIFS + T(DATA1) + slot.
            (SendingCtsTau { reverse, t_data1 }, Event::TxEnd) => {
                self.exchange = Waiting(Wait::Data1(reverse));
                self.set_timer(MacTimer::Timeout, now + self.cfg.response_timeout(t_data1), out);
            }
            // Our CTS or ACK ended: back to our own wait, if one goes on.
            (Responding { under }, Event::TxEnd) => {
                self.exchange = under.map_or(Idle, Waiting);
            }
            // §9.3.2.6, §9.3.2.8: no CTS or ACK within the timeout: the
            // attempt failed (§9.3.4.4 retry counts). Berger et al. §3.1: no
            // DATA1 after CTS(τ): the reverse packet is released, uncharged.
            (Waiting(wait), Event::ResponseTimeout) => {
                self.exchange = Idle;
                self.wait_expired(now, wait, out);
            }
            // The same, while we owe or send an ACK of our own: the ACK
            // still goes; the failed attempt is handled now.
            (
                Sifs {
                    response,
                    under: Some(wait),
                },
                Event::ResponseTimeout,
            ) => {
                self.exchange = Sifs { response, under: None };
                self.wait_expired(now, wait, out);
            }
            (Responding { under: Some(wait) }, Event::ResponseTimeout) => {
                self.exchange = Responding { under: None };
                self.wait_expired(now, wait, out);
            }
            // §9.3.2.6: an RTS for us is answered with a CTS after SIFS if
            // the NAV is clear; its Duration is the RTS's less SIFS + CTS.
            // Berger et al. §3.1: with quick-exchange the station looks for
            // a packet for the RTS's sender now (the CTS is built at SIFS).
            (Idle, Event::Rx(f)) if f.kind == FrameKind::Rts && !self.nav.is_set(now) => {
                let cts_part = self.cfg.sifs + self.cfg.cts_time();
                let duration = Duration(f.duration.as_nanos().saturating_sub(cts_part.as_nanos()));
                let d1_bytes = self.quick_exchange_d1(f);
                if let Some(d1) = d1_bytes {
                    let cap = self.cfg.quick_exchange.max_bytes;
                    if self.reverse_for(f.tx, d1).is_none() && d1 < cap {
                        out.push(MacAction::WantReverse {
                            peer: f.tx,
                            max_bytes: cap - d1,
                        });
                    }
                }
                let response = Response::Cts {
                    to: f.tx,
                    duration,
                    d1_bytes: d1_bytes.unwrap_or(u32::MAX),
                };
                self.respond(now, response, None, out);
                // OPET: the node stack says whether the flow is congested here.
                if let (true, Some(label)) = (self.cfg.opet.enabled, f.ext.flow) {
                    let fixed = self.cfg.sifs.mul(3) + self.cfg.cts_time() + self.cfg.ack_time();
                    let t_data = Duration(f.duration.as_nanos().saturating_sub(fixed.as_nanos()));
                    out.push(MacAction::RtsFor {
                        from: f.tx,
                        label,
                        t_data,
                    });
                }
            }
            // §9.3.2.6: the CTS from the RTS's receiver: DATA after SIFS;
            // the short retry count is reset (§9.3.4.4). Berger et al. §3.1:
            // a CTS with τ > 0 is honoured by extending DATA1's Duration.
            (Waiting(Wait::Cts(slot)), Event::Rx(f))
                if f.kind == FrameKind::Cts && self.held(slot).next_hop == f.tx =>
            {
                self.cancel_timer(MacTimer::Timeout);
                if let Some(h) = self.slot_mut(slot).as_mut() {
                    h.retries.short = 0;
                    h.first_rts = false;
                }
                let honor = self.cfg.quick_exchange.enabled && self.cfg.quick_exchange.honor;
                let tau = if honor { f.ext.tau } else { Duration::ZERO };
                self.respond(now, Response::Data { slot, tau }, None, out);
            }
            // §9.3.2.8: the ACK completes the MSDU. Berger et al. §3.1: a
            // plain ACK while DATA2+ACK1 is awaited completes DATA1 too (the
            // RTS receiver lost its reverse packet).
            (Waiting(Wait::Ack(slot) | Wait::DataAck(slot)), Event::Rx(f)) if f.kind == FrameKind::Ack => {
                self.cancel_timer(MacTimer::Timeout);
                self.exchange = Idle;
                self.delivered(now, slot, out);
            }
            // Berger et al. §3.1: ACK2 completes the quick-exchange.
            (Waiting(Wait::Ack2(slot)), Event::Rx(f)) if f.kind == FrameKind::Ack => {
                self.cancel_timer(MacTimer::Timeout);
                self.exchange = Idle;
                self.stats.qe_completed += 1;
                self.delivered(now, slot, out);
            }
            // Berger et al. §3.1: DATA2+ACK1 from DATA1's receiver: ACK1
            // completes DATA1, DATA2 is delivered (unless a duplicate) and
            // acknowledged by ACK2 after SIFS.
            (Waiting(Wait::DataAck(slot)), Event::Rx(f))
                if f.kind == FrameKind::Data && f.ext.piggybacked_ack && self.held(slot).next_hop == f.tx =>
            {
                self.cancel_timer(MacTimer::Timeout);
                let ack2 = self.control(FrameKind::Ack, f.tx, Duration::ZERO);
                self.respond(now, Response::Control(ack2), None, out);
                self.delivered(now, slot, out);
                self.receive_data(f, out);
            }
            // Berger et al. §3.1: DATA1 after our CTS(τ). Extended by τ: the
            // sender honours, and DATA2+ACK1 goes after SIFS. Not extended:
            // it declines; a plain ACK goes and the reverse packet is
            // released, uncharged.
            (Waiting(Wait::Data1(reverse)), Event::Rx(f))
                if f.kind == FrameKind::Data && f.rx == self.me && self.held(reverse).next_hop == f.tx =>
            {
                self.cancel_timer(MacTimer::Timeout);
                let plain = self.cfg.sifs + self.cfg.ack_time();
                if f.duration > plain {
                    self.stats.qe_honored += 1;
                    self.respond(now, Response::DataAck(reverse), None, out);
                } else {
                    self.stats.qe_fallen_back += 1;
                    let ack = self.control(FrameKind::Ack, f.tx, Duration::ZERO);
                    self.respond(now, Response::Control(ack), None, out);
                    self.release(now, reverse, out);
                }
                self.receive_data(f, out);
            }
            // §9.3.2.8: unicast DATA for us is acknowledged after SIFS,
            // whatever the medium and the NAV say, even while we await a
            // response of our own (that wait goes on beneath); §9.3.2.10:
            // it is delivered unless it is a duplicate.
            (Idle | Waiting(_), Event::Rx(f)) if f.kind == FrameKind::Data => {
                if f.rx == self.me {
                    let under = match self.exchange {
                        Waiting(w) => Some(w),
                        _ => None,
                    };
                    let ack = self.control(FrameKind::Ack, f.tx, Duration::ZERO);
                    self.respond(now, Response::Control(ack), under, out);
                }
                let delivered = self.receive_data(f, out);
                // Berger et al. §3.2: a relay may fast-forward a packet it
                // just took in (not a duplicate), outside exchanges of its own.
                let free = under_none(self.exchange) && self.side.is_none();
                if self.cfg.fast_forward.enabled && f.rx == self.me && delivered && free {
                    out.push(MacAction::WantForward { from: f.tx });
                }
            }
            // §9.3.6: a broadcast data frame is never acknowledged, so it
            // is taken whatever the exchange (while we are not sending).
            (Sifs { .. }, Event::Rx(f)) if f.kind == FrameKind::Data && f.is_broadcast() => {
                self.receive_data(f, out);
            }
            // Anything else is ignored: an RTS under a set NAV or while in
            // an exchange (no CTS, §9.3.2.6), a CTS or ACK not awaited,
            // unicast DATA while a response is already due (only possible if
            // SIFS outlasts a frame; its sender retries), and events of
            // other states.
            _ => {}
        }
    }

    /// Quick-exchange: DATA1's MSDU size, from an RTS's Duration
    /// (3·SIFS + CTS + DATA1 + ACK); None when quick-exchange is off.
    fn quick_exchange_d1(&self, rts: &Frame) -> Option<u32> {
        if !self.cfg.quick_exchange.enabled {
            return None;
        }
        let fixed = self.cfg.sifs.mul(3) + self.cfg.cts_time() + self.cfg.ack_time();
        let t_data1 = Duration(rts.duration.as_nanos().saturating_sub(fixed.as_nanos()));
        Some(qe::msdu_bytes_of(
            self.cfg.data_rate,
            t_data1,
            self.cfg.data_overhead_bytes,
        ))
    }

    /// Quick-exchange's reverse packet for `peer`, if any fits the cap
    /// with DATA1's `d1_bytes`: the MSDU in hand first, then the second
    /// slot (filled from the queue by `offer_reverse`).
    fn reverse_for(&self, peer: u32, d1_bytes: u32) -> Option<Slot> {
        if !self.cfg.quick_exchange.enabled {
            return None;
        }
        let cap = self.cfg.quick_exchange.max_bytes;
        [Slot::Current, Slot::Side].into_iter().find(|&s| {
            self.slot(s)
                .is_some_and(|h| h.next_hop == peer && d1_bytes.saturating_add(h.msdu.bytes) <= cap)
        })
    }

    /// Quick-exchange: a queued packet for the RTS's sender, handed over
    /// after `MacAction::WantReverse` (it goes into the second slot).
    pub fn offer_reverse(&mut self, msdu: Msdu, next_hop: u32, retries: Retries) {
        debug_assert!(self.side.is_none() && next_hop != BROADCAST);
        self.side = Some(self.hold(msdu, next_hop, retries));
    }

    /// A reserved reverse packet that was not sent: the MSDU in hand stays;
    /// a second-slot one goes back to the queue with its counts unchanged.
    fn release(&mut self, now: SimTime, slot: Slot, out: &mut Vec<MacAction>) {
        if slot == Slot::Side {
            if let Some(h) = self.side.take() {
                out.push(MacAction::Requeue {
                    msdu: h.msdu,
                    next_hop: h.next_hop,
                    retries: h.carried(),
                });
            }
        }
        self.reschedule_access(now, out);
    }

    fn count_attempt(&mut self, slot: Slot) {
        if let Some(h) = self.slot_mut(slot).as_mut() {
            h.attempts += 1;
        }
    }

    /// Arms the Response timer for a response due SIFS from now.
    fn respond(&mut self, now: SimTime, response: Response, under: Option<Wait>, out: &mut Vec<MacAction>) {
        self.exchange = Exchange::Sifs { response, under };
        self.set_timer(MacTimer::Response, now + self.cfg.sifs, out);
    }

    /// Starts an exchange with the MSDU in hand (channel access won).
    fn initiate(&mut self, out: &mut Vec<MacAction>) {
        let c = self.held(Slot::Current);
        let frame = if c.use_rts {
            let data = self.data_frame(Slot::Current);
            // RTS reserves CTS + DATA + ACK and three SIFS (§9.2.5.2).
            let dur = self.cfg.sifs.mul(3) + self.cfg.cts_time() + data.airtime() + self.cfg.ack_time();
            self.exchange = Exchange::SendingRts {
                slot: Slot::Current,
                response: false,
            };
            let mut rts = self.control(FrameKind::Rts, c.next_hop, dur);
            rts.retry = c.retries.short > 0;
            // A fresh MSDU's first RTS (no retry state, no frame sent yet).
            if c.retries == Retries::default() && c.attempts == 0 {
                self.stats.msdus_started += 1;
                if let Some(cur) = self.current.as_mut() {
                    cur.first_rts = true;
                }
            }
            if self.cfg.opet.enabled {
                // OPET: the RTS names the flow, so that the receiver can refuse it.
                rts.bytes += self.cfg.opet.flow_label_bytes;
                rts.ext.flow = c.msdu.label;
            }
            rts
        } else {
            self.exchange = Exchange::SendingData {
                slot: Slot::Current,
                response: false,
                then: Solicits::Ack,
            };
            let data = self.data_frame(Slot::Current);
            if let Some(cur) = self.current.as_mut() {
                cur.attempts += 1;
            }
            data
        };
        out.push(MacAction::Transmit(frame));
    }

    /// Delivers a data frame unless it is a duplicate; true if delivered.
    fn receive_data(&mut self, f: &Frame, out: &mut Vec<MacAction>) -> bool {
        if self.is_duplicate(f) {
            self.stats.duplicates += 1;
            false
        } else if let Some(msdu) = f.msdu {
            out.push(MacAction::Deliver { msdu, from: f.tx });
            true
        } else {
            false
        }
    }

    /// Fast-forward: the packet to send on with the ACK due (the answer to
    /// `MacAction::WantForward`); the ACK becomes an ACK-RTS. Returns
    /// whether the packet goes: one that already came over
    /// `consecutive_limit` fast-forwarded hops in a row does not (Berger et
    /// al. §3.2), the ACK stays plain, and a queued packet stays with the
    /// caller (which takes it out of the queue only when this says true).
    pub fn forward(&mut self, with: Forward) -> bool {
        let Exchange::Sifs {
            response: Response::Control(ack),
            under: None,
        } = self.exchange
        else {
            debug_assert!(false, "forward without an ACK due");
            return false;
        };
        let candidate = match with {
            Forward::Current => self.current.map(|h| h.msdu),
            Forward::Queued { msdu, .. } => Some(msdu),
        };
        if candidate.is_some_and(|m| !self.cfg.fast_forward.allows(m.ff_run)) {
            self.stats.ff_limited += 1;
            return false;
        }
        let slot = match with {
            Forward::Current if self.current.is_some_and(|h| h.next_hop != BROADCAST) => Slot::Current,
            Forward::Queued {
                msdu,
                next_hop,
                retries,
            } if self.side.is_none() && next_hop != BROADCAST => {
                self.side = Some(self.hold(msdu, next_hop, retries));
                Slot::Side
            }
            _ => {
                debug_assert!(matches!(with, Forward::Current), "no second slot for {with:?}");
                return false;
            }
        };
        if let Some(h) = self.slot_mut(slot).as_mut() {
            h.forwarding = true;
        }
        self.exchange = Exchange::Sifs {
            response: Response::AckRts { ack, slot },
            under: None,
        };
        true
    }

    /// The MSDU of `slot` was acknowledged (or sent, if broadcast).
    fn delivered(&mut self, now: SimTime, slot: Slot, out: &mut Vec<MacAction>) {
        let h = self.slot_mut(slot).take().expect("delivered from an empty slot");
        if h.forwarding {
            self.stats.ff_completed += 1;
        }
        out.push(MacAction::TxDone {
            msdu: h.msdu,
            next_hop: h.next_hop,
        });
        match slot {
            Slot::Current => self.finish_exchange(now, out),
            // The MSDU in hand resumes its frozen backoff.
            Slot::Side => self.reschedule_access(now, out),
        }
    }

    /// The awaited response did not come.
    fn wait_expired(&mut self, now: SimTime, wait: Wait, out: &mut Vec<MacAction>) {
        match wait {
            Wait::Cts(s) => self.failed(now, s, true, out),
            Wait::Ack(s) | Wait::DataAck(s) => self.failed(now, s, false, out),
            Wait::Ack2(s) => {
                self.stats.qe_failed += 1;
                self.failed(now, s, false, out);
            }
            Wait::Data1(reverse) => self.release(now, reverse, out),
            Wait::RtrData { to, label } => self.rtr_expired(now, to, label, out),
        }
    }

    /// OPET: no DATA after our ready-to-receive frame. It is tried again
    /// with the relay window doubled, until `rtr_attempts` are used; the
    /// upstream's block timeout covers the rest.
    fn rtr_expired(&mut self, now: SimTime, to: u32, label: u32, out: &mut Vec<MacAction>) {
        self.stats.rtr_timeouts += 1;
        let Some(i) = self.pending_rtr.iter().position(|r| r.to == to && r.label == label) else {
            return;
        };
        if self.pending_rtr[i].attempts >= self.cfg.opet.rtr_attempts {
            self.pending_rtr.remove(i);
            self.stats.rtr_abandoned += 1;
            out.push(MacAction::RtrAbandoned { to, label });
            self.draw_backoff(now);
            self.reschedule_access(now, out);
        } else {
            let window = (2 * self.cfg.opet.cw_relay + 1).min(self.cfg.cw_max);
            self.backoff_slots = self.rng.gen_range(0..=window);
            self.backoff_pending = true;
            self.backoff_drawn = now;
            self.reschedule_access(now, out);
        }
    }

    /// OPET: the ready-to-receive frame `r` goes (channel access won). Its
    /// Duration covers SIFS + DATA + SIFS + ACK.
    fn send_rtr(&mut self, r: PendingRtr, out: &mut Vec<MacAction>) {
        if let Some(p) = self.pending_rtr.iter_mut().find(|p| p.to == r.to && p.label == r.label) {
            p.attempts += 1;
        }
        let duration = self.cfg.sifs.mul(2) + r.t_data + self.cfg.ack_time();
        let mut rtr = self.control(FrameKind::Rtr, r.to, duration);
        rtr.bytes = opet::rtr_bytes(self.cfg.opet.flow_label_bytes);
        rtr.ext.flow = Some(r.label);
        self.stats.rtr_sent += 1;
        self.exchange = Exchange::SendingRtr {
            to: r.to,
            label: r.label,
            t_data: r.t_data,
        };
        out.push(MacAction::Transmit(rtr));
    }

    /// A CTS (`waited_cts`) or ACK did not come for the MSDU of `slot`.
    /// (A fast-forward that got no CTS lands here too: "normal DCF defined
    /// behavior is resumed", an RTS failure of the forwarded packet.)
    fn failed(&mut self, now: SimTime, slot: Slot, waited_cts: bool, out: &mut Vec<MacAction>) {
        let cfg = &self.cfg;
        let (short_limit, long_limit) = (cfg.short_retry_limit, cfg.long_retry_limit);
        let h = self.slot_mut(slot).as_mut().expect("a timeout for an empty slot");
        // §9.3.4.4: RTS failures and unprotected data count against the short
        // retry limit, data sent after RTS/CTS against the long one.
        let exhausted = if waited_cts || !h.use_rts {
            h.retries.short += 1;
            h.retries.short >= short_limit
        } else {
            h.retries.long += 1;
            h.retries.long >= long_limit
        };
        let (forwarding, first_rts) = (h.forwarding, h.first_rts);
        // Back to contention, if it stays: its next hop is not a fast-forward.
        h.forwarding = false;
        h.first_rts = false;
        let h = *h;
        match (forwarding, waited_cts) {
            (true, true) => self.stats.ff_no_cts += 1,
            (true, false) => self.stats.ff_data_failed += 1,
            (false, _) => {}
        }
        if waited_cts && first_rts {
            self.stats.first_rts_failed += 1;
        }
        if exhausted {
            *self.slot_mut(slot) = None;
            self.stats.retry_drops += 1;
            out.push(MacAction::TxFailed {
                msdu: h.msdu,
                next_hop: h.next_hop,
            });
        }
        match (slot, exhausted) {
            (Slot::Current, true) => self.finish_exchange(now, out),
            (Slot::Current, false) => {
                self.cw = (2 * self.cw + 1).min(self.cfg.cw_max);
                self.draw_backoff(now);
                self.reschedule_access(now, out);
            }
            // The second slot's MSDU goes back to the queue with its counts;
            // the contention window belongs to the MSDU in hand.
            (Slot::Side, false) => {
                self.side = None;
                out.push(MacAction::Requeue {
                    msdu: h.msdu,
                    next_hop: h.next_hop,
                    retries: h.carried(),
                });
                self.reschedule_access(now, out);
            }
            (Slot::Side, true) => self.reschedule_access(now, out),
        }
    }

    /// After success or a drop of the MSDU in hand: reset CW, and back off
    /// again (§9.3.4.3: a backoff follows every transmission attempt).
    fn finish_exchange(&mut self, now: SimTime, out: &mut Vec<MacAction>) {
        self.cw = self.cfg.cw_min;
        self.draw_backoff(now);
        self.reschedule_access(now, out);
    }

    fn control(&self, kind: FrameKind, rx: u32, duration: Duration) -> Frame {
        let rate = if kind == FrameKind::Ack {
            self.cfg.ack_rate
        } else {
            self.cfg.basic_rate
        };
        Frame::control(kind, self.me, rx, duration, rate)
    }

    fn data_frame(&self, slot: Slot) -> Frame {
        let c = self.held(slot);
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
            // Berger et al. §3.2: the packet's run of fast-forwarded hops
            // grows by this one after an ACK-RTS, and ends on any other hop.
            msdu: Some(Msdu {
                ff_run: if c.forwarding {
                    c.msdu.ff_run.saturating_add(1)
                } else {
                    0
                },
                ..c.msdu
            }),
            bytes: c.msdu.bytes + self.cfg.data_overhead_bytes,
            // Broadcasts go at the basic rate so every station can decode them.
            rate: if broadcast {
                self.cfg.basic_rate
            } else {
                self.cfg.data_rate
            },
            ext: Extensions::default(),
        }
    }

    /// §9.3.2.10: a frame with the Retry bit whose ⟨transmitter, sequence
    /// number⟩ is among the recent ones is a duplicate. Several recent
    /// numbers are kept per transmitter, so that a retransmission is still
    /// caught after a frame from the second slot overtook it.
    fn is_duplicate(&mut self, f: &Frame) -> bool {
        let i = match self.dup_cache.binary_search_by_key(&f.tx, |e| e.tx) {
            Ok(i) => i,
            Err(i) => {
                let fresh = RecentSeqs {
                    tx: f.tx,
                    seqs: [0; DUP_CACHE_DEPTH],
                    len: 0,
                };
                self.dup_cache.insert(i, fresh);
                i
            }
        };
        let e = &mut self.dup_cache[i];
        let seen = e.seqs[..e.len].iter().position(|&s| s == f.seq);
        // Newest first: move (or insert) this number to the front.
        let end = match seen {
            Some(j) => j,
            None => {
                e.len = (e.len + 1).min(DUP_CACHE_DEPTH);
                e.len - 1
            }
        };
        e.seqs.copy_within(0..end, 1);
        e.seqs[0] = f.seq;
        f.retry && seen.is_some()
    }
}

#[cfg(test)]
mod harness;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_fast_forward;
#[cfg(test)]
mod tests_ns2;
#[cfg(test)]
mod tests_opet;
#[cfg(test)]
mod tests_quick_exchange;

#[cfg(test)]
mod layout_tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn medium_edge_fields_share_a_cache_line() {
        // A busy edge (`handle_medium_busy`: `freeze`, then the Access
        // timer's `cancel_timer`) reads and writes these, and the slot
        // time besides when a countdown was under way.
        let ends = [
            offset_of!(Dcf, phy_busy) + 1,
            // Read first when a decoded frame arrives (`handle_rx`).
            offset_of!(Dcf, me) + 4,
            offset_of!(Dcf, backoff_slots) + 4,
            offset_of!(Dcf, counting_from) + std::mem::size_of::<Option<SimTime>>(),
            offset_of!(Dcf, phy_idle_since) + std::mem::size_of::<SimTime>(),
            offset_of!(Dcf, timers) + std::mem::size_of::<TimerSlot>() * (MacTimer::Access as usize + 1),
        ];
        assert!(ends.iter().all(|&end| end <= 64), "{ends:?}");
        assert_eq!(std::mem::align_of::<Dcf>() % 8, 0);
    }
}
