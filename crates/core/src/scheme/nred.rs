//! Neighborhood RED (`net::nred`) at the scheme seams: radio edges and
//! receptions feed detection, timers drive detection and notification, NCN
//! packets enter the ledger as control packets, and the distributed drop
//! decides at admission, on both sides. Also the trace of Figures 6-7: the
//! real neighborhood queue of one node beside NRED's estimate.

use super::{Scheme, SchemeAction, View};
use crate::engine::{stream, Purpose};
use crate::mac::frame::{Frame, BROADCAST};
use crate::mac::FrameKind;
use crate::metrics::summary::{NeighborhoodSummary, NeighborhoodTrace, NredSummary, SchemeSections, Traces};
use crate::net::nred::ncn::Blocked;
use crate::net::nred::{Nred, NredConfig, NCN_BYTES};
use crate::net::packet::{Body, Packet, PacketKind, NO_FLOW};
use crate::net::routing::DEFAULT_TTL;
use crate::stack::NodeStack;
use crate::time::{Duration, SimTime};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// Timer kinds: detection reads radio times every T_interval; Algorithm
/// 5.1 runs every T_NCN.
const INTERVAL: u8 = 0;
const NCN: u8 = 1;

/// What NRED is built from.
#[derive(Clone, Debug)]
pub struct NredSetup {
    /// `[nred]`.
    pub cfg: NredConfig,
    /// Whether every node acts (`mac.queue = "nred"`), or NRED only
    /// estimates at the traced node.
    pub active: bool,
    /// The node whose neighborhood queue is traced: its internal index and
    /// its id in the scenario (`trace.neighborhood_node`).
    pub traced: Option<(u32, i64)>,
    /// How many nodes the run has.
    pub nodes: usize,
    /// The run's seed.
    pub seed: u64,
}

/// NRED on every node (`mac.queue = "nred"`), or only estimating at the
/// traced node under another queue discipline.
pub struct NredScheme {
    /// Per node: its agent, if it has one.
    agents: Vec<Option<Box<Nred>>>,
    /// Whether agents act (drop, notify) or only estimate.
    active: bool,
    /// Per node, the stream of its NCN phase.
    rngs: Vec<Pcg64Mcg>,
    ncn_bytes: u64,
    neighborhood: Option<NeighborhoodProbe>,
    trace: Option<NeighborhoodTrace>,
    w_q: f64,
}

/// The real neighborhood queue of the traced node and its average.
#[derive(Default)]
struct NeighborhoodProbe {
    node: u32,
    real_avg: f64,
    sum: f64,
    samples: u32,
}

impl NredScheme {
    /// NRED as `s` sets it up, if it acts or traces a neighborhood.
    pub fn new(s: NredSetup) -> Option<Self> {
        let active = s.active;
        if !active && s.traced.is_none() {
            return None;
        }
        let n = s.nodes;
        let agents = (0..n)
            .map(|i| {
                (active || s.traced.map(|(node, _)| node) == Some(i as u32))
                    .then(|| Box::new(Nred::new(s.cfg.clone(), stream(s.seed, i as u64, Purpose::Queue))))
            })
            .collect();
        Some(NredScheme {
            agents,
            active,
            rngs: (0..n).map(|i| stream(s.seed, i as u64, Purpose::Scheme)).collect(),
            ncn_bytes: 0,
            neighborhood: s.traced.map(|(node, _)| NeighborhoodProbe {
                node,
                ..Default::default()
            }),
            trace: s.traced.map(|(_, id)| NeighborhoodTrace {
                node: id,
                ..Default::default()
            }),
            w_q: s.cfg.w_q,
        })
    }

    fn neighborhood_sample(&mut self, view: &View) {
        let Some(p) = self.neighborhood.as_mut() else { return };
        let q = neighborhood_queue(view, p.node) as f64;
        p.real_avg = (1.0 - self.w_q) * p.real_avg + self.w_q * q;
        p.sum += q;
        p.samples += 1;
    }

    fn nred_summary(&self) -> NredSummary {
        let mut s = NredSummary {
            ncn_bytes: self.ncn_bytes,
            ..NredSummary::default()
        };
        for b in Blocked::ALL {
            s.blocked.insert(b.name(), 0);
        }
        for a in self.agents.iter().flatten() {
            let st = &a.stats;
            s.ncn_sent += st.ncn_sent;
            s.ncn_saturated += st.ncn_saturated;
            s.ncn_heard += st.ncn_heard;
            s.no_neighbor += st.no_neighbor;
            s.drops_outgoing += st.drops_outgoing;
            s.drops_incoming += st.drops_incoming;
            for b in Blocked::ALL {
                *s.blocked.entry(b.name()).or_default() += st.blocked[b as usize];
            }
        }
        s
    }

    /// Compares the traced estimate with the real queue (see `NeighborhoodSummary`).
    fn neighborhood_summary(&self, view: &View) -> Option<NeighborhoodSummary> {
        let t = self.trace.as_ref()?;
        let start = view.flows.iter().map(|f| f.start).min()?;
        let stop = view.flows.iter().map(|f| f.stop).max()?;
        let bin = view.bin.as_nanos();
        // Bin i ends at (i + 1) bins.
        let active: Vec<usize> = (0..t.estimate_avg.len())
            .filter(|&i| {
                let end = (i as u64 + 1) * bin;
                end > start.as_nanos() && end <= stop.as_nanos() + bin
            })
            .collect();
        let est: Vec<f64> = active.iter().map(|&i| t.estimate_avg[i]).collect();
        let real: Vec<f64> = active.iter().map(|&i| t.real_avg[i]).collect();
        let mean = |x: &[f64]| {
            if x.is_empty() {
                0.0
            } else {
                x.iter().sum::<f64>() / x.len() as f64
            }
        };
        let peak = est.iter().cloned().fold(0.0, f64::max);
        let sat = est.iter().position(|&e| peak > 0.0 && e >= 0.95 * peak);
        let growth = |x: &[f64], k: usize| {
            let after = &x[k..];
            (x[k] > 0.0 && after.len() > 1).then(|| mean(after) / x[k])
        };
        Some(NeighborhoodSummary {
            node: t.node,
            corr: pearson(&est, &real),
            corr_rising: sat.and_then(|k| pearson(&est[..=k], &real[..=k])),
            saturation_s: sat.map(|k| ((active[k] as u64 + 1) * bin) as f64 / 1e9),
            estimate_growth_after: sat.and_then(|k| growth(&est, k)),
            real_growth_after: sat.and_then(|k| growth(&real, k)),
            mean_estimate: mean(&est),
            mean_real: mean(&real),
        })
    }
}

impl Scheme for NredScheme {
    /// NRED hears data frames for other stations: its neighborhood queue
    /// counts them (Xu et al. §4).
    fn wants_overheard(&self) -> bool {
        true
    }

    /// The first ticks of every node with an agent. NCN ticks start at a
    /// random phase within T_NCN so that nodes do not notify in step.
    fn start(&mut self, out: &mut Vec<SchemeAction>) {
        for (i, a) in self.agents.iter().enumerate() {
            let Some(a) = a else { continue };
            let node = i as u32;
            let phase = self.rngs[i].gen_range(1..=a.t_ncn().as_nanos().max(1));
            out.push(timer(node, INTERVAL, SimTime::ZERO + a.t_interval()));
            if self.active {
                out.push(timer(node, NCN, SimTime(phase)));
            }
        }
    }

    fn on_medium_edge(&mut self, now: SimTime, node: u32, busy: bool, stack: &NodeStack) {
        if let Some(a) = self.agents[node as usize].as_mut() {
            let nav = stack.mac.nav().busy_time(now);
            if busy {
                a.handle_medium_busy(now, nav);
            } else {
                a.handle_medium_idle(now, nav);
            }
        }
    }

    /// Receiving time if the frame was for this node, and its transmitter
    /// is a neighbour if it was an RTS or DATA (CTS and ACK frames carry no
    /// transmitter address).
    fn on_decoded(&mut self, now: SimTime, node: u32, frame: &Frame) {
        if let Some(a) = self.agents[node as usize].as_mut() {
            if frame.rx == node || frame.rx == BROADCAST {
                a.handle_rx_airtime(frame.airtime());
            }
            if matches!(frame.kind, FrameKind::Rts | FrameKind::Data) {
                a.handle_heard(now, frame.tx);
            }
        }
    }

    /// The promiscuous hook: an overheard data frame may carry an NCN.
    fn on_overheard(&mut self, now: SimTime, node: u32, frame: &Frame, packet: Option<&Packet>) {
        if let Some(p) = packet {
            self.on_control(now, node, frame.tx, p);
        }
    }

    /// An NCN decoded at `node` from `from`, addressed to it or overheard.
    fn on_control(&mut self, now: SimTime, node: u32, from: u32, packet: &Packet) {
        let Body::Ncn { npb_bits, lifetime_ms } = packet.body else {
            return;
        };
        if let Some(a) = self.agents[node as usize].as_mut() {
            let life = Duration::from_millis(lifetime_ms as u64);
            a.handle_ncn(now, from, f32::from_bits(npb_bits) as f64, life);
        }
    }

    /// Algorithm 5.2, outgoing side: a data packet about to enter the
    /// interface queue. Returns true if it is dropped.
    fn admit_outgoing(&mut self, now: SimTime, node: u32, p: &Packet) -> bool {
        let Some(a) = self.agents[node as usize].as_mut() else {
            return false;
        };
        if p.kind != PacketKind::Data {
            return false;
        }
        a.handle_flow_packet(now);
        self.active && a.outgoing_drop(now)
    }

    /// Algorithm 5.2, incoming side: a data packet received from a
    /// neighbour. Returns true if it is dropped.
    fn admit_incoming(&mut self, now: SimTime, node: u32, p: &Packet) -> bool {
        let Some(a) = self.agents[node as usize].as_mut() else {
            return false;
        };
        if p.kind != PacketKind::Data {
            return false;
        }
        a.handle_flow_packet(now);
        self.active && a.incoming_drop(now, p.dst != node)
    }

    /// A MAC failure of an NCN: the notification is simply lost.
    fn on_tx_failed(&mut self, _now: SimTime, _node: u32, p: &Packet) -> bool {
        matches!(p.body, Body::Ncn { .. })
    }

    fn on_timer(&mut self, now: SimTime, node: u32, kind: u8, view: &View, out: &mut Vec<SchemeAction>) {
        let Some(a) = self.agents[node as usize].as_mut() else {
            return;
        };
        if kind == INTERVAL {
            let n = &view.nodes[node as usize];
            let tx = n.radio.time_in(crate::phy::radio::RadioState::Transmitting, now);
            a.handle_interval(now, tx, n.mac.nav().busy_time(now));
            let next = now + a.t_interval();
            if next < view.end {
                out.push(timer(node, INTERVAL, next));
            }
            if self.neighborhood.as_ref().is_some_and(|p| p.node == node) {
                self.neighborhood_sample(view);
            }
            return;
        }
        // Condition (ii): a transport connection of the node is open.
        let endpoint = view
            .flows
            .iter()
            .any(|f| (f.src == node || f.dst == node) && f.start <= now && now < f.stop);
        let res = a.handle_ncn_timer(now, endpoint);
        let next = now + a.t_ncn();
        if next < view.end {
            out.push(timer(node, NCN, next));
        }
        let Ok(ncn) = res else { return };
        let lifetime_ms = (ncn.lifetime.as_nanos() / 1_000_000) as u32;
        self.ncn_bytes += NCN_BYTES as u64;
        out.push(SchemeAction::Send {
            node,
            next_hop: ncn.to,
            packet: Packet {
                uid: 0,
                kind: PacketKind::Control,
                flow: NO_FLOW,
                src: node,
                dst: ncn.to,
                bytes: NCN_BYTES,
                payload_bytes: 0,
                created: now,
                ttl: DEFAULT_TTL,
                hops: 0,
                ff_run: 0,
                body: Body::Ncn {
                    npb_bits: (ncn.normalized_pb as f32).to_bits(),
                    lifetime_ms,
                },
            },
        });
    }

    /// At the end of a trace bin: the estimate and the real queue.
    fn on_bin(&mut self, _now: SimTime, _view: &View) {
        let Some(p) = self.neighborhood.as_mut() else { return };
        let est = self.agents[p.node as usize]
            .as_ref()
            .map(|a| a.ncd().avg)
            .unwrap_or(0.0);
        let t = self.trace.as_mut().expect("neighborhood trace");
        t.estimate_avg.push(est);
        t.real_avg.push(p.real_avg);
        t.real_pkts
            .push(if p.samples > 0 { p.sum / p.samples as f64 } else { 0.0 });
        p.sum = 0.0;
        p.samples = 0;
    }

    fn summary(&self, view: &View, _throughput_kbps: &[f64], out: &mut SchemeSections) {
        if self.active {
            out.push("nred", &self.nred_summary());
        }
        if let Some(s) = self.neighborhood_summary(view) {
            out.push("neighborhood", &s);
        }
    }

    fn traces(&self, out: &mut Traces) {
        out.neighborhood = self.trace.clone();
    }
}

fn timer(node: u32, kind: u8, at: SimTime) -> SchemeAction {
    SchemeAction::SetTimer {
        node,
        scheme: 0,
        kind,
        at,
    }
}

/// Packets in `node`'s neighborhood queue (§4.2): queued at the node and
/// its 1-hop neighbours, plus those queued at 2-hop neighbours whose next
/// hop is one of its 1-hop neighbours.
fn neighborhood_queue(view: &View, node: u32) -> usize {
    let one_hop = |n: u32| -> Vec<u32> {
        view.channel
            .neighbors(n)
            .iter()
            .filter(|nb| nb.in_rx_range)
            .map(|nb| nb.node)
            .collect()
    };
    let one = one_hop(node);
    let mut total = view.nodes[node as usize].queue.len();
    for &a in &one {
        total += view.nodes[a as usize].queue.len();
    }
    let mut two: Vec<u32> = one
        .iter()
        .flat_map(|&a| one_hop(a))
        .filter(|&b| b != node && !one.contains(&b))
        .collect();
    two.sort_unstable();
    two.dedup();
    for b in two {
        total += view.nodes[b as usize].queue.count_next_hops(|h| one.contains(&h));
    }
    total
}

/// Pearson's correlation coefficient; None for fewer than 3 points or a
/// constant series.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 3 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for i in 0..n {
        let (a, b) = (x[i] - mx, y[i] - my);
        sxy += a * b;
        sxx += a * a;
        syy += b * b;
    }
    (sxx > 0.0 && syy > 0.0).then(|| sxy / (sxx * syy).sqrt())
}

#[cfg(test)]
mod tests {
    #[test]
    fn pearson_of_lines_and_noise() {
        use super::pearson;
        let x = [1.0, 2.0, 3.0, 4.0];
        assert!((pearson(&x, &[2.0, 4.0, 6.0, 8.0]).unwrap() - 1.0).abs() < 1e-12);
        assert!((pearson(&x, &[8.0, 6.0, 4.0, 2.0]).unwrap() + 1.0).abs() < 1e-12);
        assert_eq!(pearson(&x, &[1.0, 1.0, 1.0, 1.0]), None);
        assert_eq!(pearson(&x[..2], &x[..2]), None);
    }

    use crate::scenario::{load, Format};
    use crate::sim::run;

    /// Xu et al. Figure 9's exposed terminal: nodes 1-2-3-4 on a line,
    /// 350 m apart, flows 1 -> 2 and 3 -> 4 (docs/nred.md).
    fn exposed(queue: &str, extra: &str) -> String {
        format!(
            r#"
duration_s = 25.0
[radio]
tx_range_m = 367.0
cs_range_m = 653.0
[mac]
queue = "{queue}"
queue_capacity_pkts = 66
[topology]
kind = "explicit"
[[node]]
id = 1
x_m = 0.0
y_m = 0.0
[[node]]
id = 2
x_m = 350.0
y_m = 0.0
[[node]]
id = 3
x_m = 700.0
y_m = 0.0
[[node]]
id = 4
x_m = 1050.0
y_m = 0.0
[[flow]]
src = 1
dst = 2
packet_bytes = 512
start_s = 1.0
[[flow]]
src = 3
dst = 4
packet_bytes = 512
start_s = 1.0
{extra}
"#
        )
    }

    #[test]
    fn nred_notifies_drops_and_keeps_the_ledger() {
        let sc = load(&exposed("nred", ""), Format::Toml, None, None).unwrap();
        let (s, _) = run(sc);
        assert!(s.ledger.balanced);
        let n = s.schemes.get("nred").expect("nred summary");
        let get = |k: &str| n[k].as_u64().expect("a count");
        assert!(get("ncn_sent") > 0, "{n:?}");
        assert_eq!(get("ncn_bytes"), get("ncn_sent") * crate::net::nred::NCN_BYTES as u64);
        assert!(get("ncn_heard") > 0, "{n:?}");
        let drops = get("drops_outgoing") + get("drops_incoming");
        assert!(drops > 0, "{n:?}");
        assert_eq!(s.drops["aqm"], drops);
        // Every notification is a ledger packet: control packets exist.
        assert!(s.ledger.generated > s.flows.iter().map(|f| f.packets_sent).sum::<u64>());
    }

    #[test]
    fn nred_runs_are_deterministic() {
        let text = exposed("nred", "[trace]\nneighborhood_node = 2\n");
        let go = || {
            let (s, t) = run(load(&text, Format::Toml, None, None).unwrap());
            (s.to_json(), t.to_json())
        };
        assert_eq!(go(), go());
    }

    #[test]
    fn droptail_with_a_traced_node_estimates_without_acting() {
        let text = exposed("droptail", "[trace]\nneighborhood_node = 2\n");
        let sc = load(&text, Format::Toml, None, None).unwrap();
        let (s, t) = run(sc);
        assert!(s.schemes.get("nred").is_none());
        assert!(s.schemes.get("neighborhood").is_some());
        assert_eq!(s.drops["aqm"], 0);
        let nb = t.neighborhood.expect("trace");
        assert_eq!(nb.node, 2);
        assert_eq!(nb.estimate_avg.len(), t.time_s.len());
        // Both flows keep the medium around node 2 busy: a high index and
        // a non-empty neighborhood queue.
        let late = nb.estimate_avg[20];
        assert!(late > 100.0 && late < 245.0, "{late}");
        assert!(nb.real_avg[20] > 1.0, "{:?}", nb.real_avg);
    }

    #[test]
    fn busy_estimate_lies_between_physical_and_physical_plus_virtual_busy() {
        // U_busy counts time with the radio busy or the NAV set: at least the
        // radio's busy fraction, at most that plus the NAV's.
        let text = exposed("droptail", "[trace]\nneighborhood_node = 2\n");
        let mut sc = load(&text, Format::Toml, None, None).unwrap();
        sc.nred.w_q = 1.0; // the estimate is then the last interval's q
        let (_, t) = run(sc);
        let nb = t.neighborhood.unwrap();
        let idx = 1; // node 2 in file order
        let w_over_c = 2e6 / 8192.0;
        let (mut lo, mut hi, mut est) = (0.0, 0.0, 0.0);
        for b in 5..24 {
            lo += t.radio_busy_frac[idx][b];
            hi += t.radio_busy_frac[idx][b] + t.nav_busy_frac[idx][b];
            est += nb.estimate_avg[b] / w_over_c;
        }
        // The estimate samples the last 100 ms of each bin: allow 5 points.
        let n = 19.0;
        assert!(est / n >= lo / n - 0.05 && est / n <= hi / n + 0.05, "{lo} {est} {hi}");
        assert!(hi - lo > 0.1, "the NAV adds busy time here: {lo} {hi}");
    }

    #[test]
    fn red_drops_early_under_overload() {
        let text = r#"
duration_s = 10.0
[mac]
queue = "red"
queue_capacity_pkts = 66
[red]
max_p = 0.1
[topology]
kind = "chain"
nodes = 2
spacing_m = 200.0
[[flow]]
src = 0
dst = 1
transport = "udp"
app = "cbr"
rate_kbps = 3000.0
packet_bytes = 512
"#;
        let sc = load(text, Format::Toml, None, None).unwrap();
        assert_eq!(sc.file.red.as_ref().unwrap().max_p, 0.1);
        let (s, _) = run(sc);
        assert!(s.ledger.balanced);
        assert!(s.drops["aqm"] > 0);
    }
}
