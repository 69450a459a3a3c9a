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

#[derive(Clone, Copy, Debug)]
struct Lock {
    tx: TxId,
    power_w: f64,
    above_rx: bool,
    corrupted: bool,
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
}

impl ThresholdParams {
    pub fn new(th: &Thresholds, lock_sensed: bool) -> Arc<Self> {
        Arc::new(ThresholdParams {
            rx_w: th.rx_w_by_rate,
            sense_w: th.cs_w * (1.0 - POWER_TOLERANCE),
            capture_ratio: th.capture_ratio,
            lock_sensed,
        })
    }
}

#[derive(Clone, Debug)]
pub struct ThresholdRx {
    params: Arc<ThresholdParams>,
    signals: Vec<Signal>,
    lock: Option<Lock>,
}

impl ThresholdRx {
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

    pub fn is_receiving(&self) -> bool {
        self.lock.is_some_and(|l| l.above_rx)
    }

    /// Any signal on the air makes the medium busy.
    pub fn is_medium_busy(&self) -> bool {
        !self.signals.is_empty()
    }

    pub fn start_tx(&mut self, _now: SimTime) -> Option<TxId> {
        self.lock.take().filter(|l| l.above_rx && !l.corrupted).map(|l| l.tx)
    }

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
        } else if let Some(lock) = self.lock.as_mut() {
            // Capture: the locked frame survives only if it is at least
            // capture_ratio times stronger than the newcomer.
            if lock.power_w < power_w * params.capture_ratio && !lock.corrupted {
                lock.corrupted = true;
                if lock.above_rx {
                    losses.push(lock.tx, Loss::Interference);
                }
            }
            if above_rx {
                losses.push(tx, Loss::Interference);
            }
        } else if above_rx || params.lock_sensed {
            let strongest = self.signals.iter().map(|s| s.power_w).fold(0.0, f64::max);
            let corrupted = power_w < strongest * params.capture_ratio;
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
        losses
    }

    pub fn signal_end(&mut self, _now: SimTime, tx: TxId) -> Option<RxEnd> {
        if let Some(i) = self.signals.iter().position(|s| s.tx == tx) {
            self.signals.swap_remove(i);
        }
        if self.lock.is_some_and(|l| l.tx == tx) {
            let l = self.lock.take().expect("checked");
            return Some(if !l.above_rx {
                RxEnd::Sensed(tx)
            } else if !l.corrupted {
                RxEnd::Ok(tx)
            } else {
                RxEnd::Error(tx)
            });
        }
        None
    }
}
