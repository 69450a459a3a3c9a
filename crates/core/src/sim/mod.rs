//! The simulator: it owns time, the event queue, randomness and the nodes,
//! and wires the layers together. Each layer is a state machine without
//! I/O; this module turns their actions into events and their events into
//! inputs. A run is a pure function of its scenario and seed.

mod events;
mod opet;
mod probe;

use crate::app::cbr::Cbr;
use crate::app::onoff::OnOffSource;
use crate::engine::prefetch::prefetch;
use crate::engine::{stream, Armed, EventQueue, Purpose};
use crate::flow::{App, Transport};
use crate::mac::dcf::{Dcf, DcfConfig, Forward, MacAction, Retries, TimerSet};
use crate::mac::fast_forward::Policy as FfPolicy;
use crate::mac::frame::{Frame, FrameKind, FrameType, Msdu, BROADCAST};
use crate::mac::opet::{Resume, SourceBuffer};
use crate::mac::MacTimer;
use crate::metrics::jain_index;
use crate::metrics::summary::{
    FlowSummary, LedgerSummary, MacSummary, SchemeSections, Summary, TcpFlowSummary, TcpTrace, Traces,
};
use crate::net::arp::{ArpTable, Resolve, ARP_BYTES};
use crate::net::packet::{
    Body, DropCause, Packet, PacketKind, PacketStore, IP_HEADER_BYTES, NO_FLOW, UDP_HEADER_BYTES,
};
use crate::net::queue::{InterfaceQueue, QueueKind, Queued, Select};
use crate::net::red::Red;
use crate::net::routing::{Routing, RoutingAction, DEFAULT_TTL};
use crate::phy::channel::{Channel, Neighbor};
use crate::phy::radio::{Arrival, Radio, RadioState, RxEnd, SignalEnd, ThresholdParams};
use crate::phy::reception::Loss;
use crate::scenario::Scenario;
use crate::scheme::{SchemeAction, Schemes, View};
use crate::stack::NodeStack;
use crate::time::{Duration, SimTime};
use crate::trace::events::{Event as TraceEvent, Kind as TraceKind};
use crate::transport::tcp::{Segment, TcpReceiver, TcpSender};
pub use events::Event;
pub use probe::{Probe, RxRecord, TxRecord};
use rand::Rng;

/// How far a bounded run step got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advance {
    /// The event budget ran out before the requested time.
    Paused,
    /// Every event before the requested time ran; the run goes on.
    Reached,
    /// The run reached its end.
    Done,
}

/// A frame on the air, with a copy of the packet it carries, kept until
/// every receiver has seen its end.
struct Airborne {
    /// When the transmitter started it; receiver k's signal starts after
    /// its propagation delay (`air_rx`).
    start: SimTime,
    frame: Frame,
    packet: Option<Packet>,
    /// Signal ends still to be processed, plus one for the transmitter.
    pending: u32,
    /// The pcap record waiting for the addressee's verdict.
    pcap_ticket: Option<u64>,
    airtime: Duration,
    /// The first of the queue sequence numbers reserved for its events:
    /// receiver k's signal start has `seq0 + 2k`, its end `seq0 + 2k + 1`,
    /// the transmitter's end `seq0 + 2n` (the order of scheduling them one
    /// by one, nearest receiver first).
    seq0: u64,
}

/// Both ends of a TCP connection (sender at the flow's source).
struct TcpEnds {
    sender: TcpSender,
    receiver: TcpReceiver,
    timers: [Armed; 2],
}

struct FlowState {
    cbr: Option<Cbr>,
    tcp: Option<TcpEnds>,
    onoff: Option<OnOffSource>,
    window_bytes: u64,
    bins: Vec<u64>,
    sent: u64,
    delivered: u64,
    delay: crate::metrics::flowstats::DelayStats,
    /// The flow's data packets (not its TCP ACKs) dropped, by `DropCause`.
    losses: [u64; DropCause::ALL.len()],
    hops: Option<u32>,
    /// The TCP sender's timeouts and fast retransmits at the last bin's end.
    tcp_marked: [u64; 2],
}

#[derive(Default)]
struct Counters {
    frames_sent: [u64; FrameType::COUNT],
    collisions: [u64; FrameType::COUNT],
    /// (frame, receiver) pairs: signals handed to receivers (the cost unit
    /// of the benchmark's instruction counts, `bench/count.py`).
    deliveries: u64,
}

pub struct Simulator {
    sc: Scenario,
    q: EventQueue<Event>,
    channel: Channel,
    nodes: Vec<NodeStack>,
    packets: PacketStore,
    air: Vec<Airborne>,
    air_free: Vec<u32>,
    /// The receivers of each `air` entry, nearest first: the transmitter's
    /// neighbours when the frame started. Where nodes move, a copy (a node
    /// that moves meanwhile still gets the signal it was due); where none
    /// does, the channel's own list, lent until the frame's last signal
    /// ends (`Channel::lend_by_delay`), which saves copying it per frame.
    air_rx: Vec<Vec<Neighbor>>,
    routing: Routing,
    schemes: Schemes,
    flows: Vec<FlowState>,
    counters: Counters,
    scratch: Vec<MacAction>,
    routing_scratch: Vec<RoutingAction>,
    scheme_scratch: Vec<SchemeAction>,
    traces: Traces,
    bin_start: SimTime,
    n_bins: usize,
    finished: bool,
    /// Nodes whose trajectory moves.
    movers: Vec<u32>,
    /// Every frame put on the air, as pcap bytes (when enabled).
    pcap: Option<crate::trace::pcap::PcapWriter>,
    /// Per-node captures (`enable_node_pcap`): (internal node, writer).
    node_pcaps: Vec<(u32, crate::trace::pcap::PcapWriter)>,
    /// Every packet event, as JSON lines (when enabled).
    trace: Option<crate::trace::events::TraceSink>,
    /// With the trace on, per frame on the air (by its `air` slot): each
    /// receiver and the power its signal arrives with, as the radio and the
    /// capture's radiotap header see it, for the receptions' `power_dbm`.
    /// Kept apart from `air_rx`, which a walk of the frame's edges holds.
    trace_rx_power: Vec<Vec<(u32, f64)>>,
    probe: Option<Probe>,
    /// Whether a capture file, a trace or a probe records receptions: read
    /// at each decoded frame, as one flag rather than three options.
    watched: bool,
    /// Fast-forward: per node, the coin's stream (empty when it is off),
    /// and the node, next hop and flow of the packet just taken in to be
    /// forwarded.
    ff_rngs: Vec<rand_pcg::Pcg64Mcg>,
    forwarded: Option<(u32, u32, u32)>,
    /// Retry state of packets a MAC's second slot put back in the queue,
    /// by (node, packet id), with the packet's uid (ids are reused): it goes
    /// back to the MAC with the packet (`Dcf::handle_msdu_with`).
    carried: std::collections::HashMap<(u32, u32), (u64, Retries)>,
    /// OPET's upstream records and flow labels, when it is on.
    opet: Option<opet::OpetAgent>,
    /// ns-2's ARP tables, one per node (`[ns2] arp`; empty when it is off).
    arp: Vec<ArpTable>,
}

impl Simulator {
    pub fn new(sc: Scenario) -> Self {
        let channel = Channel::new(sc.positions.clone(), &sc.radio);
        let th = channel.thresholds;
        let n = sc.positions.len();
        let schemes = Schemes::new(sc.scheme_setup());
        let dcf = DcfConfig {
            promiscuous: schemes.wants_overheard(),
            ..sc.dcf.clone()
        };
        let r = &sc.radio;
        let shared = ThresholdParams::with_ns2(&th, r.lock_on_sensed, r.lock_through_tx, r.report_capture);
        // On huge pages when large (`engine::pages`): on big fields each
        // signal edge reaches a node stack somewhere in megabytes.
        let mut nodes = crate::engine::pages::vec_on_huge_pages(n);
        nodes.extend((0..n).map(|i| NodeStack {
            radio: Radio::from_config(&sc.radio, &th, &shared, stream(sc.seed, i as u64, Purpose::Reception)),
            mac: Dcf::new(i as u32, dcf.clone(), stream(sc.seed, i as u64, Purpose::Backoff)),
            queue: match sc.queue {
                _ if sc.dcf.opet.enabled => InterfaceQueue::with_per_flow(sc.queue_capacity, sc.dcf.opet.scheduler),
                QueueKind::Red => InterfaceQueue::with_red(
                    sc.queue_capacity,
                    Red::new(sc.red.clone(), stream(sc.seed, i as u64, Purpose::Queue)),
                ),
                QueueKind::Throttle => {
                    let t = sc.throttle.as_ref().expect("a throttle queue has its [throttle] table");
                    let local = t.local_capacity_pkts.map_or(sc.queue_capacity, |c| c as usize);
                    InterfaceQueue::with_ingress(sc.queue_capacity, local, t.spacing())
                }
                k => InterfaceQueue::new(k, sc.queue_capacity),
            },
            queue_timer: Armed::default(),
            idle_at_bin: Duration::ZERO,
            nav_at_bin: Duration::ZERO,
        }));
        let routing = Routing::new(sc.routing, &sc.aodv, &sc.flows, sc.seed, &channel.rx_adjacency());
        let n_bins = (sc.duration.as_nanos().div_ceil(sc.series_bin.as_nanos())) as usize;
        let mut q = EventQueue::new();
        let flows = sc
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let flow = i as u32;
                let cbr = match f.app {
                    App::Cbr { rate_kbps } => Some(Cbr::new(f.packet_bytes, rate_kbps, f.start, f.stop)),
                    App::Ftp | App::Http => None,
                };
                let tcp = match f.transport {
                    Transport::Tcp(v) => Some(TcpEnds {
                        sender: TcpSender::new(&sc.tcp, v, f.packet_bytes, SimTime::ZERO),
                        receiver: TcpReceiver::new(&sc.tcp, SimTime::ZERO),
                        timers: [Armed::default(); 2],
                    }),
                    Transport::Udp => None,
                };
                // Each flow's source draws from its own stream.
                let onoff = (f.app == App::Http).then(|| {
                    let key = ((i as u64) << 32) | f.src as u64;
                    OnOffSource::new(&sc.onoff, stream(sc.seed, key, Purpose::Traffic), f.start)
                });
                let first = match (&cbr, &onoff) {
                    (Some(c), _) => c.next_send(),
                    (_, Some(o)) => o.poll_timeout(),
                    _ => Some(f.start),
                };
                if let Some(t) = first {
                    q.schedule(t, Event::AppSend { flow });
                }
                if tcp.is_some() {
                    q.schedule(f.stop, Event::AppStop { flow });
                }
                FlowState {
                    cbr,
                    tcp,
                    onoff,
                    window_bytes: 0,
                    // Grows as the run goes: never sized from the duration up front.
                    bins: Vec::new(),
                    sent: 0,
                    delivered: 0,
                    delay: Default::default(),
                    losses: [0; DropCause::ALL.len()],
                    hops: routing.static_hops(i as u32),
                    tcp_marked: [0; 2],
                }
            })
            .collect();
        if SimTime::ZERO + sc.series_bin < sc.duration {
            q.schedule(SimTime::ZERO + sc.series_bin, Event::Sample);
        }
        let movers: Vec<u32> = (0..n as u32)
            .filter(|&i| sc.trajectories[i as usize].as_ref().is_some_and(|t| !t.is_static()))
            .collect();
        if !movers.is_empty() {
            q.schedule(SimTime::ZERO + sc.mobility_update, Event::Mobility);
        }
        let mut traces = Traces {
            bin_s: sc.series_bin.as_secs_f64(),
            ..Traces::default()
        };
        traces.tcp = sc
            .flows
            .iter()
            .map(|f| matches!(f.transport, Transport::Tcp(_)).then(TcpTrace::default))
            .collect();
        if sc.node_series {
            traces.queue_len_pkts = vec![Vec::new(); n];
            traces.radio_busy_frac = vec![Vec::new(); n];
            traces.nav_busy_frac = vec![Vec::new(); n];
        }
        let mut sim = Simulator {
            q,
            channel,
            nodes,
            packets: PacketStore::default(),
            air: Vec::new(),
            air_free: Vec::new(),
            air_rx: Vec::new(),
            routing,
            schemes,
            flows,
            counters: Counters::default(),
            scratch: Vec::with_capacity(16),
            routing_scratch: Vec::new(),
            scheme_scratch: Vec::new(),
            traces,
            bin_start: SimTime::ZERO,
            n_bins,
            finished: false,
            movers,
            pcap: None,
            node_pcaps: Vec::new(),
            trace: None,
            trace_rx_power: Vec::new(),
            probe: None,
            watched: false,
            ff_rngs: if sc.dcf.fast_forward.enabled {
                (0..sc.node_ids.len() as u64)
                    .map(|i| stream(sc.seed, i, Purpose::FastForward))
                    .collect()
            } else {
                Vec::new()
            },
            forwarded: None,
            carried: std::collections::HashMap::new(),
            opet: sc.dcf.opet.enabled.then(|| opet::OpetAgent::new(n, &sc.flows)),
            arp: if sc.arp {
                vec![ArpTable::default(); n]
            } else {
                Vec::new()
            },
            sc,
        };
        let mut acts = Vec::new();
        sim.schemes.start(&mut acts);
        sim.scheme_actions(SimTime::ZERO, acts);
        sim
    }

    /// Starts recording transmissions and receptions (for invariant tests).
    pub fn enable_probe(&mut self) {
        self.probe = Some(Probe::default());
        self.watched = true;
    }

    /// Starts a pcap capture of every frame put on the air, keeping at
    /// most `snaplen` bytes of each.
    pub fn enable_pcap(&mut self, snaplen: usize) {
        self.pcap = Some(crate::trace::pcap::PcapWriter::new(snaplen));
        self.watched = true;
    }

    /// Starts the packet-event trace (crate::trace::events), keeping the
    /// events `filter` selects; node ids are written as the scenario's.
    pub fn enable_trace(&mut self, filter: crate::trace::events::Filter) {
        let labels = self.sc.node_ids.clone();
        self.trace = Some(crate::trace::events::TraceSink::new(filter, labels));
        self.watched = true;
    }

    /// The trace's JSON lines recorded since the last call.
    pub fn take_trace(&mut self) -> Vec<u8> {
        self.trace.as_mut().map(|t| t.take()).unwrap_or_default()
    }

    /// Drops packet `id` at `node` in the ledger, and traces the drop if
    /// the ledger counted it (a copy already handed over is not a drop).
    fn drop_packet(&mut self, node: u32, id: u32, cause: DropCause) {
        let p = *self.packets.get(id);
        if self.packets.drop_packet(id, cause) {
            let forward = !matches!(p.body, Body::Tcp(seg) if seg.is_ack);
            if p.flow != NO_FLOW && p.kind == PacketKind::Data && forward {
                self.flows[p.flow as usize].losses[cause as usize] += 1;
            }
            if let Some(t) = self.trace.as_mut() {
                t.record(self.q.now(), TraceEvent::drop(node, &p, cause));
            }
        }
    }

    /// Starts a capture of what node `label` (the scenario's id) sees on
    /// its own interface, as ns-3's per-device pcap: the frames it sends,
    /// stamped at their start, and the frames addressed to it (or broadcast)
    /// that it decodes, stamped at their end, with the power it received.
    /// What the MAC does on its own stays inside it, as on a real station:
    /// a data frame's retransmissions (§9.2.4: same MSDU, retry bit set) are
    /// left out on the sending side, and a retransmitted copy of an MSDU
    /// already taken in on the receiving side; so are frames overheard for
    /// others. A TCP stream's segments then appear once per TCP
    /// transmission, and Wireshark's TCP analysis counts the sender's own
    /// retransmissions. Returns the capture's index for `take_node_pcap`,
    /// or an error for an unknown id.
    pub fn enable_node_pcap(&mut self, label: i64, snaplen: usize) -> Result<usize, String> {
        let node = self
            .sc
            .node_ids
            .iter()
            .position(|&l| l == label)
            .ok_or_else(|| format!("--pcap-node {label}: no such node in the scenario"))?;
        self.node_pcaps
            .push((node as u32, crate::trace::pcap::PcapWriter::new(snaplen)));
        self.watched = true;
        Ok(self.node_pcaps.len() - 1)
    }

    /// The bytes of node capture `i` since the last call (the header first).
    pub fn take_node_pcap(&mut self, i: usize) -> Vec<u8> {
        self.node_pcaps.get_mut(i).map(|(_, w)| w.take()).unwrap_or_default()
    }

    /// Records `frame` in the captures of `node`, if any.
    #[inline(never)]
    fn node_pcap_record(&mut self, now: SimTime, node: u32, air: u32, received: bool) {
        let a = &self.air[air as usize];
        if received && a.frame.rx != node && a.frame.rx != BROADCAST {
            return;
        }
        if let Some(m) = a.frame.msdu.filter(|_| a.frame.retry) {
            if !received || self.packets.is_handed_over(m.packet) {
                return;
            }
        }
        let msg = a
            .packet
            .as_ref()
            .and_then(|p| p.body.routing_message())
            .map(|m| self.routing.message(m));
        let power = received
            .then(|| self.channel.neighbors(a.frame.tx).iter().find(|nb| nb.node == node))
            .flatten()
            .map(|nb| nb.power_w);
        for (n, w) in self.node_pcaps.iter_mut().filter(|(n, _)| *n == node) {
            debug_assert_eq!(*n, node);
            let ticket = w.record_pending(now, &a.frame, a.packet.as_ref(), msg, power);
            w.resolve(ticket, true);
        }
    }

    /// The pcap bytes captured since the last call (the file header first).
    pub fn take_pcap(&mut self) -> Vec<u8> {
        let finished = self.finished;
        self.pcap
            .as_mut()
            .map(|w| {
                if finished {
                    w.flush();
                }
                w.take()
            })
            .unwrap_or_default()
    }

    pub fn probe(&self) -> Option<&Probe> {
        self.probe.as_ref()
    }

    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    pub fn end(&self) -> SimTime {
        self.sc.duration
    }

    pub fn events(&self) -> u64 {
        self.q.events_popped()
    }

    /// (frame, receiver) pairs so far: each is a signal start and a signal end.
    pub fn deliveries(&self) -> u64 {
        self.counters.deliveries
    }

    /// Steps of the signal walks that had to be queued because another
    /// event came between two receivers (`signal_starts`): how much the
    /// run's transmissions interleave.
    pub fn walk_steps_queued(&self) -> u64 {
        self.q.refused()
    }

    /// Runs every event strictly before `min(until, end of run)`.
    /// Returns true once the run has reached its end.
    pub fn run_until(&mut self, until: SimTime) -> bool {
        self.run_for(until, u64::MAX) == Advance::Done
    }

    /// As `run_until`, but returns after at most `max_events` events, so that
    /// the caller can look for an interruption (Ctrl-C) even while simulated
    /// time stands still.
    pub fn run_for(&mut self, until: SimTime, max_events: u64) -> Advance {
        let stop = until.min(self.sc.duration);
        // The signal walks stop at it (`EventQueue::take_if_next`).
        self.q.set_limit(stop, Event::Limit);
        let first = self.q.events_popped();
        let mut left = true;
        while left {
            let nodes = &self.nodes;
            let Some((now, ev)) = self.q.pop_before(stop, |e| e.is_live(nodes)) else {
                break;
            };
            self.dispatch(now, ev);
            // A walk over a frame's receivers can run several events.
            left = self.q.events_popped() - first < max_events;
        }
        self.q.clear_limit();
        if !left && self.q.peek_time().is_some_and(|t| t < stop) {
            return Advance::Paused;
        }
        if stop >= self.sc.duration {
            self.finish();
            Advance::Done
        } else {
            Advance::Reached
        }
    }

    pub fn run(&mut self) {
        self.run_until(self.sc.duration);
    }

    #[inline(always)]
    fn dispatch(&mut self, now: SimTime, ev: Event) {
        match ev {
            Event::SignalStart { air, k } => self.signal_starts(now, air, k),
            Event::SignalEnd { air, k } => self.signal_ends(now, air, k),
            Event::TxEnd { node, air } => self.tx_end(now, node, air),
            Event::MacTimer { node, timer, gen } => {
                self.mac_call(node, None, |m, out| m.handle_timer(now, timer, gen, out));
            }
            Event::AppSend { flow } => self.app_send(now, flow),
            Event::RoutingTimer { node, gen } => self.with_out(node, |s, out| {
                s.with_routing(now, node, out, |r, acts| r.handle_timer(now, node, gen, acts))
            }),
            Event::RoutingJitter { node, packet } => {
                self.with_out(node, |s, out| s.enqueue(now, node, packet, BROADCAST, out));
            }
            Event::AppStop { flow } => self.app_stop(now, flow),
            Event::TcpTimer { flow, side, gen } => self.tcp_timer(now, flow, side, gen),
            Event::Sample => self.sample(now),
            // Never popped: it lies at the limit `pop_before` stops at.
            Event::Limit => {}
            Event::SchemeTimer { node, scheme, kind } => self.scheme_timer(now, node, scheme, kind),
            Event::QueueTimer { node, gen } => {
                if self.nodes[node as usize].queue_timer.fire(gen) {
                    self.with_out(node, |s, out| s.feed_mac(now, node, out));
                }
            }
            Event::Mobility => self.move_nodes(now),
        }
    }

    // ---- PHY ------------------------------------------------------------

    fn start_tx(&mut self, now: SimTime, node: u32, frame: Frame) {
        let n = &mut self.nodes[node as usize];
        let was_busy = n.radio.is_busy();
        if let Some(lost) = n.radio.start_tx(now) {
            self.count_collision(now, node, lost, Loss::Transmitting);
        }
        if !was_busy {
            self.medium_busy(now, node);
        }
        self.counters.frames_sent[frame.frame_type().index()] += 1;
        if let Some(p) = self.probe.as_mut() {
            let mac = &self.nodes[node as usize].mac;
            p.transmissions.push(TxRecord {
                node,
                at: now,
                kind: frame.kind,
                nav_set: mac.nav().is_set(now),
                response: mac.transmitting_response(),
            });
        }
        let packet = frame.msdu.map(|m| *self.packets.get(m.packet));
        if let Some(t) = self.trace.as_mut() {
            let ev = TraceEvent::new(TraceKind::TxStart, node)
                .frame(&frame)
                .packet(packet.as_ref());
            t.record(now, ev);
        }
        let mut pcap_ticket = None;
        if let Some(w) = self.pcap.as_mut() {
            let msg = packet
                .and_then(|p| p.body.routing_message())
                .map(|m| self.routing.message(m));
            if frame.rx == BROADCAST {
                w.record(now, &frame, packet.as_ref(), msg);
            } else {
                // The addressee's verdict comes with its signal end; one out
                // of carrier-sense reach never hears the frame.
                let at_rx = self.channel.neighbors(node).iter().find(|nb| nb.node == frame.rx);
                let ticket = w.record_pending(now, &frame, packet.as_ref(), msg, at_rx.map(|nb| nb.power_w));
                if at_rx.is_some() {
                    pcap_ticket = Some(ticket);
                } else {
                    w.resolve(ticket, false);
                }
            }
        }
        let receivers = self.channel.neighbors(node).len() as u32;
        self.counters.deliveries += u64::from(receivers);
        let airtime = frame.airtime();
        let seq0 = self.q.reserve(2 * u64::from(receivers) + 1);
        let entry = Airborne {
            start: now,
            frame,
            packet,
            pending: receivers + 1,
            pcap_ticket,
            airtime,
            seq0,
        };
        let id = match self.air_free.pop() {
            Some(i) => {
                self.air[i as usize] = entry;
                i
            }
            None => {
                self.air.push(entry);
                self.air_rx.push(Vec::new());
                (self.air.len() - 1) as u32
            }
        };
        if !self.node_pcaps.is_empty() {
            self.node_pcap_record(now, node, id, false);
        }
        if self.movers.is_empty() {
            self.air_rx[id as usize] = self.channel.lend_by_delay(node);
        } else {
            let rx = &mut self.air_rx[id as usize];
            rx.clear();
            rx.extend_from_slice(self.channel.neighbors_by_delay(node));
        }
        if self.trace.is_some() {
            self.note_rx_power(id);
        }
        // One queued event per edge of the frame: each walks the receivers
        // in order and queues itself again only when another event comes
        // between two of them (`signal_starts`).
        // Queued in the order of their times (start, the transmitter's end,
        // then the first receiver's end, a propagation delay later), which
        // the reserved numbers leave free to choose: the bucket holding the
        // two ends then stays sorted (`EventQueue`).
        let first = self.air_rx[id as usize].first().map(|r| now + r.delay);
        if let Some(at) = first {
            self.q.schedule_reserved(at, seq0, Event::SignalStart { air: id, k: 0 });
        }
        self.q.schedule_reserved(
            now + airtime,
            seq0 + 2 * u64::from(receivers),
            Event::TxEnd { node, air: id },
        );
        if let Some(at) = first {
            self.q
                .schedule_reserved(at + airtime, seq0 + 1, Event::SignalEnd { air: id, k: 0 });
        }
    }

    /// Signal starts of frame `air` from its `k`-th receiver on, each as
    /// its own event (counted, in the order of one event per receiver), for
    /// as long as no other event comes between; then the next one is
    /// queued. The run is the same as with one queued event per receiver.
    fn signal_starts(&mut self, mut now: SimTime, air: u32, mut k: u32) {
        let a = &self.air[air as usize];
        let (start, seq0, rate, bytes) = (a.start, a.seq0, a.frame.rate, a.frame.bytes);
        // Out of `air_rx` for the walk (no other walk touches this frame's
        // list), so that each step indexes one vector, not two.
        let rx = std::mem::take(&mut self.air_rx[air as usize]);
        loop {
            let r = rx[k as usize];
            let arrival = Arrival {
                tx: air,
                power_w: r.power_w,
                rate,
                bytes,
            };
            self.signal_start(now, r.node, arrival);
            k += 1;
            let Some(next) = rx.get(k as usize) else {
                break;
            };
            // The next receiver's radio line, asked for while the queue
            // is consulted (`engine::prefetch`).
            prefetch(self.nodes.as_ptr().wrapping_add(next.node as usize));
            let (at, seq) = (start.plus(next.delay), seq0 + 2 * u64::from(k));
            if !self.q.take_if_next(at, seq) {
                self.q.schedule_reserved(at, seq, Event::SignalStart { air, k });
                break;
            }
            now = at;
        }
        self.air_rx[air as usize] = rx;
    }

    /// Signal ends of frame `air`, walked as `signal_starts` walks starts.
    fn signal_ends(&mut self, mut now: SimTime, air: u32, mut k: u32) {
        // The frame's fields the walk needs, read once. Its list goes back
        // to its slot after the walk, and only then may the entry be freed
        // (`release_air` below; a freed slot's list is refilled by the next
        // transmission using it).
        let a = &self.air[air as usize];
        // Each receiver's end is its start's delay after the frame's own.
        let (end, seq0) = (a.start + a.airtime, a.seq0);
        let rx = std::mem::take(&mut self.air_rx[air as usize]);
        let first = k;
        loop {
            let node = rx[k as usize].node;
            k += 1;
            self.signal_end(now, node, air);
            let Some(next) = rx.get(k as usize) else {
                break;
            };
            prefetch(self.nodes.as_ptr().wrapping_add(next.node as usize));
            let (at, seq) = (end.plus(next.delay), seq0 + 2 * u64::from(k) + 1);
            if !self.q.take_if_next(at, seq) {
                self.q.schedule_reserved(at, seq, Event::SignalEnd { air, k });
                break;
            }
            now = at;
        }
        self.air_rx[air as usize] = rx;
        // The walk's ends at once: the entry can only be freed by the
        // last end, which is the walk's last step.
        self.release_air(air, k - first);
    }

    /// Keeps the power each receiver of frame `air` gets (`trace_rx_power`).
    #[inline(never)]
    fn note_rx_power(&mut self, air: u32) {
        let i = air as usize;
        if self.trace_rx_power.len() <= i {
            self.trace_rx_power.resize_with(i + 1, Vec::new);
        }
        let list = &mut self.trace_rx_power[i];
        list.clear();
        list.extend(self.air_rx[i].iter().map(|r| (r.node, r.power_w)));
    }

    /// The power, W, with which frame `air` arrives at `node`, in the
    /// table `note_rx_power` keeps (a function of the table alone, so that
    /// it can be read while the trace is borrowed).
    fn power_in(table: &[Vec<(u32, f64)>], air: u32, node: u32) -> Option<f64> {
        let list = table.get(air as usize)?;
        list.iter().find(|&&(n, _)| n == node).map(|&(_, w)| w)
    }

    /// `ends` of frame `id`'s signal ends and transmitter's end are over.
    fn release_air(&mut self, id: u32, ends: u32) {
        let a = &mut self.air[id as usize];
        a.pending -= ends;
        if a.pending == 0 {
            a.packet = None;
            self.air_free.push(id);
            if self.movers.is_empty() {
                let list = std::mem::take(&mut self.air_rx[id as usize]);
                self.channel.give_back_by_delay(a.frame.tx, list);
            }
        }
    }

    /// A frame `node` could have decoded is lost: a collision if the node
    /// was its addressee (docs/contract.md §3).
    fn count_collision(&mut self, now: SimTime, node: u32, air: u32, why: Loss) {
        let a = &self.air[air as usize];
        if a.frame.is_addressed_to(node) {
            self.counters.collisions[a.frame.frame_type().index()] += 1;
        }
        if let Some(t) = self.trace.as_mut() {
            let cause = match why {
                Loss::Interference => "interference",
                Loss::Transmitting => "transmitting",
            };
            let mut ev = TraceEvent::new(TraceKind::RxLost, node)
                .frame(&a.frame)
                .packet(a.packet.as_ref())
                .peer(a.frame.tx)
                .cause(cause);
            if let Some(w) = Self::power_in(&self.trace_rx_power, air, node) {
                ev = ev.power_w(w);
            }
            t.record(now, ev);
        }
    }

    #[inline(always)]
    fn signal_start(&mut self, now: SimTime, node: u32, arrival: Arrival) {
        let n = &mut self.nodes[node as usize];
        let was_busy = n.radio.is_busy();
        let losses = n.radio.signal_start(now, arrival);
        if losses.is_empty() {
            // The common case, on the node indexed once.
            if !was_busy && n.radio.is_busy() {
                n.mac.handle_medium_busy(now);
                if !self.schemes.is_empty() {
                    self.schemes.on_medium_edge(now, node, true, n);
                }
            }
            return;
        }
        for (lost, why) in losses.iter() {
            self.count_collision(now, node, lost, why);
        }
        if losses.captured() {
            self.nodes[node as usize].mac.captured(now, arrival.airtime());
        }
        if !was_busy {
            self.medium_busy(now, node);
        }
    }

    /// The medium at `node` turned busy (its own transmission or a signal).
    #[inline(always)]
    fn medium_busy(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        n.mac.handle_medium_busy(now);
        if !self.schemes.is_empty() {
            self.schemes.on_medium_edge(now, node, true, n);
        }
    }

    /// The medium at `node` turned idle.
    #[inline(always)]
    fn medium_idle(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        if let Some(a) = Self::idle_edge(&mut self.schemes, now, node, n) {
            self.arm_mac_timer(node, a);
        }
    }

    /// `medium_idle` on the node `n` already indexed: the schemes see the
    /// edge, then the MAC. Returns the one action the MAC may ask for, its
    /// access timer armed (`Dcf::medium_idle`; `arm_mac_timer` queues it).
    #[inline(always)]
    fn idle_edge(schemes: &mut Schemes, now: SimTime, node: u32, n: &mut NodeStack) -> Option<TimerSet> {
        if !schemes.is_empty() {
            schemes.on_medium_edge(now, node, false, n);
        }
        n.mac.medium_idle(now)
    }

    /// Queues the timer an idle edge, or a decoded frame that only sets the
    /// NAV, armed at `node`: `apply` for the one action those ask for,
    /// without the round through `scratch`.
    #[inline(always)]
    fn arm_mac_timer(&mut self, node: u32, t: TimerSet) {
        self.queue_mac_timer(node, t.timer, t.at, t.gen);
    }

    /// `arm_mac_timer`'s queueing, out of line, with the timer's parts as
    /// arguments: they travel in registers, where a `TimerSet` (three
    /// fields) is passed through memory (a10 336.2 M -> 334.8 M).
    #[inline(never)]
    fn queue_mac_timer(&mut self, node: u32, timer: MacTimer, at: SimTime, gen: u32) {
        self.q.schedule(at, Event::MacTimer { node, timer, gen });
    }

    fn signal_end(&mut self, now: SimTime, node: u32, air: u32) {
        let n = &mut self.nodes[node as usize];
        let end = n.radio.signal_end(now, air);
        match end {
            // Most ends: a frame only sensed, or a signal the radio was not
            // locked onto. Nothing to record unless a capture file waits
            // for the addressee's verdict; the node stays indexed once.
            SignalEnd {
                rx: None | Some(RxEnd::Sensed(_)),
                lost: None,
            } if self.pcap.is_none() => {
                if end.rx.is_some() && self.sc.eifs_after_sensed {
                    n.mac.handle_rx_error(now);
                }
                if n.medium_turned_idle() {
                    if let Some(a) = Self::idle_edge(&mut self.schemes, now, node, n) {
                        self.arm_mac_timer(node, a);
                    }
                }
            }
            _ => {
                self.reception_ended(now, node, air, end);
                if self.nodes[node as usize].medium_turned_idle() {
                    self.medium_idle(now, node);
                }
            }
        }
    }

    /// What the end of frame `air` at `node` means beyond the common case
    /// (`signal_end`): a frame decoded, received in error or lost, or a
    /// capture file's verdict.
    #[inline(never)]
    fn reception_ended(&mut self, now: SimTime, node: u32, air: u32, end: SignalEnd) {
        // Most decoded frames only set the NAV (`Dcf::only_sets_nav`): when
        // nothing records or watches them, that is all there is to do. A
        // data frame overheard goes up to the schemes alone (`apply`), so
        // without schemes it only sets the NAV too.
        if let (None, Some(RxEnd::Ok(_))) = (end.lost, end.rx) {
            let frame = &self.air[air as usize].frame;
            let mac = &mut self.nodes[node as usize].mac;
            if !self.watched && self.schemes.is_empty() && mac.only_sets_nav(frame) {
                if let Some(a) = mac.rx_nav_only(now, frame) {
                    self.arm_mac_timer(node, a);
                }
                return;
            }
        }
        self.reception_ended_in_full(now, node, air, end);
    }

    /// `reception_ended` beyond a frame that only sets the NAV: a function
    /// of its own, so that the short path does not pay this one's set-up.
    #[inline(never)]
    fn reception_ended_in_full(&mut self, now: SimTime, node: u32, air: u32, end: SignalEnd) {
        if let Some((lost, why)) = end.lost {
            self.count_collision(now, node, lost, why);
        }
        if let (Some(w), Some(ticket)) = (self.pcap.as_mut(), self.air[air as usize].pcap_ticket) {
            if self.air[air as usize].frame.rx == node {
                w.resolve(ticket, matches!(end.rx, Some(RxEnd::Ok(_))));
            }
        }
        match end.rx {
            Some(RxEnd::Ok(_)) => {
                // The frame is read in place: `air`, `nodes` and `scratch`
                // are borrowed apart, and the actions are carried out after.
                let frame = &self.air[air as usize].frame;
                if let Some(t) = self.trace.as_mut() {
                    let a = &self.air[air as usize];
                    let mut ev = TraceEvent::new(TraceKind::RxOk, node)
                        .frame(&a.frame)
                        .packet(a.packet.as_ref())
                        .peer(a.frame.tx);
                    if let Some(w) = Self::power_in(&self.trace_rx_power, air, node) {
                        ev = ev.power_w(w);
                    }
                    t.record(now, ev);
                }
                if let Some(p) = self.probe.as_mut() {
                    p.receptions.push(RxRecord {
                        node,
                        start: SimTime(now.as_nanos() - frame.airtime().as_nanos()),
                        end: now,
                    });
                }
                if !self.node_pcaps.is_empty() {
                    self.node_pcap_record(now, node, air, true);
                }
                let frame = &self.air[air as usize].frame;
                self.schemes.on_decoded(now, node, frame);
                self.nodes[node as usize].mac.handle_rx(now, frame, &mut self.scratch);
                self.carry_scratch(node, Some(air));
            }
            Some(RxEnd::Error(_)) => self.nodes[node as usize].mac.handle_rx_error(now),
            Some(RxEnd::Sensed(_)) if self.sc.eifs_after_sensed => self.nodes[node as usize].mac.handle_rx_error(now),
            Some(RxEnd::Sensed(_)) => {}
            None => {}
        }
    }

    fn tx_end(&mut self, now: SimTime, node: u32, air: u32) {
        if let Some(t) = self.trace.as_mut() {
            let a = &self.air[air as usize];
            t.record(
                now,
                TraceEvent::new(TraceKind::TxEnd, node)
                    .frame(&a.frame)
                    .packet(a.packet.as_ref()),
            );
        }
        self.nodes[node as usize].radio.end_tx(now);
        self.mac_call(node, None, |m, out| m.handle_tx_end(now, out));
        if !self.nodes[node as usize].radio.is_busy() {
            self.medium_idle(now, node);
        }
        self.release_air(air, 1);
    }

    // ---- MAC ------------------------------------------------------------

    /// Calls the node's MAC and carries out what it asks, including the
    /// actions of further MAC calls made while doing so.
    fn mac_call(&mut self, node: u32, air: Option<u32>, f: impl FnOnce(&mut Dcf, &mut Vec<MacAction>)) {
        f(&mut self.nodes[node as usize].mac, &mut self.scratch);
        self.carry_scratch(node, air);
    }

    /// Carries out the actions a MAC call left in `scratch`, if any: most
    /// calls (a medium edge at a station with nothing to send) ask for
    /// nothing. Inlined: out of line it cost 2.5 % of the grid's
    /// instructions (407.1 M against 397.1 M).
    #[inline(always)]
    fn carry_scratch(&mut self, node: u32, air: Option<u32>) {
        if self.scratch.is_empty() {
            return;
        }
        let out = std::mem::take(&mut self.scratch);
        self.carry_out(node, air, out);
    }

    /// Carries out `node`'s MAC actions in `out`, and those they lead to
    /// (appended to it); `out` then becomes the action buffer again.
    #[inline(always)]
    fn carry_out(&mut self, node: u32, air: Option<u32>, mut out: Vec<MacAction>) {
        let mut i = 0;
        while i < out.len() {
            let a = out[i];
            i += 1;
            self.apply(node, air, a, &mut out);
        }
        out.clear();
        self.scratch = out;
    }

    fn apply(&mut self, node: u32, air: Option<u32>, a: MacAction, out: &mut Vec<MacAction>) {
        let now = self.q.now();
        match a {
            MacAction::Transmit(frame) => self.start_tx(now, node, frame),
            MacAction::SetTimer { timer, at, gen } => self.q.schedule(at, Event::MacTimer { node, timer, gen }),
            MacAction::Deliver { msdu, from } => {
                self.forwarded = None;
                let air = air.expect("deliveries come from a decoded frame");
                let a = &self.air[air as usize];
                let mut copy = a.packet.expect("data frames carry a packet");
                if a.frame.rx == BROADCAST {
                    // A broadcast is delivered to the air once (the ledger
                    // counted it then); receivers act on its content and
                    // create packets of their own.
                    if let Some(m) = copy.body.routing_message() {
                        self.with_routing(now, node, out, |r, acts| {
                            r.handle_message(now, node, from, m, copy.ttl, acts)
                        });
                    }
                    self.arp_heard(now, node, copy.body, out);
                    return;
                }
                if self.packets.is_handed_over(msdu.packet) {
                    // The addressee already took this packet in: a
                    // retransmission whose earlier copy arrived (its ACK was
                    // lost) and that the sequence cache (DUP_CACHE_DEPTH
                    // numbers per transmitter) no longer remembers, because
                    // OPET's ready-to-receive answers interleaved other MSDUs.
                    // An ideal §9.3.2.10 cache drops it; so does this.
                    self.nodes[node as usize].mac.stats.duplicates += 1;
                    return;
                }
                copy.hops = copy.hops.saturating_add(1);
                copy.ff_run = msdu.ff_run;
                let id = self.packets.hand_over(msdu.packet, copy);
                if let Body::Arp { .. } = copy.body {
                    // An ARP reply ends at the link layer of its addressee.
                    self.packets.deliver(id);
                    self.arp_heard(now, node, copy.body, out);
                    return;
                }
                self.net_receive(now, node, id, Some(from), out);
            }
            MacAction::Overheard(frame) => {
                let packet = air.and_then(|a| self.air[a as usize].packet);
                self.schemes.on_overheard(now, node, &frame, packet.as_ref());
            }
            MacAction::TxDone { msdu, next_hop } => {
                if next_hop == BROADCAST {
                    self.packets.deliver(msdu.packet);
                } else if self.packets.is_handed_over(msdu.packet) {
                    self.packets.release_copy(msdu.packet);
                } else {
                    // Acknowledged but never taken in: the receiver's
                    // duplicate cache (§9.3.2.10) held this transmitter's
                    // sequence number from an earlier MSDU, 4,096 numbers
                    // back, and this one came with the Retry bit. As in
                    // 802.11 the packet is lost there and the sender does
                    // not know; the ledger counts it with the MAC's losses.
                    self.drop_packet(node, msdu.packet, DropCause::MacRetry);
                }
                self.opet_count_fell(now, node, msdu.label, out);
                self.feed_mac(now, node, out);
            }
            MacAction::WantReverse { peer, max_bytes } => {
                let n = &mut self.nodes[node as usize];
                if let Some(q) = n.queue.dequeue(now, Select::NextHopUpTo(peer, max_bytes)) {
                    self.trace_dequeue(now, node, &q);
                    let msdu = Self::msdu_of(&self.packets, &q);
                    let retries = Self::take_carried(&mut self.carried, &self.packets, node, q.packet);
                    self.nodes[node as usize].mac.offer_reverse(msdu, q.next_hop, retries);
                }
            }
            MacAction::WantForward { .. } => self.fast_forward(now, node),
            MacAction::Requeue {
                msdu,
                next_hop,
                retries,
            } => {
                // Back at the head of the queue, without a second admission,
                // and back to the MAC with its retry state: a DATA that
                // arrived but whose ACK was lost goes again under its
                // sequence number with the Retry bit, and the receiver
                // acknowledges the duplicate without delivering it
                // (Berger et al.'s failure table; §9.3.2.10).
                if retries != Retries::default() {
                    let uid = self.packets.get(msdu.packet).uid;
                    self.carried.insert((node, msdu.packet), (uid, retries));
                }
                self.requeue_front(now, node, msdu, next_hop, out);
            }
            MacAction::Blocked { msdu, next_hop } => {
                // Back at the head of its flow's queue, and the flow waits
                // for a ready-to-receive frame or the block timeout. If the
                // next hop already has it (our DATA arrived, its ACK was
                // lost), it is done instead: sending it again after a
                // resume would deliver it twice, under a new sequence number.
                if let Some(label) = msdu.label {
                    let until = now + Duration::from_secs_f64(self.sc.dcf.opet.block_timeout_s);
                    self.nodes[node as usize].queue.block(now, label, next_hop, until);
                }
                if self.packets.is_handed_over(msdu.packet) {
                    self.packets.release_copy(msdu.packet);
                    self.opet_count_fell(now, node, msdu.label, out);
                    self.feed_mac(now, node, out);
                    return;
                }
                self.requeue_front(now, node, msdu, next_hop, out);
            }
            MacAction::RtsFor { from, label, t_data } => self.opet_admit(node, from, label, t_data),
            MacAction::WantRtrData { from, label } => {
                let opet = self.sc.dcf.opet;
                let n = &mut self.nodes[node as usize];
                match opet.resume {
                    Resume::Unblock => {
                        n.queue.unblock(now, label, from);
                    }
                    Resume::Pull => {
                        let until = now + Duration::from_secs_f64(opet.block_timeout_s);
                        n.queue.renew_block(now, label, from, until);
                    }
                }
                let current = n.mac.current_msdu();
                if current.is_some_and(|(m, h)| m.label == Some(label) && h == from) {
                    n.mac.answer_rtr(now, out);
                } else if n.mac.side_free() && n.mac.idle() {
                    if let Some(q) = n.queue.dequeue(now, Select::Label(label, from)) {
                        let msdu = Self::msdu_of(&self.packets, &q);
                        let retries = Self::take_carried(&mut self.carried, &self.packets, node, q.packet);
                        let n = &mut self.nodes[node as usize];
                        n.mac.send_from_second_slot(now, msdu, from, retries, out);
                    }
                }
                self.feed_mac(now, node, out);
            }
            // Pull resume: the record stays, and the packet just taken in
            // pulls the next one when it leaves (`opet_count_fell`).
            MacAction::RtrAnswered { .. } if self.sc.dcf.opet.resume == Resume::Pull => {}
            MacAction::RtrAnswered { from, label } | MacAction::RtrAbandoned { to: from, label } => {
                if let Some(agent) = self.opet.as_mut() {
                    agent.clear(node, label, from);
                }
            }
            MacAction::TxFailed { msdu, next_hop } => {
                let p = *self.packets.get(msdu.packet);
                if self.schemes.on_tx_failed(now, node, &p) || self.routing.is_static() {
                    self.drop_packet(node, msdu.packet, DropCause::MacRetry);
                } else {
                    self.route_tx_failed(now, node, msdu.packet, next_hop, out);
                }
                self.opet_count_fell(now, node, msdu.label, out);
                self.feed_mac(now, node, out);
            }
        }
    }

    /// OPET: packets of flow `label` that `node` holds, in its queue and
    /// in its MAC (n_f of docs/opet.md).
    fn opet_count(&self, node: u32, label: u32) -> usize {
        let n = &self.nodes[node as usize];
        n.queue.label_len(label) + n.mac.held_msdus().filter(|(m, _)| m.label == Some(label)).count()
    }

    /// OPET: an RTS of flow `label` from `from` reached `node`, which
    /// refuses it with a negative CTS if it holds at least q_bp packets of
    /// the flow and is not the flow's destination, and then keeps a record
    /// to resume `from` later. An RTS it accepts ends any resume owed to
    /// `from` for the flow: the flow is moving again.
    fn opet_admit(&mut self, node: u32, from: u32, label: u32, t_data: Duration) {
        let Some(agent) = self.opet.as_ref() else { return };
        let destination = agent.destination(label) == Some(node);
        let congested = !destination && self.opet_count(node, label) >= self.sc.dcf.opet.bp_threshold_pkts as usize;
        let agent = self.opet.as_mut().expect("checked above");
        if congested {
            self.nodes[node as usize].mac.refuse();
            agent.record(
                node,
                opet::Record {
                    label,
                    upstream: from,
                    t_data,
                },
            );
        } else if agent.clear(node, label, from) {
            self.nodes[node as usize].mac.cancel_rtr(from, label);
        }
    }

    /// OPET: a packet of flow `label` left `node` (sent on, or dropped).
    /// If the count fell below q_bp, every upstream refused for the flow
    /// is owed a ready-to-receive frame.
    fn opet_count_fell(&mut self, now: SimTime, node: u32, label: Option<u32>, out: &mut Vec<MacAction>) {
        let (Some(agent), Some(label)) = (self.opet.as_ref(), label) else {
            return;
        };
        if self.opet_count(node, label) >= self.sc.dcf.opet.bp_threshold_pkts as usize {
            return;
        }
        let records: Vec<opet::Record> = agent.records_of(node, label).collect();
        for r in records {
            self.nodes[node as usize]
                .mac
                .request_rtr(now, r.upstream, label, r.t_data, out);
        }
    }

    /// Fast-forward (Berger et al. §3.2): the packet `node` just took in
    /// goes on at once if routing knew its next hop without discovery, the
    /// coin (probability `p`) says so, and the policy finds a packet: the
    /// MSDU in hand first, then the queue (`link`: for the same next hop;
    /// `any`: the head). The MAC may still refuse it (`consecutive_limit`);
    /// a queued packet leaves the queue only once the MAC took it.
    fn fast_forward(&mut self, now: SimTime, node: u32) {
        let Some((_, nh, flow)) = self.forwarded.take().filter(|&(n, _, _)| n == node) else {
            return;
        };
        let ff = self.sc.dcf.fast_forward;
        if self.ff_rngs[node as usize].gen::<f64>() >= ff.p {
            return;
        }
        let n = &mut self.nodes[node as usize];
        let current = n.mac.current_msdu().map(|(m, h)| (h, self.packets.get(m.packet).flow));
        match (current, ff.policy) {
            (Some((h, _)), FfPolicy::Any) if h != BROADCAST => {
                n.mac.forward(Forward::Current);
            }
            (Some((h, _)), FfPolicy::Link) if h == nh => {
                n.mac.forward(Forward::Current);
            }
            (Some((h, f)), FfPolicy::Flow) if h == nh && f == flow => {
                n.mac.forward(Forward::Current);
            }
            (Some(_), FfPolicy::Any) => {}
            (_, policy) => {
                let select = match policy {
                    FfPolicy::Link => Select::NextHop(nh),
                    FfPolicy::Flow => Select::Flow(flow, nh),
                    FfPolicy::Any => Select::Any,
                };
                let Some(q) = n.queue.peek(now, select).filter(|q| q.next_hop != BROADCAST) else {
                    return;
                };
                let msdu = Self::msdu_of(&self.packets, &q);
                let carried = self.carried.get(&(node, q.packet)).copied();
                let retries = match carried {
                    Some((uid, r)) if uid == self.packets.get(q.packet).uid => r,
                    _ => Retries::default(),
                };
                let n = &mut self.nodes[node as usize];
                let next_hop = q.next_hop;
                if n.mac.forward(Forward::Queued {
                    msdu,
                    next_hop,
                    retries,
                }) {
                    let taken = n.queue.dequeue(now, Select::Packet(q.packet));
                    debug_assert_eq!(taken, Some(q));
                    self.trace_dequeue(now, node, &q);
                    Self::take_carried(&mut self.carried, &self.packets, node, q.packet);
                }
            }
        }
    }

    /// The MAC took `q` from `node`'s queue: for its next exchange, or
    /// inside one (quick-exchange's reverse packet, fast-forward's).
    fn trace_dequeue(&mut self, now: SimTime, node: u32, q: &Queued) {
        if let Some(t) = self.trace.as_mut() {
            let p = self.packets.get(q.packet);
            t.record(
                now,
                TraceEvent::new(TraceKind::Dequeue, node)
                    .packet(Some(p))
                    .peer(q.next_hop),
            );
        }
    }

    /// The MSDU the MAC is handed for a queued packet.
    fn msdu_of(packets: &PacketStore, q: &Queued) -> Msdu {
        Msdu {
            packet: q.packet,
            bytes: q.bytes,
            label: q.label,
            ff_run: packets.get(q.packet).ff_run,
        }
    }

    /// Puts an MSDU the MAC gave back at the head of `node`'s queue and
    /// feeds the MAC again.
    fn requeue_front(&mut self, now: SimTime, node: u32, msdu: Msdu, next_hop: u32, out: &mut Vec<MacAction>) {
        let p = self.packets.get(msdu.packet);
        let q = Queued {
            packet: msdu.packet,
            next_hop,
            bytes: msdu.bytes,
            control: p.is_control(),
            flow: p.flow,
            local: p.src == node,
            label: msdu.label,
        };
        self.nodes[node as usize].queue.push_front(now, q);
        self.feed_mac(now, node, out);
    }

    /// The retry state a packet carried back to `node`'s queue, if any
    /// (and if the id still names that packet).
    fn take_carried(
        carried: &mut std::collections::HashMap<(u32, u32), (u64, Retries)>,
        packets: &PacketStore,
        node: u32,
        packet: u32,
    ) -> Retries {
        if carried.is_empty() {
            return Retries::default();
        }
        match carried.remove(&(node, packet)) {
            Some((uid, r)) if uid == packets.get(packet).uid => r,
            _ => Retries::default(),
        }
    }

    /// Hands the MAC its next MSDU if it has none, and arms the queue's
    /// timer if its discipline holds packets back.
    fn feed_mac(&mut self, now: SimTime, node: u32, out: &mut Vec<MacAction>) {
        let n = &mut self.nodes[node as usize];
        n.queue.expire_blocks(now);
        if n.mac.wants_msdu() {
            if let Some(q) = n.queue.dequeue(now, Select::Any) {
                self.trace_dequeue(now, node, &q);
                let msdu = Self::msdu_of(&self.packets, &q);
                let retries = Self::take_carried(&mut self.carried, &self.packets, node, q.packet);
                let mac = &mut self.nodes[node as usize].mac;
                mac.handle_msdu_with(now, msdu, q.next_hop, retries, out);
            }
        }
        // Only a MAC without a frame needs waking when a held packet is released.
        let n = &mut self.nodes[node as usize];
        let want = if n.mac.wants_msdu() {
            n.queue.poll_timeout(now)
        } else {
            None
        };
        if let Some((t, gen)) = n.queue_timer.rearm(want) {
            self.q.schedule(t.max(now), Event::QueueTimer { node, gen });
        }
    }

    // ---- network and above ------------------------------------------------

    /// A packet arrived at `node`: from neighbour `from`, or (None) from
    /// the node's own transport or routing.
    fn net_receive(&mut self, now: SimTime, node: u32, id: u32, from: Option<u32>, out: &mut Vec<MacAction>) {
        let p = *self.packets.get(id);
        if let Some(from) = from {
            if let Some(m) = p.body.routing_message() {
                // Routing messages travel hop by hop: each is for this node.
                self.packets.deliver(id);
                self.with_routing(now, node, out, |r, acts| {
                    r.handle_message(now, node, from, m, p.ttl, acts)
                });
                return;
            }
            if p.kind == PacketKind::Control {
                // A scheme's control packet, addressed to this node.
                self.packets.deliver(id);
                self.schemes.on_control(now, node, from, &p);
                return;
            }
            if self.schemes.admit_incoming(now, node, &p) {
                self.drop_packet(node, id, DropCause::Aqm);
                return;
            }
            self.routing.note_data_from(now, node, p.src, from);
        }
        if p.dst == node {
            self.deliver_up(now, node, id, out);
            return;
        }
        if from.is_some() {
            if p.ttl == 0 {
                self.drop_packet(node, id, DropCause::TtlExpired);
                return;
            }
            self.packets.get_mut(id).ttl -= 1;
        }
        let p = *self.packets.get(id);
        let next_hop = self.with_routing(now, node, out, |r, acts| r.route(now, node, id, &p, acts));
        if let (Some(nh), Some(_)) = (next_hop, from) {
            self.forwarded = Some((node, nh, p.flow));
        }
        if let Some(nh) = next_hop {
            let queued = self.try_enqueue(now, node, id, nh, out);
            if queued && from.is_some() && self.opet.is_some() {
                // OPET's fast relay: a packet to forward gets the relay window.
                self.nodes[node as usize].mac.prioritize(now, out);
            }
        }
    }

    /// Puts a packet in `node`'s interface queue towards `next_hop`, or drops it if full.
    fn enqueue(&mut self, now: SimTime, node: u32, id: u32, next_hop: u32, out: &mut Vec<MacAction>) {
        self.try_enqueue(now, node, id, next_hop, out);
    }

    /// As `enqueue`; true if the packet was queued.
    fn try_enqueue(&mut self, now: SimTime, node: u32, id: u32, next_hop: u32, out: &mut Vec<MacAction>) -> bool {
        if !self.arp.is_empty() && next_hop != BROADCAST && !self.arp_resolved(now, node, id, next_hop, out) {
            return false;
        }
        let p = self.packets.get(id);
        if self.schemes.admit_outgoing(now, node, p) {
            self.drop_packet(node, id, DropCause::Aqm);
            return false;
        }
        let p = self.packets.get(id);
        let q = Queued {
            packet: id,
            next_hop,
            bytes: p.bytes,
            control: p.is_control(),
            flow: p.flow,
            local: p.src == node,
            label: self.opet.as_ref().and_then(|a| a.label(p)),
        };
        let unbounded = q.label.is_some() && p.src == node && self.sc.dcf.opet.source_buffer == SourceBuffer::Unbounded;
        if unbounded {
            // OPET's unbounded source buffer: the source never overflows.
            self.nodes[node as usize].queue.enqueue_unbounded(now, q);
        } else if let Err((q, cause)) = self.nodes[node as usize].queue.enqueue(now, q) {
            self.drop_packet(node, q.packet, cause);
            return false;
        }
        if let Some(t) = self.trace.as_mut() {
            let p = self.packets.get(id);
            t.record(
                now,
                TraceEvent::new(TraceKind::Enqueue, node).packet(Some(p)).peer(next_hop),
            );
        }
        self.feed_mac(now, node, out);
        true
    }

    /// ns-2's ARP (`net::arp`): whether packet `id` for `next_hop` may go
    /// to the interface queue now; if not it is held (a request goes out)
    /// or dropped. ARP's own packets always go.
    fn arp_resolved(&mut self, now: SimTime, node: u32, id: u32, next_hop: u32, out: &mut Vec<MacAction>) -> bool {
        if matches!(self.packets.get(id).body, Body::Arp { .. }) {
            return true;
        }
        match self.arp[node as usize].resolve(next_hop, id) {
            Resolve::Send => true,
            Resolve::Held { dropped } => {
                if let Some(d) = dropped {
                    self.drop_packet(node, d, DropCause::Arp);
                }
                self.send_arp(now, node, true, next_hop, out);
                false
            }
            Resolve::Failed { held } => {
                for p in held.into_iter().chain([id]) {
                    self.drop_packet(node, p, DropCause::Arp);
                }
                false
            }
        }
    }

    /// Sends an ARP request for `addr` (broadcast) or a reply to `addr`.
    fn send_arp(&mut self, now: SimTime, node: u32, request: bool, addr: u32, out: &mut Vec<MacAction>) {
        let to = if request { BROADCAST } else { addr };
        let packet = Packet {
            uid: 0,
            kind: PacketKind::Control,
            flow: NO_FLOW,
            src: node,
            dst: to,
            bytes: ARP_BYTES,
            payload_bytes: 0,
            created: now,
            ttl: 1,
            hops: 0,
            ff_run: 0,
            body: Body::Arp {
                request,
                sender: node,
                target: addr,
            },
        };
        let id = self.packets.create(packet);
        self.try_enqueue(now, node, id, to, out);
    }

    /// An ARP packet from `sender` reached `node` (`arpinput`): the packet
    /// held for `sender` goes, and a request for `node` is answered.
    fn arp_heard(&mut self, now: SimTime, node: u32, body: Body, out: &mut Vec<MacAction>) {
        let Body::Arp {
            request,
            sender,
            target,
        } = body
        else {
            return;
        };
        if self.arp.is_empty() {
            return;
        }
        if let Some(held) = self.arp[node as usize].heard(sender) {
            self.try_enqueue(now, node, held, sender, out);
        }
        if request && target == node {
            self.send_arp(now, node, false, sender, out);
        }
    }

    fn deliver_up(&mut self, now: SimTime, node: u32, id: u32, out: &mut Vec<MacAction>) {
        let p = *self.packets.get(id);
        self.packets.deliver(id);
        if p.flow == NO_FLOW {
            return;
        }
        let delivered = match p.body {
            Body::Udp { .. } => p.payload_bytes as u64,
            Body::Tcp(seg) if seg.is_ack => {
                self.tcp_ack_arrived(now, p.flow, &seg, p.hops, out);
                return;
            }
            Body::Tcp(seg) => {
                let tcp = self.flows[p.flow as usize]
                    .tcp
                    .as_mut()
                    .expect("TCP segment for a TCP flow");
                let n = tcp.receiver.handle_segment(now, &seg);
                self.tcp_pump(now, p.flow, 1, node, out);
                n
            }
            // Routing and scheme messages are handled hop by hop, before this point.
            _ => return,
        };
        let spec = &self.sc.flows[p.flow as usize];
        let fs = &mut self.flows[p.flow as usize];
        fs.delivered += 1;
        fs.delay.record(now - p.created, u32::from(p.hops));
        if !self.routing.is_static() {
            fs.hops = Some(p.hops as u32);
        }
        if now >= spec.measure_from && now <= spec.stop {
            fs.window_bytes += delivered;
        }
        let bin = (now.as_nanos() / self.sc.series_bin.as_nanos()) as usize;
        if bin < self.n_bins {
            if bin >= fs.bins.len() {
                fs.bins.resize(bin + 1, 0);
            }
            fs.bins[bin] += delivered;
        }
    }

    /// Creates a packet at `node` and sends it down its own stack.
    fn originate(&mut self, now: SimTime, node: u32, packet: Packet, out: &mut Vec<MacAction>) {
        let id = self.packets.create(packet);
        self.net_receive(now, node, id, None, out);
    }

    /// Runs `f` with an action buffer, then carries out the actions of `node`'s MAC.
    fn with_out(&mut self, node: u32, f: impl FnOnce(&mut Self, &mut Vec<MacAction>)) {
        let mut out = std::mem::take(&mut self.scratch);
        f(self, &mut out);
        self.carry_out(node, None, out);
    }

    fn app_send(&mut self, now: SimTime, flow: u32) {
        let spec = &self.sc.flows[flow as usize];
        let (src, dst, payload, stop) = (spec.src, spec.dst, spec.packet_bytes, spec.stop);
        let fs = &mut self.flows[flow as usize];
        if let Some(cbr) = fs.cbr.as_mut() {
            let seq = cbr.on_send();
            let next = cbr.next_send();
            fs.sent += 1;
            let packet = Packet {
                uid: 0,
                kind: PacketKind::Data,
                flow,
                src,
                dst,
                // ns-2's UDP agent counts no header; AODV adds IP's (not UDP's).
                bytes: if self.sc.ip_header_per_agent {
                    payload + IP_HEADER_BYTES
                } else {
                    payload + UDP_HEADER_BYTES + IP_HEADER_BYTES
                },
                payload_bytes: payload,
                created: now,
                ttl: DEFAULT_TTL,
                hops: 0,
                ff_run: 0,
                body: Body::Udp { seq },
            };
            self.with_out(src, |s, out| s.originate(now, src, packet, out));
            if let Some(t) = next {
                self.q.schedule(t, Event::AppSend { flow });
            }
            return;
        }
        let Some(tcp) = fs.tcp.as_mut() else { return };
        match fs.onoff.as_mut() {
            Some(onoff) => {
                if now >= stop {
                    return;
                }
                if let Some(req) = onoff.poll_request(now) {
                    tcp.sender.push_app_bytes(now, req.bytes);
                }
            }
            None => tcp.sender.set_backlogged(true),
        }
        self.with_out(src, |s, out| s.tcp_pump(now, flow, 0, src, out));
    }

    fn app_stop(&mut self, _now: SimTime, flow: u32) {
        let fs = &mut self.flows[flow as usize];
        fs.onoff = None;
        if let Some(tcp) = fs.tcp.as_mut() {
            tcp.sender.set_backlogged(false);
        }
    }

    fn tcp_ack_arrived(&mut self, now: SimTime, flow: u32, seg: &Segment, hops: u8, out: &mut Vec<MacAction>) {
        let src = self.sc.flows[flow as usize].src;
        let fs = &mut self.flows[flow as usize];
        let tcp = fs.tcp.as_mut().expect("TCP ACK for a TCP flow");
        tcp.sender.handle_ack_hops(now, seg, Some(hops));
        if let Some(onoff) = fs.onoff.as_mut() {
            if tcp.sender.all_acked() {
                onoff.handle_object_complete(now);
                if let Some(t) = onoff.poll_timeout() {
                    self.q.schedule(t.max(now), Event::AppSend { flow });
                }
            }
        }
        self.tcp_pump(now, flow, 0, src, out);
    }

    fn tcp_timer(&mut self, now: SimTime, flow: u32, side: u8, gen: u32) {
        let Some(tcp) = self.flows[flow as usize].tcp.as_mut() else {
            return;
        };
        if !tcp.timers[side as usize].fire(gen) {
            return;
        }
        let spec = &self.sc.flows[flow as usize];
        let node = if side == 0 {
            tcp.sender.handle_timeout(now);
            spec.src
        } else {
            tcp.receiver.handle_timeout(now);
            spec.dst
        };
        self.with_out(node, |s, out| s.tcp_pump(now, flow, side, node, out));
    }

    /// Sends what a TCP endpoint has to send (side 0: data from the
    /// sender at `node`; side 1: ACKs from the receiver) and re-arms its timer.
    fn tcp_pump(&mut self, now: SimTime, flow: u32, side: u8, node: u32, out: &mut Vec<MacAction>) {
        let spec = &self.sc.flows[flow as usize];
        let (from, to) = if side == 0 {
            (spec.src, spec.dst)
        } else {
            (spec.dst, spec.src)
        };
        debug_assert_eq!(from, node);
        loop {
            let tcp = self.flows[flow as usize].tcp.as_mut().expect("TCP flow");
            let seg = if side == 0 {
                tcp.sender.poll_transmit(now)
            } else {
                tcp.receiver.poll_transmit(now)
            };
            let Some(seg) = seg else { break };
            if side == 0 {
                self.flows[flow as usize].sent += 1;
            }
            let packet = Packet {
                uid: 0,
                kind: PacketKind::Data,
                flow,
                src: from,
                dst: to,
                bytes: seg.wire_bytes(),
                payload_bytes: seg.len,
                created: now,
                ttl: DEFAULT_TTL,
                hops: 0,
                ff_run: 0,
                body: Body::Tcp(seg),
            };
            self.originate(now, from, packet, out);
        }
        let tcp = self.flows[flow as usize].tcp.as_mut().expect("TCP flow");
        let want = if side == 0 {
            tcp.sender.poll_timeout()
        } else {
            tcp.receiver.poll_timeout()
        };
        if let Some((t, gen)) = tcp.timers[side as usize].rearm(want) {
            self.q.schedule(t.max(now), Event::TcpTimer { flow, side, gen });
        }
    }

    // ---- routing ----------------------------------------------------------

    /// Runs `f` on the routing layer, carries out its actions at `node`
    /// and re-arms the node's routing timer.
    fn with_routing<R>(
        &mut self,
        now: SimTime,
        node: u32,
        out: &mut Vec<MacAction>,
        f: impl FnOnce(&mut Routing, &mut Vec<RoutingAction>) -> R,
    ) -> R {
        let mut acts = std::mem::take(&mut self.routing_scratch);
        let r = f(&mut self.routing, &mut acts);
        for a in acts.drain(..) {
            match a {
                RoutingAction::Send {
                    packet,
                    next_hop,
                    jitter,
                } => {
                    let id = self.packets.create(packet);
                    if jitter == Duration::ZERO {
                        self.enqueue(now, node, id, next_hop, out);
                    } else {
                        self.q.schedule(now + jitter, Event::RoutingJitter { node, packet: id });
                    }
                }
                RoutingAction::Forward { packet, next_hop } => self.enqueue(now, node, packet, next_hop, out),
                RoutingAction::Drop { packet, cause } => {
                    self.drop_packet(node, packet, cause);
                }
            }
        }
        self.routing_scratch = acts;
        if let Some((t, gen)) = self.routing.rearm(node) {
            self.q.schedule(t.max(now), Event::RoutingTimer { node, gen });
        }
        r
    }

    /// The MAC gave up on `id` towards `next_hop` under a routing protocol
    /// that repairs (RFC 3561 §6.11): routing learns the link broke, and
    /// packets still queued for that neighbour are routed afresh (own
    /// packets wait for a new route, forwarded ones are dropped).
    fn route_tx_failed(&mut self, now: SimTime, node: u32, id: u32, next_hop: u32, out: &mut Vec<MacAction>) {
        let p = *self.packets.get(id);
        // The next hop already has a data packet whose ACK was lost, or a
        // routing packet failed: only the link is news.
        let link_only = self.packets.is_handed_over(id) || p.body.routing_message().is_some();
        if link_only {
            self.drop_packet(node, id, DropCause::MacRetry);
        }
        let back = self.with_routing(now, node, out, |r, acts| {
            r.handle_tx_failed(now, node, id, &p, link_only, next_hop, acts)
        });
        if let Some(id) = back {
            self.drop_packet(node, id, DropCause::MacRetry);
        }
        let stranded = self.nodes[node as usize].queue.remove_for_next_hop(now, next_hop);
        let mut labels: Vec<u32> = stranded.iter().filter_map(|q| q.label).collect();
        for q in stranded {
            let p = *self.packets.get(q.packet);
            if p.is_control() {
                self.drop_packet(node, q.packet, DropCause::NoRoute);
            } else if let Some(nh) = self.with_routing(now, node, out, |r, acts| r.route(now, node, q.packet, &p, acts))
            {
                self.enqueue(now, node, q.packet, nh, out);
            }
        }
        // OPET: the flows' counts fell here; upstream nodes refused for
        // them are owed a ready-to-receive frame.
        labels.sort_unstable();
        labels.dedup();
        for label in labels {
            self.opet_count_fell(now, node, Some(label), out);
        }
    }

    // ---- schemes ----------------------------------------------------------

    fn scheme_timer(&mut self, now: SimTime, node: u32, scheme: u8, kind: u8) {
        let mut acts = std::mem::take(&mut self.scheme_scratch);
        let view = View {
            nodes: &self.nodes,
            channel: &self.channel,
            flows: &self.sc.flows,
            end: self.sc.duration,
            bin: self.sc.series_bin,
        };
        self.schemes.on_timer(now, node, scheme, kind, &view, &mut acts);
        self.scheme_actions(now, acts);
    }

    /// Carries out what schemes asked for, then keeps the buffer.
    fn scheme_actions(&mut self, now: SimTime, mut acts: Vec<SchemeAction>) {
        for a in acts.drain(..) {
            match a {
                SchemeAction::SetTimer { node, scheme, kind, at } => {
                    self.q.schedule(at, Event::SchemeTimer { node, scheme, kind });
                }
                SchemeAction::Send { node, packet, next_hop } => {
                    let id = self.packets.create(packet);
                    self.with_out(node, |s, out| s.enqueue(now, node, id, next_hop, out));
                }
                SchemeAction::SetShaper { node, flow, delta } => {
                    self.nodes[node as usize].queue.set_shaper(flow, delta);
                    self.with_out(node, |s, out| s.feed_mac(now, node, out));
                }
            }
        }
        self.scheme_scratch = acts;
    }

    // ---- mobility ---------------------------------------------------------

    /// Pushes the moving nodes' current positions to the channel, which
    /// refreshes the carrier-sense neighbour lists around them.
    fn move_nodes(&mut self, now: SimTime) {
        let mut still = false;
        let mut moves = Vec::with_capacity(self.movers.len());
        for &i in &self.movers {
            let t = self.sc.trajectories[i as usize]
                .as_ref()
                .expect("movers have trajectories");
            if now <= t.last_motion() + self.sc.mobility_update {
                moves.push((i, t.position_at(now)));
                still |= now < t.last_motion();
            }
        }
        self.channel.set_positions(&moves);
        if still {
            self.q.schedule(now + self.sc.mobility_update, Event::Mobility);
        }
    }

    /// A node's position as the channel currently has it.
    pub fn position(&self, node: u32) -> crate::phy::channel::Position {
        self.channel.position(node)
    }

    // ---- traces -----------------------------------------------------------

    fn sample(&mut self, now: SimTime) {
        if self.sc.node_series {
            let span = (now - self.bin_start).as_secs_f64();
            for (i, n) in self.nodes.iter_mut().enumerate() {
                let idle = n.radio.time_in(RadioState::Idle, now);
                let nav = n.mac.nav().busy_time(now);
                let q = n.queue.take_mean_len(now, self.bin_start);
                self.traces.queue_len_pkts[i].push(q);
                self.traces.radio_busy_frac[i].push(1.0 - (idle - n.idle_at_bin).as_secs_f64() / span);
                self.traces.nav_busy_frac[i].push((nav - n.nav_at_bin).as_secs_f64() / span);
                n.idle_at_bin = idle;
                n.nav_at_bin = nav;
            }
        }
        if !self.schemes.is_empty() {
            let view = View {
                nodes: &self.nodes,
                channel: &self.channel,
                flows: &self.sc.flows,
                end: self.sc.duration,
                bin: self.sc.series_bin,
            };
            self.schemes.on_bin(now, &view);
        }
        for (fs, tr) in self.flows.iter_mut().zip(self.traces.tcp.iter_mut()) {
            if let (Some(tcp), Some(tr)) = (&fs.tcp, tr.as_mut()) {
                tr.cwnd_pkts.push(tcp.sender.cwnd_pkts());
                tr.ssthresh_pkts.push(tcp.sender.ssthresh_pkts());
                tr.srtt_s.push(tcp.sender.srtt().map(|d| d.as_secs_f64()));
                tr.rttvar_s.push(tcp.sender.rttvar().map(|d| d.as_secs_f64()));
                // Counts per bin, from the sender's running totals.
                let st = tcp.sender.stats();
                tr.timeouts.push(st.timeouts - fs.tcp_marked[0]);
                tr.fast_retransmits.push(st.fast_retransmits - fs.tcp_marked[1]);
                fs.tcp_marked = [st.timeouts, st.fast_retransmits];
            }
        }
        self.bin_start = now;
        if now + self.sc.series_bin < self.sc.duration {
            self.q.schedule(now + self.sc.series_bin, Event::Sample);
        }
    }

    /// Closes the last (possibly partial) trace bin at the end of the run.
    fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            if self.bin_start < self.sc.duration {
                self.sample(self.sc.duration);
            }
            for fs in &mut self.flows {
                fs.bins.resize(self.n_bins, 0);
            }
        }
    }

    // ---- results ----------------------------------------------------------

    /// The run summary; `wall_s` is filled in by the caller, who owns the clock.
    pub fn summary(&self, wall_s: f64) -> Summary {
        let bin_s = self.sc.series_bin.as_secs_f64();
        let flows: Vec<FlowSummary> = self
            .sc
            .flows
            .iter()
            .zip(&self.flows)
            .enumerate()
            .map(|(i, (spec, fs))| {
                let window = (spec.stop - spec.measure_from).as_secs_f64();
                FlowSummary {
                    id: i as u32,
                    src: self.sc.node_ids[spec.src as usize],
                    dst: self.sc.node_ids[spec.dst as usize],
                    transport: spec.transport.name().to_string(),
                    hops: fs.hops,
                    throughput_kbps: fs.window_bytes as f64 * 8.0 / 1000.0 / window,
                    delivered_bytes: fs.window_bytes,
                    series_kbps: fs.bins.iter().map(|&b| b as f64 * 8.0 / 1000.0 / bin_s).collect(),
                    packets_sent: fs.sent,
                    packets_delivered: fs.delivered,
                    mean_delay_s: (fs.delivered > 0).then(|| fs.delay.sum.as_secs_f64() / fs.delivered as f64),
                    delay: fs.delay.summary(),
                    losses: DropCause::ALL
                        .iter()
                        // The causes of the run's `drops`.
                        .filter(|c| **c != DropCause::Arp || self.sc.arp)
                        .map(|c| (c.name(), fs.losses[*c as usize]))
                        .collect(),
                    tcp: fs.tcp.as_ref().map(|t| {
                        let st = t.sender.stats();
                        TcpFlowSummary {
                            data_segments: st.data_segments,
                            retransmitted_segments: st.retransmitted_segments,
                            fast_retransmits: st.fast_retransmits,
                            timeouts: st.timeouts,
                        }
                    }),
                }
            })
            .collect();
        let tputs: Vec<f64> = flows.iter().map(|f| f.throughput_kbps).collect();
        let sent: u64 = flows.iter().map(|f| f.packets_sent).sum();
        let delivered: u64 = flows.iter().map(|f| f.packets_delivered).sum();
        let loss_pct = if sent == 0 {
            0.0
        } else {
            100.0 * sent.saturating_sub(delivered) as f64 / sent as f64
        };
        let mut mac = MacSummary::default();
        let kinds: &[FrameKind] = if self.opet.is_some() {
            &FrameKind::ALL
        } else {
            &FrameKind::STANDARD
        };
        // Berger et al.'s combined frames are counted apart from ACK and
        // DATA, with their scheme on.
        let combined = [
            (self.sc.dcf.fast_forward.enabled, FrameType::AckRts),
            (self.sc.dcf.quick_exchange.enabled, FrameType::DataAck),
        ];
        let types = kinds
            .iter()
            .map(|&k| FrameType::Kind(k))
            .chain(combined.into_iter().filter(|&(on, _)| on).map(|(_, t)| t));
        for t in types {
            mac.frames_sent.insert(t.name(), self.counters.frames_sent[t.index()]);
            mac.collisions.insert(t.name(), self.counters.collisions[t.index()]);
        }
        mac.retry_drops = self.nodes.iter().map(|n| n.mac.stats.retry_drops).sum();
        mac.duplicates = self.nodes.iter().map(|n| n.mac.stats.duplicates).sum();
        if self.sc.dcf.quick_exchange.enabled {
            let sum = |f: fn(&crate::mac::dcf::DcfStats) -> u64| self.nodes.iter().map(|n| f(&n.mac.stats)).sum();
            mac.qe = Some(crate::metrics::summary::QuickExchangeSummary {
                requested: sum(|s| s.qe_requested),
                honored: sum(|s| s.qe_honored),
                completed: sum(|s| s.qe_completed),
                failed: sum(|s| s.qe_failed),
                fallen_back: sum(|s| s.qe_fallen_back),
            });
        }
        if self.sc.dcf.fast_forward.enabled {
            let sum = |f: fn(&crate::mac::dcf::DcfStats) -> u64| self.nodes.iter().map(|n| f(&n.mac.stats)).sum();
            mac.ff = Some(crate::metrics::summary::FastForwardSummary {
                attempted: sum(|s| s.ff_attempted),
                completed: sum(|s| s.ff_completed),
                no_cts: sum(|s| s.ff_no_cts),
                data_failed: sum(|s| s.ff_data_failed),
                limited: sum(|s| s.ff_limited),
            });
        }
        if self.sc.dcf.count_first_rts {
            mac.msdus_started = Some(self.nodes.iter().map(|n| n.mac.stats.msdus_started).sum());
            mac.first_rts_failed = Some(self.nodes.iter().map(|n| n.mac.stats.first_rts_failed).sum());
        }
        if self.opet.is_some() {
            let sum = |f: fn(&crate::mac::dcf::DcfStats) -> u64| self.nodes.iter().map(|n| f(&n.mac.stats)).sum();
            let now = self.q.now();
            let blocks: Vec<_> = self.nodes.iter().filter_map(|n| n.queue.block_stats(now)).collect();
            mac.opet = Some(crate::metrics::summary::OpetSummary {
                ncts_sent: sum(|s| s.ncts_sent),
                blocks: sum(|s| s.ncts_received),
                block_timeouts: blocks.iter().map(|b| b.timeouts).sum(),
                blocked_time_s: blocks.iter().map(|b| b.blocked.as_secs_f64()).sum(),
                rtr_sent: sum(|s| s.rtr_sent),
                resumes: sum(|s| s.rtr_answered),
                rtr_lost: sum(|s| s.rtr_timeouts),
                rtr_abandoned: sum(|s| s.rtr_abandoned),
            });
        }
        let l = &self.packets.ledger;
        let routing = self
            .routing
            .summary(crate::scenario::Named::name(self.sc.routing).to_string());
        let mut schemes = SchemeSections::default();
        let view = View {
            nodes: &self.nodes,
            channel: &self.channel,
            flows: &self.sc.flows,
            end: self.sc.duration,
            bin: self.sc.series_bin,
        };
        self.schemes.summary(&view, &tputs, &mut schemes);
        Summary {
            name: self.sc.name.clone(),
            seed: self.sc.seed,
            duration_s: self.sc.duration.as_secs_f64(),
            wall_s,
            events: self.q.events_popped(),
            aggregate_kbps: tputs.iter().sum(),
            jain_index: jain_index(&tputs),
            loss_pct,
            unfairness_index: crate::metrics::equal_share_unfairness(&tputs),
            flows,
            mac,
            drops: crate::net::DropCause::ALL
                .iter()
                // ARP drops exist only where ns-2's ARP runs.
                .filter(|c| **c != DropCause::Arp || self.sc.arp)
                .map(|c| (c.name(), l.dropped[*c as usize]))
                .collect(),
            ledger: LedgerSummary {
                generated: l.generated,
                delivered: l.delivered,
                dropped: l.dropped_total(),
                in_flight: l.in_flight(),
                balanced: self.packets.balanced(),
            },
            routing,
            nodes: self.nodes.len(),
            simulator: format!("manetfair {}", env!("CARGO_PKG_VERSION")),
            schemes,
        }
    }

    pub fn traces(&self) -> Traces {
        let mut t = self.traces.clone();
        self.schemes.traces(&mut t);
        let bins = self.flows.first().map(|f| f.bins.len()).unwrap_or(self.n_bins);
        let bin_s = self.sc.series_bin.as_secs_f64();
        let bin_ns = self.sc.series_bin.as_nanos();
        t.time_s = (0..bins).map(|i| (i as u64 * bin_ns) as f64 / 1e9).collect();
        t.flow_throughput_kbps = self
            .flows
            .iter()
            .map(|f| f.bins.iter().map(|&b| b as f64 * 8.0 / 1000.0 / bin_s).collect())
            .collect();
        // Per-node series in the scenario's own order (large fields are
        // stored in spatial order internally).
        {
            let order: Vec<usize> = self.sc.file_order.iter().map(|&i| i as usize).collect();
            for series in [&mut t.queue_len_pkts, &mut t.radio_busy_frac, &mut t.nav_busy_frac] {
                if series.len() == order.len() {
                    let mut taken = std::mem::take(series);
                    *series = order.iter().map(|&i| std::mem::take(&mut taken[i])).collect();
                }
            }
        }
        t
    }

    /// Whether every packet is accounted for (checked at the end of every run).
    pub fn ledger_balanced(&self) -> bool {
        self.packets.balanced()
    }

    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }
}

/// Runs a scenario to its end. Panics if the ledger does not balance: that
/// is a simulator bug, never a user error.
pub fn run(sc: Scenario) -> (Summary, Traces) {
    let mut sim = Simulator::new(sc);
    sim.run();
    assert!(
        sim.ledger_balanced(),
        "packet ledger does not balance: {:?}",
        sim.packets.ledger
    );
    (sim.summary(0.0), sim.traces())
}

#[cfg(test)]
mod tests;
