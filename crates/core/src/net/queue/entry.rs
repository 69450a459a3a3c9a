//! What an interface queue holds and how the MAC selects from it: the
//! entries every discipline shares (`mod.rs`, `ingress.rs`), apart from
//! the disciplines themselves.

/// A packet in an interface queue, with what the disciplines and the MAC
/// read of it without the packet store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Queued {
    /// The packet's id in the packet store.
    pub packet: u32,
    /// The neighbour it goes to (`BROADCAST` for a broadcast).
    pub next_hop: u32,
    /// Its size on the air above the MAC, bytes.
    pub bytes: u32,
    /// A routing or scheme control packet: it goes ahead of data.
    pub control: bool,
    /// The packet's flow (`NO_FLOW` for routing and control packets).
    pub flow: u32,
    /// Originated at this node (its source address is the node's own).
    pub local: bool,
    /// OPET's flow label: the flow and its direction (None: no flow).
    pub label: Option<u32>,
}

/// Which packet the MAC may take next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Select<'a> {
    /// The head of the queue (control first).
    Any,
    /// The first packet for this next hop only (quick-exchange's reverse
    /// packet, Berger et al.).
    NextHop(u32),
    /// The first packet for this next hop of at most this many bytes
    /// (quick-exchange's reverse packet under its size cap).
    NextHopUpTo(u32, u32),
    /// The first packet of a flow not in this list (OPET: flows blocked by
    /// a negative CTS).
    NotFlows(&'a [u32]),
    /// This packet, wherever it is (fast-forward's packet to relay).
    Packet(u32),
    /// The first packet of this flow label for this next hop (OPET's
    /// answer to a ready-to-receive frame).
    Label(u32, u32),
    /// The first packet of this flow for this next hop (fast-forward's
    /// flow policy, Berger et al. §3.2).
    Flow(u32, u32),
}

impl Select<'_> {
    pub(crate) fn admits(&self, q: &Queued) -> bool {
        match *self {
            Select::Any => true,
            Select::NextHop(h) => q.next_hop == h,
            Select::NextHopUpTo(h, max) => q.next_hop == h && q.bytes <= max,
            Select::NotFlows(blocked) => !blocked.contains(&q.flow),
            Select::Packet(p) => q.packet == p,
            Select::Label(l, h) => q.label == Some(l) && q.next_hop == h,
            Select::Flow(f, h) => q.flow == f && q.next_hop == h,
        }
    }
}
