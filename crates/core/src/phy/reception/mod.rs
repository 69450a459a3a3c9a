//! The reception seam: whether a frame arriving at a radio is received.
//!
//! The radio (`radio.rs`) keeps half duplex and the time spent in each
//! state, which NRED reads; it hands every signal start and end to one
//! `Reception` model and asks it two things: is the radio locked onto a
//! frame it can decode (receiving), and is the medium busy. The models are
//! variants of one enum, so a run pays no dynamic dispatch:
//!
//! - `Threshold`: ns-2's threshold capture (`threshold.rs`), the default.
//! - `Sinr`: cumulative-interference SINR with preamble detection and the
//!   DSSS/CCK error-rate model (`sinr.rs`), as ns-3 and OMNeT++.
//!
//! A model sees each signal as an `Arrival`: its transmission, its power at
//! this receiver, and the frame's rate and length, so that decoding can
//! depend on the rate (per-rate thresholds) and on when each part of the
//! frame is on the air.

pub mod sinr;
pub mod threshold;

use super::Rate;
use crate::time::{Duration, SimTime};
pub use sinr::{SinrConfig, SinrRx};
pub use threshold::{ThresholdParams, ThresholdRx};

/// Identifies one transmission on the air.
pub type TxId = u32;

/// Relative tolerance on power comparisons against a threshold derived from
/// a range: the channel counts a distance equal to a range as inside it
/// (relative tolerance 1e-12 on distance, about 4e-12 on power).
pub const POWER_TOLERANCE: f64 = 1e-9;

/// A signal that starts arriving at a radio.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    /// The transmission the signal belongs to.
    pub tx: TxId,
    /// Received power, W.
    pub power_w: f64,
    /// The frame's rate (the PLCP preamble and header are always at 1 Mbit/s).
    pub rate: Rate,
    /// The MAC frame's length, header and FCS included.
    pub bytes: u32,
}

impl Arrival {
    /// How long the signal lasts.
    pub fn airtime(&self) -> Duration {
        self.rate.airtime(self.bytes)
    }
}

/// What the radio tells the MAC when a frame it was locked onto ends.
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

/// What one arrival cost: up to two frames lost, or one lost and the
/// arrival itself captured out by the frame the radio is locked onto (only
/// reported under ns-2's capture deferral, `[ns2] capture_nav`). Two slots
/// without allocating: 16 bytes, returned in registers on the signal
/// edges' path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losses([Option<(TxId, Outcome)>; 2]);

/// One slot of `Losses`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Lost(Loss),
    Captured,
}

impl Losses {
    fn put(&mut self, tx: TxId, what: Outcome) {
        let slot = if self.0[0].is_none() { 0 } else { 1 };
        self.0[slot] = Some((tx, what));
    }
    pub(crate) fn push(&mut self, tx: TxId, why: Loss) {
        self.put(tx, Outcome::Lost(why));
    }
    /// The arrival `tx` was captured out.
    pub(crate) fn set_captured(&mut self, tx: TxId) {
        self.put(tx, Outcome::Captured);
    }
    /// The frames lost, with why.
    pub fn iter(&self) -> impl Iterator<Item = (TxId, Loss)> + '_ {
        self.0.iter().flatten().filter_map(|&(tx, o)| match o {
            Outcome::Lost(why) => Some((tx, why)),
            Outcome::Captured => None,
        })
    }
    /// Whether the arrival was captured out (`[ns2] capture_nav`).
    pub fn captured(&self) -> bool {
        self.0.iter().flatten().any(|&(_, o)| o == Outcome::Captured)
    }
    /// Nothing lost and nothing captured: the arrival asks nothing more.
    pub fn is_empty(&self) -> bool {
        self.0[0].is_none()
    }
}

/// What the end of a signal means at one radio.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SignalEnd {
    /// How the reception ended, if the radio was locked onto this frame
    /// (or, under `Sinr`, heard it without decoding it).
    pub rx: Option<RxEnd>,
    /// The frame was decodable here and is lost; the models that decide
    /// late (`Sinr`) report losses here, once per frame, not at the start.
    pub lost: Option<(TxId, Loss)>,
}

/// Which reception model a scenario runs (`radio.reception`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum ReceptionModel {
    /// ns-2's threshold capture (`threshold.rs`), the default: the
    /// reception rule of the ns-2 runs the papers report.
    #[default]
    Threshold,
    /// ns-3's cumulative-interference SINR with preamble detection
    /// (`sinr.rs`).
    Sinr(SinrConfig),
}

/// The reception models, dispatched by `match`.
#[derive(Clone, Debug)]
pub enum Reception {
    /// Threshold capture.
    Threshold(ThresholdRx),
    /// SINR; boxed, as its state is several times the threshold model's and
    /// the radio keeps its hot fields in one cache line.
    Sinr(Box<SinrRx>),
}

impl Reception {
    /// A signal starts arriving. `transmitting` is the radio's half-duplex
    /// state. Returns the frames that were (or would have been) decodable
    /// and are lost because of this arrival.
    pub fn signal_start(&mut self, now: SimTime, a: Arrival, transmitting: bool) -> Losses {
        match self {
            Reception::Threshold(m) => m.signal_start(now, a, transmitting),
            Reception::Sinr(m) => {
                m.signal_start(now, a, transmitting);
                Losses::default()
            }
        }
    }

    /// A signal stops arriving.
    pub fn signal_end(&mut self, now: SimTime, tx: TxId, transmitting: bool) -> SignalEnd {
        match self {
            Reception::Threshold(m) => SignalEnd {
                // A lock that ends during a transmission ends silently.
                rx: m.signal_end(now, tx).filter(|_| !transmitting),
                lost: None,
            },
            Reception::Sinr(m) => m.signal_end(now, tx, transmitting),
        }
    }

    /// The radio starts transmitting and abandons any reception. Returns the
    /// lost frame if it was decodable so far and the model reports it now.
    pub fn start_tx(&mut self, now: SimTime) -> Option<TxId> {
        match self {
            Reception::Threshold(m) => m.start_tx(now),
            Reception::Sinr(m) => {
                m.start_tx();
                None
            }
        }
    }

    /// Takes the next decision that fell due at or before `now` and
    /// returns its time (`None`: nothing due). The radio calls this until
    /// `None` before each input, and settles its state at each time.
    pub fn advance(&mut self, now: SimTime) -> Option<SimTime> {
        match self {
            Reception::Threshold(_) => None,
            Reception::Sinr(m) => m.advance(now),
        }
    }

    /// Locked onto a frame above the receive threshold.
    pub fn is_receiving(&self) -> bool {
        match self {
            Reception::Threshold(m) => m.is_receiving(),
            Reception::Sinr(m) => m.is_receiving(),
        }
    }

    /// Physical carrier sense, apart from the radio's own transmission.
    pub fn is_medium_busy(&self) -> bool {
        match self {
            Reception::Threshold(m) => m.is_medium_busy(),
            Reception::Sinr(m) => m.is_medium_busy(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn losses_stay_two_registers_wide() {
        // Returned at every signal start: 16 bytes come back in registers,
        // a larger struct through memory (3 % more instructions on a10).
        assert_eq!(std::mem::size_of::<Losses>(), 16);
        let mut l = Losses::default();
        assert!(l.is_empty() && !l.captured());
        l.push(3, Loss::Interference);
        l.set_captured(4);
        assert!(!l.is_empty() && l.captured());
        assert_eq!(l.iter().collect::<Vec<_>>(), vec![(3, Loss::Interference)]);
    }
}
