//! The network layer: packets and their ledger, the interface queue (the
//! seam where queue disciplines plug in), and routing.

pub mod aodv;
pub mod arp;
pub mod nred;
pub mod packet;
pub mod queue;
pub mod red;
pub mod routing;
pub mod static_routes;
pub mod throttle;

pub use packet::{Body, DropCause, Ledger, Packet, PacketKind, PacketStore, NO_FLOW};
pub use queue::{InterfaceQueue, QueueKind, Queued};
