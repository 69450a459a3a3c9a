//! Ingress throttling with max-min fair C-load shares: Osipov and Tschudin,
//! "TCP-Friendly Bandwidth Sharing in Mobile Ad Hoc Networks: From Theory to
//! Reality", EURASIP JWCN 2007 (docs/throttle.md).
//!
//! - `net::queue::ingress`: the two-stage scheduler of §4.3 (Fig. 4), a queue discipline.
//! - `crate::metrics::maxmin`: the L-regions and the max-min allocation of §3.
//! - `scheme`: computes the shares centrally from the topology and the routes
//!   (as the paper's simulations did, §5.1) at the start and whenever the
//!   active flows, the routes or the positions change, and sets each source's
//!   spacing Δ = MSS / (Thr_max(h) · φ) (eqs. 2 and 3).

use crate::flow::FlowSpec;
use crate::metrics::maxmin::{self, Ratio};
use crate::mobility::Trajectory;
use crate::net::queue::ingress::Spacing;
use crate::net::static_routes::Bfs;
use crate::phy::channel::{Channel, Position};
use crate::phy::PhyConfig;
use crate::time::{Duration, SimTime};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `[throttle]` table (docs/throttle.md). With `mac.queue = "throttle"`
/// the sources shape their flows; under any other queue the shares, rate
/// limits and Δ are computed and reported but nothing is shaped (the
/// "original" arm of the paper's experiments).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct ThrottleConfig {
    /// Shape at the sources (with `mac.queue = "throttle"`); false keeps the
    /// two queues and their priorities but spaces nothing.
    pub enforce: bool,
    /// Radius of an L-region: the 1 Mbit/s transmission range (§3.1).
    /// Default: the PHY's decode range at 1 Mbit/s; set it where the PHY
    /// decodes every rate to the same (shorter) range but the model's
    /// regions are the 1 Mbit/s range of the paper.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l_region_range_m: Option<f64>,
    /// Thr_max(h) in kbit/s by hop count h ("1", "2", ...): one TCP flow's
    /// throughput alone on an h-hop path with this scenario's radio, MAC, TCP
    /// and segment size (§4.1). The Python front door measures the missing
    /// entries in isolated runs (`thr_max`) and fills them in.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub thr_max_kbps: BTreeMap<String, f64>,
    /// How the front door measures Thr_max: "chain", one flow on a straight
    /// chain of h hops at `thr_max_spacing_m`.
    pub thr_max: String,
    /// Hop length of the calibration chain; default the mean hop length of
    /// the scenario's flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thr_max_spacing_m: Option<f64>,
    /// Seeds of the calibration runs (their mean is the reference).
    pub thr_max_seeds: u32,
    /// The reference of the unfairness index u (eq. 4, §5.1.1): Thr_opt =
    /// φ · Thr_alone, with Thr_alone each flow's throughput "when running
    /// alone in the network" ("isolated": `thr_alone_kbps`, measured by the
    /// front door on the flow's own route and positions) or Thr_max(h)
    /// ("thr_max").
    pub u_reference: String,
    /// Thr_alone of each flow, in flow order (kbit/s), for u_reference = "isolated".
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thr_alone_kbps: Vec<f64>,
    /// Measurement window of the calibration runs: from the flow's start
    /// plus this warm-up to the end of the run.
    pub thr_max_warmup_s: f64,
    /// "once": shares of all flows on their initial routes, set before the
    /// start; "on_change": shares of the active flows, recomputed whenever a
    /// flow starts or stops, a route changes or a node moves.
    pub recompute: String,
    /// "eligibility" or "departure" (ingress.rs, `Spacing`).
    pub spacing: String,
    /// Capacity of the local queue; default `mac.queue_capacity_pkts`
    /// (the forward queue always has that capacity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_capacity_pkts: Option<u32>,
}

/// Most calibration seeds per reference throughput: the bound of a sweep's
/// `--seeds`. Each seed is a run per hop count and per flow, prepared before the
/// first one starts; 2^32 - 1 seeds grew memory at 90 MB/s until it ran out.
pub const MAX_THR_MAX_SEEDS: u32 = 10_000;

/// Bounds of a reference throughput (kbit/s): above 0.001, so that the spacing
/// Δ = MSS / r of eq. (3) stays within the longest time a scenario may give,
/// and at most 10^6 (1 Gbit/s, far above any 802.11 rate modelled).
const MIN_RATE_KBPS: f64 = 1e-3;
const MAX_RATE_KBPS: f64 = 1e6;

fn check_rate(what: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && (MIN_RATE_KBPS..=MAX_RATE_KBPS).contains(&v) {
        Ok(())
    } else {
        Err(format!(
            "{what} {}: must be a number of kbit/s from {MIN_RATE_KBPS} to {MAX_RATE_KBPS}",
            crate::time::Num(v)
        ))
    }
}

impl Default for ThrottleConfig {
    fn default() -> Self {
        ThrottleConfig {
            enforce: true,
            l_region_range_m: None,
            thr_max_kbps: BTreeMap::new(),
            thr_max: "chain".into(),
            thr_max_spacing_m: None,
            thr_max_seeds: 3,
            u_reference: "isolated".into(),
            thr_alone_kbps: Vec::new(),
            thr_max_warmup_s: 12.0,
            recompute: "once".into(),
            spacing: "eligibility".into(),
            local_capacity_pkts: None,
        }
    }
}

impl ThrottleConfig {
    /// Checks the values; the message starts with the offending key.
    pub fn validate(&self) -> Result<(), String> {
        use crate::mobility::check_length;
        use crate::time::{Span, Unit};
        if let Some(d) = self.l_region_range_m {
            check_length("l_region_range_m", d)?;
        }
        for (k, v) in &self.thr_max_kbps {
            // One spelling per hop count: "01" or "+1" beside "1" would be two
            // entries for one hop, the first silently winning.
            let h = k.parse::<u32>().ok().filter(|h| *h >= 1 && h.to_string() == *k);
            if h.is_none() {
                return Err(format!(
                    "thr_max_kbps = {{ {k:?} = ... }}: keys are hop counts written as integers >= 1 \
                     without sign or leading zeros (\"1\", \"2\", ...)"
                ));
            }
            check_rate(&format!("thr_max_kbps = {{ {k} = ... }}"), *v)?;
        }
        if self.thr_max != "chain" {
            return Err(format!("thr_max = \"{}\": allowed: \"chain\"", self.thr_max));
        }
        if let Some(s) = self.thr_max_spacing_m {
            check_length("thr_max_spacing_m", s)?;
        }
        if self.u_reference != "isolated" && self.u_reference != "thr_max" {
            return Err(format!(
                "u_reference = \"{}\": allowed: \"isolated\", \"thr_max\"",
                self.u_reference
            ));
        }
        for v in &self.thr_alone_kbps {
            check_rate("thr_alone_kbps = [..]", *v)?;
        }
        if !(1..=MAX_THR_MAX_SEEDS).contains(&self.thr_max_seeds) {
            return Err(format!(
                "thr_max_seeds = {}: must be an integer from 1 to {MAX_THR_MAX_SEEDS}",
                self.thr_max_seeds
            ));
        }
        Span::NON_NEGATIVE.check("thr_max_warmup_s", self.thr_max_warmup_s, Unit::Seconds)?;
        if self.recompute != "once" && self.recompute != "on_change" {
            return Err(format!(
                "recompute = \"{}\": allowed: \"once\", \"on_change\"",
                self.recompute
            ));
        }
        if Spacing::parse(&self.spacing).is_none() {
            return Err(format!(
                "spacing = \"{}\": allowed: \"eligibility\", \"departure\"",
                self.spacing
            ));
        }
        if self.local_capacity_pkts == Some(0) {
            return Err("local_capacity_pkts = 0: must be an integer >= 1".into());
        }
        Ok(())
    }

    /// The spacing's reading (`spacing`): between eligibilities or departures.
    pub fn spacing(&self) -> Spacing {
        Spacing::parse(&self.spacing).unwrap_or(Spacing::Eligibility)
    }

    /// The L-region radius under `radio`: the key, else the 1 Mbit/s range.
    pub fn l_region_m(&self, radio: &crate::phy::PhyConfig) -> f64 {
        self.l_region_range_m
            .unwrap_or(radio.rate_range_m[crate::phy::Rate::MBPS_1.index()])
    }

    /// Whether shares are recomputed as flows, routes or L-regions change.
    pub fn on_change(&self) -> bool {
        self.recompute == "on_change"
    }

    /// Thr_max for `hops`, if the table has it.
    pub fn thr_max(&self, hops: u32) -> Option<f64> {
        self.thr_max_kbps.get(&hops.to_string()).copied()
    }
}

/// One flow's share and what follows from it, at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowShare {
    /// Whether the flow was active.
    pub active: bool,
    /// The nodes of its association (internal indices), source first.
    pub path: Vec<u32>,
    /// Its hop count.
    pub hops: u32,
    /// Centres (internal indices) of the L-regions it loads, and of those
    /// that are its bottleneck.
    pub regions: Vec<u32>,
    /// Centres of its bottleneck L-regions (internal indices).
    pub bottleneck: Vec<u32>,
    /// The iteration of §3.3 that assigned its share.
    pub iteration: u32,
    /// Its max-min share φ of the bottleneck (§3.3), exact.
    pub phi: Option<Ratio>,
    /// Thr_max for its hop count (`thr_max_kbps`), if the table has it.
    pub thr_max_kbps: Option<f64>,
    /// Eq. (2): r = Thr_max(h) · φ, TCP payload kbit/s.
    pub rate_kbps: Option<f64>,
    /// Eq. (3): Δ = MSS / r.
    pub delta: Option<Duration>,
}

/// What the throttle reads of a run: the parts of the scenario its
/// allocation and report need, copied once (the scheme keeps them for the
/// run's recomputations).
#[derive(Clone, Debug)]
pub struct ThrottleInput {
    /// `[throttle]`, if the scenario has the table.
    pub cfg: Option<ThrottleConfig>,
    /// Whether the interface queues are the ingress scheduler
    /// (`mac.queue = "throttle"`).
    pub throttle_queue: bool,
    /// Each node's id as the scenario gives it, by internal index.
    pub node_ids: Vec<i64>,
    /// Initial positions, by internal index.
    pub positions: Vec<Position>,
    /// Each node's trajectory, if it has one.
    pub trajectories: Vec<Option<Trajectory>>,
    /// The flows.
    pub flows: Vec<FlowSpec>,
    /// The radio, for ranges and the L-region.
    pub radio: PhyConfig,
    /// The run's end.
    pub duration: SimTime,
}

impl ThrottleInput {
    /// Whether sources shape: the ingress scheduler with `enforce` on.
    pub fn shaping(&self, cfg: &ThrottleConfig) -> bool {
        self.throttle_queue && cfg.enforce
    }
}

/// Positions of every node at `t` (scripted and random motion included).
pub fn positions_at(sc: &ThrottleInput, t: SimTime) -> Vec<Position> {
    sc.positions
        .iter()
        .zip(&sc.trajectories)
        .map(|(p, tr)| tr.as_ref().map_or(*p, |tr| tr.position_at(t)))
        .collect()
}

/// Each flow's path at `t`: its route in force then (explicit, or a change
/// of it), else the static shortest path over the initial transmission-range
/// graph, as static routing computes it. None if there is no path.
pub fn paths_at(sc: &ThrottleInput, t: SimTime) -> Vec<Option<Vec<u32>>> {
    let mut adj: Option<Vec<Vec<u32>>> = None;
    let mut bfs = Bfs::new(sc.positions.len());
    sc.flows
        .iter()
        .map(|f| {
            if let Some(p) = f.route_at(t) {
                return Some(p.to_vec());
            }
            let adj = adj.get_or_insert_with(|| Channel::new(sc.positions.clone(), &sc.radio).rx_adjacency());
            bfs.path(adj, f.dst, f.src)
        })
        .collect()
}

/// The max-min shares of the flows `active` at `t` (positions and routes at
/// `t`), with each flow's rate limit and spacing from the Thr_max table.
pub fn allocate(sc: &ThrottleInput, cfg: &ThrottleConfig, t: SimTime, active: &[bool]) -> Vec<FlowShare> {
    let positions = positions_at(sc, t);
    let paths = paths_at(sc, t);
    let loaded: Vec<Option<Vec<u32>>> = paths
        .iter()
        .zip(active)
        .map(|(p, &a)| if a { p.clone() } else { None })
        .collect();
    let regions = maxmin::l_regions(&positions, &loaded, cfg.l_region_m(&sc.radio));
    let members: Vec<Vec<usize>> = regions.iter().map(|g| g.members.clone()).collect();
    let alloc = maxmin::maxmin_shares(&members, sc.flows.len());
    sc.flows
        .iter()
        .enumerate()
        .map(|(a, f)| {
            let path = paths[a].clone().unwrap_or_default();
            let hops = path.len().saturating_sub(1) as u32;
            let phi = alloc.shares[a];
            let thr = cfg.thr_max(hops);
            let rate = match (thr, phi) {
                (Some(thr), Some(phi)) => Some(thr * phi.to_f64()),
                _ => None,
            };
            FlowShare {
                active: active[a],
                hops,
                regions: regions
                    .iter()
                    .filter(|g| g.members.contains(&a))
                    .map(|g| g.centre)
                    .collect(),
                bottleneck: alloc.bottlenecks[a].iter().map(|&i| regions[i].centre).collect(),
                iteration: alloc.iteration[a],
                phi,
                thr_max_kbps: thr,
                rate_kbps: rate,
                delta: rate.map(|r| spacing_for(f.packet_bytes, r)),
                path,
            }
        })
        .collect()
}

/// The `throttle` section of the run summary, and what `manetfair shares`
/// prints: each flow's L-regions, bottleneck, share, rate limit and Δ with
/// every flow active on its initial route, then every allocation applied.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SharesReport {
    /// Whether the sources shaped (`mac.queue = "throttle"` and `enforce`).
    pub shaping: bool,
    /// The L-region radius used, metres.
    pub l_region_range_m: f64,
    /// `recompute`: "once" or "on_change".
    pub recompute: String,
    /// Every hop count the flows take (initially and after route changes):
    /// the Thr_max entries shaping needs.
    pub hops_needed: Vec<u32>,
    /// Those of them the Thr_max table lacks while the sources shape: flows
    /// over such paths run unshaped.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thr_max_missing: Vec<u32>,
    /// The L-regions: centre node id and the ids of the flows in it.
    pub regions: Vec<RegionReport>,
    /// Per flow, its share and what follows from it.
    pub flows: Vec<FlowReport>,
    /// Every allocation the run applied, in time order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub updates: Vec<UpdateSummary>,
    /// The unfairness index u of eq. (4) over the flows' `throughput_kbps`
    /// against Thr_opt (runs with two or more flows whose Thr_opt is known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub u: Option<f64>,
}

impl SharesReport {
    /// Fills in u (eq. 4) from the measured throughputs.
    pub fn set_unfairness(&mut self, throughput_kbps: &[f64]) {
        let opt: Option<Vec<f64>> = self.flows.iter().map(|f| f.thr_opt_kbps).collect();
        self.u = opt.and_then(|opt| crate::metrics::unfairness_index(&opt, throughput_kbps));
    }
}

/// One L-region: its centre and the flows that load it.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct RegionReport {
    /// The centre node's id.
    pub centre: i64,
    /// The flows that load it.
    pub flows: Vec<u32>,
}

/// One flow's row of the report.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowReport {
    /// The flow.
    pub id: u32,
    /// Its source's id.
    pub src: i64,
    /// Its destination's id.
    pub dst: i64,
    /// Its path, node ids from source to destination.
    pub path: Vec<i64>,
    /// Its hop count.
    pub hops: u32,
    /// Mean length of its hops, metres.
    pub mean_hop_m: Option<f64>,
    /// Its MSS, bytes.
    pub mss_bytes: u32,
    /// φ as a number and exactly ("1/3").
    pub phi: Option<f64>,
    /// φ as an exact fraction.
    pub phi_exact: Option<String>,
    /// The iteration of §3.3 that assigned φ.
    pub iteration: u32,
    /// Centre ids of the L-regions the flow loads, and of its bottlenecks.
    pub regions: Vec<i64>,
    /// Centres of its bottleneck L-regions (ids).
    pub bottleneck: Vec<i64>,
    /// Thr_max for its hop count.
    pub thr_max_kbps: Option<f64>,
    /// Eq. (2): its rate limit, kbit/s of payload.
    pub rate_kbps: Option<f64>,
    /// Eq. (3): its spacing Δ, seconds.
    pub delta_s: Option<f64>,
    /// Its throughput alone, and its ideal φ · Thr_alone (§5.1.1).
    pub thr_alone_kbps: Option<f64>,
    /// φ times its throughput alone: its optimum for u (eq. 4).
    pub thr_opt_kbps: Option<f64>,
}

impl SharesReport {
    /// The report as one JSON object (`manetfair shares`).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("the shares report serialises")
    }
}

/// The report of one allocation (`shares` from `allocate`).
pub fn report(sc: &ThrottleInput, cfg: &ThrottleConfig, shares: &[FlowShare]) -> SharesReport {
    let id = |i: u32| sc.node_ids[i as usize];
    let positions = positions_at(sc, SimTime::ZERO);
    let mut centres: Vec<u32> = shares.iter().flat_map(|s| s.regions.iter().copied()).collect();
    centres.sort_unstable();
    centres.dedup();
    SharesReport {
        shaping: sc.shaping(cfg),
        l_region_range_m: cfg.l_region_m(&sc.radio),
        recompute: cfg.recompute.clone(),
        hops_needed: hops_needed(sc),
        thr_max_missing: missing_thr_max(sc),
        regions: centres
            .iter()
            .map(|&c| RegionReport {
                centre: id(c),
                flows: (0..shares.len() as u32)
                    .filter(|&f| shares[f as usize].regions.contains(&c))
                    .collect(),
            })
            .collect(),
        flows: shares
            .iter()
            .enumerate()
            .map(|(f, s)| FlowReport {
                id: f as u32,
                src: id(sc.flows[f].src),
                dst: id(sc.flows[f].dst),
                path: s.path.iter().map(|&v| id(v)).collect(),
                hops: s.hops,
                mean_hop_m: (s.hops > 0).then(|| {
                    let total: f64 = s
                        .path
                        .windows(2)
                        .map(|w| positions[w[0] as usize].distance(&positions[w[1] as usize]))
                        .sum();
                    total / s.hops as f64
                }),
                mss_bytes: sc.flows[f].packet_bytes,
                phi: s.phi.map(|p| p.to_f64()),
                phi_exact: s.phi.map(|p| p.to_string()),
                iteration: s.iteration,
                regions: s.regions.iter().map(|&c| id(c)).collect(),
                bottleneck: s.bottleneck.iter().map(|&c| id(c)).collect(),
                thr_max_kbps: s.thr_max_kbps,
                rate_kbps: s.rate_kbps,
                delta_s: s.delta.map(|d| d.as_secs_f64()),
                thr_alone_kbps: thr_alone(cfg, f, s),
                thr_opt_kbps: thr_alone(cfg, f, s).zip(s.phi).map(|(t, p)| t * p.to_f64()),
            })
            .collect(),
        updates: Vec::new(),
        u: None,
    }
}

fn thr_alone(cfg: &ThrottleConfig, flow: usize, s: &FlowShare) -> Option<f64> {
    if cfg.u_reference == "thr_max" {
        s.thr_max_kbps
    } else {
        cfg.thr_alone_kbps.get(flow).copied()
    }
}

/// The report with every flow active on its initial route (no run needed).
pub fn static_report(sc: &ThrottleInput) -> SharesReport {
    let cfg = sc.cfg.clone().unwrap_or_default();
    let all = vec![true; sc.flows.len()];
    report(sc, &cfg, &allocate(sc, &cfg, SimTime::ZERO, &all))
}

/// The instants at which some flow's path is set: the start and every route change.
fn route_instants(sc: &ThrottleInput) -> Vec<SimTime> {
    let mut instants = vec![SimTime::ZERO];
    for f in &sc.flows {
        instants.extend(f.route_changes.iter().map(|c| c.0));
    }
    instants.sort_unstable();
    instants.dedup();
    instants
}

/// Every hop count a flow's path has, initially or after a route change.
pub fn hops_needed(sc: &ThrottleInput) -> Vec<u32> {
    let mut hops: Vec<u32> = route_instants(sc)
        .into_iter()
        .flat_map(|t| paths_at(sc, t))
        .flatten()
        .map(|p| p.len() as u32 - 1)
        .collect();
    hops.sort_unstable();
    hops.dedup();
    hops
}

/// Hop counts the flows take (initially or after a route change) that the
/// Thr_max table lacks, when the sources shape: those flows cannot be
/// given a rate limit and run unshaped (the summary lists them; the front
/// door measures every missing entry before a run).
pub fn missing_thr_max(sc: &ThrottleInput) -> Vec<u32> {
    match &sc.cfg {
        Some(cfg) if sc.shaping(cfg) => hops_needed(sc)
            .into_iter()
            .filter(|&h| h > 0 && cfg.thr_max(h).is_none())
            .collect(),
        _ => Vec::new(),
    }
}

/// One (re)computation: per flow, its share, hops, rate limit and spacing
/// (null for a flow not active then).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct UpdateSummary {
    /// When, seconds.
    pub at_s: f64,
    /// Each flow's share φ.
    pub phi: Vec<Option<f64>>,
    /// Each flow's hop count.
    pub hops: Vec<Option<u32>>,
    /// Each flow's rate limit, eq. (2).
    pub rate_kbps: Vec<Option<f64>>,
    /// Each flow's spacing Δ, eq. (3), seconds.
    pub delta_s: Vec<Option<f64>>,
}

/// Eq. (3): the time `mss_bytes` of payload take at `rate_kbps`, to the nanosecond.
pub fn spacing_for(mss_bytes: u32, rate_kbps: f64) -> Duration {
    Duration::from_nanos((mss_bytes as f64 * 8.0 / (rate_kbps * 1000.0) * 1e9).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footnote_4_worked_example() {
        // 600-byte segments at the fair rate of a 3-hop flow, 196.6 kbit/s: Δ = 24.4 ms.
        let d = spacing_for(600, 196.6);
        assert_eq!(d.as_nanos(), 24_415_056);
    }

    #[test]
    fn config_checks_name_the_key() {
        assert!(ThrottleConfig::default().validate().is_ok());
        let bad = |f: fn(&mut ThrottleConfig)| {
            let mut c = ThrottleConfig::default();
            f(&mut c);
            c.validate().unwrap_err()
        };
        assert!(bad(|c| c.l_region_range_m = Some(0.0)).starts_with("l_region_range_m"));
        assert!(bad(|c| {
            c.thr_max_kbps.insert("x".into(), 1.0);
        })
        .starts_with("thr_max_kbps"));
        assert!(bad(|c| {
            c.thr_max_kbps.insert("2".into(), -1.0);
        })
        .starts_with("thr_max_kbps"));
        assert!(bad(|c| c.recompute = "always".into()).starts_with("recompute"));
        assert!(bad(|c| c.spacing = "fixed".into()).starts_with("spacing"));
        assert!(bad(|c| c.thr_max_seeds = 0).starts_with("thr_max_seeds"));
        assert!(bad(|c| c.u_reference = "ideal".into()).starts_with("u_reference"));
        // The 2026-11-29 campaign's values that used to pass (S2, S5).
        assert!(bad(|c| c.thr_max_seeds = u32::MAX).starts_with("thr_max_seeds"));
        assert!(bad(|c| c.thr_max_warmup_s = 1e308).contains("above the longest allowed"));
        assert!(bad(|c| c.thr_max_spacing_m = Some(1e308)).starts_with("thr_max_spacing_m"));
        assert!(bad(|c| c.l_region_range_m = Some(1e308)).starts_with("l_region_range_m"));
        for key in ["01", "+1", "0"] {
            let mut c = ThrottleConfig::default();
            c.thr_max_kbps.insert(key.into(), 1.0);
            let e = c.validate().unwrap_err();
            assert!(e.contains("leading zeros"), "{key}: {e}");
        }
        for v in [1e-300, 1e308, 0.0] {
            let mut c = ThrottleConfig::default();
            c.thr_max_kbps.insert("1".into(), v);
            assert!(c.validate().unwrap_err().starts_with("thr_max_kbps"), "{v}");
            let c = ThrottleConfig {
                thr_alone_kbps: vec![100.0, v],
                ..Default::default()
            };
            assert!(c.validate().unwrap_err().starts_with("thr_alone_kbps"), "{v}");
        }
    }

    #[test]
    fn u_is_taken_against_phi_times_thr_alone() {
        // Table 2's ideal split 348, 178, 120 against 400, 150, 100:
        // sqrt(52² + 28² + 20²) / sqrt(348² + 178² + 120²) (eq. 4).
        let flow = |thr_opt: f64| FlowReport {
            id: 0,
            src: 0,
            dst: 1,
            path: vec![0, 1],
            hops: 1,
            mean_hop_m: None,
            mss_bytes: 600,
            phi: Some(1.0 / 3.0),
            phi_exact: Some("1/3".into()),
            iteration: 1,
            regions: vec![],
            bottleneck: vec![],
            thr_max_kbps: None,
            rate_kbps: None,
            delta_s: None,
            thr_alone_kbps: Some(thr_opt * 3.0),
            thr_opt_kbps: Some(thr_opt),
        };
        let mut r = SharesReport {
            shaping: true,
            l_region_range_m: 250.0,
            recompute: "once".into(),
            hops_needed: vec![1],
            thr_max_missing: vec![],
            regions: vec![],
            flows: vec![flow(348.0), flow(178.0), flow(120.0)],
            updates: vec![],
            u: None,
        };
        r.set_unfairness(&[400.0, 150.0, 100.0]);
        let u = (52f64.powi(2) + 28f64.powi(2) + 20f64.powi(2)).sqrt()
            / (348f64.powi(2) + 178f64.powi(2) + 120f64.powi(2)).sqrt();
        assert!((r.u.unwrap() - u).abs() < 1e-12);
        // A flow whose ideal is unknown leaves u unknown.
        r.flows[1].thr_opt_kbps = None;
        r.set_unfairness(&[400.0, 150.0, 100.0]);
        assert_eq!(r.u, None);
    }
}
