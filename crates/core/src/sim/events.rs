//! The events of a run. Kept small (12 bytes, so that a queue entry with
//! its time and sequence number is 32): frames and packets live in tables
//! and are referred to by index.

use crate::mac::MacTimer;
use crate::stack::NodeStack;

/// One scheduled happening of a run; the run loop dispatches each to the layer it concerns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Event {
    /// A transmission's first bit reaches its `k`-th receiver (nearest
    /// first), and maybe the following ones (`Simulator::signal_starts`).
    SignalStart {
        /// The frame's slot in the simulator's table of frames on the air.
        air: u32,
        /// The receiver's rank by distance (0: nearest).
        k: u32,
    },
    /// Its last bit passes the `k`-th receiver, and maybe the following.
    SignalEnd {
        /// The frame's slot on the air.
        air: u32,
        /// The receiver's rank by distance.
        k: u32,
    },
    /// The transmitter's own transmission ends.
    TxEnd {
        /// The transmitter.
        node: u32,
        /// The frame's slot on the air.
        air: u32,
    },
    /// A MAC timer of `node` falls due (stale if `gen` is not the MAC's current one).
    MacTimer {
        /// The station.
        node: u32,
        /// Which of its timers.
        timer: MacTimer,
        /// The generation it was armed with.
        gen: u32,
    },
    /// A flow's application has a packet (CBR), a request (HTTP) or its
    /// start (FTP) due.
    AppSend {
        /// The flow.
        flow: u32,
    },
    /// A flow's application stops offering data (FTP, HTTP).
    AppStop {
        /// The flow.
        flow: u32,
    },
    /// A TCP endpoint's timer: `side` 0 is the sender, 1 the receiver.
    TcpTimer {
        /// The flow.
        flow: u32,
        /// 0: the sender, 1: the receiver.
        side: u8,
        /// The generation it was armed with.
        gen: u32,
    },
    /// A node's routing timer (`net::routing`).
    RoutingTimer {
        /// The node.
        node: u32,
        /// The generation it was armed with.
        gen: u32,
    },
    /// A routing broadcast's jitter has passed: it enters the queue.
    RoutingJitter {
        /// The node.
        node: u32,
        /// The routing packet's id.
        packet: u32,
    },
    /// A timer that scheme number `scheme` armed at `node` (`scheme`).
    SchemeTimer {
        /// The node.
        node: u32,
        /// The scheme's number in the registry.
        scheme: u8,
        /// The scheme's own timer kind.
        kind: u8,
    },
    /// A node's queue discipline releases a packet it held back.
    QueueTimer {
        /// The node.
        node: u32,
        /// The generation it was armed with.
        gen: u32,
    },
    /// Moving nodes' positions are pushed to the channel.
    Mobility,
    /// A trace bin ends.
    Sample,
    /// The end of the `run_for` under way, queued while it runs and never
    /// popped (`EventQueue::set_limit`).
    Limit,
}

impl Event {
    /// False for an event its handler would ignore when popped: a MAC timer
    /// cancelled or re-armed since it was queued (`Dcf::timer_live`). Most
    /// of a run's access timers are cancelled by the next busy edge; the
    /// queue drops those of a bucket as it becomes current
    /// (`EventQueue::pop_before`), which leaves the run the same.
    #[inline]
    pub fn is_live(&self, nodes: &[NodeStack]) -> bool {
        match *self {
            Event::MacTimer { node, timer, gen } => nodes[node as usize].mac.timer_live(timer, gen),
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn events_stay_small() {
        assert!(std::mem::size_of::<super::Event>() <= 12);
    }
}
