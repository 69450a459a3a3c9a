//! One node's radio: half duplex, threshold capture (as ns-2's 802.11 PHY),
//! and the cumulative time spent in each radio state, which NRED reads.
//!
//! Every signal that reaches the radio is above the carrier-sense threshold
//! (the channel only delivers signals from within carrier-sense range), so
//! any signal on the air makes the medium busy. The radio locks onto the
//! first signal that arrives while it is neither transmitting nor locked;
//! the lock is decodable only if the signal is above the receive threshold
//! and no signal already on the air is within the capture ratio of it. A
//! later signal corrupts the locked one unless the locked one is at least
//! `capture_ratio` times stronger. A frame that ends locked but undecodable
//! is reported as received in error, which starts EIFS at the MAC.

use crate::time::{Duration, SimTime};

/// Identifies one transmission on the air.
pub type TxId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum RadioState {
    Idle = 0,
    Transmitting = 1,
    /// Locked onto a signal at or above the receive threshold.
    Receiving = 2,
    /// Medium busy with signals the radio cannot decode.
    CarrierSense = 3,
}

#[derive(Clone, Copy, Debug)]
struct Signal {
    tx: TxId,
    power_w: f64,
}

#[derive(Clone, Copy, Debug)]
struct Lock {
    tx: TxId,
    power_w: f64,
    above_rx: bool,
    corrupted: bool,
}

/// What the radio tells the MAC when a locked signal ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RxEnd {
    /// The frame was decoded.
    Ok(TxId),
    /// A frame above the receive threshold ended corrupted by
    /// interference: the MAC uses EIFS.
    Error(TxId),
    /// A frame below the receive threshold (sensed only) ended: ns-2, and
    /// so the papers, treat it as an error too (EIFS).
    Sensed(TxId),
}

/// Why a signal above the receive threshold was not decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loss {
    /// Another signal interfered (no capture).
    Interference,
    /// The radio was transmitting (half duplex).
    Transmitting,
}

/// Up to two frames lost by one arrival, without allocating.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losses([Option<(TxId, Loss)>; 2]);

impl Losses {
    fn push(&mut self, tx: TxId, why: Loss) {
        let slot = if self.0[0].is_none() { 0 } else { 1 };
        self.0[slot] = Some((tx, why));
    }
    pub fn iter(&self) -> impl Iterator<Item = (TxId, Loss)> + '_ {
        self.0.iter().flatten().copied()
    }
    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }
}

#[derive(Clone, Debug)]
pub struct Radio {
    rx_w: f64,
    capture_ratio: f64,
    /// Lock onto signals below the receive threshold too (ns-2's 802.11
    /// PHY, the default); otherwise they only interfere and keep the
    /// medium busy, and a later decodable frame can still be received
    /// (like ns-3's preamble detection).
    lock_sensed: bool,
    transmitting: bool,
    signals: Vec<Signal>,
    lock: Option<Lock>,
    state: RadioState,
    since: SimTime,
    totals: [Duration; 4],
}

impl Radio {
    pub fn new(rx_threshold_w: f64, capture_ratio: f64) -> Self {
        Radio {
            rx_w: rx_threshold_w,
            capture_ratio,
            lock_sensed: true,
            transmitting: false,
            signals: Vec::with_capacity(8),
            lock: None,
            state: RadioState::Idle,
            since: SimTime::ZERO,
            totals: [Duration::ZERO; 4],
        }
    }

    /// Chooses whether signals below the receive threshold lock the radio.
    pub fn set_lock_sensed(&mut self, on: bool) {
        self.lock_sensed = on;
    }

    /// Physical carrier sense: busy while transmitting or while any signal is on the air.
    pub fn is_busy(&self) -> bool {
        self.transmitting || !self.signals.is_empty()
    }

    pub fn is_transmitting(&self) -> bool {
        self.transmitting
    }

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

    fn settle(&mut self, now: SimTime) {
        let next = if self.transmitting {
            RadioState::Transmitting
        } else if self.lock.is_some_and(|l| l.above_rx) {
            RadioState::Receiving
        } else if !self.signals.is_empty() {
            RadioState::CarrierSense
        } else {
            RadioState::Idle
        };
        if next != self.state {
            self.totals[self.state as usize] += now.saturating_since(self.since);
            self.state = next;
            self.since = now;
        }
    }

    /// The radio starts transmitting; a reception in progress is lost.
    /// Returns the lost frame, if it was decodable so far.
    pub fn start_tx(&mut self, now: SimTime) -> Option<TxId> {
        debug_assert!(!self.transmitting, "radio already transmitting");
        let lost = self.lock.take().filter(|l| l.above_rx && !l.corrupted).map(|l| l.tx);
        self.transmitting = true;
        self.settle(now);
        lost
    }

    pub fn end_tx(&mut self, now: SimTime) {
        self.transmitting = false;
        self.settle(now);
    }

    /// A signal starts arriving. Returns the frames that were (or would
    /// have been) decodable and are lost because of this arrival: this one,
    /// the one the radio was locked onto, or both.
    pub fn signal_start(&mut self, now: SimTime, tx: TxId, power_w: f64) -> Losses {
        let above_rx = power_w >= self.rx_w;
        let mut losses = Losses::default();
        if self.transmitting {
            if above_rx {
                losses.push(tx, Loss::Transmitting);
            }
        } else if let Some(lock) = self.lock.as_mut() {
            // Capture: the locked frame survives only if it is at least
            // capture_ratio times stronger than the newcomer.
            if lock.power_w < power_w * self.capture_ratio && !lock.corrupted {
                lock.corrupted = true;
                if lock.above_rx {
                    losses.push(lock.tx, Loss::Interference);
                }
            }
            if above_rx {
                losses.push(tx, Loss::Interference);
            }
        } else if above_rx || self.lock_sensed {
            let strongest = self.signals.iter().map(|s| s.power_w).fold(0.0, f64::max);
            let corrupted = power_w < strongest * self.capture_ratio;
            if above_rx && corrupted {
                losses.push(tx, Loss::Interference);
            }
            self.lock = Some(Lock {
                tx,
                power_w,
                above_rx,
                corrupted,
            });
        }
        self.signals.push(Signal { tx, power_w });
        self.settle(now);
        losses
    }

    /// A signal stops arriving. If it was the locked one, says whether it was decoded.
    pub fn signal_end(&mut self, now: SimTime, tx: TxId) -> Option<RxEnd> {
        if let Some(i) = self.signals.iter().position(|s| s.tx == tx) {
            self.signals.swap_remove(i);
        }
        let mut out = None;
        if self.lock.is_some_and(|l| l.tx == tx) {
            let l = self.lock.take().expect("checked");
            out = Some(if !l.above_rx {
                RxEnd::Sensed(tx)
            } else if !l.corrupted {
                RxEnd::Ok(tx)
            } else {
                RxEnd::Error(tx)
            });
        }
        self.settle(now);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RX: f64 = 1.0;
    fn radio() -> Radio {
        Radio::new(RX, 10.0)
    }
    fn t(us: u64) -> SimTime {
        SimTime(us * 1000)
    }
    fn lost(l: Losses) -> Vec<(TxId, Loss)> {
        l.iter().collect()
    }

    #[test]
    fn two_comparable_frames_both_lost() {
        let mut r = radio();
        r.signal_start(t(0), 1, 5.0);
        let l = lost(r.signal_start(t(1), 2, 4.0));
        assert_eq!(l, vec![(1, Loss::Interference), (2, Loss::Interference)]);
        assert_eq!(r.signal_end(t(5), 1), Some(RxEnd::Error(1)));
        assert_eq!(r.signal_end(t(6), 2), None);
    }

    #[test]
    fn clean_reception_and_state_times() {
        let mut r = radio();
        assert!(r.signal_start(t(10), 1, 2.0).is_empty());
        assert_eq!(r.state(), RadioState::Receiving);
        assert_eq!(r.signal_end(t(30), 1), Some(RxEnd::Ok(1)));
        assert_eq!(r.time_in(RadioState::Receiving, t(50)), Duration::from_micros(20));
        assert_eq!(r.time_in(RadioState::Idle, t(50)), Duration::from_micros(30));
    }

    #[test]
    fn strong_first_frame_captures_a_weak_later_one() {
        let mut r = radio();
        r.signal_start(t(0), 1, 20.0);
        assert_eq!(lost(r.signal_start(t(5), 2, 1.5)), vec![(2, Loss::Interference)]);
        assert_eq!(r.signal_end(t(10), 1), Some(RxEnd::Ok(1)));
        assert!(r.is_busy());
        assert_eq!(r.signal_end(t(12), 2), None);
        assert!(!r.is_busy());
    }

    #[test]
    fn comparable_later_signal_corrupts_and_gives_error() {
        let mut r = radio();
        r.signal_start(t(0), 1, 5.0);
        // A sub-threshold (carrier-sense only) signal within 10 dB corrupts it.
        assert_eq!(lost(r.signal_start(t(5), 2, 0.6)), vec![(1, Loss::Interference)]);
        assert_eq!(r.signal_end(t(10), 1), Some(RxEnd::Error(1)));
        assert_eq!(r.state(), RadioState::CarrierSense);
    }

    #[test]
    fn sensed_only_frame_ends_as_sensed() {
        let mut r = radio();
        r.signal_start(t(0), 1, 0.1);
        assert_eq!(r.state(), RadioState::CarrierSense);
        assert_eq!(r.signal_end(t(10), 1), Some(RxEnd::Sensed(1)));
    }

    #[test]
    fn without_locking_on_sensed_signals_a_later_frame_is_received() {
        let mut r = radio();
        r.set_lock_sensed(false);
        r.signal_start(t(0), 1, 0.05);
        assert!(r.is_busy());
        assert_eq!(r.state(), RadioState::CarrierSense);
        // 20 times stronger than the sensed signal: captured and decoded.
        assert!(r.signal_start(t(5), 2, 1.0).is_empty());
        assert_eq!(r.signal_end(t(8), 1), None);
        assert_eq!(r.signal_end(t(20), 2), Some(RxEnd::Ok(2)));
        // A decodable frame under a comparable sensed signal is lost.
        r.signal_start(t(30), 3, 0.5);
        assert_eq!(lost(r.signal_start(t(31), 4, 1.0)), vec![(4, Loss::Interference)]);
    }

    #[test]
    fn half_duplex_loses_frames_while_transmitting() {
        let mut r = radio();
        r.signal_start(t(0), 1, 5.0);
        assert_eq!(r.start_tx(t(1)), Some(1));
        assert_eq!(lost(r.signal_start(t(2), 2, 5.0)), vec![(2, Loss::Transmitting)]);
        r.end_tx(t(3));
        assert_eq!(r.signal_end(t(4), 1), None);
        assert_eq!(r.signal_end(t(5), 2), None);
        assert_eq!(r.time_in(RadioState::Transmitting, t(9)), Duration::from_micros(2));
    }
}
