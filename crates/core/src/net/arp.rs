//! ARP as ns-2.35 resolves next hops (`mac/arp.cc`), for `[ns2] arp`: an
//! artefact of ns-2 that some of the papers' single runs contain, so it is
//! off unless asked for, even under `platform = "ns2"`.
//!
//! One table per node, without I/O: the node asks it to resolve a next hop
//! for a packet and tells it of every ARP packet it hears; the table says
//! what to send, hold or drop. ns-2's rules (`arpresolve` :121-193,
//! `arpinput` :259-310):
//! - a packet for an unresolved next hop is held, one per next hop: a
//!   second one displaces the first, which is dropped, and each sends a
//!   request (a broadcast), so a request is repeated only when a new packet
//!   arrives;
//! - after `MAX_REQUESTS` requests the held packet and the new one are both
//!   dropped and the count starts again;
//! - every ARP packet heard (a broadcast request from any neighbour, or a
//!   reply) resolves its sender and releases the packet held for it; a
//!   request for this node is answered by a unicast reply.

/// `ARP_HDR_LEN`: the ARP packet's size at the network layer.
pub const ARP_BYTES: u32 = 28;
/// `ARP_MAX_REQUEST_COUNT`.
pub const MAX_REQUESTS: u32 = 3;

/// One neighbour's entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    addr: u32,
    /// Resolved: packets for it go at once.
    up: bool,
    /// The packet waiting for the resolution, by id.
    hold: Option<u32>,
    /// Requests sent since the count last started.
    requests: u32,
}

/// What to do with a packet for a next hop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolve {
    /// The next hop is resolved: the packet goes to the interface queue.
    Send,
    /// The packet is held and a request is to be broadcast; `dropped` is
    /// the packet it displaced.
    Held {
        /// The packet the held one displaced, dropped.
        dropped: Option<u32>,
    },
    /// The request count was used up: the packet and `held` (the one that
    /// waited) are dropped, and nothing is sent.
    Failed {
        /// The packet that waited, dropped with this one.
        held: Option<u32>,
    },
}

/// A node's ARP table.
#[derive(Clone, Debug, Default)]
pub struct ArpTable {
    entries: Vec<Entry>,
}

impl ArpTable {
    fn entry(&mut self, addr: u32) -> &mut Entry {
        let i = match self.entries.iter().position(|e| e.addr == addr) {
            Some(i) => i,
            None => {
                self.entries.push(Entry {
                    addr,
                    up: false,
                    hold: None,
                    requests: 0,
                });
                self.entries.len() - 1
            }
        };
        &mut self.entries[i]
    }

    /// Packet `packet` is to go to `next_hop` (`arpresolve`).
    pub fn resolve(&mut self, next_hop: u32, packet: u32) -> Resolve {
        let e = self.entry(next_hop);
        if e.up {
            return Resolve::Send;
        }
        if e.requests >= MAX_REQUESTS {
            e.requests = 0;
            return Resolve::Failed { held: e.hold.take() };
        }
        e.requests += 1;
        Resolve::Held {
            dropped: e.hold.replace(packet),
        }
    }

    /// An ARP packet from `sender` was heard (`arpinput`): `sender` is
    /// resolved; returns the packet held for it, which now goes.
    pub fn heard(&mut self, sender: u32) -> Option<u32> {
        let e = self.entry(sender);
        e.up = true;
        e.hold.take()
    }
}

#[cfg(test)]
impl ArpTable {
    fn is_resolved(&self, addr: u32) -> bool {
        self.entries.iter().any(|e| e.addr == addr && e.up)
    }

    fn held(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().filter_map(|e| e.hold)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_packet_is_held_per_next_hop_and_a_new_one_displaces_it() {
        let mut t = ArpTable::default();
        assert_eq!(t.resolve(5, 100), Resolve::Held { dropped: None });
        assert_eq!(t.resolve(6, 101), Resolve::Held { dropped: None });
        assert_eq!(t.resolve(5, 102), Resolve::Held { dropped: Some(100) });
        assert_eq!(t.held().collect::<Vec<_>>(), vec![102, 101]);
        assert_eq!(t.heard(5), Some(102));
        assert!(t.is_resolved(5) && !t.is_resolved(6));
        assert_eq!(t.resolve(5, 103), Resolve::Send);
    }

    #[test]
    fn after_three_requests_both_packets_are_dropped_and_the_count_restarts() {
        let mut t = ArpTable::default();
        for p in 0..3 {
            assert!(matches!(t.resolve(5, p), Resolve::Held { .. }));
        }
        assert_eq!(t.resolve(5, 3), Resolve::Failed { held: Some(2) });
        assert_eq!(t.held().count(), 0);
        assert_eq!(t.resolve(5, 4), Resolve::Held { dropped: None });
    }

    #[test]
    fn hearing_any_arp_packet_resolves_its_sender() {
        let mut t = ArpTable::default();
        assert_eq!(t.heard(9), None);
        assert_eq!(t.resolve(9, 1), Resolve::Send);
    }
}
