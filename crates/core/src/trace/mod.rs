//! Traces in formats other tools read.

pub mod pcap;
