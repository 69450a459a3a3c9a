//! One node's radio: half duplex and the cumulative time spent in each
//! radio state, which NRED reads. Whether a frame is received is not
//! decided here but by the node's reception model (`reception/`): the radio
//! hands it every signal start and end and derives its state from it.
//!
//! The state is, in order of precedence: transmitting; receiving (locked
//! onto a frame above the receive threshold); carrier-sense busy (the model
//! says the medium is busy); idle.

use super::propagation::Thresholds;
pub use super::reception::{
    Arrival, Loss, Losses, Reception, ReceptionModel, RxEnd, SignalEnd, SinrRx, ThresholdParams, ThresholdRx, TxId,
};
use super::PhyConfig;
use crate::time::{Duration, SimTime};
use std::sync::Arc;

/// The radio states whose times NRED's channel-utilisation estimate adds
/// up (Xu et al. §5.1): the medium is busy in all but `Idle`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RadioState {
    /// Nothing sensed, not transmitting.
    Idle = 0,
    /// Sending a frame (half duplex: nothing is received meanwhile).
    Transmitting = 1,
    /// Locked onto a signal at or above the receive threshold.
    Receiving = 2,
    /// Medium busy with signals the radio cannot decode.
    CarrierSense = 3,
}

/// Laid out for the signal edges, most of a run's events: everything an
/// edge reads (the reception model's own state, the radio's state and
/// since when) in the first cache line, the time per state, written when
/// the state changes, in the second. The threshold model's thresholds are
/// shared by the run's radios (`ThresholdParams`) rather than copied into
/// each, and a node's stack begins with its radio (`NodeStack`), so that
/// on large fields, whose radios are not all in the cache, an edge loads
/// one line of the radio instead of three.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Radio {
    rx: Reception,
    state: RadioState,
    transmitting: bool,
    since: SimTime,
    totals: [Duration; 4],
}

impl Radio {
    /// An idle radio deciding reception with `rx`.
    pub fn new(rx: Reception) -> Self {
        Radio {
            rx,
            transmitting: false,
            state: RadioState::Idle,
            since: SimTime::ZERO,
            totals: [Duration::ZERO; 4],
        }
    }

    /// The radio a scenario configures, with the thresholds its channel
    /// derived (`shared`: the same, for threshold capture, made once per
    /// run by `ThresholdParams::new`); `rng` is the node's reception
    /// stream (drawn from by `Sinr`).
    pub fn from_config(
        cfg: &PhyConfig,
        th: &Thresholds,
        shared: &Arc<ThresholdParams>,
        rng: rand_pcg::Pcg64Mcg,
    ) -> Self {
        Radio::new(match cfg.reception {
            ReceptionModel::Threshold => Reception::Threshold(ThresholdRx::shared(Arc::clone(shared))),
            ReceptionModel::Sinr(s) => Reception::Sinr(Box::new(SinrRx::new(th, &s, rng))),
        })
    }

    /// Physical carrier sense: busy while transmitting, receiving, or while
    /// the reception model senses the medium busy.
    ///
    /// Read from the settled state (every input leaves it settled), which
    /// is busy in every state but idle: one comparison on the hot path of
    /// each signal edge instead of asking the reception model twice.
    #[inline]
    pub fn is_busy(&self) -> bool {
        self.state != RadioState::Idle
    }

    /// The reception model (for tests and traces).
    pub fn reception(&self) -> &Reception {
        &self.rx
    }

    /// Whether a transmission of this node is on the air.
    pub fn is_transmitting(&self) -> bool {
        self.transmitting
    }

    /// The current state, by the precedence of the module's list.
    pub fn state(&self) -> RadioState {
        self.state
    }

    /// Cumulative time in `state` up to `now`.
    pub fn time_in(&self, state: RadioState, now: SimTime) -> Duration {
        let mut t = self.totals[state as usize];
        if self.state == state {
            t += now.saturating_since(self.since);
        }
        t
    }

    /// Applies the reception model's decisions that fell due before `now`,
    /// each at its own time.
    fn catch_up(&mut self, now: SimTime) {
        while let Some(t) = self.rx.advance(now) {
            self.settle(t);
        }
    }

    fn settle(&mut self, now: SimTime) {
        let (receiving, busy) = (self.rx.is_receiving(), self.rx.is_medium_busy());
        self.settle_to(now, receiving, busy);
    }

    /// `settle` with the reception model's answers already read.
    #[inline(always)]
    fn settle_to(&mut self, now: SimTime, receiving: bool, medium_busy: bool) {
        use RadioState::*;
        // The precedence of the module doc as a table, indexed by
        // (transmitting, receiving, medium busy): no branch per flag.
        const BY_FLAGS: [RadioState; 8] = [
            Idle,
            CarrierSense,
            Receiving,
            Receiving,
            Transmitting,
            Transmitting,
            Transmitting,
            Transmitting,
        ];
        let flags = usize::from(self.transmitting) << 2 | usize::from(receiving) << 1 | usize::from(medium_busy);
        let next = BY_FLAGS[flags];
        if next != self.state {
            // Inputs come in time order, so `since` is not after `now`.
            self.totals[self.state as usize] += now - self.since;
            self.state = next;
            self.since = now;
        }
    }

    /// The radio starts transmitting; a reception in progress is lost.
    /// Returns the lost frame, if it was decodable so far.
    pub fn start_tx(&mut self, now: SimTime) -> Option<TxId> {
        debug_assert!(!self.transmitting, "radio already transmitting");
        self.catch_up(now);
        let lost = self.rx.start_tx(now);
        self.transmitting = true;
        self.settle(now);
        lost
    }

    /// The node's transmission left the air at `now`.
    pub fn end_tx(&mut self, now: SimTime) {
        self.catch_up(now);
        self.transmitting = false;
        self.settle(now);
    }

    /// A signal starts arriving. Returns the frames that were (or would
    /// have been) decodable and are lost because of this arrival: this one,
    /// the one the radio was locked onto, or both.
    ///
    /// The threshold model decides at once (nothing to catch up on), so it
    /// is dispatched once here rather than at each of the calls below: the
    /// signal edges are most of a run's events.
    pub fn signal_start(&mut self, now: SimTime, a: Arrival) -> Losses {
        if let Reception::Threshold(m) = &mut self.rx {
            // Only a radio neither transmitting nor locked can change
            // state on a signal's start: a transmitting one stays
            // transmitting, a locked one keeps its lock.
            let free = !self.transmitting && !m.is_locked();
            let losses = m.signal_start(now, a, self.transmitting);
            if free {
                let (receiving, busy) = (m.is_receiving(), m.is_medium_busy());
                self.settle_to(now, receiving, busy);
            }
            return losses;
        }
        self.catch_up(now);
        let losses = self.rx.signal_start(now, a, self.transmitting);
        self.settle(now);
        losses
    }

    /// A signal stops arriving. If it was the locked one, says whether it
    /// was decoded; and whether a frame decodable here was lost.
    pub fn signal_end(&mut self, now: SimTime, tx: TxId) -> SignalEnd {
        if let Reception::Threshold(m) = &mut self.rx {
            let rx = m.signal_end(now, tx);
            if self.transmitting {
                // No state change while transmitting, and no report: only
                // `[ns2] lock_through_tx` makes a lock that can end now, and
                // ns-2's `recv_timer` drops such a frame silently.
                return SignalEnd::default();
            }
            // A signal's end changes the state only by ending the lock or
            // the last signal of a radio not transmitting: it can leave an
            // unlocked radio only, which is not receiving.
            if !m.is_locked() {
                let busy = m.is_medium_busy();
                self.settle_to(now, false, busy);
            }
            return SignalEnd { rx, lost: None };
        }
        self.catch_up(now);
        let out = self.rx.signal_end(now, tx, self.transmitting);
        self.settle(now);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::phy::Rate;
    use proptest::prelude::*;

    const RX: f64 = 1.0;
    fn thresholds() -> Thresholds {
        Thresholds {
            rx_w: RX,
            rx_w_by_rate: [RX; 4],
            cs_w: 0.01,
            capture_ratio: 10.0,
        }
    }
    fn radio() -> Radio {
        Radio::new(Reception::Threshold(ThresholdRx::new(&thresholds(), true)))
    }
    /// A 1000-byte frame at 2 Mbit/s from `tx` at `power_w`.
    fn at(tx: TxId, power_w: f64) -> Arrival {
        Arrival {
            tx,
            power_w,
            rate: Rate::MBPS_2,
            bytes: 1000,
        }
    }
    fn t(us: u64) -> SimTime {
        SimTime(us * 1000)
    }
    fn lost(l: Losses) -> Vec<(TxId, Loss)> {
        l.iter().collect()
    }

    #[test]
    fn a_signal_edge_reads_the_first_cache_line_only() {
        use std::mem::{offset_of, size_of};
        assert_eq!(std::mem::align_of::<Radio>(), 64);
        assert!(size_of::<Reception>() <= 48, "{}", size_of::<Reception>());
        assert!(offset_of!(Radio, since) + size_of::<SimTime>() <= 64);
        assert!(offset_of!(Radio, state) < 64 && offset_of!(Radio, transmitting) < 64);
    }

    #[test]
    fn two_comparable_frames_both_lost() {
        let mut r = radio();
        r.signal_start(t(0), at(1, 5.0));
        let l = lost(r.signal_start(t(1), at(2, 4.0)));
        assert_eq!(l, vec![(1, Loss::Interference), (2, Loss::Interference)]);
        assert_eq!(r.signal_end(t(5), 1).rx, Some(RxEnd::Error(1)));
        assert_eq!(r.signal_end(t(6), 2).rx, None);
    }

    #[test]
    fn state_follows_the_precedence_of_the_module_doc() {
        for flags in 0..8u8 {
            let (transmitting, receiving, busy) = (flags & 4 != 0, flags & 2 != 0, flags & 1 != 0);
            let mut r = radio();
            r.transmitting = transmitting;
            r.settle_to(t(1), receiving, busy);
            let want = if transmitting {
                RadioState::Transmitting
            } else if receiving {
                RadioState::Receiving
            } else if busy {
                RadioState::CarrierSense
            } else {
                RadioState::Idle
            };
            assert_eq!(
                r.state(),
                want,
                "transmitting {transmitting}, receiving {receiving}, busy {busy}"
            );
        }
    }

    #[test]
    fn clean_reception_and_state_times() {
        let mut r = radio();
        assert!(r.signal_start(t(10), at(1, 2.0)).is_empty());
        assert_eq!(r.state(), RadioState::Receiving);
        assert_eq!(r.signal_end(t(30), 1).rx, Some(RxEnd::Ok(1)));
        assert_eq!(r.time_in(RadioState::Receiving, t(50)), Duration::from_micros(20));
        assert_eq!(r.time_in(RadioState::Idle, t(50)), Duration::from_micros(30));
    }

    #[test]
    fn strong_first_frame_captures_a_weak_later_one() {
        let mut r = radio();
        r.signal_start(t(0), at(1, 20.0));
        assert_eq!(lost(r.signal_start(t(5), at(2, 1.5))), vec![(2, Loss::Interference)]);
        assert_eq!(r.signal_end(t(10), 1).rx, Some(RxEnd::Ok(1)));
        assert!(r.is_busy());
        assert_eq!(r.signal_end(t(12), 2).rx, None);
        assert!(!r.is_busy());
    }

    #[test]
    fn comparable_later_signal_corrupts_and_gives_error() {
        let mut r = radio();
        r.signal_start(t(0), at(1, 5.0));
        // A sub-threshold (carrier-sense only) signal within 10 dB corrupts it.
        assert_eq!(lost(r.signal_start(t(5), at(2, 0.6))), vec![(1, Loss::Interference)]);
        assert_eq!(r.signal_end(t(10), 1).rx, Some(RxEnd::Error(1)));
        assert_eq!(r.state(), RadioState::CarrierSense);
    }

    #[test]
    fn sensed_only_frame_ends_as_sensed() {
        let mut r = radio();
        r.signal_start(t(0), at(1, 0.1));
        assert_eq!(r.state(), RadioState::CarrierSense);
        assert_eq!(r.signal_end(t(10), 1).rx, Some(RxEnd::Sensed(1)));
    }

    #[test]
    fn without_locking_on_sensed_signals_a_later_frame_is_received() {
        let mut r = Radio::new(Reception::Threshold(ThresholdRx::new(&thresholds(), false)));
        r.signal_start(t(0), at(1, 0.05));
        assert!(r.is_busy());
        assert_eq!(r.state(), RadioState::CarrierSense);
        // 20 times stronger than the sensed signal: captured and decoded.
        assert!(r.signal_start(t(5), at(2, 1.0)).is_empty());
        assert_eq!(r.signal_end(t(8), 1).rx, None);
        assert_eq!(r.signal_end(t(20), 2).rx, Some(RxEnd::Ok(2)));
        // A decodable frame under a comparable sensed signal is lost.
        r.signal_start(t(30), at(3, 0.5));
        assert_eq!(lost(r.signal_start(t(31), at(4, 1.0))), vec![(4, Loss::Interference)]);
    }

    #[test]
    fn half_duplex_loses_frames_while_transmitting() {
        let mut r = radio();
        r.signal_start(t(0), at(1, 5.0));
        assert_eq!(r.start_tx(t(1)), Some(1));
        assert_eq!(lost(r.signal_start(t(2), at(2, 5.0))), vec![(2, Loss::Transmitting)]);
        r.end_tx(t(3));
        assert_eq!(r.signal_end(t(4), 1).rx, None);
        assert_eq!(r.signal_end(t(5), 2).rx, None);
        assert_eq!(r.time_in(RadioState::Transmitting, t(9)), Duration::from_micros(2));
    }

    /// The radio with ns-2's receiver rules (`[ns2] lock_through_tx` and
    /// `capture_nav`), or without.
    fn ns2_radio(ns2: bool) -> Radio {
        let params = ThresholdParams::with_ns2(&thresholds(), true, ns2, ns2);
        Radio::new(Reception::Threshold(ThresholdRx::shared(params)))
    }

    /// Frame 1 arrives at 5 µs while the radio transmits until 10 µs. Under
    /// ns-2 it keeps the receiver locked, in error, after the transmission,
    /// so frame 2, ten times stronger, is not received and the end of frame
    /// 1 starts EIFS; under the standard the receiver is free at 10 µs and
    /// decodes frame 2.
    ///
    /// ```text
    ///  radio: |--- own tx ---|
    ///         0             10
    ///  1:          |-------- frame 1 (power 2) --------|
    ///              5                                  40
    ///  2:                       |-- frame 2 (power 50) --|
    ///                           20                       50
    /// ```
    #[test]
    fn a_frame_arriving_during_transmission_locks_the_receiver_under_ns2() {
        for ns2 in [false, true] {
            let mut r = ns2_radio(ns2);
            r.start_tx(t(0));
            assert!(!r.signal_start(t(5), at(1, 2.0)).is_empty(), "lost to the transmission");
            r.end_tx(t(10));
            let want = if ns2 {
                RadioState::Receiving
            } else {
                RadioState::CarrierSense
            };
            assert_eq!(r.state(), want);
            let losses = r.signal_start(t(20), at(2, 50.0));
            assert!(!losses.captured(), "frame 2 is stronger: no capture");
            let end1 = r.signal_end(t(40), 1).rx;
            let end2 = r.signal_end(t(50), 2).rx;
            if ns2 {
                assert_eq!((end1, end2), (Some(RxEnd::Error(1)), None));
            } else {
                assert_eq!((end1, end2), (None, Some(RxEnd::Ok(2))));
            }
        }
    }

    /// Under ns-2 a frame locked during the transmission that also ends
    /// during it ends silently: no EIFS (`recv_timer` :1645).
    #[test]
    fn a_frame_ending_during_transmission_ends_silently_under_ns2() {
        let mut r = ns2_radio(true);
        r.start_tx(t(0));
        r.signal_start(t(2), at(1, 2.0));
        assert_eq!(r.signal_end(t(8), 1).rx, None);
        r.end_tx(t(10));
        assert_eq!(r.state(), RadioState::Idle);
    }

    /// A frame ten times weaker than the locked one is captured out; only
    /// ns-2's rule reports it, for the MAC's deferral (`capture` :555).
    #[test]
    fn a_captured_out_frame_is_reported_under_ns2() {
        for ns2 in [false, true] {
            let mut r = ns2_radio(ns2);
            assert!(r.signal_start(t(0), at(1, 50.0)).is_empty());
            let losses = r.signal_start(t(5), at(2, 2.0));
            assert_eq!(losses.captured(), ns2);
            assert_eq!(r.signal_end(t(30), 1).rx, Some(RxEnd::Ok(1)));
        }
    }

    #[test]
    fn decode_threshold_depends_on_the_rate() {
        // 1 Mbit/s decodes down to 1.0, 11 Mbit/s needs 8.0.
        let mut th = thresholds();
        th.rx_w_by_rate[Rate::MBPS_11.index()] = 8.0;
        let mut r = Radio::new(Reception::Threshold(ThresholdRx::new(&th, true)));
        let fast = Arrival {
            rate: Rate::MBPS_11,
            ..at(1, 2.0)
        };
        assert!(r.signal_start(t(0), fast).is_empty());
        assert_eq!(r.state(), RadioState::CarrierSense);
        assert_eq!(r.signal_end(t(10), 1).rx, Some(RxEnd::Sensed(1)));
        let slow = Arrival {
            rate: Rate::MBPS_1,
            ..at(2, 2.0)
        };
        r.signal_start(t(20), slow);
        assert_eq!(r.state(), RadioState::Receiving);
        assert_eq!(r.signal_end(t(30), 2).rx, Some(RxEnd::Ok(2)));
    }

    /// One input of a radio: a signal starting at a power, the end of
    /// the `i`-th signal still on the air, or its own transmission
    /// starting or ending.
    #[derive(Clone, Debug)]
    enum Input {
        Start(f64),
        End(usize),
        Tx,
    }

    fn input() -> impl Strategy<Value = Input> {
        prop_oneof![
            // Below carrier sense, sensed only, near and above the decode
            // threshold, strong.
            prop::sample::select(vec![0.001, 0.05, 0.5, 1.0, 2.0, 20.0]).prop_map(Input::Start),
            (0..4usize).prop_map(Input::End),
            Just(Input::Tx),
        ]
    }

    proptest! {
        /// The threshold model's edges settle the state only where it can
        /// change (`signal_start`, `signal_end`): the states and the time
        /// in each are those of a radio that settles after every input.
        #[test]
        fn settling_only_where_the_state_can_change_loses_nothing(
            lock_sensed in any::<bool>(),
            inputs in prop::collection::vec(input(), 1..60),
        ) {
            let model = || Radio::new(Reception::Threshold(ThresholdRx::new(&thresholds(), lock_sensed)));
            let (mut r, mut eager) = (model(), model());
            let (mut on_air, mut next_tx) = (Vec::new(), 1);
            for (i, inp) in inputs.iter().enumerate() {
                let now = t(i as u64 * 3);
                match *inp {
                    Input::Start(p) => {
                        let a = at(next_tx, p);
                        on_air.push(next_tx);
                        next_tx += 1;
                        let got = r.signal_start(now, a);
                        let want = eager.rx.signal_start(now, a, eager.transmitting);
                        eager.settle(now);
                        prop_assert_eq!(got, want);
                    }
                    Input::End(k) if !on_air.is_empty() => {
                        let tx = on_air.remove(k % on_air.len());
                        let got = r.signal_end(now, tx);
                        let want = eager.rx.signal_end(now, tx, eager.transmitting);
                        eager.settle(now);
                        prop_assert_eq!(got, want);
                    }
                    Input::End(_) => {}
                    Input::Tx if r.is_transmitting() => {
                        r.end_tx(now);
                        eager.end_tx(now);
                    }
                    Input::Tx => prop_assert_eq!(r.start_tx(now), eager.start_tx(now)),
                }
                prop_assert_eq!(r.state(), eager.state(), "after input {}", i);
            }
            let end = t(inputs.len() as u64 * 3);
            for s in [RadioState::Idle, RadioState::Transmitting, RadioState::Receiving, RadioState::CarrierSense] {
                prop_assert_eq!(r.time_in(s, end), eager.time_in(s, end));
            }
        }
    }

    #[test]
    fn signals_below_carrier_sense_do_not_exist_for_threshold_capture() {
        let mut r = radio();
        assert!(r.signal_start(t(0), at(1, 0.001)).is_empty());
        assert!(!r.is_busy());
        assert_eq!(r.state(), RadioState::Idle);
        assert_eq!(r.signal_end(t(5), 1).rx, None);
    }
}
