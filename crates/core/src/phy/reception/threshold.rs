//! Threshold capture, as ns-2's 802.11 PHY decides reception.
//!
//! Every signal at or above the carrier-sense threshold makes the medium
//! busy; weaker ones (delivered only when the interference range exceeds the
//! carrier-sense range) do not exist for this model. The radio locks onto
//! the first signal that arrives while it is neither transmitting nor
//! locked; the lock is decodable only if the signal is at or above the
//! decode threshold of its rate and no signal already on the air is within
//! the capture ratio of it. A later signal corrupts the locked one unless
//! the locked one is at least `capture_ratio` times stronger. A frame that
//! ends locked but undecodable is reported as received in error, which
//! starts EIFS at the MAC.

use super::{Arrival, Loss, Losses, RxEnd, TxId, POWER_TOLERANCE};
use crate::phy::propagation::Thresholds;
use crate::time::SimTime;
use std::sync::Arc;

#[derive(Clone, Copy, Debug)]
struct Signal {
    tx: TxId,
    power_w: f64,
}

/// How the locked frame would end if it ended now: the one thing a lock's
/// end reads, kept as such rather than derived from two flags at each end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    /// At or above the receive threshold, and nothing has corrupted it.
    Ok,
    /// At or above the receive threshold, and corrupted.
    Error,
    /// Below the receive threshold: sensed only, whatever arrives later.
    Sensed,
}

#[derive(Clone, Copy, Debug)]
struct Lock {
    tx: TxId,
    power_w: f64,
    verdict: Verdict,
}

/// The thresholds of threshold capture: the same for every radio of a
/// run, so they are shared rather than copied into each, which keeps a
/// radio's own state (its lock and its list of signals) in one cache line
/// (`Radio`).
#[derive(Debug)]
pub struct ThresholdParams {
    /// Decode threshold per rate (`Rate::index`).
    rx_w: [f64; 4],
    /// Signals below this (less the tolerance) are ignored.
    sense_w: f64,
    capture_ratio: f64,
    /// Lock onto signals below the receive threshold too (ns-2's 802.11
    /// PHY, the default); otherwise they only interfere and keep the
    /// medium busy, and a later decodable frame can still be received
    /// (like ns-3's preamble detection).
    lock_sensed: bool,
    /// ns-2's receiver (`[ns2] lock_through_tx`): a signal that arrives
    /// while the radio transmits locks it, in error, beyond the end of the
    /// transmission; one that ends during the transmission ends silently.
    lock_through_tx: bool,
    /// ns-2's capture (`[ns2] capture_nav`): report a signal captured out
    /// by the locked one (`Losses::captured`), for the MAC's deferral.
    report_capture: bool,
}

impl ThresholdParams {
    /// The thresholds of `th`, without ns-2's two receiver rules.
    pub fn new(th: &Thresholds, lock_sensed: bool) -> Arc<Self> {
        Self::with_ns2(th, lock_sensed, false, false)
    }

    /// `new` with ns-2's two receiver rules, `lock_through_tx` and the
    /// capture report.
    pub fn with_ns2(th: &Thresholds, lock_sensed: bool, lock_through_tx: bool, report_capture: bool) -> Arc<Self> {
        Arc::new(ThresholdParams {
            rx_w: th.rx_w_by_rate,
            sense_w: th.cs_w * (1.0 - POWER_TOLERANCE),
            capture_ratio: th.capture_ratio,
            lock_sensed,
            lock_through_tx,
            report_capture,
        })
    }
}

/// One radio's threshold receiver: the frame it is locked onto and the
/// other signals on the air here.
#[derive(Clone, Debug)]
pub struct ThresholdRx {
    params: Arc<ThresholdParams>,
    /// The signals on the air here other than the locked one. Most signals
    /// are the only one at their radio and are locked onto: kept in `lock`
    /// alone, their start and end never reach this list on the heap, which
    /// on large fields is a cache line of its own per radio.
    signals: Vec<Signal>,
    lock: Option<Lock>,
}

impl ThresholdRx {
    /// A radio with thresholds of its own (tests; a run shares them).
    pub fn new(th: &Thresholds, lock_sensed: bool) -> Self {
        Self::shared(ThresholdParams::new(th, lock_sensed))
    }

    /// A radio of a run whose radios share `params`.
    pub fn shared(params: Arc<ThresholdParams>) -> Self {
        ThresholdRx {
            params,
            signals: Vec::with_capacity(8),
            lock: None,
        }
    }

    /// Locked onto a frame at or above its decode threshold.
    pub fn is_receiving(&self) -> bool {
        self.lock.is_some_and(|l| l.verdict != Verdict::Sensed)
    }

    /// Locked onto any signal, sensed-only ones included (those lock the
    /// radio with `lock_sensed`, as in ns-2).
    pub fn is_locked(&self) -> bool {
        self.lock.is_some()
    }

    /// Any signal on the air makes the medium busy.
    pub fn is_medium_busy(&self) -> bool {
        self.lock.is_some() || !self.signals.is_empty()
    }

    /// The radio starts transmitting: the lock is lost, its signal stays on
    /// the air with the others.
    pub fn start_tx(&mut self, _now: SimTime) -> Option<TxId> {
        let l = self.lock.take()?;
        self.signals.push(Signal {
            tx: l.tx,
            power_w: l.power_w,
        });
        (l.verdict == Verdict::Ok).then_some(l.tx)
    }

    /// A signal starts arriving: it is ignored below carrier sense, locks an
    /// idle radio, or corrupts the locked frame unless that frame is
    /// `capture_ratio` times stronger. Returns the frames lost by it.
    pub fn signal_start(&mut self, _now: SimTime, a: Arrival, transmitting: bool) -> Losses {
        let mut losses = Losses::default();
        let params = &*self.params;
        if a.power_w < params.sense_w {
            return losses;
        }
        let (tx, power_w) = (a.tx, a.power_w);
        let above_rx = power_w >= params.rx_w[a.rate.index()];
        if transmitting {
            if above_rx {
                losses.push(tx, Loss::Transmitting);
            }
            if params.lock_through_tx {
                match self.lock {
                    None if above_rx || params.lock_sensed => {
                        let verdict = if above_rx { Verdict::Error } else { Verdict::Sensed };
                        self.lock = Some(Lock { tx, power_w, verdict });
                        return losses;
                    }
                    Some(lock) if params.report_capture && lock.power_w >= power_w * params.capture_ratio => {
                        losses.set_captured(tx);
                    }
                    _ => {}
                }
            }
        } else if let Some(lock) = self.lock.as_mut() {
            // Capture: the locked frame survives only if it is at least
            // capture_ratio times stronger than the newcomer. (A sensed
            // lock ends sensed whatever comes.)
            if lock.verdict == Verdict::Ok && lock.power_w < power_w * params.capture_ratio {
                lock.verdict = Verdict::Error;
                losses.push(lock.tx, Loss::Interference);
            }
            // ns-2 defers for a frame captured out, whatever the lock's verdict.
            if params.report_capture && lock.power_w >= power_w * params.capture_ratio {
                losses.set_captured(tx);
            }
            if above_rx {
                losses.push(tx, Loss::Interference);
            }
        } else if above_rx || params.lock_sensed {
            // Not locked: every signal on the air is in the list.
            let strongest = self.signals.iter().map(|s| s.power_w).fold(0.0, f64::max);
            let corrupted = power_w < strongest * params.capture_ratio;
            if above_rx && corrupted {
                losses.push(tx, Loss::Interference);
            }
            let verdict = match (above_rx, corrupted) {
                (false, _) => Verdict::Sensed,
                (true, false) => Verdict::Ok,
                (true, true) => Verdict::Error,
            };
            self.lock = Some(Lock { tx, power_w, verdict });
            return losses;
        }
        self.signals.push(Signal { tx, power_w });
        losses
    }

    /// A signal ends. (A lock can end while the radio transmits only under
    /// `lock_through_tx`; the radio then drops its report, as ns-2's
    /// `recv_timer` drops the frame: `Radio::signal_end`.)
    pub fn signal_end(&mut self, _now: SimTime, tx: TxId) -> Option<RxEnd> {
        if let Some(l) = self.lock.filter(|l| l.tx == tx) {
            self.lock = None;
            return Some(match l.verdict {
                Verdict::Ok => RxEnd::Ok(tx),
                Verdict::Error => RxEnd::Error(tx),
                Verdict::Sensed => RxEnd::Sensed(tx),
            });
        }
        if let Some(i) = self.signals.iter().position(|s| s.tx == tx) {
            self.signals.swap_remove(i);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::phy::Rate;
    use proptest::prelude::*;

    /// Threshold capture with every signal in one list, the lock's too:
    /// the plain form of the model, against which the radio's (the locked
    /// signal kept apart) is checked.
    struct Plain {
        params: Arc<ThresholdParams>,
        signals: Vec<Signal>,
        lock: Option<PlainLock>,
    }

    /// The lock as two flags, the model's first form.
    #[derive(Clone, Copy)]
    struct PlainLock {
        tx: TxId,
        power_w: f64,
        above_rx: bool,
        corrupted: bool,
    }

    impl Plain {
        fn signal_start(&mut self, a: Arrival, transmitting: bool) -> Losses {
            let mut losses = Losses::default();
            let p = &*self.params;
            if a.power_w < p.sense_w {
                return losses;
            }
            let above_rx = a.power_w >= p.rx_w[a.rate.index()];
            if transmitting {
                if above_rx {
                    losses.push(a.tx, Loss::Transmitting);
                }
            } else if let Some(lock) = self.lock.as_mut() {
                if lock.power_w < a.power_w * p.capture_ratio && !lock.corrupted {
                    lock.corrupted = true;
                    if lock.above_rx {
                        losses.push(lock.tx, Loss::Interference);
                    }
                }
                if above_rx {
                    losses.push(a.tx, Loss::Interference);
                }
            } else if above_rx || p.lock_sensed {
                let strongest = self.signals.iter().map(|s| s.power_w).fold(0.0, f64::max);
                let corrupted = a.power_w < strongest * p.capture_ratio;
                if above_rx && corrupted {
                    losses.push(a.tx, Loss::Interference);
                }
                self.lock = Some(PlainLock {
                    tx: a.tx,
                    power_w: a.power_w,
                    above_rx,
                    corrupted,
                });
            }
            self.signals.push(Signal {
                tx: a.tx,
                power_w: a.power_w,
            });
            losses
        }

        fn signal_end(&mut self, tx: TxId) -> Option<RxEnd> {
            self.signals.retain(|s| s.tx != tx);
            let l = self.lock.filter(|l| l.tx == tx)?;
            self.lock = None;
            Some(if !l.above_rx {
                RxEnd::Sensed(tx)
            } else if !l.corrupted {
                RxEnd::Ok(tx)
            } else {
                RxEnd::Error(tx)
            })
        }
    }

    fn thresholds() -> Thresholds {
        Thresholds {
            rx_w: 1.0,
            rx_w_by_rate: [1.0, 1.0, 2.0, 8.0],
            cs_w: 0.01,
            capture_ratio: 10.0,
        }
    }

    proptest! {
        /// Random arrivals (below carrier sense, sensed only, decodable, at
        /// every rate), ends of signals on the air, and transmissions
        /// starting and ending: the same losses, the same ends, the same
        /// receiving and busy states as the plain model after every step.
        #[test]
        fn keeping_the_locked_signal_apart_changes_nothing(
            lock_sensed in any::<bool>(),
            ops in proptest::collection::vec((0u8..4, 0usize..8, 0usize..4, 0usize..16), 1..200),
        ) {
            const POWERS: [f64; 8] = [0.005, 0.05, 0.3, 1.0, 1.5, 3.0, 12.0, 40.0];
            let params = ThresholdParams::new(&thresholds(), lock_sensed);
            let mut rx = ThresholdRx::shared(Arc::clone(&params));
            let mut plain = Plain { params, signals: Vec::new(), lock: None };
            let (mut on_air, mut next_tx, mut transmitting) = (Vec::new(), 0, false);
            for (op, power, rate, pick) in ops {
                match op {
                    0 | 1 => {
                        let a = Arrival { tx: next_tx, power_w: POWERS[power], rate: Rate::ALL[rate], bytes: 100 };
                        next_tx += 1;
                        on_air.push(a.tx);
                        prop_assert_eq!(rx.signal_start(SimTime::ZERO, a, transmitting), plain.signal_start(a, transmitting));
                    }
                    2 if !on_air.is_empty() => {
                        let tx = on_air.swap_remove(pick % on_air.len());
                        prop_assert_eq!(rx.signal_end(SimTime::ZERO, tx), plain.signal_end(tx));
                    }
                    _ if !transmitting => {
                        transmitting = true;
                        let lost = plain.lock.take().filter(|l| l.above_rx && !l.corrupted).map(|l| l.tx);
                        prop_assert_eq!(rx.start_tx(SimTime::ZERO), lost);
                    }
                    _ => transmitting = false,
                }
                prop_assert_eq!(rx.is_receiving(), plain.lock.is_some_and(|l| l.above_rx));
                prop_assert_eq!(rx.is_medium_busy(), !plain.signals.is_empty());
            }
        }
    }
}
