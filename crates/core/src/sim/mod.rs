//! The simulator: it owns time, the event queue, randomness and the nodes,
//! and wires the layers together. Each layer is a state machine without
//! I/O; this module turns their actions into events and their events into
//! inputs. A run is a pure function of its scenario and seed.

mod aodv;
mod events;
mod nred;

use crate::app::cbr::Cbr;
use crate::app::onoff::OnOffSource;
use crate::engine::{stream, EventQueue, Purpose};
use crate::mac::dcf::{Dcf, MacAction};
use crate::mac::frame::{Frame, Msdu, BROADCAST};
use crate::metrics::jain_index;
use crate::metrics::summary::{FlowSummary, LedgerSummary, MacSummary, RoutingSummary, Summary, TcpTrace, Traces};
use crate::net::aodv::{Aodv, AodvAction, AodvMessage};
use crate::net::nred::Nred;
use crate::net::packet::{
    Body, DropCause, Packet, PacketKind, PacketStore, IP_HEADER_BYTES, NO_FLOW, UDP_HEADER_BYTES,
};
use crate::net::queue::{InterfaceQueue, QueueKind, Queued};
use crate::net::red::Red;
use crate::net::static_routes::StaticRoutes;
use crate::phy::channel::Channel;
use crate::phy::radio::{Radio, RadioState, RxEnd};
use crate::scenario::{App, RoutingKind, Scenario, Transport};
use crate::time::{Duration, SimTime};
use crate::transport::tcp::{Segment, TcpReceiver, TcpSender};
pub use events::Event;

/// Width of every time-series bin (CONTRACT.md §3: 1 s bins).
pub const BIN: Duration = Duration::from_millis(1000);
const DEFAULT_TTL: u8 = 64;

struct Node {
    radio: Radio,
    mac: Dcf,
    queue: InterfaceQueue,
    /// Boxed: most runs have no AODV, and the node stays small.
    aodv: Option<Box<Aodv<u32>>>,
    aodv_timer: Armed,
    /// NRED's agent (`mac.queue = "nred"`, or the traced node).
    nred: Option<Box<nred::NredNode>>,
    /// Radio idle time and NAV time at the start of the current bin.
    idle_at_bin: Duration,
    nav_at_bin: Duration,
}

/// A frame on the air, with a copy of the packet it carries, kept until
/// every receiver has seen its end.
struct Airborne {
    frame: Frame,
    packet: Option<Packet>,
    /// Signal ends still to be processed, plus one for the transmitter.
    pending: u32,
}

/// A timer of a sans-IO endpoint: when it is armed and its generation,
/// so that a superseded event is ignored when it pops.
#[derive(Clone, Copy, Debug, Default)]
struct Armed {
    at: Option<SimTime>,
    gen: u32,
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
    delay_sum: Duration,
    hops: Option<u32>,
}

/// Observations for invariant tests: every transmission start and every
/// successful reception, recorded only when enabled.
#[derive(Clone, Debug, Default)]
pub struct Probe {
    pub transmissions: Vec<TxRecord>,
    pub receptions: Vec<RxRecord>,
}

#[derive(Clone, Copy, Debug)]
pub struct TxRecord {
    pub node: u32,
    pub at: SimTime,
    pub kind: crate::mac::FrameKind,
    /// The transmitter's NAV was set when the frame started.
    pub nav_set: bool,
    /// A DATA frame sent SIFS after a CTS for this node (a response).
    pub after_cts: bool,
}

#[derive(Clone, Copy, Debug)]
pub struct RxRecord {
    pub node: u32,
    pub start: SimTime,
    pub end: SimTime,
}

#[derive(Default)]
struct Counters {
    frames_sent: [u64; 4],
    collisions: [u64; 4],
}

pub struct Simulator {
    sc: Scenario,
    q: EventQueue<Event>,
    channel: Channel,
    nodes: Vec<Node>,
    packets: PacketStore,
    air: Vec<Airborne>,
    air_free: Vec<u32>,
    routes: StaticRoutes,
    flows: Vec<FlowState>,
    counters: Counters,
    scratch: Vec<MacAction>,
    aodv_scratch: Vec<AodvAction<u32>>,
    /// AODV messages carried by packets (append-only: messages are few).
    aodv_msgs: Vec<AodvMessage>,
    traces: Traces,
    bin_start: SimTime,
    n_bins: usize,
    finished: bool,
    /// Nodes whose trajectory moves.
    movers: Vec<u32>,
    /// Every frame put on the air, as pcap bytes (when enabled).
    pcap: Option<crate::trace::pcap::PcapWriter>,
    probe: Option<Probe>,
    /// Per node, when the last CTS addressed to it was decoded (probe only).
    last_cts_for: Vec<SimTime>,
    /// Per node, NRED's random stream (NCN phase).
    nred_rngs: Vec<rand_pcg::Pcg64Mcg>,
    ncn_bytes: u64,
    neighborhood: Option<nred::NeighborhoodProbe>,
}

impl Simulator {
    pub fn new(sc: Scenario) -> Self {
        let channel = Channel::new(
            sc.positions.clone(),
            sc.radio.tx_range_m,
            sc.radio.cs_range_m,
            sc.radio.capture_db,
        );
        let th = channel.thresholds;
        let n = sc.positions.len();
        let nodes = (0..n)
            .map(|i| Node {
                radio: {
                    let mut r = Radio::new(th.rx_w, th.capture_ratio);
                    r.set_lock_sensed(sc.radio.lock_on_sensed);
                    r
                },
                mac: Dcf::new(i as u32, sc.dcf.clone(), stream(sc.seed, i as u64, Purpose::Backoff)),
                queue: match sc.queue {
                    QueueKind::Red => InterfaceQueue::with_red(
                        sc.queue_capacity,
                        Red::new(sc.red.clone(), stream(sc.seed, i as u64, Purpose::Queue)),
                    ),
                    k => InterfaceQueue::new(k, sc.queue_capacity),
                },
                nred: (sc.queue == QueueKind::Nred || sc.neighborhood_node == Some(i as u32)).then(|| {
                    Box::new(nred::NredNode {
                        agent: Nred::new(sc.nred.clone(), stream(sc.seed, i as u64, Purpose::Queue)),
                        active: sc.queue == QueueKind::Nred,
                    })
                }),
                aodv: (sc.routing == RoutingKind::Aodv).then(|| {
                    Box::new(Aodv::new(
                        i as u32,
                        &sc.aodv,
                        stream(sc.seed, i as u64, Purpose::Routing),
                    ))
                }),
                aodv_timer: Armed::default(),
                idle_at_bin: Duration::ZERO,
                nav_at_bin: Duration::ZERO,
            })
            .collect();
        let adj = channel.rx_adjacency();
        let routes = if sc.routing == RoutingKind::Static {
            let flows: Vec<(u32, u32, Option<&[u32]>)> =
                sc.flows.iter().map(|f| (f.src, f.dst, f.route.as_deref())).collect();
            StaticRoutes::new(&adj, &flows)
        } else {
            StaticRoutes::default()
        };
        let n_bins = (sc.duration.as_nanos().div_ceil(BIN.as_nanos())) as usize;
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
                    bins: vec![0; n_bins],
                    sent: 0,
                    delivered: 0,
                    delay_sum: Duration::ZERO,
                    hops: (sc.routing == RoutingKind::Static)
                        .then(|| routes.hops(i as u32))
                        .flatten(),
                }
            })
            .collect();
        if SimTime::ZERO + BIN < sc.duration {
            q.schedule(SimTime::ZERO + BIN, Event::Sample);
        }
        let movers: Vec<u32> = (0..n as u32)
            .filter(|&i| sc.trajectories[i as usize].as_ref().is_some_and(|t| !t.is_static()))
            .collect();
        if !movers.is_empty() {
            q.schedule(SimTime::ZERO + sc.mobility_update, Event::Mobility);
        }
        let mut traces = Traces {
            bin_s: BIN.as_secs_f64(),
            ..Traces::default()
        };
        traces.tcp = sc
            .flows
            .iter()
            .map(|f| matches!(f.transport, Transport::Tcp(_)).then(TcpTrace::default))
            .collect();
        if sc.node_series {
            traces.queue_len_pkts = vec![Vec::with_capacity(n_bins); n];
            traces.radio_busy_frac = vec![Vec::with_capacity(n_bins); n];
            traces.nav_busy_frac = vec![Vec::with_capacity(n_bins); n];
        }
        if let Some(node) = sc.neighborhood_node {
            traces.neighborhood = Some(crate::metrics::summary::NeighborhoodTrace {
                node: sc.node_ids[node as usize],
                ..Default::default()
            });
        }
        let nred_rngs = (0..n).map(|i| stream(sc.seed, i as u64, Purpose::Scheme)).collect();
        let neighborhood = sc.neighborhood_node.map(|node| nred::NeighborhoodProbe {
            node,
            ..Default::default()
        });
        let mut sim = Simulator {
            q,
            channel,
            nodes,
            packets: PacketStore::default(),
            air: Vec::new(),
            air_free: Vec::new(),
            routes,
            flows,
            counters: Counters::default(),
            scratch: Vec::with_capacity(16),
            aodv_scratch: Vec::new(),
            aodv_msgs: Vec::new(),
            traces,
            bin_start: SimTime::ZERO,
            n_bins,
            finished: false,
            movers,
            pcap: None,
            probe: None,
            last_cts_for: Vec::new(),
            nred_rngs,
            ncn_bytes: 0,
            neighborhood,
            sc,
        };
        sim.nred_start();
        sim
    }

    /// Starts recording transmissions and receptions (for invariant tests).
    pub fn enable_probe(&mut self) {
        self.probe = Some(Probe::default());
        self.last_cts_for = vec![SimTime::ZERO; self.nodes.len()];
    }

    /// Starts a pcap capture of every frame put on the air, keeping at
    /// most `snaplen` bytes of each.
    pub fn enable_pcap(&mut self, snaplen: usize) {
        self.pcap = Some(crate::trace::pcap::PcapWriter::new(snaplen));
    }

    /// The pcap bytes captured since the last call (the file header first).
    pub fn take_pcap(&mut self) -> Vec<u8> {
        self.pcap.as_mut().map(|w| w.take()).unwrap_or_default()
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

    /// Runs every event strictly before `min(until, end of run)`.
    /// Returns true once the run has reached its end.
    pub fn run_until(&mut self, until: SimTime) -> bool {
        let stop = until.min(self.sc.duration);
        while let Some(t) = self.q.peek_time() {
            if t >= stop {
                break;
            }
            let (now, ev) = self.q.pop().expect("peeked");
            self.dispatch(now, ev);
        }
        let done = stop >= self.sc.duration;
        if done {
            self.finish();
        }
        done
    }

    pub fn run(&mut self) {
        self.run_until(self.sc.duration);
    }

    fn dispatch(&mut self, now: SimTime, ev: Event) {
        match ev {
            Event::SignalStart { node, air, power_w } => self.signal_start(now, node, air, power_w),
            Event::SignalEnd { node, air } => self.signal_end(now, node, air),
            Event::TxEnd { node, air } => self.tx_end(now, node, air),
            Event::MacTimer { node, timer, gen } => {
                self.mac_call(node, None, |m, out| m.handle_timer(now, timer, gen, out));
            }
            Event::AppSend { flow } => self.app_send(now, flow),
            Event::AodvTimer { node, gen } => self.aodv_timer(now, node, gen),
            Event::AodvJitter { node, packet } => {
                self.with_out(node, |s, out| s.enqueue(now, node, packet, BROADCAST, out));
            }
            Event::AppStop { flow } => self.app_stop(now, flow),
            Event::TcpTimer { flow, side, gen } => self.tcp_timer(now, flow, side, gen),
            Event::Sample => self.sample(now),
            Event::NredInterval { node } => self.nred_interval(now, node),
            Event::NredNcn { node } => self.nred_ncn_timer(now, node),
            Event::Mobility => self.move_nodes(now),
        }
    }

    // ---- PHY ------------------------------------------------------------

    fn start_tx(&mut self, now: SimTime, node: u32, frame: Frame) {
        let n = &mut self.nodes[node as usize];
        let was_busy = n.radio.is_busy();
        if let Some(lost) = n.radio.start_tx(now) {
            self.count_collision(node, lost);
        }
        if !was_busy {
            self.nodes[node as usize].mac.handle_medium_busy(now);
            self.nred_medium_busy(now, node);
        }
        self.counters.frames_sent[frame.kind.index()] += 1;
        if let Some(p) = self.probe.as_mut() {
            let after_cts = frame.kind == crate::mac::FrameKind::Data
                && self.last_cts_for[node as usize] + self.sc.dcf.sifs == now
                && self.last_cts_for[node as usize] > SimTime::ZERO;
            p.transmissions.push(TxRecord {
                node,
                at: now,
                kind: frame.kind,
                nav_set: self.nodes[node as usize].mac.nav().is_set(now),
                after_cts,
            });
        }
        let packet = frame.msdu.map(|m| *self.packets.get(m.packet));
        if let Some(w) = self.pcap.as_mut() {
            let aodv = match packet.map(|p| p.body) {
                Some(Body::Aodv(m)) => Some(&self.aodv_msgs[m as usize]),
                _ => None,
            };
            w.record(now, &frame, packet.as_ref(), aodv);
        }
        let entry = Airborne {
            frame,
            packet,
            pending: self.channel.neighbors(node).len() as u32 + 1,
        };
        let id = match self.air_free.pop() {
            Some(i) => {
                self.air[i as usize] = entry;
                i
            }
            None => {
                self.air.push(entry);
                (self.air.len() - 1) as u32
            }
        };
        let airtime = frame.airtime();
        // Nearest first, so that the signals reach the queue in time order.
        for nb in self.channel.neighbors_by_delay(node) {
            let start = now + nb.delay;
            self.q.schedule(
                start,
                Event::SignalStart {
                    node: nb.node,
                    air: id,
                    power_w: nb.power_w,
                },
            );
            self.q
                .schedule(start + airtime, Event::SignalEnd { node: nb.node, air: id });
        }
        self.q.schedule(now + airtime, Event::TxEnd { node, air: id });
    }

    fn release_air(&mut self, id: u32) {
        let a = &mut self.air[id as usize];
        a.pending -= 1;
        if a.pending == 0 {
            a.packet = None;
            self.air_free.push(id);
        }
    }

    fn count_collision(&mut self, node: u32, air: u32) {
        let f = &self.air[air as usize].frame;
        if f.rx == node {
            self.counters.collisions[f.kind.index()] += 1;
        }
    }

    fn signal_start(&mut self, now: SimTime, node: u32, air: u32, power_w: f64) {
        let n = &mut self.nodes[node as usize];
        let was_busy = n.radio.is_busy();
        let losses = n.radio.signal_start(now, air, power_w);
        for (lost, _) in losses.iter() {
            self.count_collision(node, lost);
        }
        if !was_busy {
            self.nodes[node as usize].mac.handle_medium_busy(now);
            self.nred_medium_busy(now, node);
        }
    }

    fn signal_end(&mut self, now: SimTime, node: u32, air: u32) {
        let res = self.nodes[node as usize].radio.signal_end(now, air);
        match res {
            Some(RxEnd::Ok(_)) => {
                let frame = self.air[air as usize].frame;
                if let Some(p) = self.probe.as_mut() {
                    p.receptions.push(RxRecord {
                        node,
                        start: SimTime(now.as_nanos() - frame.airtime().as_nanos()),
                        end: now,
                    });
                    if frame.kind == crate::mac::FrameKind::Cts && frame.rx == node {
                        self.last_cts_for[node as usize] = now;
                    }
                }
                self.nred_decoded(now, node, &frame);
                self.mac_call(node, Some(air), |m, out| m.handle_rx(now, &frame, out));
            }
            Some(RxEnd::Error(_)) => self.nodes[node as usize].mac.handle_rx_error(now),
            Some(RxEnd::Sensed(_)) if self.sc.eifs_after_sensed => self.nodes[node as usize].mac.handle_rx_error(now),
            Some(RxEnd::Sensed(_)) => {}
            None => {}
        }
        if !self.nodes[node as usize].radio.is_busy() {
            self.nred_medium_idle(now, node);
            self.mac_call(node, None, |m, out| m.handle_medium_idle(now, out));
        }
        self.release_air(air);
    }

    fn tx_end(&mut self, now: SimTime, node: u32, air: u32) {
        self.nodes[node as usize].radio.end_tx(now);
        self.mac_call(node, None, |m, out| m.handle_tx_end(now, out));
        if !self.nodes[node as usize].radio.is_busy() {
            self.nred_medium_idle(now, node);
            self.mac_call(node, None, |m, out| m.handle_medium_idle(now, out));
        }
        self.release_air(air);
    }

    // ---- MAC ------------------------------------------------------------

    /// Calls the node's MAC and carries out what it asks, including the
    /// actions of further MAC calls made while doing so.
    fn mac_call(&mut self, node: u32, air: Option<u32>, f: impl FnOnce(&mut Dcf, &mut Vec<MacAction>)) {
        let mut out = std::mem::take(&mut self.scratch);
        f(&mut self.nodes[node as usize].mac, &mut out);
        let mut i = 0;
        while i < out.len() {
            let a = out[i].clone();
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
                let air = air.expect("deliveries come from a decoded frame");
                let a = &self.air[air as usize];
                let mut copy = a.packet.expect("data frames carry a packet");
                if a.frame.rx == BROADCAST {
                    // A broadcast is delivered to the air once (the ledger
                    // counted it then); receivers act on its content and
                    // create packets of their own.
                    if let Body::Aodv(m) = copy.body {
                        self.aodv_message(now, node, from, m, copy.ttl, out);
                    }
                    return;
                }
                copy.hops = copy.hops.saturating_add(1);
                let id = self.packets.hand_over(msdu.packet, copy);
                self.net_receive(now, node, id, Some(from), out);
            }
            MacAction::Overheard(frame) => self.nred_overheard(now, node, air, &frame),
            MacAction::TxDone { msdu, next_hop } => {
                if next_hop == BROADCAST {
                    self.packets.deliver(msdu.packet);
                } else {
                    self.packets.release_copy(msdu.packet);
                }
                self.feed_mac(now, node, out);
            }
            MacAction::TxFailed { msdu, next_hop } => {
                if self.nred_is_ncn(msdu.packet) {
                    self.packets.drop_packet(msdu.packet, DropCause::MacRetry);
                } else if self.nodes[node as usize].aodv.is_some() {
                    self.aodv_tx_failed(now, node, msdu.packet, next_hop, out);
                } else {
                    self.packets.drop_packet(msdu.packet, DropCause::MacRetry);
                }
                self.feed_mac(now, node, out);
            }
        }
    }

    /// Hands the MAC its next MSDU if it has none.
    fn feed_mac(&mut self, now: SimTime, node: u32, out: &mut Vec<MacAction>) {
        let n = &mut self.nodes[node as usize];
        if n.mac.wants_msdu() {
            if let Some(q) = n.queue.dequeue(now) {
                let msdu = Msdu {
                    packet: q.packet,
                    bytes: q.bytes,
                };
                n.mac.handle_msdu(now, msdu, q.next_hop, out);
            }
        }
    }

    // ---- network and above ------------------------------------------------

    /// A packet arrived at `node`: from neighbour `from`, or (None) from
    /// the node's own transport or routing.
    fn net_receive(&mut self, now: SimTime, node: u32, id: u32, from: Option<u32>, out: &mut Vec<MacAction>) {
        let p = *self.packets.get(id);
        if let (Body::Aodv(m), Some(from)) = (p.body, from) {
            // AODV messages travel hop by hop: each is for this node.
            self.packets.deliver(id);
            self.aodv_message(now, node, from, m, p.ttl, out);
            return;
        }
        if let (Body::Ncn { .. }, Some(from)) = (p.body, from) {
            // A notification addressed to this node (§5.2).
            self.packets.deliver(id);
            self.nred_heard_ncn(now, node, from, p.body);
            return;
        }
        if from.is_some() && self.nred_incoming(now, node, id) {
            return;
        }
        if let (Some(aodv), Some(from)) = (self.nodes[node as usize].aodv.as_mut(), from) {
            // Data from a neighbour keeps the reverse route alive (§6.2).
            aodv.note_route_used(now, p.src, from);
        }
        if p.dst == node {
            self.deliver_up(now, node, id, out);
            return;
        }
        if from.is_some() {
            if p.ttl == 0 {
                self.packets.drop_packet(id, DropCause::TtlExpired);
                return;
            }
            self.packets.get_mut(id).ttl -= 1;
        }
        let next_hop = if self.nodes[node as usize].aodv.is_some() {
            self.aodv_route(now, node, id, out)
        } else {
            let flow = (p.flow != NO_FLOW).then_some(p.flow);
            let nh = self.routes.next_hop(node, p.dst, flow);
            if nh.is_none() {
                self.packets.drop_packet(id, DropCause::NoRoute);
            }
            nh
        };
        if let Some(nh) = next_hop {
            self.enqueue(now, node, id, nh, out);
        }
    }

    /// Puts a packet in `node`'s interface queue towards `next_hop`, or drops it if full.
    fn enqueue(&mut self, now: SimTime, node: u32, id: u32, next_hop: u32, out: &mut Vec<MacAction>) {
        if self.nred_outgoing(now, node, id) {
            return;
        }
        let p = self.packets.get(id);
        let q = Queued {
            packet: id,
            next_hop,
            bytes: p.bytes,
            control: p.is_control(),
        };
        if let Err((q, cause)) = self.nodes[node as usize].queue.enqueue(now, q) {
            self.packets.drop_packet(q.packet, cause);
            return;
        }
        self.feed_mac(now, node, out);
    }

    fn deliver_up(&mut self, now: SimTime, node: u32, id: u32, out: &mut Vec<MacAction>) {
        let p = *self.packets.get(id);
        self.packets.deliver(id);
        if p.flow == NO_FLOW {
            return;
        }
        let delivered = match p.body {
            Body::Udp { .. } => p.payload_bytes as u64,
            // Routing messages are handled hop by hop, before this point.
            Body::Aodv(_) | Body::Ncn { .. } => return,
            Body::Tcp(seg) if seg.is_ack => {
                self.tcp_ack_arrived(now, p.flow, &seg, out);
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
        };
        let spec = &self.sc.flows[p.flow as usize];
        let fs = &mut self.flows[p.flow as usize];
        fs.delivered += 1;
        fs.delay_sum += now - p.created;
        if self.sc.routing == RoutingKind::Aodv {
            fs.hops = Some(p.hops as u32);
        }
        if now >= spec.start && now <= spec.stop {
            fs.window_bytes += delivered;
        }
        let bin = (now.as_nanos() / BIN.as_nanos()) as usize;
        if bin < fs.bins.len() {
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
        let mut i = 0;
        while i < out.len() {
            let a = out[i].clone();
            i += 1;
            self.apply(node, None, a, &mut out);
        }
        out.clear();
        self.scratch = out;
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
                bytes: payload + UDP_HEADER_BYTES + IP_HEADER_BYTES,
                payload_bytes: payload,
                created: now,
                ttl: DEFAULT_TTL,
                hops: 0,
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

    fn tcp_ack_arrived(&mut self, now: SimTime, flow: u32, seg: &Segment, out: &mut Vec<MacAction>) {
        let src = self.sc.flows[flow as usize].src;
        let fs = &mut self.flows[flow as usize];
        let tcp = fs.tcp.as_mut().expect("TCP ACK for a TCP flow");
        tcp.sender.handle_ack(now, seg);
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
        let armed = &mut tcp.timers[side as usize];
        if armed.gen != gen || armed.at.is_none() {
            return;
        }
        armed.at = None;
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
        let armed = &mut tcp.timers[side as usize];
        if armed.at != want {
            armed.gen = armed.gen.wrapping_add(1);
            armed.at = want;
            if let Some(t) = want {
                let gen = armed.gen;
                self.q.schedule(t.max(now), Event::TcpTimer { flow, side, gen });
            }
        }
    }

    // ---- mobility ---------------------------------------------------------

    /// Pushes the moving nodes' current positions to the channel, which
    /// refreshes the carrier-sense neighbour lists around them.
    fn move_nodes(&mut self, now: SimTime) {
        let mut still = false;
        for &i in &self.movers {
            let t = self.sc.trajectories[i as usize]
                .as_ref()
                .expect("movers have trajectories");
            if now <= t.last_motion() + self.sc.mobility_update {
                self.channel.set_position(i, t.position_at(now));
                still |= now < t.last_motion();
            }
        }
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
        self.neighborhood_bin();
        for (fs, tr) in self.flows.iter().zip(self.traces.tcp.iter_mut()) {
            if let (Some(tcp), Some(tr)) = (&fs.tcp, tr.as_mut()) {
                tr.cwnd_pkts.push(tcp.sender.cwnd_pkts());
                tr.ssthresh_pkts.push(tcp.sender.ssthresh_pkts());
                tr.srtt_s.push(tcp.sender.srtt().map(|d| d.as_secs_f64()));
                tr.rttvar_s.push(tcp.sender.rttvar().map(|d| d.as_secs_f64()));
            }
        }
        self.bin_start = now;
        if now + BIN < self.sc.duration {
            self.q.schedule(now + BIN, Event::Sample);
        }
    }

    /// Closes the last (possibly partial) trace bin at the end of the run.
    fn finish(&mut self) {
        if !self.finished {
            self.finished = true;
            if self.bin_start < self.sc.duration {
                self.sample(self.sc.duration);
            }
        }
    }

    // ---- results ----------------------------------------------------------

    /// The run summary; `wall_s` is filled in by the caller, who owns the clock.
    pub fn summary(&self, wall_s: f64) -> Summary {
        let bin_s = BIN.as_secs_f64();
        let flows: Vec<FlowSummary> = self
            .sc
            .flows
            .iter()
            .zip(&self.flows)
            .enumerate()
            .map(|(i, (spec, fs))| {
                let window = (spec.stop - spec.start).as_secs_f64();
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
                    mean_delay_s: (fs.delivered > 0).then(|| fs.delay_sum.as_secs_f64() / fs.delivered as f64),
                }
            })
            .collect();
        let tputs: Vec<f64> = flows.iter().map(|f| f.throughput_kbps).collect();
        let mut mac = MacSummary::default();
        for k in crate::mac::FrameKind::ALL {
            mac.frames_sent.insert(k.name(), self.counters.frames_sent[k.index()]);
            mac.collisions.insert(k.name(), self.counters.collisions[k.index()]);
        }
        mac.retry_drops = self.nodes.iter().map(|n| n.mac.stats.retry_drops).sum();
        mac.duplicates = self.nodes.iter().map(|n| n.mac.stats.duplicates).sum();
        let l = &self.packets.ledger;
        let mut routing = RoutingSummary {
            protocol: self.sc.file.routing.protocol.clone(),
            ..RoutingSummary::default()
        };
        for a in self.nodes.iter().filter_map(|n| n.aodv.as_ref()) {
            let c = a.counters();
            routing.control_packets += a.control_packets_sent();
            routing.control_bytes += c.control_bytes;
            for (k, v) in [
                ("rreq", c.rreq_originated + c.rreq_forwarded),
                ("rrep", c.rrep_originated + c.rrep_forwarded),
                ("rerr", c.rerr_sent),
                ("hello", c.hello_sent),
            ] {
                *routing.by_type.entry(k).or_default() += v;
            }
        }
        Summary {
            name: self.sc.name.clone(),
            seed: self.sc.seed,
            duration_s: self.sc.duration.as_secs_f64(),
            wall_s,
            events: self.q.events_popped(),
            aggregate_kbps: tputs.iter().sum(),
            jain_index: jain_index(&tputs),
            unfairness_index: crate::metrics::equal_share_unfairness(&tputs),
            flows,
            mac,
            drops: crate::net::DropCause::ALL
                .iter()
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
            nred: self.nred_summary(),
            neighborhood: self.neighborhood_summary(),
            simulator: format!("manetfair {}", env!("CARGO_PKG_VERSION")),
        }
    }

    pub fn traces(&self) -> Traces {
        let mut t = self.traces.clone();
        let bins = self.flows.first().map(|f| f.bins.len()).unwrap_or(self.n_bins);
        t.time_s = (0..bins).map(|i| i as f64 * BIN.as_secs_f64()).collect();
        t.flow_throughput_kbps = self
            .flows
            .iter()
            .map(|f| {
                f.bins
                    .iter()
                    .map(|&b| b as f64 * 8.0 / 1000.0 / BIN.as_secs_f64())
                    .collect()
            })
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
