//! manetfair core: a packet-level discrete-event simulator of multihop IEEE
//! 802.11 ad hoc networks. Protocol layers are state machines without I/O;
//! the engine (`sim`) owns time, events and randomness.

pub mod engine;
pub mod net;
pub mod time;

pub use time::{Duration, SimTime};
