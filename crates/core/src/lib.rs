//! manetfair core: a packet-level discrete-event simulator of multihop IEEE
//! 802.11 ad hoc networks. Protocol layers are state machines without I/O;
//! the engine (`sim`) owns time, events and randomness.

#![warn(missing_docs)]

pub mod app;
pub mod engine;
pub mod flow;
pub mod link;
pub mod mac;
pub mod metrics;
pub mod mobility;
pub mod names;
pub mod net;
pub mod phy;
pub mod scenario;
pub mod scheme;
pub mod sim;
pub mod stack;
pub mod time;
pub mod trace;
pub mod transport;

pub use time::{Duration, SimTime};
