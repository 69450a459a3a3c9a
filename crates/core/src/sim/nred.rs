//! Glue between the simulator and each node's NRED agent (`net::nred`,
//! docs/nred.md): radio edges and receptions feed detection, timers drive
//! detection and notification, NCN packets enter the ledger as control
//! packets, and the distributed drop is asked before packets go on. Also
//! the neighborhood-queue trace of Figures 6-7.

use super::{Event, Simulator, DEFAULT_TTL};
use crate::mac::frame::{Frame, BROADCAST};
use crate::mac::FrameKind;
use crate::metrics::summary::{NeighborhoodSummary, NredSummary};
use crate::net::nred::{ncn::Blocked, Nred, NCN_BYTES};
use crate::net::packet::{Body, DropCause, Packet, PacketKind, NO_FLOW};
use crate::net::QueueKind;
use crate::time::{Duration, SimTime};
use rand::Rng;

/// The node's NRED agent and whether it acts (drops, notifies) or only
/// estimates (a traced node under another queue discipline).
pub(super) struct NredNode {
    pub agent: Nred,
    pub active: bool,
}

/// The real neighborhood queue of the traced node and its average.
#[derive(Default)]
pub(super) struct NeighborhoodProbe {
    pub node: u32,
    pub real_avg: f64,
    pub sum: f64,
    pub samples: u32,
}

impl Simulator {
    /// Schedules the first ticks of every node with an agent. NCN ticks
    /// start at a random phase within T_NCN so that nodes do not notify in step.
    pub(super) fn nred_start(&mut self) {
        for i in 0..self.nodes.len() {
            let Some(n) = self.nodes[i].nred.as_mut() else { continue };
            let node = i as u32;
            let ti = n.agent.t_interval();
            let tn = n.agent.t_ncn();
            let phase = self.nred_rngs[i].gen_range(1..=tn.as_nanos().max(1));
            self.q.schedule(SimTime::ZERO + ti, Event::NredInterval { node });
            if n.active {
                self.q.schedule(SimTime(phase), Event::NredNcn { node });
            }
        }
    }

    pub(super) fn nred_medium_busy(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        if let Some(x) = n.nred.as_mut() {
            x.agent.handle_medium_busy(now, n.mac.nav().busy_time(now));
        }
    }

    pub(super) fn nred_medium_idle(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        if let Some(x) = n.nred.as_mut() {
            x.agent.handle_medium_idle(now, n.mac.nav().busy_time(now));
        }
    }

    /// A frame was decoded at `node`: receiving time if it was for this
    /// node, and its transmitter is a neighbour if it was an RTS or DATA
    /// (CTS and ACK frames carry no transmitter address).
    pub(super) fn nred_decoded(&mut self, now: SimTime, node: u32, frame: &Frame) {
        if let Some(x) = self.nodes[node as usize].nred.as_mut() {
            if frame.rx == node || frame.rx == BROADCAST {
                x.agent.handle_rx_airtime(frame.airtime());
            }
            if matches!(frame.kind, FrameKind::Rts | FrameKind::Data) {
                x.agent.handle_heard(now, frame.tx);
            }
        }
    }

    pub(super) fn nred_interval(&mut self, now: SimTime, node: u32) {
        let n = &mut self.nodes[node as usize];
        let Some(x) = n.nred.as_mut() else { return };
        let tx = n.radio.time_in(crate::phy::radio::RadioState::Transmitting, now);
        x.agent.handle_interval(now, tx, n.mac.nav().busy_time(now));
        let next = now + x.agent.t_interval();
        if next < self.sc.duration {
            self.q.schedule(next, Event::NredInterval { node });
        }
        if self.neighborhood.as_ref().is_some_and(|p| p.node == node) {
            self.neighborhood_sample();
        }
    }

    /// Whether a transport connection of `node` is open at `now` (condition (ii)).
    fn nred_endpoint(&self, now: SimTime, node: u32) -> bool {
        self.sc
            .flows
            .iter()
            .any(|f| (f.src == node || f.dst == node) && f.start <= now && now < f.stop)
    }

    pub(super) fn nred_ncn_timer(&mut self, now: SimTime, node: u32) {
        let endpoint = self.nred_endpoint(now, node);
        let Some(x) = self.nodes[node as usize].nred.as_mut() else {
            return;
        };
        let out = x.agent.handle_ncn_timer(now, endpoint);
        let next = now + x.agent.t_ncn();
        if next < self.sc.duration {
            self.q.schedule(next, Event::NredNcn { node });
        }
        let Ok(out) = out else { return };
        let lifetime_ms = (out.lifetime.as_nanos() / 1_000_000) as u32;
        let id = self.packets.create(Packet {
            uid: 0,
            kind: PacketKind::Control,
            flow: NO_FLOW,
            src: node,
            dst: out.to,
            bytes: NCN_BYTES,
            payload_bytes: 0,
            created: now,
            ttl: DEFAULT_TTL,
            hops: 0,
            body: Body::Ncn {
                npb_bits: (out.normalized_pb as f32).to_bits(),
                lifetime_ms,
            },
        });
        self.ncn_bytes += NCN_BYTES as u64;
        self.with_out(node, |s, o| s.enqueue(now, node, id, out.to, o));
    }

    /// An NCN decoded at `node` from `from`, addressed to it or overheard.
    pub(super) fn nred_heard_ncn(&mut self, now: SimTime, node: u32, from: u32, body: Body) {
        let Body::Ncn { npb_bits, lifetime_ms } = body else {
            return;
        };
        if let Some(x) = self.nodes[node as usize].nred.as_mut() {
            let life = Duration::from_millis(lifetime_ms as u64);
            x.agent.handle_ncn(now, from, f32::from_bits(npb_bits) as f64, life);
        }
    }

    /// The promiscuous hook: an overheard data frame may carry an NCN.
    pub(super) fn nred_overheard(&mut self, now: SimTime, node: u32, air: Option<u32>, frame: &Frame) {
        let Some(air) = air else { return };
        if let Some(p) = self.air[air as usize].packet {
            if matches!(p.body, Body::Ncn { .. }) {
                self.nred_heard_ncn(now, node, frame.tx, p.body);
            }
        }
    }

    /// Algorithm 5.2, incoming side: a data packet received from a
    /// neighbour. Returns true if it was dropped.
    pub(super) fn nred_incoming(&mut self, now: SimTime, node: u32, id: u32) -> bool {
        let p = *self.packets.get(id);
        let Some(x) = self.nodes[node as usize].nred.as_mut() else {
            return false;
        };
        if p.kind != PacketKind::Data {
            return false;
        }
        x.agent.handle_flow_packet(now);
        if x.active && x.agent.incoming_drop(now, p.dst != node) {
            self.packets.drop_packet(id, DropCause::Aqm);
            return true;
        }
        false
    }

    /// Algorithm 5.2, outgoing side: a data packet about to enter the
    /// interface queue. Returns true if it was dropped.
    pub(super) fn nred_outgoing(&mut self, now: SimTime, node: u32, id: u32) -> bool {
        let p = *self.packets.get(id);
        let Some(x) = self.nodes[node as usize].nred.as_mut() else {
            return false;
        };
        if p.kind != PacketKind::Data {
            return false;
        }
        x.agent.handle_flow_packet(now);
        if x.active && x.agent.outgoing_drop(now) {
            self.packets.drop_packet(id, DropCause::Aqm);
            return true;
        }
        false
    }

    /// A MAC failure of an NCN: the notification is simply lost.
    pub(super) fn nred_is_ncn(&self, id: u32) -> bool {
        matches!(self.packets.get(id).body, Body::Ncn { .. })
    }

    /// Packets in the traced node's neighborhood queue (§4.2): queued at
    /// the node and its 1-hop neighbours, plus those queued at 2-hop
    /// neighbours whose next hop is one of its 1-hop neighbours.
    pub(super) fn neighborhood_queue(&self, node: u32) -> usize {
        let one: Vec<u32> = self.one_hop(node);
        let mut total = self.nodes[node as usize].queue.len();
        for &a in &one {
            total += self.nodes[a as usize].queue.len();
        }
        let mut two: Vec<u32> = one
            .iter()
            .flat_map(|&a| self.one_hop(a))
            .filter(|&b| b != node && !one.contains(&b))
            .collect();
        two.sort_unstable();
        two.dedup();
        for b in two {
            total += self.nodes[b as usize].queue.count_next_hops(|h| one.contains(&h));
        }
        total
    }

    fn one_hop(&self, node: u32) -> Vec<u32> {
        self.channel
            .neighbors(node)
            .iter()
            .filter(|nb| nb.in_rx_range)
            .map(|nb| nb.node)
            .collect()
    }

    fn neighborhood_sample(&mut self) {
        let Some(node) = self.neighborhood.as_ref().map(|p| p.node) else {
            return;
        };
        let q = self.neighborhood_queue(node) as f64;
        let w = self.sc.nred.w_q;
        let p = self.neighborhood.as_mut().expect("probe");
        p.real_avg = (1.0 - w) * p.real_avg + w * q;
        p.sum += q;
        p.samples += 1;
    }

    /// At the end of a trace bin: the estimate and the real queue.
    pub(super) fn neighborhood_bin(&mut self) {
        let Some(p) = self.neighborhood.as_mut() else { return };
        let est = self.nodes[p.node as usize]
            .nred
            .as_ref()
            .map(|x| x.agent.ncd().avg)
            .unwrap_or(0.0);
        let t = self.traces.neighborhood.as_mut().expect("neighborhood trace");
        t.estimate_avg.push(est);
        t.real_avg.push(p.real_avg);
        t.real_pkts
            .push(if p.samples > 0 { p.sum / p.samples as f64 } else { 0.0 });
        p.sum = 0.0;
        p.samples = 0;
    }

    /// Compares the traced estimate with the real queue (see `NeighborhoodSummary`).
    pub(super) fn neighborhood_summary(&self) -> Option<NeighborhoodSummary> {
        let t = self.traces.neighborhood.as_ref()?;
        let start = self.sc.flows.iter().map(|f| f.start).min()?;
        let stop = self.sc.flows.iter().map(|f| f.stop).max()?;
        let bin = super::BIN.as_nanos();
        // Bin i ends at (i + 1) s.
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
            saturation_s: sat.map(|k| (active[k] + 1) as f64 * super::BIN.as_secs_f64()),
            estimate_growth_after: sat.and_then(|k| growth(&est, k)),
            real_growth_after: sat.and_then(|k| growth(&real, k)),
            mean_estimate: mean(&est),
            mean_real: mean(&real),
        })
    }

    pub(super) fn nred_summary(&self) -> Option<NredSummary> {
        if self.sc.queue != QueueKind::Nred {
            return None;
        }
        let mut s = NredSummary {
            ncn_bytes: self.ncn_bytes,
            ..NredSummary::default()
        };
        for b in Blocked::ALL {
            s.blocked.insert(b.name(), 0);
        }
        for x in self.nodes.iter().filter_map(|n| n.nred.as_ref()) {
            let st = &x.agent.stats;
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
        Some(s)
    }
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
        let n = s.nred.expect("nred summary");
        assert!(n.ncn_sent > 0, "{n:?}");
        assert_eq!(n.ncn_bytes, n.ncn_sent * crate::net::nred::NCN_BYTES as u64);
        assert!(n.ncn_heard > 0, "{n:?}");
        assert!(n.drops_outgoing + n.drops_incoming > 0, "{n:?}");
        assert_eq!(s.drops["aqm"], n.drops_outgoing + n.drops_incoming);
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
        assert!(s.nred.is_none());
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
