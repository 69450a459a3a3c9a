//! The simulator: it owns time, the event queue, randomness and the nodes,
//! and wires the layers together. Each layer is a state machine without
//! I/O; this module turns their actions into events and their events into
//! inputs. A run is a pure function of its scenario and seed.

mod air;
mod events;
mod net;
mod probe;
mod results;

use crate::app::cbr::Cbr;
use crate::app::onoff::OnOffSource;
use crate::engine::prefetch::prefetch;
use crate::engine::{stream, Armed, EventQueue, Purpose};
use crate::flow::{App, Transport};
use crate::link::{Link, Parts};
use crate::mac::dcf::{Dcf, DcfConfig, MacAction, TimerSet};
use crate::mac::frame::{Frame, FrameType, BROADCAST};
use crate::mac::MacTimer;
use crate::metrics::jain_index;
use crate::metrics::summary::{
    FlowSummary, LedgerSummary, MacSummary, SchemeSections, Summary, TcpFlowSummary, TcpTrace, Traces,
};
use crate::net::arp::{ArpTable, Resolve, ARP_BYTES};
use crate::net::packet::{
    Body, DropCause, Packet, PacketKind, PacketStore, IP_HEADER_BYTES, NO_FLOW, UDP_HEADER_BYTES,
};
use crate::net::queue::Queued;
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

/// A run: the scenario's nodes, their layers and the air between them, driven by one event queue. Built from a `Scenario`, run with `run`, `run_until` or `run_for`, read with `summary` and `traces`.
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
    /// What lies between each node's queue and its MAC: it answers the
    /// MAC's requests other than those of the air (`link`).
    link: Link,
    /// ns-2's ARP tables, one per node (`[ns2] arp`; empty when it is off).
    arp: Vec<ArpTable>,
}

impl Simulator {
    /// Builds every node's stack, routing, the link, the schemes and the flows' sources from `sc`, and schedules the first events.
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
            queue: sc.interface_queue(i),
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
            link: Link::new(&sc.dcf, &sc.flows, n, sc.seed),
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

    /// The simulated time of the last event run.
    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    /// The run's end (`duration_s`).
    pub fn end(&self) -> SimTime {
        self.sc.duration
    }

    /// Events run so far (stale timer events included).
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

    /// Runs to the end.
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

    /// A node's position as the channel currently has it.
    pub fn position(&self, node: u32) -> crate::phy::channel::Position {
        self.channel.position(node)
    }

    /// The scenario the run was built from.
    pub fn scenario(&self) -> &Scenario {
        &self.sc
    }
}

#[cfg(test)]
impl Simulator {
    /// The node stacks, for tests that read queues and MACs mid-run.
    pub(crate) fn nodes(&self) -> &[NodeStack] {
        &self.nodes
    }

    /// The packet ledger.
    pub(crate) fn ledger(&self) -> &crate::net::Ledger {
        &self.packets.ledger
    }

    /// Puts a new packet straight into `node`'s interface queue towards
    /// `next_hop`, as if routing had sent it there.
    pub(crate) fn inject(&mut self, node: u32, packet: Packet, next_hop: u32) {
        let now = self.now();
        let id = self.packets.create(packet);
        self.with_out(node, |s, out| {
            s.try_enqueue(now, node, id, next_hop, out);
        });
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
