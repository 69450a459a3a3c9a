//! A node's stack below routing: its radio, its 802.11 MAC and its
//! interface queue, with the bookkeeping of the per-node 1 s series. The
//! simulator owns one per node; routing (`net::routing`), transport ends
//! and schemes (`scheme`) are tables of their own, indexed by node or flow.

use crate::engine::Armed;
use crate::mac::dcf::Dcf;
use crate::net::queue::InterfaceQueue;
use crate::phy::radio::Radio;
use crate::time::Duration;

/// The radio first, at the start of the node's cache lines (`Radio`).
#[repr(C)]
pub struct NodeStack {
    /// The radio: reception model, half duplex, state times.
    pub radio: Radio,
    /// The 802.11 DCF.
    pub mac: Dcf,
    /// The interface queue and its discipline.
    pub queue: InterfaceQueue,
    /// The queue discipline's release timer (`InterfaceQueue::poll_timeout`).
    pub queue_timer: Armed,
    /// Radio idle time at the start of the current bin.
    pub idle_at_bin: Duration,
    /// NAV time at the start of the current bin.
    pub nav_at_bin: Duration,
}

impl NodeStack {
    /// The radio's carrier sense is idle and the MAC last heard it busy:
    /// when a signal's end makes an idle edge at the MAC. A signal that
    /// never made the radio busy (one below carrier sense) makes none.
    #[inline(always)]
    pub fn medium_turned_idle(&self) -> bool {
        !self.radio.is_busy() && self.mac.phy_busy()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_radio_and_the_mac_begin_on_cache_lines() {
        // `Radio` and `Dcf` put what a signal edge touches in their first
        // line; that holds only if those lines are lines of the node.
        assert_eq!(std::mem::offset_of!(NodeStack, radio), 0);
        assert_eq!(std::mem::align_of::<NodeStack>(), 64);
        assert_eq!(std::mem::offset_of!(NodeStack, mac) % 64, 0);
    }
}
