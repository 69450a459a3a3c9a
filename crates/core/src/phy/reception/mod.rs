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

/// Up to two frames lost by one arrival, without allocating, and whether
/// the arrival was captured out by the frame the radio is locked onto.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Losses {
    lost: [Option<(TxId, Loss)>; 2],
    /// The arriving signal was captured out (only reported under ns-2's
    /// capture deferral, `[ns2] capture_nav`): the MAC defers for it.
    pub captured: bool,
}

impl Losses {
    pub(crate) fn push(&mut self, tx: TxId, why: Loss) {
        let slot = if self.lost[0].is_none() { 0 } else { 1 };
        self.lost[slot] = Some((tx, why));
    }
    pub fn iter(&self) -> impl Iterator<Item = (TxId, Loss)> + '_ {
        self.lost.iter().flatten().copied()
    }
    /// Nothing lost and nothing captured: the arrival asks nothing more.
    pub fn is_empty(&self) -> bool {
        self.lost[0].is_none() && !self.captured
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
    #[default]
    Threshold,
    Sinr(SinrConfig),
}

/// The reception models, dispatched by `match`.
#[derive(Clone, Debug)]
pub enum Reception {
    Threshold(ThresholdRx),
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
                rx: m.signal_end(now, tx, transmitting),
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
