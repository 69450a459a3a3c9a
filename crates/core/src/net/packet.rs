//! Network-layer packets as small structs in a slab, passed by index
//! (DESIGN.md principle 5), and the ledger that accounts for every packet
//! created anywhere: it ends delivered, dropped with a cause, or is still
//! in flight when the run ends (principle 4).

use crate::time::SimTime;

/// `Packet::flow` of packets that belong to no flow (routing, control).
pub const NO_FLOW: u32 = u32::MAX;
/// IPv4 header without options.
pub const IP_HEADER_BYTES: u32 = 20;
/// UDP header, bytes (RFC 768).
pub const UDP_HEADER_BYTES: u32 = 8;

/// What a packet is for: the ledger and the queue treat data and control apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PacketKind {
    /// Transport data (UDP datagrams, TCP segments and ACKs).
    Data,
    /// Routing protocol packets (AODV).
    Routing,
    /// Packets of a remedy's control plane (e.g. NRED notifications).
    Control,
}

/// What a packet carries above IP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// A UDP datagram of a CBR source.
    Udp {
        /// Its sequence number in its flow.
        seq: u64,
    },
    /// A TCP segment (data or ACK).
    Tcp(crate::transport::tcp::Segment),
    /// An AODV message, by index in the simulator's message arena.
    Aodv(u32),
    /// An NRED congestion notification (Xu et al. §5.2): normalizedP_b as
    /// the bits of an f32, and the lifetime in ms.
    Ncn {
        /// normalizedP_b, as the bits of an f32.
        npb_bits: u32,
        /// How long the notification holds, ms.
        lifetime_ms: u32,
    },
    /// An ARP request (broadcast) or reply (unicast) of ns-2's ARP
    /// (`net::arp`): `sender` resolves itself, `target` is the address asked for.
    Arp {
        /// A request (true) or a reply.
        request: bool,
        /// The node resolving itself.
        sender: u32,
        /// The address asked for.
        target: u32,
    },
}

/// An IP packet as the layers see it: addresses, flow, sizes, hop and TTL counts and what it carries. Copied by value (it is small); the store keeps one per id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Ledger identity: one per logical packet, kept across hops.
    pub uid: u64,
    /// Data or control.
    pub kind: PacketKind,
    /// Its flow (`NO_FLOW` for routing and control packets).
    pub flow: u32,
    /// Originator and final destination (internal node indices).
    pub src: u32,
    /// The destination node.
    pub dst: u32,
    /// Size at the network layer, IP header included.
    pub bytes: u32,
    /// Application payload carried (what throughput counts).
    pub payload_bytes: u32,
    /// When its source created it (for the delay).
    pub created: SimTime,
    /// IP time to live: hops it may still take.
    pub ttl: u8,
    /// Hops taken so far.
    pub hops: u8,
    /// Fast-forward's consecutive hops the packet made to reach this node
    /// (`mac::frame::Msdu::ff_run`); 0 unless fast-forward is on.
    pub ff_run: u8,
    /// What it carries.
    pub body: Body,
}

impl Packet {
    /// Routing and control packets go ahead of data in the interface queue.
    pub fn is_control(&self) -> bool {
        self.kind != PacketKind::Data
    }
}

impl Body {
    /// The routing message a routing packet carries, by index.
    pub fn routing_message(&self) -> Option<u32> {
        match *self {
            Body::Aodv(m) => Some(m),
            _ => None,
        }
    }
}

/// Why a packet was dropped: the ledger's and the summary's `drops` keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DropCause {
    /// The interface queue was full.
    QueueOverflow,
    /// The MAC's retry limit was reached.
    MacRetry,
    /// Routing had no route.
    NoRoute,
    /// An active queue management dropped it (RED, NRED).
    Aqm,
    /// Its TTL ran out.
    TtlExpired,
    /// It waited for a route longer than routing's buffer allows.
    BufferTimeout,
    /// ns-2's ARP (`[ns2] arp`): displaced from the hold, or the request
    /// count used up (`DROP_IFQ_ARP_FULL`).
    Arp,
}

impl DropCause {
    /// Every cause, in the summary's order.
    pub const ALL: [DropCause; 7] = [
        DropCause::QueueOverflow,
        DropCause::MacRetry,
        DropCause::NoRoute,
        DropCause::Aqm,
        DropCause::TtlExpired,
        DropCause::BufferTimeout,
        DropCause::Arp,
    ];
    /// The cause's key in the summary.
    pub fn name(self) -> &'static str {
        match self {
            DropCause::QueueOverflow => "queue_overflow",
            DropCause::MacRetry => "mac_retry",
            DropCause::NoRoute => "no_route",
            DropCause::Aqm => "aqm",
            DropCause::TtlExpired => "ttl",
            DropCause::BufferTimeout => "buffer_timeout",
            DropCause::Arp => "arp",
        }
    }
}

/// Every packet counted once: generated, then delivered, dropped or still in flight.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ledger {
    /// Packets created.
    pub generated: u64,
    /// Packets delivered to their destination.
    pub delivered: u64,
    /// Packets dropped, by `DropCause`.
    pub dropped: [u64; 7],
}

impl Ledger {
    /// Packets dropped for any cause.
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }
    /// Packets neither delivered nor dropped yet.
    pub fn in_flight(&self) -> u64 {
        self.generated - self.delivered - self.dropped_total()
    }
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    packet: Packet,
    live: bool,
    /// The next hop decoded this copy: the logical packet lives on there,
    /// and this copy only waits for the MAC to let it go.
    handed_over: bool,
}

/// A slab of packet copies. One logical packet has one live copy that is
/// not handed over; the ledger checks that against its own counts.
#[derive(Default)]
pub struct PacketStore {
    slots: Vec<Slot>,
    free: Vec<u32>,
    next_uid: u64,
    /// The counts of every packet's fate.
    pub ledger: Ledger,
}

impl PacketStore {
    /// Creates a new logical packet (counted as generated).
    pub fn create(&mut self, mut p: Packet) -> u32 {
        p.uid = self.next_uid;
        self.next_uid += 1;
        self.ledger.generated += 1;
        self.insert(p)
    }

    /// Stores the next hop's copy of a packet decoded from the air; the
    /// transmitter's copy `from` is marked handed over.
    pub fn hand_over(&mut self, from: u32, copy: Packet) -> u32 {
        if let Some(s) = self.slots.get_mut(from as usize) {
            if s.live && s.packet.uid == copy.uid {
                s.handed_over = true;
            }
        }
        self.insert(copy)
    }

    fn insert(&mut self, packet: Packet) -> u32 {
        let slot = Slot {
            packet,
            live: true,
            handed_over: false,
        };
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Packet `id`.
    pub fn get(&self, id: u32) -> &Packet {
        let s = &self.slots[id as usize];
        debug_assert!(s.live, "use of a freed packet");
        &s.packet
    }

    /// Packet `id`, to change.
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        &mut self.slots[id as usize].packet
    }

    /// Whether `id` was handed to its next hop already (its copy lives on there).
    pub fn is_handed_over(&self, id: u32) -> bool {
        self.slots[id as usize].handed_over
    }

    fn release(&mut self, id: u32) -> Slot {
        let s = self.slots[id as usize];
        assert!(s.live, "packet {id} released twice");
        self.slots[id as usize].live = false;
        self.free.push(id);
        s
    }

    /// The packet reached its final destination (or, if broadcast, the air).
    pub fn deliver(&mut self, id: u32) {
        let s = self.release(id);
        debug_assert!(!s.handed_over);
        self.ledger.delivered += 1;
    }

    /// The packet is dropped, unless this copy was already handed over, in
    /// which case the packet lives on at the next hop and nothing is counted.
    /// Returns whether a drop was counted.
    pub fn drop_packet(&mut self, id: u32, cause: DropCause) -> bool {
        let s = self.release(id);
        if s.handed_over {
            return false;
        }
        self.ledger.dropped[cause as usize] += 1;
        true
    }

    /// Frees a copy that was handed over (the MAC finished with it).
    pub fn release_copy(&mut self, id: u32) {
        let s = self.release(id);
        debug_assert!(s.handed_over, "releasing a packet that was never handed over");
    }

    /// Live copies that carry a logical packet (not handed over).
    pub fn live_packets(&self) -> u64 {
        self.slots.iter().filter(|s| s.live && !s.handed_over).count() as u64
    }

    /// The ledger check: generated = delivered + dropped + in flight, with
    /// in flight equal to the packets actually held somewhere.
    pub fn balanced(&self) -> bool {
        let l = &self.ledger;
        l.generated >= l.delivered + l.dropped_total() && l.in_flight() == self.live_packets()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt() -> Packet {
        Packet {
            uid: 0,
            kind: PacketKind::Data,
            flow: 0,
            src: 0,
            dst: 2,
            bytes: 100,
            payload_bytes: 72,
            created: SimTime::ZERO,
            ttl: 64,
            hops: 0,
            ff_run: 0,
            body: Body::Udp { seq: 0 },
        }
    }

    #[test]
    fn ledger_balances_across_hand_over_and_drops() {
        let mut s = PacketStore::default();
        let a = s.create(pkt());
        let b = s.create(pkt());
        assert!(s.balanced());
        let copy = *s.get(a);
        let a2 = s.hand_over(a, copy);
        assert!(s.balanced());
        // The sender's retries then fail: the packet still lives at the next hop.
        assert!(!s.drop_packet(a, DropCause::MacRetry));
        s.deliver(a2);
        assert!(s.drop_packet(b, DropCause::QueueOverflow));
        assert_eq!(s.ledger.in_flight(), 0);
        assert!(s.balanced());
        assert_eq!(s.ledger.dropped[DropCause::QueueOverflow as usize], 1);
    }
}
