//! 802.11 MAC frames as small copyable structs (a `Repr`, in smoltcp's
//! terms); real bytes are produced only for traces.

use crate::phy::Rate;
use crate::time::Duration;

/// The broadcast receiver address.
pub const BROADCAST: u32 = u32::MAX;

/// RTS: frame control, duration, RA, TA, FCS (IEEE 802.11-2012 §8.3.1.2).
pub const RTS_BYTES: u32 = 20;
/// CTS and ACK: frame control, duration, RA, FCS (§8.3.1.3, §8.3.1.4).
pub const CTS_BYTES: u32 = 14;
pub const ACK_BYTES: u32 = 14;
/// Data frame header (24 bytes, three addresses) plus FCS (4 bytes).
pub const DATA_OVERHEAD_BYTES: u32 = 28;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    Rts,
    Cts,
    Data,
    Ack,
}

impl FrameKind {
    pub const ALL: [FrameKind; 4] = [FrameKind::Rts, FrameKind::Cts, FrameKind::Data, FrameKind::Ack];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Rts => "rts",
            FrameKind::Cts => "cts",
            FrameKind::Data => "data",
            FrameKind::Ack => "ack",
        }
    }
}

/// A network-layer packet carried by a data frame: its handle in the
/// owner's packet store and its size in bytes (IP header included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msdu {
    pub packet: u32,
    pub bytes: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    pub kind: FrameKind,
    /// Transmitter address (TA).
    pub tx: u32,
    /// Receiver address (RA), or `BROADCAST`.
    pub rx: u32,
    /// The Duration/ID field: how long the medium stays reserved after this frame.
    pub duration: Duration,
    pub seq: u16,
    pub retry: bool,
    pub msdu: Option<Msdu>,
    /// MAC frame size (header and FCS included).
    pub bytes: u32,
    pub rate: Rate,
}

impl Frame {
    pub fn airtime(&self) -> Duration {
        self.rate.airtime(self.bytes)
    }
    pub fn is_broadcast(&self) -> bool {
        self.rx == BROADCAST
    }
}
