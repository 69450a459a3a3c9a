//! Traces in formats other tools read: the pcap capture of every frame on
//! the air, and the packet-event trace as JSON lines.

pub mod events;
pub mod pcap;
