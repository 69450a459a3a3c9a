//! The IEEE 802.11 MAC: the distributed coordination function and its frames.

pub mod dcf;
pub mod fast_forward;
pub mod frame;
pub mod nav;
pub mod opet;
pub mod quick_exchange;

pub use dcf::{Dcf, DcfConfig, MacAction, MacTimer};
pub use frame::{Frame, FrameKind, BROADCAST};
