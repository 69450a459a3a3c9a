//! A flow as the layers see it: its ends, transport, application and
//! times. The scenario (`scenario/flow.rs`) reads and checks `[[flow]]`
//! tables into these; the simulator, routing and the schemes read them.

use crate::time::SimTime;
use crate::transport::tcp::TcpVariant;

/// A flow's transport: UDP, or TCP in one of its variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    /// Datagrams, no feedback.
    Udp,
    /// A TCP connection with the variant's congestion control.
    Tcp(TcpVariant),
}

impl Transport {
    /// Every transport name: the TCP variants, then UDP.
    pub fn names() -> Vec<&'static str> {
        TcpVariant::ALL.iter().map(|v| v.name()).chain(["udp"]).collect()
    }
    /// The transport named `s` in a `[[flow]]` table, if any.
    pub fn parse(s: &str) -> Option<Transport> {
        if s == "udp" {
            return Some(Transport::Udp);
        }
        s.parse().ok().map(Transport::Tcp)
    }
    /// The transport's name in scenario files and summaries.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp(v) => v.name(),
        }
    }
}

/// What drives a flow's source.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum App {
    /// Constant bit rate, `rate_kbps` (over UDP).
    Cbr {
        /// Sending rate, kbit/s of payload.
        rate_kbps: f64,
    },
    /// Bulk transfer, always backlogged (over TCP).
    Ftp,
    /// HTTP-like on/off source of the `[onoff]` table (over TCP).
    Http,
}

/// One flow of a run, checked: its ends as node indices, its transport,
/// application and times.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// The source node's index.
    pub src: u32,
    /// The destination node's index.
    pub dst: u32,
    /// UDP or a TCP variant.
    pub transport: Transport,
    /// What drives the source.
    pub app: App,
    /// Payload bytes per packet (a TCP segment's MSS).
    pub packet_bytes: u32,
    /// When the source starts.
    pub start: SimTime,
    /// When the source stops.
    pub stop: SimTime,
    /// Start of the window `throughput_kbps` covers (`metrics.warmup_s`; else `start`).
    pub measure_from: SimTime,
    /// The explicit path from source to destination, if given (else the
    /// routing protocol's).
    pub route: Option<Vec<u32>>,
    /// (instant, path) changes of the explicit route, time-sorted.
    pub route_changes: Vec<(SimTime, Vec<u32>)>,
}

impl FlowSpec {
    /// The explicit path in force at `t` (None: the static shortest path).
    pub fn route_at(&self, t: SimTime) -> Option<&[u32]> {
        match self.route_changes.iter().rev().find(|c| c.0 <= t) {
            Some((_, p)) => Some(p),
            None => self.route.as_deref(),
        }
    }
}
