//! The engine owns time, the event queue and randomness (DESIGN.md
//! principles 1 and 3). Protocol layers never see it.

pub mod pages;
pub mod prefetch;
pub mod queue;
pub mod rng;
pub mod timer;

pub use queue::EventQueue;
pub use rng::{stream, Purpose};
pub use timer::Armed;
