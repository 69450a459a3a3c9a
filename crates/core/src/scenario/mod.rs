//! Scenarios: parsing (TOML or JSON, the same keys), validation with
//! messages that name the key, the bad value and what is allowed, and the
//! resolved model the simulator runs. Topology generators live here too.

pub mod file;
pub mod mobility;
pub mod topology;

pub use file::ScenarioFile;

use crate::app::onoff::OnOffConfig;
use crate::mac::DcfConfig;
use crate::net::static_routes::{Bfs, UNREACHABLE};
use crate::net::QueueKind;
use crate::phy::channel::Position;
use crate::phy::Rate;
use crate::time::{Duration, SimTime};
use crate::transport::tcp::{TcpConfig, TcpVariant};
use std::fmt;

/// A problem with a scenario that the user can fix.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The offending key as a path (`flow[0].dst`), or empty for the whole file.
    pub key: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            key: key.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "key `{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

type Result<T> = std::result::Result<T, ScenarioError>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

/// Parses the file format; serde's message keeps the key path.
pub fn parse_file(text: &str, format: Format) -> Result<ScenarioFile> {
    match format {
        Format::Toml => {
            // Syntax first, so that "not TOML" is told apart from a bad key.
            let _: toml::Table = text.parse().map_err(|e: toml::de::Error| {
                ScenarioError::new("", format!("not valid TOML: {}", one_line(&e.to_string())))
            })?;
            let de = toml::Deserializer::new(text);
            serde_path_to_error::deserialize(de).map_err(|e| {
                let inner = e.inner();
                let line = inner
                    .span()
                    .map(|sp| text[..sp.start.min(text.len())].matches('\n').count() + 1);
                let msg = match line {
                    Some(l) => format!("{} (line {l})", one_line(inner.message())),
                    None => one_line(inner.message()),
                };
                path_error(e.path().to_string(), &msg)
            })
        }
        Format::Json => {
            let mut de = serde_json::Deserializer::from_str(text);
            serde_path_to_error::deserialize(&mut de)
                .map_err(|e| path_error(e.path().to_string(), &e.inner().to_string()))
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn path_error(path: String, msg: &str) -> ScenarioError {
    let path = if path == "." { String::new() } else { path };
    let msg = one_line(msg);
    let msg = if msg.starts_with("missing field") {
        format!("{msg} (required)")
    } else {
        msg
    };
    ScenarioError::new(path, msg)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transport {
    Udp,
    Tcp(TcpVariant),
}

impl Transport {
    /// Every transport name: the TCP variants, then UDP.
    pub fn names() -> Vec<&'static str> {
        TcpVariant::ALL.iter().map(|v| v.name()).chain(["udp"]).collect()
    }
    pub fn parse(s: &str) -> Option<Transport> {
        if s == "udp" {
            return Some(Transport::Udp);
        }
        s.parse().ok().map(Transport::Tcp)
    }
    pub fn name(self) -> &'static str {
        match self {
            Transport::Udp => "udp",
            Transport::Tcp(v) => v.name(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum App {
    /// Constant bit rate, `rate_kbps` (over UDP).
    Cbr { rate_kbps: f64 },
    /// Bulk transfer, always backlogged (over TCP).
    Ftp,
    /// HTTP-like on/off source of the `[onoff]` table (over TCP).
    Http,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoutingKind {
    Static,
    Aodv,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub transport: Transport,
    pub app: App,
    pub packet_bytes: u32,
    pub start: SimTime,
    pub stop: SimTime,
    /// Start of the window `throughput_kbps` covers (`metrics.warmup_s`; else `start`).
    pub measure_from: SimTime,
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

/// The resolved `[radio]` table.
pub type RadioParams = crate::phy::PhyConfig;

/// A validated scenario, with node indices 0..n and every value resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    pub name: String,
    pub seed: u64,
    pub duration: SimTime,
    /// External node ids, by internal index.
    pub node_ids: Vec<i64>,
    /// Internal index of each node in the file's own order (generated
    /// topologies: id order). Per-node outputs are given in this order.
    pub file_order: Vec<u32>,
    pub positions: Vec<Position>,
    pub radio: RadioParams,
    pub dcf: DcfConfig,
    pub queue: QueueKind,
    pub queue_capacity: usize,
    pub routing: RoutingKind,
    pub flows: Vec<FlowSpec>,
    pub node_series: bool,
    /// EIFS after frames only sensed (`mac.eifs_after_sensed`).
    pub eifs_after_sensed: bool,
    /// Per node index, its trajectory if it moves.
    pub trajectories: Vec<Option<crate::mobility::Trajectory>>,
    pub mobility_update: Duration,
    pub tcp: TcpConfig,
    pub onoff: OnOffConfig,
    pub aodv: crate::net::aodv::AodvConfig,
    pub red: crate::net::red::RedConfig,
    pub nred: crate::net::nred::NredConfig,
    /// Ingress throttling's settings, when the scenario has a `[throttle]`
    /// table or uses `mac.queue = "throttle"`.
    pub throttle: Option<crate::net::throttle::ThrottleConfig>,
    /// The node whose neighborhood queue is traced (`trace.neighborhood_node`).
    pub neighborhood_node: Option<u32>,
    /// The file with every default filled in.
    pub file: ScenarioFile,
}

/// Largest MSDU 802.11 carries (§8.3.2.1).
pub const MAX_MSDU_BYTES: u32 = 2304;

fn positive(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(key, format!("{v} must be a positive number")))
    }
}

/// Turns a component's "key = value: why" message into a ScenarioError.
fn split_key_error(table: &str, msg: &str) -> ScenarioError {
    match msg.split_once(" = ") {
        Some((key, rest)) if !key.contains(' ') => {
            let key = if key.starts_with(&format!("{table}.")) {
                key.to_string()
            } else {
                format!("{table}.{key}")
            };
            ScenarioError::new(key, rest.to_string())
        }
        _ => ScenarioError::new(table, msg.to_string()),
    }
}

fn fmt_list(xs: &[&str]) -> String {
    xs.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(", ")
}

fn rate(key: &str, mbps: f64) -> Result<Rate> {
    Rate::from_mbps(mbps)
        .ok_or_else(|| ScenarioError::new(key, format!("{mbps} is not an 802.11b rate; allowed: 1, 2, 5.5, 11")))
}

/// An explicit route's node indices: from the flow's source to its
/// destination, each node once.
fn explicit_path(
    path: &[i64],
    src: u32,
    dst: u32,
    src_id: i64,
    dst_id: i64,
    key: &str,
    index_of: &dyn Fn(&str, i64) -> Result<u32>,
) -> Result<Vec<u32>> {
    let idx: Vec<u32> = path.iter().map(|&id| index_of(key, id)).collect::<Result<_>>()?;
    if idx.len() < 2 || idx[0] != src || idx[idx.len() - 1] != dst {
        return Err(ScenarioError::new(
            key,
            format!("{path:?} must start at src = {src_id} and end at dst = {dst_id}"),
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

/// The radio's ranges per rate and its interference reach; the link rates
/// are those of the MAC's unicast exchange.
fn resolve_radio(r: &file::RadioFile, dcf: &DcfConfig) -> Result<RadioParams> {
    let mut p = RadioParams::with_ranges(r.tx_range_m, r.cs_range_m, r.capture_threshold_db);
    p.lock_on_sensed = r.lock_on_sensed;
    p.link_rates = [dcf.data_rate, dcf.basic_rate, dcf.ack_rate].into_iter().collect();
    for (name, &range) in r.tx_range_by_rate_m.iter().flatten() {
        let key = format!("radio.tx_range_by_rate_m.\"{name}\"");
        let rate = name.parse::<f64>().ok().and_then(Rate::from_mbps).ok_or_else(|| {
            ScenarioError::new(
                &key,
                format!("\"{name}\" is not an 802.11b rate; allowed: \"1\", \"2\", \"5.5\", \"11\""),
            )
        })?;
        positive(&key, range)?;
        if range > r.cs_range_m {
            return Err(ScenarioError::new(
                key,
                format!(
                    "{range} is beyond radio.cs_range_m = {}; carrier sense must reach at least as far as decoding",
                    r.cs_range_m
                ),
            ));
        }
        p.rate_range_m[rate.index()] = range;
    }
    if let Some(name) = &r.profile {
        use crate::phy::profiles;
        if r.tx_range_by_rate_m.is_some() {
            return Err(ScenarioError::new(
                "radio.profile",
                "give either a profile or radio.tx_range_by_rate_m, not both",
            ));
        }
        let ranges = match name.as_str() {
            "osipov-ranges" => profiles::osipov_ranges(),
            "sensitivity" => {
                let card_name = r.card.as_deref().unwrap_or("orinoco");
                let card = profiles::card(card_name).ok_or_else(|| {
                    let names: Vec<&str> = profiles::CARDS.iter().map(|c| c.name).collect();
                    ScenarioError::new(
                        "radio.card",
                        format!("\"{card_name}\" is not a known card; allowed: {}", fmt_list(&names)),
                    )
                })?;
                profiles::sensitivity_ranges(&crate::phy::propagation::TwoRayGround::default(), r.tx_range_m, card)
            }
            other => {
                return Err(ScenarioError::new(
                    "radio.profile",
                    format!(
                        "\"{other}\" is not a profile; allowed: {}",
                        fmt_list(profiles::PROFILES)
                    ),
                ))
            }
        };
        if let Some(far) = ranges.iter().copied().find(|&d| d > r.cs_range_m) {
            return Err(ScenarioError::new(
                "radio.cs_range_m",
                format!(
                    "{} is below the {far:.1} m the profile \"{name}\" decodes to; carrier sense must reach at least as far as decoding",
                    r.cs_range_m
                ),
            ));
        }
        p.rate_range_m = ranges;
    } else if r.card.is_some() {
        return Err(ScenarioError::new(
            "radio.card",
            "only the profile \"sensitivity\" reads a card",
        ));
    }
    if let Some(d) = r.interference_range_m {
        positive("radio.interference_range_m", d)?;
        if d < r.cs_range_m {
            return Err(ScenarioError::new(
                "radio.interference_range_m",
                format!(
                    "{d} is below radio.cs_range_m = {}; signals must reach at least as far as carrier sense",
                    r.cs_range_m
                ),
            ));
        }
        p.interference_range_m = d;
    }
    Ok(p)
}

/// Parses and validates; `seed` and `duration_s` override the file.
pub fn load(text: &str, format: Format, seed: Option<u64>, duration_s: Option<f64>) -> Result<Scenario> {
    load_with(text, format, seed, duration_s, |path| {
        Err(format!("cannot read {path:?} here"))
    })
}

/// As `load`, with `read_file` to fetch files the scenario names (an ns-2
/// movement file); the core itself does no I/O.
pub fn load_with(
    text: &str,
    format: Format,
    seed: Option<u64>,
    duration_s: Option<f64>,
    read_file: impl Fn(&str) -> std::result::Result<String, String>,
) -> Result<Scenario> {
    let mut file = parse_file(text, format)?;
    if let Some(s) = seed {
        file.seed = s;
    }
    if let Some(d) = duration_s {
        file.duration_s = d;
    }
    if let (Some(path), None) = (&file.mobility.ns2_file, &file.mobility.ns2_movements) {
        let text = read_file(path).map_err(|e| ScenarioError::new("mobility.ns2_file", e))?;
        file.mobility.ns2_movements = Some(text);
    }
    resolve(file)
}

pub fn resolve(mut file: ScenarioFile) -> Result<Scenario> {
    positive("duration_s", file.duration_s)?;
    let duration = SimTime::from_secs_f64(file.duration_s);

    let radio = file.radio.clone();
    let r = &radio;
    let data_rate = rate("radio.data_rate_mbps", r.data_rate_mbps)?;
    let basic_rate = rate("radio.basic_rate_mbps", r.basic_rate_mbps)?;
    positive("radio.tx_range_m", r.tx_range_m)?;
    positive("radio.cs_range_m", r.cs_range_m)?;
    if r.cs_range_m < r.tx_range_m {
        return Err(ScenarioError::new(
            "radio.cs_range_m",
            format!(
                "{} is below radio.tx_range_m = {}; carrier sense must reach at least as far as decoding",
                r.cs_range_m, r.tx_range_m
            ),
        ));
    }
    if r.propagation != "two-ray-ground" {
        return Err(ScenarioError::new(
            "radio.propagation",
            format!(
                "\"{}\" is not a propagation model; allowed: \"two-ray-ground\"",
                r.propagation
            ),
        ));
    }
    if !(r.capture_threshold_db.is_finite() && r.capture_threshold_db >= 0.0) {
        return Err(ScenarioError::new(
            "radio.capture_threshold_db",
            format!("{} must be a number of dB >= 0", r.capture_threshold_db),
        ));
    }

    let m = &file.mac;
    let queue = QueueKind::parse(&m.queue).ok_or_else(|| {
        ScenarioError::new(
            "mac.queue",
            format!(
                "\"{}\" is not a queue discipline; allowed: {}",
                m.queue,
                fmt_list(QueueKind::NAMES)
            ),
        )
    })?;
    for (key, v) in [
        ("mac.short_retry_limit", m.short_retry_limit),
        ("mac.long_retry_limit", m.long_retry_limit),
        ("mac.queue_capacity_pkts", m.queue_capacity_pkts),
        ("mac.slot_us", m.slot_us),
        ("mac.sifs_us", m.sifs_us),
    ] {
        if v == 0 {
            return Err(ScenarioError::new(key, "0 is not allowed; must be an integer >= 1"));
        }
    }
    if !(m.cw_min + 1).is_power_of_two() || m.cw_min < 1 {
        return Err(ScenarioError::new(
            "mac.cw_min",
            format!("{} must be 2^k - 1 with k >= 1 (e.g. 31)", m.cw_min),
        ));
    }
    if !(m.cw_max + 1).is_power_of_two() || m.cw_max < m.cw_min {
        return Err(ScenarioError::new(
            "mac.cw_max",
            format!("{} must be 2^k - 1 and >= mac.cw_min = {}", m.cw_max, m.cw_min),
        ));
    }
    m.quick_exchange
        .validate()
        .map_err(|e| split_key_error("mac.quick_exchange", &e))?;
    // Scheme tables: checked when given, filled in when their queue is used.
    if let Some(c) = &file.red {
        c.validate().map_err(|e| split_key_error("red", &e))?;
    }
    if let Some(c) = &file.nred {
        c.validate().map_err(|e| split_key_error("nred", &e))?;
    }
    if queue == QueueKind::Red && file.red.is_none() {
        file.red = Some(Default::default());
    }
    if queue == QueueKind::Nred && file.nred.is_none() {
        file.nred = Some(Default::default());
    }
    if let Some(c) = &file.throttle {
        c.validate().map_err(|e| split_key_error("throttle", &e))?;
    }
    if queue == QueueKind::Throttle && file.throttle.is_none() {
        file.throttle = Some(Default::default());
    }
    let m = &file.mac;
    let dcf = DcfConfig {
        slot: Duration::from_micros(m.slot_us as u64),
        sifs: Duration::from_micros(m.sifs_us as u64),
        cw_min: m.cw_min,
        cw_max: m.cw_max,
        short_retry_limit: m.short_retry_limit,
        long_retry_limit: m.long_retry_limit,
        rts_threshold_bytes: m.rts_threshold_bytes,
        data_rate,
        basic_rate,
        ack_rate: match m.ack_rate_mbps {
            Some(v) => rate("mac.ack_rate_mbps", v)?,
            None => basic_rate,
        },
        quick_exchange: m.quick_exchange,
    };
    let radio_params = resolve_radio(r, &dcf)?;

    file.tcp.validate().map_err(|e| split_key_error("tcp", &e))?;
    file.onoff.validate().map_err(|e| split_key_error("onoff", &e))?;

    let routing = match file.routing.protocol.as_str() {
        "static" => RoutingKind::Static,
        "aodv" => {
            file.routing
                .aodv
                .validate()
                .map_err(|e| split_key_error("routing.aodv", &e))?;
            RoutingKind::Aodv
        }
        other => {
            return Err(ScenarioError::new(
                "routing.protocol",
                format!("\"{other}\" is not a routing protocol; allowed: \"static\", \"aodv\""),
            ));
        }
    };

    let (mut node_ids, mut positions) = topology::build(&file)?;
    let mut file_order: Vec<u32> = (0..node_ids.len() as u32).collect();
    if matches!(file.topology.kind.as_str(), "random" | "explicit") {
        if let Some(order) = topology::spatial_order(&positions) {
            node_ids = order.iter().map(|&i| node_ids[i]).collect();
            positions = order.iter().map(|&i| positions[i]).collect();
            for (internal, &i) in order.iter().enumerate() {
                file_order[i] = internal as u32;
            }
        }
    }
    let trajectories = mobility::resolve(&file, &node_ids, &positions)?;
    for (p, t) in positions.iter_mut().zip(&trajectories) {
        if let Some(t) = t {
            *p = t.position_at(SimTime::ZERO);
        }
    }
    let moving = trajectories.iter().flatten().any(|t| !t.is_static());
    let n = node_ids.len();
    let index_of = |key: &str, id: i64| -> Result<u32> {
        node_ids.iter().position(|&x| x == id).map(|i| i as u32).ok_or_else(|| {
            let range = if file.topology.kind == "explicit" {
                let ids: Vec<String> = node_ids.iter().take(20).map(|x| x.to_string()).collect();
                format!(
                    "the [[node]] ids: {}{}",
                    ids.join(", "),
                    if n > 20 { ", ..." } else { "" }
                )
            } else {
                format!("0 to {}", n - 1)
            };
            ScenarioError::new(
                key,
                format!("{id} is not a node of this topology; node ids are {range}"),
            )
        })
    };

    // Connectivity over the transmission range, for static routes.
    let channel = crate::phy::channel::Channel::new(positions.clone(), &radio_params);
    let adj = channel.rx_adjacency();

    let mut flows = Vec::with_capacity(file.flows.len());
    let mut bfs = Bfs::new(adj.len());
    for (i, f) in file.flows.iter().enumerate() {
        let k = |s: &str| format!("flow[{i}].{s}");
        let src = index_of(&k("src"), f.src)?;
        let dst = index_of(&k("dst"), f.dst)?;
        if src == dst {
            return Err(ScenarioError::new(
                k("dst"),
                format!("{} equals flow[{i}].src; a flow needs two different nodes", f.dst),
            ));
        }
        let transport = Transport::parse(&f.transport).ok_or_else(|| {
            ScenarioError::new(
                k("transport"),
                format!(
                    "\"{}\" is not a transport; allowed: {}",
                    f.transport,
                    fmt_list(&Transport::names())
                ),
            )
        })?;
        let app = match (f.app.as_str(), transport) {
            ("cbr", Transport::Udp) => {
                let rate = f.rate_kbps.ok_or_else(|| {
                    ScenarioError::new(
                        k("rate_kbps"),
                        "missing: app \"cbr\" needs rate_kbps (a positive number)",
                    )
                })?;
                positive(&k("rate_kbps"), rate)?;
                App::Cbr { rate_kbps: rate }
            }
            ("ftp", Transport::Tcp(_)) => App::Ftp,
            ("http", Transport::Tcp(_)) => App::Http,
            ("cbr" | "ftp" | "http", _) => {
                return Err(ScenarioError::new(
                    k("app"),
                    format!(
                        "\"{}\" does not run over transport \"{}\"; \"cbr\" runs over \"udp\", \"ftp\" and \"http\" over TCP",
                        f.app, f.transport
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
        if f.rate_kbps.is_some() && !matches!(app, App::Cbr { .. }) {
            return Err(ScenarioError::new(k("rate_kbps"), "only app = \"cbr\" takes a rate"));
        }
        if f.packet_bytes == 0 || f.packet_bytes > MAX_MSDU_BYTES - 28 {
            return Err(ScenarioError::new(
                k("packet_bytes"),
                format!("{} must be between 1 and {}", f.packet_bytes, MAX_MSDU_BYTES - 28),
            ));
        }
        if !(f.start_s.is_finite() && f.start_s >= 0.0) {
            return Err(ScenarioError::new(
                k("start_s"),
                format!("{} must be a number of seconds >= 0", f.start_s),
            ));
        }
        if f.start_s >= file.duration_s {
            return Err(ScenarioError::new(
                k("start_s"),
                format!(
                    "{} is not before the end of the run (duration_s = {})",
                    f.start_s, file.duration_s
                ),
            ));
        }
        let stop_s = f.stop_s.unwrap_or(file.duration_s);
        if !(stop_s.is_finite() && stop_s > f.start_s) {
            return Err(ScenarioError::new(
                k("stop_s"),
                format!("{stop_s} must be after start_s = {}", f.start_s),
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
                let idx = explicit_path(path, src, dst, f.src, f.dst, &k("route"), &index_of)?;
                for (w, ids) in idx.windows(2).zip(path.windows(2)) {
                    if !channel.in_rx_range(w[0], w[1]) {
                        return Err(ScenarioError::new(
                            k("route"),
                            format!(
                                "hop {} -> {} is longer than radio.tx_range_m = {} m",
                                ids[0], ids[1], r.tx_range_m
                            ),
                        ));
                    }
                }
                Some(idx)
            }
        };
        let mut route_changes = Vec::with_capacity(f.route_changes.len());
        for (j, c) in f.route_changes.iter().enumerate() {
            let kc = |s: &str| k(&format!("route_changes[{j}].{s}"));
            if routing != RoutingKind::Static {
                return Err(ScenarioError::new(
                    kc("route"),
                    "route changes need routing.protocol = \"static\"",
                ));
            }
            let prev = route_changes
                .last()
                .map_or(0.0, |(t, _): &(SimTime, Vec<u32>)| t.as_secs_f64());
            if !(c.at_s.is_finite() && c.at_s > prev && c.at_s < file.duration_s) {
                return Err(ScenarioError::new(
                    kc("at_s"),
                    format!(
                        "{} must be after the previous change (or 0) and before the end of the run (duration_s = {})",
                        c.at_s, file.duration_s
                    ),
                ));
            }
            let at = SimTime::from_secs_f64(c.at_s);
            let idx = explicit_path(&c.route, src, dst, f.src, f.dst, &kc("route"), &index_of)?;
            // Every hop must decode where the nodes are at that instant.
            let here: Vec<Position> = positions
                .iter()
                .zip(&trajectories)
                .map(|(p, t)| t.as_ref().map_or(*p, |t| t.position_at(at)))
                .collect();
            let then = crate::phy::channel::Channel::new(here, &radio_params);
            for (w, ids) in idx.windows(2).zip(c.route.windows(2)) {
                if !then.in_rx_range(w[0], w[1]) {
                    return Err(ScenarioError::new(
                        kc("route"),
                        format!(
                            "hop {} -> {} is longer than radio.tx_range_m = {} m at {} s",
                            ids[0], ids[1], r.tx_range_m, c.at_s
                        ),
                    ));
                }
            }
            route_changes.push((at, idx));
        }
        // With fixed nodes a destination without a path now never has one.
        if !moving && route.is_none() && bfs.run(&adj, dst, src) == UNREACHABLE {
            return Err(ScenarioError::new(
                k("dst"),
                format!(
                    "node {} is unreachable from node {} under {} routing: no path of hops within radio.tx_range_m = {} m",
                    f.dst, f.src, file.routing.protocol, r.tx_range_m
                ),
            ));
        }
        flows.push(FlowSpec {
            src,
            dst,
            transport,
            app,
            packet_bytes: f.packet_bytes,
            start: SimTime::from_secs_f64(f.start_s),
            stop: SimTime::from_secs_f64(stop_s.min(file.duration_s)),
            measure_from: SimTime::from_secs_f64(f.start_s),
            route,
            route_changes,
        });
    }
    if let Some(m) = &file.metrics {
        if !(m.warmup_s.is_finite() && m.warmup_s >= 0.0) {
            return Err(ScenarioError::new(
                "metrics.warmup_s",
                format!("{} must be a number of seconds >= 0", m.warmup_s),
            ));
        }
        let last = flows.iter().map(|f| f.start).max().unwrap_or(SimTime::ZERO);
        let from = last + Duration::from_secs_f64(m.warmup_s);
        for (i, f) in flows.iter_mut().enumerate() {
            f.measure_from = f.measure_from.max(from);
            if f.measure_from >= f.stop {
                return Err(ScenarioError::new(
                    "metrics.warmup_s",
                    format!(
                        "{} leaves flow[{i}] no measurement window: the last flow starts at {} s and flow[{i}] stops at {} s",
                        m.warmup_s,
                        last.as_secs_f64(),
                        f.stop.as_secs_f64()
                    ),
                ));
            }
        }
    }

    let neighborhood_node = match file.trace.neighborhood_node {
        Some(id) => Some(index_of("trace.neighborhood_node", id)?),
        None => None,
    };

    let sc = Scenario {
        name: file.name.clone(),
        seed: file.seed,
        duration,
        node_ids,
        file_order,
        positions,
        radio: radio_params,
        dcf,
        queue,
        queue_capacity: m.queue_capacity_pkts as usize,
        routing,
        flows,
        node_series: file.trace.node_series,
        eifs_after_sensed: m.eifs_after_sensed,
        trajectories,
        mobility_update: Duration::from_secs_f64(file.mobility.update_interval_s),
        tcp: file.tcp.clone(),
        onoff: file.onoff.clone(),
        aodv: file.routing.aodv.clone(),
        red: file.red.clone().unwrap_or_default(),
        nred: file.nred.clone().unwrap_or_default(),
        throttle: file.throttle.clone(),
        neighborhood_node,
        file,
    };
    crate::net::throttle::check(&sc)?;
    Ok(sc)
}

impl Scenario {
    /// Canonical JSON of the file with defaults filled in (for hashing).
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(&self.file).expect("scenario serialises")
    }
}

#[cfg(test)]
mod tests;
