//! What a run will need in memory, estimated from the scenario before
//! anything sized by it is built, so that a scenario too large for the
//! machine is refused by `check` (with the estimate and the limit) instead
//! of aborting half-way through a run. The per-item costs were measured on
//! the core and the Python front door (docs/reliability.md); the counts are
//! upper bounds or expectations, never drawn at random.

use super::file::{ScenarioFile, TopologyKind};
use super::ScenarioError;
use crate::phy::channel::Position;
use crate::transport::tcp::TcpVariant;
use std::collections::HashMap;

/// The default memory budget of one run: 2 GiB. `--max-memory` (CLI) and
/// `max_memory` (Python) change it.
pub const DEFAULT_MAX_MEMORY: u64 = 2 << 30;

// Costs measured with `manetfair.run` (peak resident memory of the Python
// process, core and result together; docs/reliability.md), rounded up.
/// Bytes per node: its radio, MAC, queue, random streams and event slots
/// (measured 1.3 KiB).
const NODE_BYTES: u64 = 2048;
/// Bytes per counted pair of nodes within interference range: the channel's
/// neighbour entry, its delay order and the routing graph (measured 33
/// bytes per real pair; the count is exact for a crowded field and about
/// 2.9 times the real pairs for a uniform one).
const NEIGHBOR_BYTES: u64 = 40;
/// Bytes per flow: its source, TCP ends, route and summary (measured 3 KiB
/// for TCP, 4.3 KiB for UDP).
const FLOW_BYTES: u64 = 4608;
/// Bytes per queued packet: the packet, its queue entry, its event
/// (measured 106 bytes).
const PACKET_BYTES: u64 = 128;
/// Queues per flow whose room is counted in full: a flow fills the queues
/// before its bottlenecks, rarely more than a few.
const QUEUES_PER_FLOW: u64 = 8;
/// Packets counted at every other node (ACKs, routing packets).
const PACKETS_PER_NODE: u64 = 4;
/// Bytes per point of a trajectory (time and position, and growth).
const POINT_BYTES: u64 = 48;
/// Bytes per value of a per-second series, from the core through JSON to
/// the Python objects of the result (measured 44 bytes).
const SERIES_VALUE_BYTES: u64 = 64;
/// Bytes per AODV routing-table entry.
const ROUTE_BYTES: u64 = 128;

/// The counts a run's memory grows with, and their total in bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Estimate {
    /// Nodes.
    pub nodes: u64,
    /// Upper bound on pairs of nodes within carrier-sense range.
    pub neighbor_pairs: u64,
    /// Flows.
    pub flows: u64,
    /// Packets the queues are expected to hold at most: full queues at
    /// `QUEUES_PER_FLOW` nodes per flow, `PACKETS_PER_NODE` elsewhere.
    pub queued_packets: u64,
    /// Expected points of every trajectory.
    pub trajectory_points: u64,
    /// Values of the per-second series (bins × series).
    pub series_values: u64,
    /// AODV routing-table entries, at most.
    pub routes: u64,
    /// The total, bytes.
    pub bytes: u64,
}

/// `n` bytes in binary units, for messages.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["bytes", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// Upper bound on ordered pairs of distinct nodes within `range` of each
/// other: nodes counted in the 3 × 3 cells of side `range` around each node
/// (exact when every node is near every other; about 2.9 times the real
/// count, 9 / π, in a uniform field).
fn pairs_within(positions: &[Position], range: f64) -> u64 {
    let cell = |p: &Position| ((p.x / range).floor() as i64, (p.y / range).floor() as i64);
    let mut count: HashMap<(i64, i64), u64> = HashMap::new();
    for p in positions {
        *count.entry(cell(p)).or_default() += 1;
    }
    let mut pairs: u64 = 0;
    for (&(cx, cy), &k) in &count {
        let mut around = 0u64;
        for dx in -1..=1 {
            for dy in -1..=1 {
                around += count
                    .get(&(cx.saturating_add(dx), cy.saturating_add(dy)))
                    .copied()
                    .unwrap_or(0);
            }
        }
        pairs = pairs.saturating_add(k.saturating_mul(around.saturating_sub(1)));
    }
    pairs
}

impl Estimate {
    /// The estimate for `file` laid out at `positions`.
    pub fn of(file: &ScenarioFile, positions: &[Position]) -> Result<Estimate, ScenarioError> {
        let n = positions.len() as u64;
        // Neighbour lists reach as far as signals are delivered.
        let cs = file.radio.interference_range_m.unwrap_or(file.radio.cs_range_m);
        let mut neighbor_pairs = pairs_within(positions, cs);
        // Moving nodes spread over their area: count a uniform density too.
        let mut trajectory_points: u64 = 0;
        if let Some((rw, movers)) = super::mobility::waypoint(file, positions)? {
            let area = rw.width_m * rw.height_m;
            let share = (std::f64::consts::PI * cs * cs / area).min(1.0);
            neighbor_pairs = neighbor_pairs.max((n as f64 * n as f64 * share) as u64);
            // A leg lasts the pause plus the travel time; E[distance] between
            // two uniform points is at least a third of the longer side.
            let travel_s = (rw.width_m.max(rw.height_m) / 3.0 / rw.speed_max_mps).max(1e-9);
            let leg_s = rw.pause.as_secs_f64() + travel_s;
            let legs = (file.duration_s / leg_s).ceil() + 1.0;
            trajectory_points = (2.0 * legs * movers as f64).min(u64::MAX as f64) as u64;
        }
        let m = &file.mobility;
        for s in &m.nodes {
            let len = s.path.as_ref().map_or(0, Vec::len) + 2 * s.moves.as_ref().map_or(0, Vec::len);
            trajectory_points = trajectory_points.saturating_add(len as u64);
        }
        if let Some(text) = &m.ns2_movements {
            trajectory_points = trajectory_points.saturating_add(2 * text.lines().count() as u64);
        }
        let drawn = file.traffic.as_ref().and_then(|t| t.random_pairs.as_ref());
        let drawn_tcp = drawn.filter(|rp| rp.transport.parse::<TcpVariant>().is_ok());
        let count = |rp: Option<&super::file::RandomPairsFile>| rp.map_or(0, |rp| u64::from(rp.count));
        let flows = file.flows.len() as u64 + count(drawn);
        let tcp_flows = file
            .flows
            .iter()
            .filter(|f| f.transport.parse::<TcpVariant>().is_ok())
            .count() as u64
            + count(drawn_tcp);
        let bins = (file.duration_s / file.trace.series_interval_s).ceil().max(1.0);
        let mut per_bin = 1 + 2 * flows + 4 * tcp_flows;
        if file.trace.node_series {
            per_bin += 3 * n;
        }
        if file.trace.neighborhood_node.is_some() {
            per_bin += 4;
        }
        let series_values = (bins * per_bin as f64).min(u64::MAX as f64) as u64;
        let cap = u64::from(file.mac.queue_capacity_pkts);
        let full = n.min((flows + 1).saturating_mul(QUEUES_PER_FLOW));
        let queued_packets = full
            .saturating_mul(cap)
            .saturating_add(n.saturating_mul(cap.min(PACKETS_PER_NODE)));
        let routes = if file.routing.protocol == super::RoutingKind::Aodv {
            // Reverse routes to every originator, forward routes to every
            // destination, and a route to each neighbour.
            n.saturating_mul(2 * flows + 1).saturating_add(neighbor_pairs)
        } else {
            0
        };
        let parts = [
            n.saturating_mul(NODE_BYTES),
            neighbor_pairs.saturating_mul(NEIGHBOR_BYTES),
            flows.saturating_mul(FLOW_BYTES),
            queued_packets.saturating_mul(PACKET_BYTES),
            trajectory_points.saturating_mul(POINT_BYTES),
            series_values.saturating_mul(SERIES_VALUE_BYTES),
            routes.saturating_mul(ROUTE_BYTES),
        ];
        Ok(Estimate {
            nodes: n,
            neighbor_pairs,
            flows,
            queued_packets,
            trajectory_points,
            series_values,
            routes,
            bytes: parts.iter().fold(0u64, |a, &b| a.saturating_add(b)),
        })
    }

    /// The key to blame for a run that is too large, and what it costs.
    fn largest(&self, kind: TopologyKind) -> (&'static str, String) {
        let topology = if kind == TopologyKind::Explicit {
            "node"
        } else {
            "topology"
        };
        let parts = [
            (self.nodes * NODE_BYTES, topology, format!("{} nodes", self.nodes)),
            (
                self.neighbor_pairs.saturating_mul(NEIGHBOR_BYTES),
                topology,
                format!("{} pairs of nodes within carrier-sense range", self.neighbor_pairs),
            ),
            (
                self.flows.saturating_mul(FLOW_BYTES),
                "flow",
                format!("{} flows", self.flows),
            ),
            (
                self.queued_packets.saturating_mul(PACKET_BYTES),
                "mac.queue_capacity_pkts",
                format!("room for {} queued packets", self.queued_packets),
            ),
            (
                self.trajectory_points.saturating_mul(POINT_BYTES),
                "mobility",
                format!("{} trajectory points", self.trajectory_points),
            ),
            (
                self.series_values.saturating_mul(SERIES_VALUE_BYTES),
                "duration_s",
                format!("{} values of per-second series", self.series_values),
            ),
            (
                self.routes.saturating_mul(ROUTE_BYTES),
                "routing.aodv",
                format!("{} AODV routes", self.routes),
            ),
        ];
        let (_, key, what) = parts.into_iter().max_by_key(|p| p.0).expect("parts");
        (key, what)
    }

    /// Refuses an estimate above `limit` bytes, naming its largest part.
    pub fn check_against(&self, limit: u64, kind: TopologyKind) -> Result<(), ScenarioError> {
        if self.bytes <= limit {
            return Ok(());
        }
        let (key, what) = self.largest(kind);
        Err(ScenarioError::new(
            key,
            format!(
                "the run would need about {} ({what}), above the memory limit of {}; make the scenario smaller, or raise the limit (--max-memory)",
                human_bytes(self.bytes),
                human_bytes(limit)
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_counted_from_neighbouring_cells() {
        let chain: Vec<Position> = (0..10)
            .map(|i| Position {
                x: i as f64 * 200.0,
                y: 0.0,
            })
            .collect();
        // Within 550 m a node of the chain has 2 to 5 others (36 ordered
        // pairs in all); cells of 550 m hold 3 nodes (the last 1), and a node
        // counts the others in its cell and the two beside it.
        let p = pairs_within(&chain, 550.0);
        assert!((36..=10 * 8).contains(&p), "{p}");
        let heap = vec![Position { x: 0.5, y: 0.5 }; 1000];
        assert_eq!(pairs_within(&heap, 550.0), 1000 * 999);
    }

    #[test]
    fn bytes_print_in_binary_units() {
        assert_eq!(human_bytes(512), "512 bytes");
        assert_eq!(human_bytes(3 << 30), "3.0 GiB");
    }
}
