//! A node's stack below routing: its radio, its 802.11 MAC and its
//! interface queue, with the bookkeeping of the per-node 1 s series. The
//! simulator owns one per node; routing (`net::routing`), transport ends
//! and schemes (`scheme`) are tables of their own, indexed by node or flow.

use crate::engine::Armed;
use crate::mac::dcf::Dcf;
use crate::net::queue::InterfaceQueue;
use crate::phy::radio::Radio;
use crate::time::Duration;

pub struct NodeStack {
    pub radio: Radio,
    pub mac: Dcf,
    pub queue: InterfaceQueue,
    /// The queue discipline's release timer (`InterfaceQueue::poll_timeout`).
    pub queue_timer: Armed,
    /// Radio idle time and NAV time at the start of the current bin.
    pub idle_at_bin: Duration,
    pub nav_at_bin: Duration,
}
