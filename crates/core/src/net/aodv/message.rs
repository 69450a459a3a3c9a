//! AODV control messages (RFC 3561 §5) as plain values. Only their sizes go
//! on the air; the fields are what a receiver needs. Multicast flags (J, R)
//! and prefix sizes are left out: this simulator routes to single nodes.

use super::NodeAddr;
use crate::time::Duration;

/// IPv4 header (20 bytes, no options) plus UDP header (8 bytes): AODV runs over
/// UDP port 654 (§4).
pub const IP_UDP_HEADER_BYTES: u32 = 20 + 8;

/// Route Request (§5.1, 24 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rreq {
    /// G: an intermediate that answers also tells the destination (§6.6.3).
    pub gratuitous: bool,
    /// D: only the destination may answer.
    pub dest_only: bool,
    /// U: the originator knows no sequence number for the destination.
    pub unknown_seq: bool,
    /// Hops from the originator so far.
    pub hop_count: u8,
    /// With `orig`, identifies the request (§6.3).
    pub rreq_id: u32,
    /// The destination sought.
    pub dst: NodeAddr,
    /// The latest sequence number the originator knows for it.
    pub dst_seq: u32,
    /// The originator.
    pub orig: NodeAddr,
    /// The originator's own sequence number.
    pub orig_seq: u32,
}

/// Route Reply (§5.2, 20 bytes). A HELLO (§6.9) is a RREP with `dst == orig`
/// sent with TTL 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rrep {
    /// Hops from the destination so far.
    pub hop_count: u8,
    /// The destination the route leads to.
    pub dst: NodeAddr,
    /// Its sequence number.
    pub dst_seq: u32,
    /// The node that asked.
    pub orig: NodeAddr,
    /// How long receivers may consider the route valid.
    pub lifetime: Duration,
}

impl Rrep {
    /// Whether it is a HELLO (§6.9): a RREP about its sender itself.
    pub fn is_hello(&self) -> bool {
        self.dst == self.orig
    }
}

/// Route Error (§5.3, 4 + 8 bytes per unreachable destination).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rerr {
    /// N: a local repair is under way; do not delete the route.
    pub no_delete: bool,
    /// (unreachable destination, its destination sequence number).
    pub unreachable: Vec<(NodeAddr, u32)>,
}

/// An AODV control message (RFC 3561 §5).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AodvMessage {
    /// Route Request.
    Rreq(Rreq),
    /// Route Reply (or HELLO).
    Rrep(Rrep),
    /// Route Error.
    Rerr(Rerr),
    /// Route Reply Acknowledgment (§5.4, 2 bytes). Never sent by this
    /// implementation (the A flag is not used); accepted and ignored.
    RrepAck,
}

impl AodvMessage {
    /// Bytes on the air above the link layer: the §5 message plus IP and UDP headers.
    pub fn wire_bytes(&self) -> u32 {
        IP_UDP_HEADER_BYTES
            + match self {
                AodvMessage::Rreq(_) => 24,
                AodvMessage::Rrep(_) => 20,
                AodvMessage::Rerr(e) => 4 + 8 * e.unreachable.len() as u32,
                AodvMessage::RrepAck => 2,
            }
    }

    /// The message type's name in the RFC, for traces and counters.
    pub fn kind(&self) -> &'static str {
        match self {
            AodvMessage::Rreq(_) => "RREQ",
            AodvMessage::Rrep(r) if r.is_hello() => "HELLO",
            AodvMessage::Rrep(_) => "RREP",
            AodvMessage::Rerr(_) => "RERR",
            AodvMessage::RrepAck => "RREP-ACK",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_sizes_follow_section_5_plus_ip_and_udp() {
        let rreq = AodvMessage::Rreq(Rreq {
            gratuitous: false,
            dest_only: false,
            unknown_seq: true,
            hop_count: 0,
            rreq_id: 1,
            dst: 2,
            dst_seq: 0,
            orig: 1,
            orig_seq: 1,
        });
        assert_eq!(rreq.wire_bytes(), 52);
        let rrep = AodvMessage::Rrep(Rrep {
            hop_count: 0,
            dst: 2,
            dst_seq: 1,
            orig: 1,
            lifetime: Duration::from_millis(6000),
        });
        assert_eq!(rrep.wire_bytes(), 48);
        let rerr = |n: u32| {
            AodvMessage::Rerr(Rerr {
                no_delete: false,
                unreachable: (0..n).map(|d| (d, 1)).collect(),
            })
        };
        assert_eq!(rerr(1).wire_bytes(), 40);
        assert_eq!(rerr(3).wire_bytes(), 56);
        assert_eq!(AodvMessage::RrepAck.wire_bytes(), 30);
    }
}
