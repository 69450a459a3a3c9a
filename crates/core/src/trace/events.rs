//! The packet-event trace: every enqueue, dequeue, transmission start and
//! end, reception (decoded, or lost with its cause) and drop, with time,
//! node, layer, packet and flow. It answers what ns-2's trace files and
//! ns-3's ascii traces answer, one event per line.
//!
//! The sink does no I/O: the simulator records events into it at a few call
//! sites and the caller takes the JSON-lines bytes between chunks of
//! simulated time, as with the pcap writer. A filter (nodes, flows, event
//! kinds) keeps large runs' traces small.

use std::fmt::Write;

use crate::mac::frame::{Frame, BROADCAST};
use crate::net::packet::{DropCause, Packet, NO_FLOW};
use crate::time::SimTime;

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A packet entered the node's interface queue (layer `queue`).
    Enqueue,
    /// The MAC took a packet from the queue (layer `queue`).
    Dequeue,
    /// The node started putting a frame on the air (layer `phy`).
    TxStart,
    /// The node's transmission ended (layer `phy`).
    TxEnd,
    /// The node decoded a frame (layer `phy`), addressed to it or not.
    RxOk,
    /// A frame the node could have decoded was lost (layer `phy`): another
    /// signal interfered, or the node was transmitting.
    RxLost,
    /// A packet was dropped (layer `net` or `mac`), with its cause.
    Drop,
}

impl Kind {
    /// Every kind, in the order the trace documentation lists them.
    pub const ALL: [Kind; 7] = [
        Kind::Enqueue,
        Kind::Dequeue,
        Kind::TxStart,
        Kind::TxEnd,
        Kind::RxOk,
        Kind::RxLost,
        Kind::Drop,
    ];
    /// The `event` value written, and the name a trace filter gives.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Enqueue => "enqueue",
            Kind::Dequeue => "dequeue",
            Kind::TxStart => "tx_start",
            Kind::TxEnd => "tx_end",
            Kind::RxOk => "rx_ok",
            Kind::RxLost => "rx_lost",
            Kind::Drop => "drop",
        }
    }
    /// The kind a filter names; `None` for an unknown name.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
    fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

/// Which events to keep; empty lists keep everything.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Scenario node ids whose events are kept.
    pub nodes: Vec<i64>,
    /// Flow indices whose packets' events are kept; an event with no flow
    /// (routing, a frame without a packet) is then left out.
    pub flows: Vec<u32>,
    /// Kinds kept.
    pub kinds: Vec<Kind>,
}

/// One event, before it is written.
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    /// What happened.
    pub kind: Kind,
    /// Where it happened: the node's index, written as its scenario id.
    pub node: u32,
    /// The frame on the air (transmissions and receptions).
    pub frame: Option<&'a Frame>,
    /// The network-layer packet concerned, if any.
    pub packet: Option<&'a Packet>,
    /// The next hop (queue events), or the frame's transmitter (receptions).
    pub peer: Option<u32>,
    /// Why a packet was dropped (`DropCause::name`) or a frame was lost
    /// (`interference`, `transmitting`).
    pub cause: Option<&'static str>,
    /// Received power, dBm (receptions).
    pub power_dbm: Option<f64>,
}

impl<'a> Event<'a> {
    /// An event with no detail; the builder methods below add them.
    pub fn new(kind: Kind, node: u32) -> Self {
        Event {
            kind,
            node,
            frame: None,
            packet: None,
            peer: None,
            cause: None,
            power_dbm: None,
        }
    }
    /// The frame on the air.
    pub fn frame(mut self, f: &'a Frame) -> Self {
        self.frame = Some(f);
        self
    }
    /// The packet concerned; `None` for a control frame.
    pub fn packet(mut self, p: Option<&'a Packet>) -> Self {
        self.packet = p;
        self
    }
    /// The next hop or the transmitter, by node index.
    pub fn peer(mut self, n: u32) -> Self {
        self.peer = Some(n);
        self
    }
    /// Why the packet was dropped or the frame lost.
    pub fn cause(mut self, c: &'static str) -> Self {
        self.cause = Some(c);
        self
    }
    /// Received power in watts, as the channel computes it; written in dBm.
    pub fn power_w(mut self, w: f64) -> Self {
        self.power_dbm = Some(10.0 * (w * 1000.0).log10());
        self
    }
    /// A drop of `p` at `node`, layer `mac` for retry drops, else `net`.
    pub fn drop(node: u32, p: &'a Packet, cause: DropCause) -> Self {
        Event::new(Kind::Drop, node).packet(Some(p)).cause(cause.name())
    }
}

/// Collects events as JSON lines; node ids are written through `labels`
/// (the scenario's ids) so that the trace speaks the file's language.
pub struct TraceSink {
    filter: Filter,
    kinds: u8,
    labels: Vec<i64>,
    buf: String,
    count: u64,
}

impl TraceSink {
    /// An empty sink; `labels[i]` is the scenario id of node index `i`.
    pub fn new(filter: Filter, labels: Vec<i64>) -> Self {
        let kinds = if filter.kinds.is_empty() {
            u8::MAX
        } else {
            filter.kinds.iter().fold(0, |acc, k| acc | k.bit())
        };
        TraceSink {
            filter,
            kinds,
            labels,
            buf: String::with_capacity(1 << 16),
            count: 0,
        }
    }

    /// Events written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The JSON lines recorded since the last call.
    pub fn take(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.buf).into_bytes()
    }

    fn label(&self, node: u32) -> i64 {
        self.labels.get(node as usize).copied().unwrap_or(node as i64)
    }

    /// Writes `ev` at `t` as one JSON line, if the filter keeps it.
    pub fn record(&mut self, t: SimTime, ev: Event<'_>) {
        if self.kinds & ev.kind.bit() == 0 {
            return;
        }
        let flow = ev.packet.map(|p| p.flow).filter(|&f| f != NO_FLOW);
        if !self.filter.flows.is_empty() && !flow.is_some_and(|f| self.filter.flows.contains(&f)) {
            return;
        }
        let node = self.label(ev.node);
        if !self.filter.nodes.is_empty() && !self.filter.nodes.contains(&node) {
            return;
        }
        self.count += 1;
        let layer = match ev.kind {
            Kind::Enqueue | Kind::Dequeue => "queue",
            Kind::TxStart | Kind::TxEnd | Kind::RxOk | Kind::RxLost => "phy",
            Kind::Drop if ev.cause == Some(DropCause::MacRetry.name()) => "mac",
            Kind::Drop => "net",
        };
        let ends = ev.packet.map(|p| (self.label(p.src), self.label(p.dst)));
        let ra = ev.frame.filter(|f| f.rx != BROADCAST).map(|f| self.label(f.rx));
        let peer = ev.peer.filter(|&p| p != BROADCAST).map(|p| self.label(p));
        let b = &mut self.buf;
        let _ = write!(
            b,
            "{{\"t_ns\":{},\"node\":{},\"layer\":\"{}\",\"event\":\"{}\"",
            t.as_nanos(),
            node,
            layer,
            ev.kind.name()
        );
        if let Some(p) = ev.packet {
            let _ = write!(b, ",\"packet\":{},\"bytes\":{}", p.uid, p.bytes);
            if let Some((src, dst)) = ends.filter(|_| p.dst != BROADCAST) {
                let _ = write!(b, ",\"src\":{src},\"dst\":{dst}");
            }
            if let Some(f) = flow {
                let _ = write!(b, ",\"flow\":{f}");
            }
            let kind = match p.kind {
                crate::net::packet::PacketKind::Data => "data",
                crate::net::packet::PacketKind::Routing => "routing",
                crate::net::packet::PacketKind::Control => "control",
            };
            let _ = write!(b, ",\"packet_kind\":\"{kind}\"");
        }
        if let Some(f) = ev.frame {
            // Kinds, plus quick-exchange's `data_ack` and fast-forward's
            // `ack_rts` (FrameType).
            let kind = f.frame_type().name();
            let _ = write!(b, ",\"frame\":\"{kind}\",\"frame_bytes\":{}", f.bytes);
            if let Some(ra) = ra {
                let _ = write!(b, ",\"ra\":{ra}");
            }
            if f.retry {
                b.push_str(",\"retry\":true");
            }
            // Fast-forward's run of consecutive fast-forwarded hops (only
            // ever non-zero with `[mac.fast_forward]` on).
            if let Some(m) = f.msdu.filter(|m| m.ff_run > 0) {
                let _ = write!(b, ",\"ff_run\":{}", m.ff_run);
            }
        }
        if let Some(peer) = peer {
            let _ = write!(b, ",\"peer\":{peer}");
        }
        if let Some(c) = ev.cause {
            let _ = write!(b, ",\"cause\":\"{c}\"");
        }
        if let Some(dbm) = ev.power_dbm {
            let _ = write!(b, ",\"power_dbm\":{dbm:.2}");
        }
        b.push_str("}\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Body, PacketKind};

    fn packet(flow: u32) -> Packet {
        Packet {
            uid: 7,
            kind: PacketKind::Data,
            flow,
            src: 0,
            dst: 2,
            bytes: 1040,
            payload_bytes: 1000,
            created: SimTime::ZERO,
            ttl: 32,
            hops: 0,
            ff_run: 0,
            body: Body::Udp { seq: 0 },
        }
    }

    #[test]
    fn a_drop_is_one_json_line_with_the_files_node_id() {
        let mut sink = TraceSink::new(Filter::default(), vec![10, 11, 12]);
        let p = packet(0);
        sink.record(SimTime(1_500), Event::drop(1, &p, DropCause::QueueOverflow));
        let text = String::from_utf8(sink.take()).unwrap();
        assert_eq!(
            text,
            "{\"t_ns\":1500,\"node\":11,\"layer\":\"net\",\"event\":\"drop\",\"packet\":7,\
             \"bytes\":1040,\"src\":10,\"dst\":12,\"flow\":0,\"packet_kind\":\"data\",\
             \"cause\":\"queue_overflow\"}\n"
        );
        assert!(sink.take().is_empty());
    }

    #[test]
    fn the_filter_keeps_only_the_asked_nodes_flows_and_kinds() {
        let filter = Filter {
            nodes: vec![11],
            flows: vec![1],
            kinds: vec![Kind::Drop],
        };
        let mut sink = TraceSink::new(filter, vec![10, 11, 12]);
        let (p0, p1) = (packet(0), packet(1));
        sink.record(SimTime(1), Event::drop(1, &p0, DropCause::Aqm)); // other flow
        sink.record(SimTime(2), Event::drop(0, &p1, DropCause::Aqm)); // other node
        sink.record(SimTime(3), Event::new(Kind::Enqueue, 1).packet(Some(&p1))); // other kind
        sink.record(SimTime(4), Event::drop(1, &p1, DropCause::Aqm));
        assert_eq!(sink.count(), 1);
        let text = String::from_utf8(sink.take()).unwrap();
        assert!(text.starts_with("{\"t_ns\":4,"), "{text}");
    }

    #[test]
    fn kind_names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("bogus"), None);
    }
}
