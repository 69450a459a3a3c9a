//! 802.11 MAC frames as small copyable structs (a `Repr`, in smoltcp's
//! terms), with their bytes beside them: `Frame::emit` writes the MAC
//! frame as it goes on the air (FCS excluded), for traces only. The logic
//! never looks at bytes.
//!
//! Besides the four frames of the standard DCF, a frame can carry what the
//! DCF's extensions add: a piggybacked ACK (quick-exchange's DATA2+ACK1 and
//! fast-forward's ACK-RTS, Berger et al. §3), a second receiver address
//! (the RTS part of an ACK-RTS), a flow label and a negative-CTS flag
//! (OPET's RTS(f) and NCTS, Zhai et al.), and quick-exchange's τ field.
//! With every extension off, frames and their bytes are those of 802.11.

use crate::phy::Rate;
use crate::time::Duration;

/// The broadcast receiver address.
pub const BROADCAST: u32 = u32::MAX;

/// RTS: frame control, duration, RA, TA, FCS (IEEE 802.11-2012 §8.3.1.2).
pub const RTS_BYTES: u32 = 20;
/// CTS and ACK: frame control, duration, RA, FCS (§8.3.1.3, §8.3.1.4).
pub const CTS_BYTES: u32 = 14;
/// ACK frame: frame control 2, Duration 2, RA 6, FCS 4 (§8.3.1.4).
pub const ACK_BYTES: u32 = 14;
/// OPET's negative CTS is a CTS with this bit of the flags (More Data).
pub const NCTS_FLAG: u8 = 0x20;
/// Data frame header (24 bytes, three addresses) plus FCS (4 bytes).
pub const DATA_OVERHEAD_BYTES: u32 = 28;
/// ns-2.35's data frame overhead: its `hdr_mac802_11` carries a fourth
/// address, 34 bytes with the FCS (`mac-802_11.h` :193-202).
pub const NS2_DATA_OVERHEAD_BYTES: u32 = 34;

/// The frame kinds, in the order of the per-kind counters. Extensions
/// append theirs; counters are sized by `FrameKind::ALL.len()`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FrameKind {
    /// Request to send (§8.3.1.2).
    Rts,
    /// Clear to send (§8.3.1.3).
    Cts,
    /// A data frame.
    Data,
    /// Acknowledgement (§8.3.1.4).
    Ack,
    /// OPET's negative CTS: the RTS's receiver refuses the flow.
    Ncts,
    /// OPET's ready-to-receive frame: a receiver-initiated CTS that
    /// solicits the DATA of a blocked flow.
    Rtr,
}

impl FrameKind {
    /// Every kind, the standard ones first.
    pub const ALL: [FrameKind; 6] = [
        FrameKind::Rts,
        FrameKind::Cts,
        FrameKind::Data,
        FrameKind::Ack,
        FrameKind::Ncts,
        FrameKind::Rtr,
    ];
    /// The kinds of plain 802.11, counted in every summary; the others
    /// only when their extension is on.
    pub const STANDARD: [FrameKind; 4] = [FrameKind::Rts, FrameKind::Cts, FrameKind::Data, FrameKind::Ack];
    /// The kind's index in per-kind counters.
    pub fn index(self) -> usize {
        self as usize
    }
    /// The kind's key in the summary and traces.
    pub fn name(self) -> &'static str {
        match self {
            FrameKind::Rts => "rts",
            FrameKind::Cts => "cts",
            FrameKind::Data => "data",
            FrameKind::Ack => "ack",
            FrameKind::Ncts => "ncts",
            FrameKind::Rtr => "rtr",
        }
    }
    /// Frame control, first byte: protocol version 0, type and subtype
    /// (§8.2.4.1.3, Table 8-1). OPET's frames have no subtype of their
    /// own: both go as CTS frames (docs/opet.md, "In a pcap").
    fn frame_control(self) -> u8 {
        match self {
            FrameKind::Rts => 0xb4,                                    // control, subtype 1011
            FrameKind::Cts | FrameKind::Ncts | FrameKind::Rtr => 0xc4, // control, subtype 1100
            FrameKind::Ack => 0xd4,                                    // control, subtype 1101
            FrameKind::Data => 0x08,                                   // data, subtype 0000
        }
    }
}

/// A network-layer packet carried by a data frame: its handle in the
/// owner's packet store and its size in bytes (IP header included).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Msdu {
    /// Its id in the packet store.
    pub packet: u32,
    /// Its size, bytes (IP header included).
    pub bytes: u32,
    /// OPET's flow label (the flow and its direction); None for packets
    /// of no flow, which are never backpressured.
    pub label: Option<u32>,
    /// Fast-forward's consecutive hops (Berger et al. §3.2): how many hops
    /// in a row, up to this frame's, the packet was fast-forwarded. The DCF
    /// sets it on every data frame it sends (one more than the packet came
    /// with after an ACK-RTS, 0 otherwise), so that the next relay can hold
    /// the packet to `consecutive_limit`. Simulator-only: no bytes on the
    /// air (the spec's G16).
    pub ff_run: u8,
}

/// What summaries and traces call a frame: its kind, or one of Berger et
/// al.'s combined frames (§3), which the DCF builds as a kind with an
/// extension. They appear only with quick-exchange or fast-forward on, so
/// plain runs count and trace exactly the kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    /// A frame of one kind, without extension.
    Kind(FrameKind),
    /// Fast-forward's ACK-RTS: an ACK with a second receiver address.
    AckRts,
    /// Quick-exchange's DATA2+ACK1: a data frame with a piggybacked ACK.
    DataAck,
}

impl FrameType {
    /// How many there are: the counters' size.
    pub const COUNT: usize = FrameKind::ALL.len() + 2;
    /// The type's index in per-type counters.
    pub fn index(self) -> usize {
        match self {
            FrameType::Kind(k) => k.index(),
            FrameType::AckRts => FrameKind::ALL.len(),
            FrameType::DataAck => FrameKind::ALL.len() + 1,
        }
    }
    /// The type's key in the summary and traces.
    pub fn name(self) -> &'static str {
        match self {
            FrameType::Kind(k) => k.name(),
            FrameType::AckRts => "ack_rts",
            FrameType::DataAck => "data_ack",
        }
    }
}

/// What the DCF's extensions add to a frame; all empty in plain 802.11.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Extensions {
    /// The frame also acknowledges the last data frame from `rx`
    /// (quick-exchange's DATA2+ACK1 is a data frame with this set; the
    /// standard's Data+CF-Ack subtype, §8.2.4.1.3).
    pub piggybacked_ack: bool,
    /// A second receiver address: fast-forward's ACK-RTS acknowledges `rx`
    /// and asks `rx2` for a CTS.
    pub rx2: Option<u32>,
    /// The flow the frame concerns (OPET's RTS(f) and ready-to-receive).
    pub flow: Option<u32>,
    /// A negative CTS: the receiver refuses the RTS (OPET's backward
    /// pressure).
    pub negative_cts: bool,
    /// Quick-exchange's τ in a CTS: the extra time the exchange needs.
    pub tau: Duration,
}

/// An 802.11 frame as the MAC sends it: addresses, Duration, sequence number, the MSDU it carries and the extensions' fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// RTS, CTS, DATA, ACK, ...
    pub kind: FrameKind,
    /// Transmitter address (TA).
    pub tx: u32,
    /// Receiver address (RA), or `BROADCAST`.
    pub rx: u32,
    /// The Duration/ID field: how long the medium stays reserved after this frame.
    pub duration: Duration,
    /// Sequence number of its MSDU (§9.3.2.10's duplicate filter).
    pub seq: u16,
    /// The Retry bit: a retransmission.
    pub retry: bool,
    /// The MSDU a data frame carries.
    pub msdu: Option<Msdu>,
    /// MAC frame size (header and FCS included).
    pub bytes: u32,
    /// The rate it is sent at.
    pub rate: Rate,
    /// The remedies' extra fields (empty in plain 802.11).
    pub ext: Extensions,
}

/// The MAC address of node `i` (internal index): 02:00:00:00:hi:lo with
/// hi.lo = i + 1, a locally administered unicast address.
pub fn mac_address(node: u32) -> [u8; 6] {
    if node == BROADCAST {
        return [0xff; 6];
    }
    let n = node + 1;
    [0x02, 0, 0, 0, (n >> 8) as u8, n as u8]
}

/// The IBSS's BSSID (locally administered), Address 3 of data frames.
pub const BSSID: [u8; 6] = [0x02, 0xff, 0x00, 0x00, 0x00, 0x01];

/// LLC/SNAP header announcing an IPv4 payload (RFC 1042). The airtime
/// model, like ns-2 and the papers, counts 28 MAC bytes without it.
pub const LLC_SNAP_IPV4: [u8; 8] = [0xaa, 0xaa, 0x03, 0x00, 0x00, 0x00, 0x08, 0x00];

impl Frame {
    /// A control frame (RTS, CTS or ACK) with no extension.
    pub fn control(kind: FrameKind, tx: u32, rx: u32, duration: Duration, rate: Rate) -> Frame {
        Frame {
            kind,
            tx,
            rx,
            duration,
            seq: 0,
            retry: false,
            msdu: None,
            bytes: match kind {
                FrameKind::Rts => RTS_BYTES,
                FrameKind::Cts | FrameKind::Ncts | FrameKind::Rtr => CTS_BYTES,
                _ => ACK_BYTES,
            },
            rate,
            ext: Extensions::default(),
        }
    }

    /// Its airtime at its rate, preamble and PLCP header included.
    pub fn airtime(&self) -> Duration {
        self.rate.airtime(self.bytes)
    }
    /// Its type for summaries and traces (`FrameType`).
    pub fn frame_type(&self) -> FrameType {
        match self.kind {
            FrameKind::Ack if self.ext.rx2.is_some() => FrameType::AckRts,
            FrameKind::Data if self.ext.piggybacked_ack => FrameType::DataAck,
            k => FrameType::Kind(k),
        }
    }
    /// Whether it is addressed to every station.
    pub fn is_broadcast(&self) -> bool {
        self.rx == BROADCAST
    }
    /// The frame names `node` as a receiver (RA, or the second RA).
    pub fn is_addressed_to(&self, node: u32) -> bool {
        self.rx == node || self.ext.rx2 == Some(node)
    }

    /// The Duration field in whole microseconds, rounded up (§8.2.4.2).
    pub fn duration_us(&self) -> u16 {
        self.duration.as_nanos().div_ceil(1000).min(32767) as u16
    }

    /// Appends the MAC header as it goes on the air; for a data frame also
    /// the LLC/SNAP header, after which the caller appends the MSDU's
    /// bytes. The FCS is not written.
    pub fn emit(&self, out: &mut Vec<u8>) {
        let mut flags = if self.retry { 0x08 } else { 0x00 };
        if self.kind == FrameKind::Ncts {
            // The More Data bit, unused in a CTS, marks it negative.
            flags |= NCTS_FLAG;
        }
        let mut fc = self.kind.frame_control();
        if self.kind == FrameKind::Data && self.ext.piggybacked_ack {
            fc = 0x18; // data, subtype 0001: Data+CF-Ack
        }
        out.extend_from_slice(&[fc, flags]);
        out.extend_from_slice(&self.duration_us().to_le_bytes());
        out.extend_from_slice(&mac_address(self.rx));
        match self.kind {
            FrameKind::Rts => {
                out.extend_from_slice(&mac_address(self.tx));
                self.emit_label(out, RTS_BYTES);
            }
            FrameKind::Rtr => self.emit_label(out, CTS_BYTES),
            FrameKind::Ncts => {}
            FrameKind::Cts if self.bytes > CTS_BYTES => {
                // Quick-exchange's τ field, in microseconds like Duration.
                let tau = self.ext.tau.as_nanos().div_ceil(1000).min(32767) as u16;
                out.extend_from_slice(&tau.to_le_bytes());
            }
            FrameKind::Ack if self.ext.rx2.is_some() => {
                // Fast-forward's ACK-RTS: the RTS's receiver, then the TA.
                out.extend_from_slice(&mac_address(self.ext.rx2.unwrap_or(BROADCAST)));
                out.extend_from_slice(&mac_address(self.tx));
            }
            FrameKind::Cts | FrameKind::Ack => {}
            FrameKind::Data => {
                out.extend_from_slice(&mac_address(self.tx));
                out.extend_from_slice(&BSSID);
                out.extend_from_slice(&(self.seq << 4).to_le_bytes());
                out.extend_from_slice(&LLC_SNAP_IPV4);
            }
        }
    }

    /// OPET's flow label after the standard fields, in the bytes the frame
    /// has beyond `standard` (big-endian, the low bytes if fewer than 4).
    fn emit_label(&self, out: &mut Vec<u8>, standard: u32) {
        let n = self.bytes.saturating_sub(standard) as usize;
        if n == 0 {
            return;
        }
        let label = self.ext.flow.unwrap_or(u32::MAX).to_be_bytes();
        for i in 0..n {
            // Fields longer than 4 bytes are padded with zeros in front.
            out.push(if i + 4 >= n { label[i + 4 - n] } else { 0 });
        }
    }

    /// Bytes `emit` writes before the MSDU (MAC header, LLC/SNAP for data).
    pub fn emitted_header_len(&self) -> usize {
        match self.kind {
            FrameKind::Data => 24 + LLC_SNAP_IPV4.len(),
            _ => self.bytes.saturating_sub(4) as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_frames_emit_their_standard_layout() {
        let us = Duration::from_micros;
        let rts = Frame::control(FrameKind::Rts, 0, 1, us(5054), Rate::MBPS_1);
        let mut b = Vec::new();
        rts.emit(&mut b);
        // FC, Duration 5054 µs, RA 02:..:02, TA 02:..:01 (FCS excluded).
        assert_eq!(b.len(), 16);
        assert_eq!(b.len(), rts.emitted_header_len());
        assert_eq!(&b[..4], &[0xb4, 0x00, 0xbe, 0x13]);
        assert_eq!(&b[4..], &[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]);
        for (kind, fc) in [(FrameKind::Cts, 0xc4), (FrameKind::Ack, 0xd4)] {
            let mut b = Vec::new();
            let f = Frame::control(kind, 1, 0, Duration(1), Rate::MBPS_1);
            f.emit(&mut b);
            // A Duration of 1 ns is rounded up to 1 µs.
            assert_eq!(b, vec![fc, 0, 1, 0, 2, 0, 0, 0, 0, 1]);
            assert_eq!(b.len(), f.emitted_header_len());
        }
    }

    #[test]
    fn data_frame_header_has_three_addresses_seq_and_snap() {
        let f = Frame {
            kind: FrameKind::Data,
            tx: 1,
            rx: 2,
            duration: Duration::from_micros(314),
            seq: 9,
            retry: true,
            msdu: Some(Msdu {
                packet: 0,
                bytes: 40,
                label: None,
                ff_run: 0,
            }),
            bytes: 68,
            rate: Rate::MBPS_2,
            ext: Extensions::default(),
        };
        let mut b = Vec::new();
        f.emit(&mut b);
        assert_eq!(b.len(), 32);
        assert_eq!(b.len(), f.emitted_header_len());
        assert_eq!(&b[..2], &[0x08, 0x08], "data, retry flag");
        assert_eq!(&b[4..10], &mac_address(2));
        assert_eq!(&b[10..16], &mac_address(1));
        assert_eq!(&b[16..22], &BSSID);
        assert_eq!(u16::from_le_bytes([b[22], b[23]]), 9 << 4);
        assert_eq!(&b[24..], &LLC_SNAP_IPV4);
    }

    #[test]
    fn quick_exchange_frames_emit_the_tau_field_and_data_cf_ack() {
        let mut cts = Frame::control(FrameKind::Cts, 1, 0, Duration::from_micros(4788), Rate::MBPS_1);
        cts.bytes = CTS_BYTES + 2;
        cts.ext.tau = Duration::from_micros(490);
        let mut b = Vec::new();
        cts.emit(&mut b);
        assert_eq!(b.len(), cts.emitted_header_len());
        assert_eq!(u16::from_le_bytes([b[10], b[11]]), 490);
        let data_ack = Frame {
            kind: FrameKind::Data,
            tx: 1,
            rx: 0,
            duration: Duration::from_micros(314),
            seq: 0,
            retry: false,
            msdu: Some(Msdu {
                packet: 0,
                bytes: 40,
                label: None,
                ff_run: 0,
            }),
            bytes: 72,
            rate: Rate::MBPS_2,
            ext: Extensions {
                piggybacked_ack: true,
                ..Extensions::default()
            },
        };
        let mut b = Vec::new();
        data_ack.emit(&mut b);
        assert_eq!(b[0], 0x18);
    }

    /// OPET's frames (docs/opet.md, "In a pcap"): RTS(f) is an RTS with
    /// the flow label after TA; the negative CTS a CTS with the More Data
    /// flag; the ready-to-receive frame a CTS with the label after RA.
    #[test]
    fn opet_frames_emit_a_label_and_a_flag() {
        let mut rts = Frame::control(FrameKind::Rts, 0, 1, Duration::from_micros(5102), Rate::MBPS_1);
        rts.bytes = RTS_BYTES + 4;
        rts.ext.flow = Some(0x0102_0305);
        let mut b = Vec::new();
        rts.emit(&mut b);
        assert_eq!(b.len(), 20);
        assert_eq!(b.len(), rts.emitted_header_len());
        assert_eq!(&b[..2], &[0xb4, 0x00]);
        assert_eq!(&b[16..], &[1, 2, 3, 5]);

        let ncts = Frame::control(FrameKind::Ncts, 1, 0, Duration::ZERO, Rate::MBPS_1);
        let mut b = Vec::new();
        ncts.emit(&mut b);
        assert_eq!(b, vec![0xc4, NCTS_FLAG, 0, 0, 2, 0, 0, 0, 0, 1]);
        assert_eq!(ncts.airtime(), Duration::from_micros(304));

        let mut rtr = Frame::control(FrameKind::Rtr, 1, 0, Duration::from_micros(4788), Rate::MBPS_1);
        rtr.bytes = CTS_BYTES + 4;
        rtr.ext.flow = Some(7);
        let mut b = Vec::new();
        rtr.emit(&mut b);
        assert_eq!(b.len(), rtr.emitted_header_len());
        assert_eq!(&b[..4], &[0xc4, 0x00, 0xb4, 0x12], "CTS, Duration 4788");
        assert_eq!(&b[10..], &[0, 0, 0, 7]);
        assert_eq!(rtr.airtime(), Duration::from_micros(336));
        // A 2-byte label keeps the low bytes.
        rtr.bytes = CTS_BYTES + 2;
        let mut b = Vec::new();
        rtr.emit(&mut b);
        assert_eq!(&b[10..], &[0, 7]);
    }

    #[test]
    fn second_receiver_address_counts_as_addressed() {
        let mut f = Frame::control(FrameKind::Ack, 1, 0, Duration::ZERO, Rate::MBPS_1);
        assert!(f.is_addressed_to(0) && !f.is_addressed_to(2));
        f.ext.rx2 = Some(2);
        assert!(f.is_addressed_to(0) && f.is_addressed_to(2));
    }
}
