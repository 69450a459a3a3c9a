//! Every frame put on the air, as a pcap capture that Wireshark and tcpdump
//! read: link type 127 (IEEE 802.11 with a radiotap header), nanosecond
//! timestamps (magic 0xa1b23c4d) at the start of each transmission.
//!
//! Frames are real 802.11 bytes. The MAC frame comes from `Frame::emit`
//! (`mac/frame.rs`); this writer adds the pcap record and radiotap header
//! and, inside data frames, the MSDU: an IPv4 header (with checksum),
//! and a UDP or TCP header, or an AODV message over UDP port 654 encoded as
//! RFC 3561 §5 lays it out (the 8 LLC/SNAP bytes are shown though the
//! airtime model does not count them). Payload bytes are zeros, and each record keeps at
//! most `snaplen` bytes (its original length is recorded in full). The FCS
//! is not included. Node `i` (internal index) has MAC address
//! 02:00:00:00:hi:lo and IPv4 address 10.0.hi.lo with hi.lo = i + 1.
//!
//! A unicast frame's radiotap header also carries what its addressee saw:
//! the received power (dBm antenna signal) and the noise (dBm antenna noise;
//! the model has no noise source, so this is the thermal floor of a 22 MHz
//! channel), and the "bad FCS" flag when the addressee did not decode the
//! frame, so that collisions show in Wireshark (`radiotap.flags.badfcs == 1`).
//! Such records wait until the addressee has seen the frame's end; records
//! leave in the order the frames started.

use crate::mac::frame::{mac_address, Frame, FrameKind, BROADCAST};
use crate::net::aodv::AodvMessage;
use crate::net::packet::{Body, Packet};
use crate::time::SimTime;

/// LINKTYPE_IEEE802_11_RADIOTAP.
const LINKTYPE_RADIOTAP: u32 = 127;
/// Channel 1 (2412 MHz); flags: CCK, 2 GHz spectrum.
const CHANNEL_MHZ: u16 = 2412;
const CHANNEL_FLAGS: u16 = 0x0020 | 0x0080;
/// AODV's well-known UDP port (RFC 3561 §4).
const AODV_PORT: u16 = 654;
/// A flow's destination port is FLOW_PORT + flow id, and its source port
/// SOURCE_PORT + flow id: Wireshark 4.0 binds no dissector to 40000-41169
/// nor to 50000-54327 (port 5000, used before, decodes as GSM over IP), so
/// the first 1,170 flows decode as plain UDP/TCP.
pub const FLOW_PORT: u16 = 40000;
/// The base of a flow's source port; see [`FLOW_PORT`].
pub const SOURCE_PORT: u16 = 50000;
/// Thermal noise in 22 MHz at 290 K: -174 dBm/Hz + 10 log10(22e6), rounded.
const NOISE_DBM: i8 = -101;
/// Radiotap flags: the frame failed its FCS check.
const FLAG_BAD_FCS: u8 = 0x40;

/// A record waiting for its addressee's verdict.
struct Pending {
    bytes: Vec<u8>,
    /// Offset of the radiotap flags byte in `bytes`.
    flags_at: usize,
    resolved: bool,
}

/// Builds the capture in memory; the caller takes the bytes between
/// chunks of simulated time and writes them, so the core does no I/O.
pub struct PcapWriter {
    buf: Vec<u8>,
    snaplen: usize,
    frame: Vec<u8>,
    pending: std::collections::VecDeque<Pending>,
    /// Ticket of `pending[0]`.
    first_ticket: u64,
}

fn ip_addr(node: u32) -> [u8; 4] {
    if node == BROADCAST {
        return [255; 4];
    }
    let n = node + 1;
    [10, (n >> 16) as u8, (n >> 8) as u8, n as u8]
}

/// The Internet checksum (RFC 1071) of an IPv4 header.
fn ip_checksum(h: &[u8]) -> u16 {
    fold(words(h))
}

/// Σ of the 16-bit big-endian words of `b` (an odd last byte padded with 0).
fn words(b: &[u8]) -> u32 {
    b.chunks(2)
        .map(|c| u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])))
        .sum()
}

/// The one's complement of the one's-complement sum `sum`.
fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The TCP (RFC 793 §3.1) or UDP (RFC 768) checksum over the IPv4
/// pseudo-header and `segment`, the header with its checksum field zero and
/// whatever payload bytes are not zeros (zeros add nothing to the sum, so
/// the payload the capture leaves out, all zeros, need not be there).
/// UDP sends a computed 0 as 0xffff (0 means no checksum).
fn l4_checksum(src: [u8; 4], dst: [u8; 4], proto: u8, len: u16, segment: &[u8]) -> u16 {
    let pseudo = words(&src) + words(&dst) + u32::from(proto) + u32::from(len);
    match fold(pseudo + words(segment)) {
        0 if proto == 17 => 0xffff,
        c => c,
    }
}

impl PcapWriter {
    /// A capture holding only the global header, keeping at most `snaplen`
    /// bytes of each record.
    pub fn new(snaplen: usize) -> Self {
        let mut buf = Vec::with_capacity(1 << 16);
        buf.extend_from_slice(&0xa1b2_3c4du32.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes());
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&(snaplen as u32).to_le_bytes());
        buf.extend_from_slice(&LINKTYPE_RADIOTAP.to_le_bytes());
        PcapWriter {
            buf,
            snaplen,
            frame: Vec::with_capacity(2400),
            pending: std::collections::VecDeque::new(),
            first_ticket: 0,
        }
    }

    /// The bytes written so far, handed over (the caller appends them to a file).
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf)
    }

    /// Records `frame` (carrying `packet`, if a data frame) sent at `t`.
    pub fn record(&mut self, t: SimTime, f: &Frame, packet: Option<&Packet>, aodv: Option<&AodvMessage>) {
        let ticket = self.record_pending(t, f, packet, aodv, None);
        self.resolve(ticket, true);
    }

    /// Records a frame whose addressee receives it with `rx_power_w`; the
    /// record waits for `resolve(ticket, decoded)` (records leave in order).
    pub fn record_pending(
        &mut self,
        t: SimTime,
        f: &Frame,
        packet: Option<&Packet>,
        aodv: Option<&AodvMessage>,
        rx_power_w: Option<f64>,
    ) -> u64 {
        let mut fr = std::mem::take(&mut self.frame);
        fr.clear();
        // Radiotap: version, pad, length, present = Flags | Rate | Channel
        // (| dBm antenna signal | dBm antenna noise, when the power is known).
        let (len, present) = if rx_power_w.is_some() {
            (16u8, 0x6eu32)
        } else {
            (14, 0x0e)
        };
        fr.extend_from_slice(&[0, 0, len, 0]);
        fr.extend_from_slice(&present.to_le_bytes());
        fr.push(0); // flags: no FCS at the end
        fr.push((f.rate.mbps() * 2.0).round() as u8); // 500 kbit/s units
        fr.extend_from_slice(&CHANNEL_MHZ.to_le_bytes());
        fr.extend_from_slice(&CHANNEL_FLAGS.to_le_bytes());
        if let Some(w) = rx_power_w {
            let dbm = (10.0 * (w * 1000.0).log10()).round().clamp(-128.0, 127.0) as i8;
            fr.push(dbm as u8);
            fr.push(NOISE_DBM as u8);
        }
        let mac_start = fr.len();
        f.emit(&mut fr);
        if let (FrameKind::Data, Some(p)) = (f.kind, packet) {
            Self::ip_datagram(&mut fr, p, aodv);
        }
        // Payload zeros up to the frame's length (FCS excluded). Data
        // frames show an LLC/SNAP header so that IP decodes; the airtime
        // model, like ns-2 and the papers, counts 28 MAC bytes without it.
        let orig = match (f.kind, packet) {
            (FrameKind::Data, Some(p)) => mac_start + f.emitted_header_len() + p.bytes as usize,
            _ => mac_start + (f.bytes as usize).saturating_sub(4),
        };
        let keep = orig.min(self.snaplen);
        if fr.len() < keep {
            fr.resize(keep, 0);
        }
        fr.truncate(keep);
        let ns = t.as_nanos();
        let mut rec = Vec::with_capacity(16 + fr.len());
        rec.extend_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
        rec.extend_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
        rec.extend_from_slice(&(fr.len() as u32).to_le_bytes());
        rec.extend_from_slice(&(orig.max(fr.len()) as u32).to_le_bytes());
        rec.extend_from_slice(&fr);
        self.frame = fr;
        self.pending.push_back(Pending {
            bytes: rec,
            flags_at: 16 + 8,
            resolved: false,
        });
        self.first_ticket + self.pending.len() as u64 - 1
    }

    /// The addressee decoded the frame of `ticket`, or not (bad FCS).
    pub fn resolve(&mut self, ticket: u64, decoded: bool) {
        let Some(i) = ticket.checked_sub(self.first_ticket) else {
            return;
        };
        if let Some(p) = self.pending.get_mut(i as usize) {
            if !decoded {
                p.bytes[p.flags_at] |= FLAG_BAD_FCS;
            }
            p.resolved = true;
        }
        while self.pending.front().is_some_and(|p| p.resolved) {
            let p = self.pending.pop_front().expect("checked");
            self.buf.extend_from_slice(&p.bytes);
            self.first_ticket += 1;
        }
    }

    /// Writes out the records still waiting (frames on the air when the run ended).
    pub fn flush(&mut self) {
        while let Some(p) = self.pending.pop_front() {
            self.buf.extend_from_slice(&p.bytes);
            self.first_ticket += 1;
        }
    }

    /// ns-2's ARP packet (`[ns2] arp`) as RFC 826 lays it out, after the
    /// LLC/SNAP header, whose EtherType becomes ARP's (0x0806).
    fn arp_packet(fr: &mut Vec<u8>, request: bool, sender: u32, target: u32) {
        let n = fr.len();
        fr[n - 2..].copy_from_slice(&[0x08, 0x06]);
        fr.extend_from_slice(&[0, 1, 0x08, 0, 6, 4, 0, if request { 1 } else { 2 }]);
        fr.extend_from_slice(&mac_address(sender));
        fr.extend_from_slice(&ip_addr(sender));
        fr.extend_from_slice(&if request { [0; 6] } else { mac_address(target) });
        fr.extend_from_slice(&ip_addr(target));
    }

    fn ip_datagram(fr: &mut Vec<u8>, p: &Packet, aodv: Option<&AodvMessage>) {
        if let Body::Arp {
            request,
            sender,
            target,
        } = p.body
        {
            return Self::arp_packet(fr, request, sender, target);
        }
        let (proto, sport, dport) = match p.body {
            Body::Tcp(_) => (
                6u8,
                SOURCE_PORT.wrapping_add(p.flow as u16),
                FLOW_PORT.wrapping_add(p.flow as u16),
            ),
            _ if aodv.is_some() => (17u8, AODV_PORT, AODV_PORT),
            _ => (
                17u8,
                SOURCE_PORT.wrapping_add(p.flow as u16),
                FLOW_PORT.wrapping_add(p.flow as u16),
            ),
        };
        let ip_start = fr.len();
        fr.extend_from_slice(&[0x45, 0]);
        fr.extend_from_slice(&(p.bytes.min(65535) as u16).to_be_bytes());
        fr.extend_from_slice(&(p.uid as u16).to_be_bytes());
        fr.extend_from_slice(&[0x40, 0, p.ttl, proto, 0, 0]);
        fr.extend_from_slice(&ip_addr(p.src));
        fr.extend_from_slice(&ip_addr(p.dst));
        let sum = ip_checksum(&fr[ip_start..ip_start + 20]);
        fr[ip_start + 10..ip_start + 12].copy_from_slice(&sum.to_be_bytes());
        let l4 = fr.len();
        let l4_len = p.bytes.saturating_sub(20).min(65535) as u16;
        let (src, dst) = (ip_addr(p.src), ip_addr(p.dst));
        if let Body::Tcp(s) = p.body {
            // Data segments go src -> dst, ACKs back: swap the ports for ACKs.
            let (sp, dp) = if s.is_ack { (dport, sport) } else { (sport, dport) };
            fr.extend_from_slice(&sp.to_be_bytes());
            fr.extend_from_slice(&dp.to_be_bytes());
            fr.extend_from_slice(&(s.seq as u32).to_be_bytes());
            fr.extend_from_slice(&(s.ack as u32).to_be_bytes());
            fr.extend_from_slice(&[0x50, if s.is_ack { 0x10 } else { 0x18 }]);
            fr.extend_from_slice(&65535u16.to_be_bytes());
            fr.extend_from_slice(&[0, 0, 0, 0]);
            let sum = l4_checksum(src, dst, 6, l4_len, &fr[l4..]);
            fr[l4 + 16..l4 + 18].copy_from_slice(&sum.to_be_bytes());
            return;
        }
        fr.extend_from_slice(&sport.to_be_bytes());
        fr.extend_from_slice(&dport.to_be_bytes());
        fr.extend_from_slice(&l4_len.to_be_bytes());
        fr.extend_from_slice(&[0, 0]);
        if let Some(m) = aodv {
            Self::aodv_message(fr, m);
        }
        let sum = l4_checksum(src, dst, 17, l4_len, &fr[l4..]);
        fr[l4 + 6..l4 + 8].copy_from_slice(&sum.to_be_bytes());
    }

    /// RFC 3561 §5.1-5.4 layouts.
    fn aodv_message(fr: &mut Vec<u8>, m: &AodvMessage) {
        let addr = |n: u32| ip_addr(n);
        match m {
            AodvMessage::Rreq(r) => {
                let flags =
                    (u8::from(r.gratuitous) << 5) | (u8::from(r.dest_only) << 4) | (u8::from(r.unknown_seq) << 3);
                fr.extend_from_slice(&[1, flags, 0, r.hop_count]);
                fr.extend_from_slice(&r.rreq_id.to_be_bytes());
                fr.extend_from_slice(&addr(r.dst));
                fr.extend_from_slice(&r.dst_seq.to_be_bytes());
                fr.extend_from_slice(&addr(r.orig));
                fr.extend_from_slice(&r.orig_seq.to_be_bytes());
            }
            AodvMessage::Rrep(r) => {
                fr.extend_from_slice(&[2, 0, 0, r.hop_count]);
                fr.extend_from_slice(&addr(r.dst));
                fr.extend_from_slice(&r.dst_seq.to_be_bytes());
                fr.extend_from_slice(&addr(r.orig));
                fr.extend_from_slice(&((r.lifetime.as_nanos() / 1_000_000) as u32).to_be_bytes());
            }
            AodvMessage::Rerr(e) => {
                fr.extend_from_slice(&[3, if e.no_delete { 0x80 } else { 0 }, 0, e.unreachable.len() as u8]);
                for (d, s) in &e.unreachable {
                    fr.extend_from_slice(&addr(*d));
                    fr.extend_from_slice(&s.to_be_bytes());
                }
            }
            AodvMessage::RrepAck => fr.extend_from_slice(&[4, 0]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mac::frame::Msdu;
    use crate::net::packet::PacketKind;
    use crate::phy::Rate;
    use crate::time::Duration;
    use crate::transport::tcp::Segment;

    fn u32le(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn header_and_an_rts_record() {
        let mut w = PcapWriter::new(256);
        let rts = Frame {
            kind: FrameKind::Rts,
            tx: 0,
            rx: 1,
            duration: Duration::from_micros(5054),
            seq: 0,
            retry: false,
            msdu: None,
            bytes: 20,
            rate: Rate::MBPS_1,
            ext: Default::default(),
        };
        w.record(SimTime(1_500_000_123), &rts, None, None);
        let b = w.take();
        assert_eq!(u32le(&b, 0), 0xa1b2_3c4d);
        assert_eq!(u32le(&b, 20), 127);
        // Record header: 1 s + 500000123 ns, 14 radiotap + 16 bytes of RTS (FCS excluded).
        assert_eq!(
            (u32le(&b, 24), u32le(&b, 28), u32le(&b, 32), u32le(&b, 36)),
            (1, 500_000_123, 30, 30)
        );
        let frame = &b[40..];
        assert_eq!(frame[9], 2); // 1 Mbit/s in 500 kbit/s units
        assert_eq!(&frame[14..16], &[0xb4, 0x00]);
        assert_eq!(u16::from_le_bytes([frame[16], frame[17]]), 5054);
        assert_eq!(&frame[18..24], &[2, 0, 0, 0, 0, 2]);
    }

    #[test]
    fn tcp_data_frame_has_a_valid_ip_header() {
        let mut w = PcapWriter::new(128);
        let seg = Segment {
            seq: 7000,
            ack: 0,
            len: 1000,
            is_ack: false,
            retransmit: false,
            sent_at: SimTime::ZERO,
            ts_echo: SimTime::ZERO,
        };
        let p = Packet {
            uid: 42,
            kind: PacketKind::Data,
            flow: 3,
            src: 0,
            dst: 4,
            bytes: 1040,
            payload_bytes: 1000,
            created: SimTime::ZERO,
            ttl: 63,
            hops: 1,
            ff_run: 0,
            body: Body::Tcp(seg),
        };
        let f = Frame {
            kind: FrameKind::Data,
            tx: 1,
            rx: 2,
            duration: Duration::from_micros(314),
            seq: 9,
            retry: true,
            msdu: Some(Msdu {
                packet: 0,
                bytes: 1040,
                label: None,
                ff_run: 0,
            }),
            bytes: 1068,
            rate: Rate::MBPS_2,
            ext: Default::default(),
        };
        w.record(SimTime(0), &f, Some(&p), None);
        let b = w.take();
        let (incl, orig) = (u32le(&b, 32), u32le(&b, 36));
        assert_eq!((incl, orig), (128, 14 + 24 + 8 + 1040));
        let ip = &b[40 + 14 + 24 + 8..];
        assert_eq!(ip[0], 0x45);
        assert_eq!(u16::from_be_bytes([ip[2], ip[3]]), 1040);
        assert_eq!((ip[8], ip[9]), (63, 6));
        assert_eq!(&ip[12..20], &[10, 0, 0, 1, 10, 0, 0, 5]);
        assert_eq!(ip_checksum(&ip[..20]), 0, "a header with its checksum sums to zero");
        assert_eq!(u32::from_be_bytes(ip[24..28].try_into().unwrap()), 7000);
        // The TCP checksum verifies: over the pseudo-header and the whole
        // segment (1020 bytes, zeros past what the capture keeps) it sums to 0.
        let mut full = ip[20..].to_vec();
        full.resize(1020, 0);
        assert_ne!(u16::from_be_bytes([ip[36], ip[37]]), 0);
        assert_eq!(l4_checksum([10, 0, 0, 1], [10, 0, 0, 5], 6, 1020, &full), 0);
    }

    #[test]
    fn udp_checksum_verifies_and_is_never_sent_as_zero() {
        // RFC 1071's example words, as a segment: the sum of everything,
        // checksum included, folds to 0, which UDP sends as 0xffff.
        let seg = [0x00u8, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0, 0];
        let sum = l4_checksum([10, 0, 0, 1], [10, 0, 0, 2], 17, 10, &seg);
        let mut with = seg;
        with[8..10].copy_from_slice(&sum.to_be_bytes());
        assert_eq!(l4_checksum([10, 0, 0, 1], [10, 0, 0, 2], 17, 10, &with), 0xffff);
        assert_eq!(fold(0xffff), 0);
    }

    #[test]
    fn records_wait_for_the_addressee_and_leave_in_order() {
        let mut w = PcapWriter::new(64);
        w.take();
        let frame = |kind, rx| Frame {
            kind,
            tx: 0,
            rx,
            duration: Duration::ZERO,
            seq: 0,
            retry: false,
            msdu: None,
            bytes: 14,
            rate: Rate::MBPS_1,
            ext: Default::default(),
        };
        let first = w.record_pending(SimTime(1), &frame(FrameKind::Cts, 1), None, None, Some(1e-9));
        let second = w.record_pending(SimTime(2), &frame(FrameKind::Ack, 2), None, None, Some(1e-9));
        w.resolve(second, true);
        assert!(w.take().is_empty(), "the second record waits for the first");
        w.resolve(first, false);
        let b = w.take();
        // Two records of 16 radiotap bytes: -60 dBm, -101 dBm noise; the first has a bad FCS.
        assert_eq!((u32le(&b, 0), u32le(&b, 8)), (0, 16 + 10));
        assert_eq!(&b[16..24], &[0, 0, 16, 0, 0x6e, 0, 0, 0]);
        assert_eq!(
            (b[24] & FLAG_BAD_FCS, b[30] as i8, b[31] as i8),
            (FLAG_BAD_FCS, -60, -101)
        );
        let second_at = 16 + 26;
        assert_eq!(u32le(&b, second_at), 0);
        assert_eq!(u32le(&b, second_at + 4), 2);
        assert_eq!(b[second_at + 16 + 8] & FLAG_BAD_FCS, 0);
    }
}
