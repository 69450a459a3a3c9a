//! `[[flow]]` tables: each is checked on its own (transport, application,
//! rate, times, explicit route) and then against the topology (its nodes
//! exist; with fixed nodes, a path joins them).

use super::file::{FlowFile, RoutingKind, ScenarioFile};
use super::{NodeIndex, Result, ScenarioError, MAX_MSDU_BYTES};
pub use crate::flow::{App, FlowSpec, Transport};
use crate::phy::channel::{Channel, Position};
use crate::time::{Duration, Num, SimTime, Span, Unit, MIN_SPAN};

/// An explicit route's node indices: from the flow's source to its
/// destination, each node once.
fn explicit_path(
    path: &[i64],
    ends: (u32, u32),
    ids: (i64, i64),
    key: &str,
    index: &NodeIndex<'_>,
) -> Result<Vec<u32>> {
    let idx: Vec<u32> = path.iter().map(|&id| index.get(key, id)).collect::<Result<_>>()?;
    if idx.len() < 2 || idx[0] != ends.0 || idx[idx.len() - 1] != ends.1 {
        return Err(ScenarioError::new(
            key,
            format!("{path:?} must start at src = {} and end at dst = {}", ids.0, ids.1),
        ));
    }
    let mut seen = idx.clone();
    seen.sort_unstable();
    seen.dedup();
    if seen.len() != idx.len() {
        return Err(ScenarioError::new(key, format!("{path:?} visits a node twice")));
    }
    Ok(idx)
}

fn list(xs: &[&str]) -> String {
    xs.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(", ")
}

impl FlowFile {
    /// Checks the keys of a flow that need no topology; its keys are
    /// named under `prefix` (`flow[0]`, `traffic.random_pairs`).
    pub(super) fn check(&self, prefix: &str, duration_s: f64) -> Result<(Transport, App)> {
        let k = |s: &str| format!("{prefix}.{s}");
        let transport = Transport::parse(&self.transport).ok_or_else(|| {
            ScenarioError::new(
                k("transport"),
                format!(
                    "\"{}\" is not a transport; allowed: {}",
                    self.transport,
                    list(&Transport::names())
                ),
            )
        })?;
        if self.packet_bytes == 0 || self.packet_bytes > MAX_MSDU_BYTES - 28 {
            return Err(ScenarioError::new(
                k("packet_bytes"),
                format!("{} must be between 1 and {}", self.packet_bytes, MAX_MSDU_BYTES - 28),
            ));
        }
        let app = match (self.app.as_str(), transport) {
            ("cbr", Transport::Udp) => {
                let rate = self.rate_kbps.ok_or_else(|| {
                    ScenarioError::new(
                        k("rate_kbps"),
                        "missing: app \"cbr\" needs rate_kbps (a positive number)",
                    )
                })?;
                cbr_gap(&k("rate_kbps"), rate, self.packet_bytes)?;
                App::Cbr { rate_kbps: rate }
            }
            ("ftp", Transport::Tcp(_)) => App::Ftp,
            ("http", Transport::Tcp(_)) => App::Http,
            ("cbr" | "ftp" | "http", _) => {
                return Err(ScenarioError::new(
                    k("app"),
                    format!(
                        "\"{}\" does not run over transport \"{}\"; \"cbr\" runs over \"udp\", \"ftp\" and \"http\" over TCP",
                        self.app, self.transport
                    ),
                ));
            }
            (a, _) => {
                return Err(ScenarioError::new(
                    k("app"),
                    format!("\"{a}\" is not an application; allowed: \"cbr\", \"ftp\", \"http\""),
                ))
            }
        };
        if self.rate_kbps.is_some() && !matches!(app, App::Cbr { .. }) {
            return Err(ScenarioError::new(k("rate_kbps"), "only app = \"cbr\" takes a rate"));
        }
        Span::NON_NEGATIVE
            .check(&k("start_s"), self.start_s, Unit::Seconds)
            .map_err(|e| ScenarioError::keyed("", &e))?;
        if self.start_s >= duration_s {
            return Err(ScenarioError::new(
                k("start_s"),
                format!(
                    "{} is not before the end of the run (duration_s = {})",
                    Num(self.start_s),
                    Num(duration_s)
                ),
            ));
        }
        if let Some(stop) = self.stop_s {
            Span::POSITIVE
                .check(&k("stop_s"), stop, Unit::Seconds)
                .map_err(|e| ScenarioError::keyed("", &e))?;
            if stop <= self.start_s {
                return Err(ScenarioError::new(
                    k("stop_s"),
                    format!("{} must be after start_s = {}", Num(stop), Num(self.start_s)),
                ));
            }
        }
        Ok((transport, app))
    }
}

/// The gap between two CBR packets, which must be at least 1 µs (a gap
/// rounding to 0 ns would never let time advance).
fn cbr_gap(key: &str, rate_kbps: f64, packet_bytes: u32) -> Result<Duration> {
    let gap_s = f64::from(packet_bytes) * 8.0 / (rate_kbps * 1000.0);
    if rate_kbps.is_finite() && rate_kbps > 0.0 {
        if let Ok(gap) = Span::POSITIVE.check("gap", gap_s, Unit::Seconds) {
            return Ok(gap);
        }
    }
    let max_kbps = f64::from(packet_bytes) * 8.0 / (MIN_SPAN.as_secs_f64() * 1000.0);
    let min_kbps = f64::from(packet_bytes) * 8.0 / (crate::time::MAX_SPAN.as_secs_f64() * 1000.0);
    Err(ScenarioError::new(
        key,
        format!(
            "{} must be a rate whose gap between packets of {packet_bytes} bytes is 1 µs to 1e7 s; allowed: {} to {} kbit/s",
            Num(rate_kbps),
            Num(min_kbps),
            Num(max_kbps)
        ),
    ))
}

/// Connected components of the transmission-range graph: two fixed nodes
/// have a path between them exactly when their labels agree.
pub(super) fn components(adj: &[Vec<u32>]) -> Vec<u32> {
    let mut label = vec![u32::MAX; adj.len()];
    let mut stack = Vec::new();
    for root in 0..adj.len() {
        if label[root] != u32::MAX {
            continue;
        }
        label[root] = root as u32;
        stack.push(root as u32);
        while let Some(v) = stack.pop() {
            for &u in &adj[v as usize] {
                if label[u as usize] == u32::MAX {
                    label[u as usize] = root as u32;
                    stack.push(u);
                }
            }
        }
    }
    label
}

/// Every flow of the file, then the generated ones (`[traffic]`), checked
/// and joined to the topology.
pub(super) fn resolve_all(
    file: &ScenarioFile,
    radio: &super::RadioParams,
    index: &NodeIndex<'_>,
    positions: &[Position],
    trajectories: &[Option<crate::mobility::Trajectory>],
    moving: bool,
) -> Result<Vec<FlowSpec>> {
    let r = &file.radio;
    let routing = file.routing.protocol;
    // Connectivity over the transmission range, for static routes.
    let channel = Channel::new(positions.to_vec(), radio);
    let component = components(&channel.rx_adjacency());
    let generated = super::traffic::random_pairs(file, index, &component)?;
    let mut flows = Vec::with_capacity(file.flows.len() + generated.len());
    let named = file.flows.iter().enumerate().map(|(i, f)| (format!("flow[{i}]"), f));
    let drawn = generated.iter().map(|f| ("traffic.random_pairs".to_string(), f));
    for (prefix, f) in named.chain(drawn) {
        let k = |s: &str| format!("{prefix}.{s}");
        let (transport, app) = f.check(&prefix, file.duration_s)?;
        let src = index.get(&k("src"), f.src)?;
        let dst = index.get(&k("dst"), f.dst)?;
        if src == dst {
            return Err(ScenarioError::new(
                k("dst"),
                format!("{} equals {prefix}.src; a flow needs two different nodes", f.dst),
            ));
        }
        let route = match &f.route {
            None => None,
            Some(path) => {
                if routing != RoutingKind::Static {
                    return Err(ScenarioError::new(
                        k("route"),
                        "an explicit route needs routing.protocol = \"static\"",
                    ));
                }
                let idx = explicit_path(path, (src, dst), (f.src, f.dst), &k("route"), index)?;
                for (w, ids) in idx.windows(2).zip(path.windows(2)) {
                    if !channel.in_rx_range(w[0], w[1]) {
                        return Err(ScenarioError::new(
                            k("route"),
                            format!(
                                "hop {} -> {} is longer than radio.tx_range_m = {} m",
                                ids[0],
                                ids[1],
                                Num(r.tx_range_m)
                            ),
                        ));
                    }
                }
                Some(idx)
            }
        };
        let mut route_changes: Vec<(SimTime, Vec<u32>)> = Vec::with_capacity(f.route_changes.len());
        for (j, c) in f.route_changes.iter().enumerate() {
            let kc = |s: &str| k(&format!("route_changes[{j}].{s}"));
            if routing != RoutingKind::Static {
                return Err(ScenarioError::new(
                    kc("route"),
                    "route changes need routing.protocol = \"static\"",
                ));
            }
            let prev = route_changes.last().map_or(0.0, |(t, _)| t.as_secs_f64());
            if !(c.at_s.is_finite() && c.at_s > prev && c.at_s < file.duration_s) {
                return Err(ScenarioError::new(
                    kc("at_s"),
                    format!(
                        "{} must be after the previous change (or 0) and before the end of the run (duration_s = {})",
                        Num(c.at_s),
                        Num(file.duration_s)
                    ),
                ));
            }
            let at = SimTime::from_secs_f64(c.at_s);
            let idx = explicit_path(&c.route, (src, dst), (f.src, f.dst), &kc("route"), index)?;
            // Every hop must decode where the nodes are at that instant.
            let here: Vec<Position> = positions
                .iter()
                .zip(trajectories)
                .map(|(p, t)| t.as_ref().map_or(*p, |t| t.position_at(at)))
                .collect();
            let then = Channel::new(here, radio);
            for (w, ids) in idx.windows(2).zip(c.route.windows(2)) {
                if !then.in_rx_range(w[0], w[1]) {
                    return Err(ScenarioError::new(
                        kc("route"),
                        format!(
                            "hop {} -> {} is longer than radio.tx_range_m = {} m at {} s",
                            ids[0],
                            ids[1],
                            Num(r.tx_range_m),
                            Num(c.at_s)
                        ),
                    ));
                }
            }
            route_changes.push((at, idx));
        }
        // With fixed nodes a destination without a path now never has one.
        if !moving && route.is_none() && component[src as usize] != component[dst as usize] {
            let (key, hint) = if prefix.starts_with("flow[") {
                (k("dst"), "")
            } else {
                (k("connected"), "; connected = true draws only pairs that have one")
            };
            return Err(ScenarioError::new(
                key,
                format!(
                    "node {} is unreachable from node {} under {} routing: no path of hops within radio.tx_range_m = {} m{hint}",
                    f.dst,
                    f.src,
                    super::Named::name(routing),
                    Num(r.tx_range_m)
                ),
            ));
        }
        let stop_s = f.stop_s.unwrap_or(file.duration_s).min(file.duration_s);
        flows.push(FlowSpec {
            src,
            dst,
            transport,
            app,
            packet_bytes: f.packet_bytes,
            start: SimTime::from_secs_f64(f.start_s),
            stop: SimTime::from_secs_f64(stop_s),
            measure_from: SimTime::from_secs_f64(f.start_s),
            route,
            route_changes,
        });
    }
    if let Some(m) = &file.metrics {
        Span::NON_NEGATIVE
            .check("metrics.warmup_s", m.warmup_s, Unit::Seconds)
            .map_err(|e| ScenarioError::keyed("", &e))?;
        let last = flows.iter().map(|f| f.start).max().unwrap_or(SimTime::ZERO);
        let from = last + Duration::from_secs_f64(m.warmup_s);
        for (i, f) in flows.iter_mut().enumerate() {
            f.measure_from = f.measure_from.max(from);
            if f.measure_from >= f.stop {
                return Err(ScenarioError::new(
                    "metrics.warmup_s",
                    format!(
                        "{} leaves flow[{i}] no measurement window: the last flow starts at {} s and flow[{i}] stops at {} s",
                        Num(m.warmup_s),
                        Num(last.as_secs_f64()),
                        Num(f.stop.as_secs_f64())
                    ),
                ));
            }
        }
    }
    Ok(flows)
}
