//! Scenarios: parsing (TOML or JSON, the same keys), validation with
//! messages that name the key, the bad value and what is allowed, and the
//! resolved model the simulator runs. Topology generators live here too.

pub mod budget;
pub mod file;
mod flow;
pub mod mobility;
pub mod platform;
pub mod topology;
mod traffic;

pub use crate::names::Named;
pub use budget::{Estimate, DEFAULT_MAX_MEMORY};
pub use file::{Propagation, RoutingKind, ScenarioFile, TopologyKind};
pub use flow::{App, FlowSpec, Transport};
pub use platform::{Ns2Rules, Platform};

use crate::app::onoff::OnOffConfig;
use crate::mac::DcfConfig;
use crate::net::QueueKind;
use crate::phy::channel::Position;
use crate::time::{Duration, Num, SimTime, Span, Unit};
use crate::transport::tcp::TcpConfig;
use std::collections::HashMap;
use std::fmt;

/// A problem with a scenario that the user can fix.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The offending key as a path (`flow[0].dst`), or empty for the whole file.
    pub key: String,
    /// What is wrong and what is allowed.
    pub message: String,
}

impl ScenarioError {
    /// An error about `key`.
    pub fn new(key: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            key: key.into(),
            message: message.into(),
        }
    }

    /// From a component's "key = value: why" message, with the key under
    /// `table` (`tcp`, `nred`, ...); an empty table keeps the key as it is.
    pub fn keyed(table: &str, msg: &str) -> Self {
        match msg.split_once(" = ") {
            Some((key, _)) if !key.contains(' ') => {
                let key = if table.is_empty() || key.starts_with(&format!("{table}.")) {
                    key.to_string()
                } else {
                    format!("{table}.{key}")
                };
                let rest = &msg[msg.find(" = ").map_or(0, |i| i + 3)..];
                ScenarioError::new(key, rest.to_string())
            }
            _ => ScenarioError::new(table, msg.to_string()),
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

/// The syntax of a scenario's text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TOML (scenario files).
    Toml,
    /// JSON (what `scenario.json` and the bindings hold).
    Json,
}

/// Parses the file format; serde's message keeps the key path. Under
/// `platform = "ns2"` the file is read again with ns-2.35's defaults under
/// the keys it sets (`platform::fill_defaults`).
pub fn parse_file(text: &str, format: Format) -> Result<ScenarioFile> {
    let file = parse_as_written(text, format)?;
    if file.platform.is_standard() {
        return Ok(file);
    }
    // The file parsed as written, so it is a table of known keys: the
    // defaults only add keys, and can make no error of their own.
    let mut doc = match format {
        Format::Toml => {
            let table: toml::Table = text
                .parse()
                .map_err(|e: toml::de::Error| ScenarioError::new("", e.to_string()))?;
            serde_json::to_value(table).map_err(|e| ScenarioError::new("", e.to_string()))?
        }
        Format::Json => serde_json::from_str(text).map_err(|e| ScenarioError::new("", e.to_string()))?,
    };
    platform::fill_defaults(&mut doc, file.platform);
    serde_path_to_error::deserialize(doc).map_err(|e| path_error(e.path().to_string(), &clip(&e.inner().to_string())))
}

/// Parses the file as written, with manetfair's own defaults.
fn parse_as_written(text: &str, format: Format) -> Result<ScenarioFile> {
    match format {
        Format::Toml => {
            // One parse on the way that succeeds; after a failure the text is
            // parsed again for its syntax alone, so that "not TOML" is told
            // apart from a bad key.
            let not_toml = |e: toml::de::Error| {
                let at = e.span().map(|sp| {
                    let before = &text[..sp.start.min(text.len())];
                    let line = before.matches('\n').count() + 1;
                    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                    format!(" (line {line}, column {column})")
                });
                ScenarioError::new(
                    "",
                    format!(
                        "not valid TOML: {}{}",
                        clip(&one_line(e.message())),
                        at.unwrap_or_default()
                    ),
                )
            };
            let de = toml::Deserializer::parse(text).map_err(not_toml)?;
            let err = match serde_path_to_error::deserialize(de) {
                Ok(file) => return Ok(file),
                Err(e) => e,
            };
            let _: toml::Table = text.parse().map_err(not_toml)?;
            let inner = err.inner();
            let line = inner
                .span()
                .map(|sp| text[..sp.start.min(text.len())].matches('\n').count() + 1);
            let msg = match line {
                Some(l) => format!("{} (line {l})", explain(&one_line(inner.message()))),
                None => explain(&one_line(inner.message())),
            };
            Err(path_error(err.path().to_string(), &msg))
        }
        Format::Json => {
            let mut de = serde_json::Deserializer::from_str(text);
            serde_path_to_error::deserialize(&mut de)
                .map_err(|e| path_error(e.path().to_string(), &explain(&e.inner().to_string())))
        }
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// serde's message, made to name what is allowed: an unknown key or name
/// (`unknown field`/`unknown variant`) keeps the whole list of allowed ones,
/// led by the nearest to the one given when it is a likely misspelling;
/// any other message is clipped (`clip`), since it may quote the input.
fn explain(msg: &str) -> String {
    for what in ["field", "variant"] {
        let Some(rest) = msg.strip_prefix(&format!("unknown {what} `")) else {
            continue;
        };
        let Some((given, allowed)) = rest.split_once("`, expected ") else {
            continue;
        };
        let allowed = allowed.trim_start_matches("one of ");
        // The names are the list's quoted parts: "`a`, `b`" or "`a` or `b`".
        let names = allowed.split('`').skip(1).step_by(2);
        let lead = match crate::names::nearest(given, names) {
            Some(n) => format!("did you mean `{n}`? Allowed"),
            None => "allowed".to_string(),
        };
        return format!("unknown {what} `{}`; {lead}: {allowed}", clip(given));
    }
    clip(msg)
}

/// At most 200 characters of a message that quotes the input.
fn clip(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s.to_string(),
    }
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

/// The resolved `[radio]` table.
pub type RadioParams = crate::phy::PhyConfig;

/// A validated scenario, with node indices 0..n and every value resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The scenario's name (`name`; the file's stem by default).
    pub name: String,
    /// The run's seed: every random stream derives from it.
    pub seed: u64,
    /// The run's end (`duration_s`).
    pub duration: SimTime,
    /// External node ids, by internal index.
    pub node_ids: Vec<i64>,
    /// Internal index of each node in the file's own order (generated
    /// topologies: id order). Per-node outputs are given in this order.
    pub file_order: Vec<u32>,
    /// Initial positions, by internal index.
    pub positions: Vec<Position>,
    /// The radio: rates, ranges, reception model.
    pub radio: RadioParams,
    /// The DCF's parameters and MAC extensions.
    pub dcf: DcfConfig,
    /// The interface queue's discipline (`mac.queue`).
    pub queue: QueueKind,
    /// The interface queue's capacity, packets.
    pub queue_capacity: usize,
    /// The routing protocol.
    pub routing: RoutingKind,
    /// The flows, with node indices.
    pub flows: Vec<FlowSpec>,
    /// Whether per-node series are recorded (`trace.node_series`).
    pub node_series: bool,
    /// The series' bin (`trace.series_interval_s`).
    pub series_bin: Duration,
    /// EIFS after frames only sensed (`mac.eifs_after_sensed`).
    pub eifs_after_sensed: bool,
    /// UDP packet sizes as ns-2's agents make them (`[ns2] ip_header_per_agent`).
    pub ip_header_per_agent: bool,
    /// ns-2's ARP between routing and the interface queue (`[ns2] arp`).
    pub arp: bool,
    /// Per node index, its trajectory if it moves.
    pub trajectories: Vec<Option<crate::mobility::Trajectory>>,
    /// How often moving nodes' positions reach the channel.
    pub mobility_update: Duration,
    /// TCP's options (`[tcp]`).
    pub tcp: TcpConfig,
    /// The HTTP-like source's options (`[onoff]`).
    pub onoff: OnOffConfig,
    /// AODV's options (`[routing.aodv]`).
    pub aodv: crate::net::aodv::AodvConfig,
    /// RED's options (`[red]`).
    pub red: crate::net::red::RedConfig,
    /// NRED's options (`[nred]`).
    pub nred: crate::net::nred::NredConfig,
    /// Ingress throttling's settings, when the scenario has a `[throttle]`
    /// table or uses `mac.queue = "throttle"`.
    pub throttle: Option<crate::net::throttle::ThrottleConfig>,
    /// The node whose neighborhood queue is traced (`trace.neighborhood_node`).
    pub neighborhood_node: Option<u32>,
    /// What the run is expected to need (checked against the budget).
    pub estimate: Estimate,
    /// The file with every default filled in.
    pub file: ScenarioFile,
}

/// Largest MSDU 802.11 carries (§8.3.2.1).
pub const MAX_MSDU_BYTES: u32 = 2304;

fn positive(key: &str, v: f64) -> Result<()> {
    if v.is_finite() && v > 0.0 {
        Ok(())
    } else {
        Err(ScenarioError::new(key, format!("{} must be a positive number", Num(v))))
    }
}

/// A length key (a range, a radius), through the one length bound
/// (`topology::check_length`).
fn length(key: &str, v: f64) -> Result<()> {
    topology::check_length(key, v).map_err(|e| ScenarioError::keyed("", &e))
}

/// A time-valued key of the scenario itself, through the one time validator.
fn span(key: &str, v: f64, span: Span) -> Result<Duration> {
    span.check(key, v, Unit::Seconds)
        .map_err(|e| ScenarioError::keyed("", &e))
}

/// Reads a file a scenario names, by the path written in it.
pub type ReadFile<'a> = &'a dyn Fn(&str) -> std::result::Result<String, String>;

/// How a scenario is loaded besides its text.
#[derive(Clone, Copy)]
pub struct Options<'a> {
    /// Replaces the file's `seed`.
    pub seed: Option<u64>,
    /// Replaces the file's `duration_s`.
    pub duration_s: Option<f64>,
    /// The memory budget, bytes (`--max-memory`): a larger estimate is refused.
    pub max_memory_bytes: u64,
    /// Fetches a file the scenario names (`mobility.ns2_file`), resolving its
    /// path as the caller documents; the core itself does no I/O.
    pub read_file: Option<ReadFile<'a>>,
}

impl Default for Options<'_> {
    fn default() -> Self {
        Options {
            seed: None,
            duration_s: None,
            max_memory_bytes: DEFAULT_MAX_MEMORY,
            read_file: None,
        }
    }
}

/// Parses and validates; `seed` and `duration_s` override the file.
pub fn load(text: &str, format: Format, seed: Option<u64>, duration_s: Option<f64>) -> Result<Scenario> {
    load_with(
        text,
        format,
        &Options {
            seed,
            duration_s,
            ..Options::default()
        },
    )
}

/// Parses and validates with every loading option.
pub fn load_with(text: &str, format: Format, opts: &Options<'_>) -> Result<Scenario> {
    let mut file = parse_file(text, format)?;
    if let Some(s) = opts.seed {
        file.seed = s;
    }
    if let Some(d) = opts.duration_s {
        file.duration_s = d;
    }
    if let (Some(path), None, Some(read)) = (&file.mobility.ns2_file, &file.mobility.ns2_movements, opts.read_file) {
        let text = read(path).map_err(|e| ScenarioError::new("mobility.ns2_file", e))?;
        file.mobility.ns2_movements = Some(text);
    }
    resolve(file, opts.max_memory_bytes)
}

/// Node ids to internal indices, with the message for an unknown id.
pub(crate) struct NodeIndex<'a> {
    by_id: HashMap<i64, u32>,
    ids: &'a [i64],
    explicit: bool,
}

impl<'a> NodeIndex<'a> {
    fn new(ids: &'a [i64], explicit: bool) -> Self {
        let by_id = ids.iter().enumerate().map(|(i, &id)| (id, i as u32)).collect();
        NodeIndex { by_id, ids, explicit }
    }

    pub(crate) fn get(&self, key: &str, id: i64) -> Result<u32> {
        self.by_id.get(&id).copied().ok_or_else(|| {
            let n = self.ids.len();
            let range = if self.explicit {
                let mut ids: Vec<i64> = self.ids.to_vec();
                ids.sort_unstable();
                let shown: Vec<String> = ids.iter().take(20).map(|x| x.to_string()).collect();
                format!(
                    "the [[node]] ids: {}{}",
                    shown.join(", "),
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
    }
}

/// Checks every key and builds the model the simulator runs. Each table
/// validates itself; this only orders the steps and joins their results.
pub fn resolve(mut file: ScenarioFile, max_memory_bytes: u64) -> Result<Scenario> {
    let duration = SimTime(span("duration_s", file.duration_s, Span::POSITIVE)?.as_nanos());
    let rates = file.radio.validate()?;
    let (queue, dcf) = (file.mac.queue, file.mac.resolve(&rates, &file.ns2)?);
    if file.radio.reception == file::ReceptionKind::Sinr && file.radio.sinr.is_none() {
        file.radio.sinr = Some(Default::default());
    }
    let mut radio = file.radio.resolve(&dcf)?;
    radio.lock_through_tx = file.ns2.lock_through_tx;
    radio.report_capture = file.ns2.capture_nav;
    // Scheme tables: checked when given, filled in when their queue is used.
    if let Some(c) = &file.red {
        c.validate().map_err(|e| ScenarioError::keyed("red", &e))?;
    }
    if let Some(c) = &file.nred {
        c.validate().map_err(|e| ScenarioError::keyed("nred", &e))?;
    }
    if queue == QueueKind::Red && file.red.is_none() {
        file.red = Some(Default::default());
    }
    if queue == QueueKind::Nred && file.nred.is_none() {
        file.nred = Some(Default::default());
    }
    if let Some(c) = &file.throttle {
        c.validate().map_err(|e| ScenarioError::keyed("throttle", &e))?;
    }
    if queue == QueueKind::Throttle && file.throttle.is_none() {
        file.throttle = Some(Default::default());
    }
    file.tcp.validate().map_err(|e| ScenarioError::keyed("tcp", &e))?;
    file.onoff.validate().map_err(|e| ScenarioError::keyed("onoff", &e))?;
    // Checked whatever the protocol, so that a table written for AODV is
    // never silently wrong.
    file.routing
        .aodv
        .validate()
        .map_err(|e| ScenarioError::keyed("routing.aodv", &e))?;
    let mobility_update = span(
        "mobility.update_interval_s",
        file.mobility.update_interval_s,
        Span::POSITIVE,
    )?;

    // Down to 1 ms: finer bins than the shortest exchange say nothing more,
    // and their count is what the memory estimate charges.
    let series_bin = span(
        "trace.series_interval_s",
        file.trace.series_interval_s,
        Span {
            min: Duration::from_millis(1),
            ..Span::POSITIVE
        },
    )?;

    let (mut node_ids, mut positions) = topology::build(&file)?;
    // Refused here, before anything sized by the scenario is built.
    let estimate = Estimate::of(&file, &positions)?;
    estimate.check_against(max_memory_bytes, file.topology.kind)?;
    let mut file_order: Vec<u32> = (0..node_ids.len() as u32).collect();
    if matches!(file.topology.kind, TopologyKind::Random | TopologyKind::Explicit) {
        if let Some(order) = topology::spatial_order(&positions) {
            node_ids = order.iter().map(|&i| node_ids[i]).collect();
            positions = order.iter().map(|&i| positions[i]).collect();
            for (internal, &i) in order.iter().enumerate() {
                file_order[i] = internal as u32;
            }
        }
    }
    let index = NodeIndex::new(&node_ids, file.topology.kind == TopologyKind::Explicit);
    let trajectories = mobility::resolve(&file, &index, &positions)?;
    for (p, t) in positions.iter_mut().zip(&trajectories) {
        if let Some(t) = t {
            *p = t.position_at(SimTime::ZERO);
        }
    }
    let moving = trajectories.iter().flatten().any(|t| !t.is_static());
    let flows = flow::resolve_all(&file, &radio, &index, &positions, &trajectories, moving)?;
    let neighborhood_node = match file.trace.neighborhood_node {
        Some(id) => Some(index.get("trace.neighborhood_node", id)?),
        None => None,
    };
    Ok(Scenario {
        name: file.name.clone(),
        seed: file.seed,
        duration,
        node_ids,
        file_order,
        positions,
        radio,
        dcf,
        queue,
        queue_capacity: file.mac.queue_capacity_pkts as usize,
        routing: file.routing.protocol,
        flows,
        node_series: file.trace.node_series,
        series_bin,
        eifs_after_sensed: file.mac.eifs_after_sensed,
        ip_header_per_agent: file.ns2.ip_header_per_agent,
        arp: file.ns2.arp,
        trajectories,
        mobility_update,
        tcp: TcpConfig {
            ns2_rto: file.ns2.rto_ssthresh_window,
            ..file.tcp.clone()
        },
        onoff: file.onoff.clone(),
        aodv: file.routing.aodv.clone(),
        red: file.red.clone().unwrap_or_default(),
        nred: file.nred.clone().unwrap_or_default(),
        throttle: file.throttle.clone(),
        neighborhood_node,
        estimate,
        file,
    })
}

impl Scenario {
    /// What ingress throttling reads of this scenario (`net::throttle`).
    pub fn throttle_input(&self) -> crate::net::throttle::ThrottleInput {
        crate::net::throttle::ThrottleInput {
            cfg: self.throttle.clone(),
            throttle_queue: self.queue == QueueKind::Throttle,
            node_ids: self.node_ids.clone(),
            positions: self.positions.clone(),
            trajectories: self.trajectories.clone(),
            flows: self.flows.clone(),
            radio: self.radio.clone(),
            duration: self.duration,
        }
    }

    /// Node `i`'s interface queue as the scenario sets it: its discipline
    /// (per-flow queues where the MAC serves flows apart), capacity and
    /// the discipline's random stream.
    pub fn interface_queue(&self, i: usize) -> crate::net::InterfaceQueue {
        use crate::engine::{stream, Purpose};
        use crate::net::red::Red;
        use crate::net::InterfaceQueue;
        match self.queue {
            _ if self.dcf.opet.enabled => InterfaceQueue::with_per_flow(self.queue_capacity, self.dcf.opet.scheduler),
            QueueKind::Red => InterfaceQueue::with_red(
                self.queue_capacity,
                Red::new(self.red.clone(), stream(self.seed, i as u64, Purpose::Queue)),
            ),
            QueueKind::Throttle => {
                let t = self
                    .throttle
                    .as_ref()
                    .expect("a throttle queue has its [throttle] table");
                let local = t.local_capacity_pkts.map_or(self.queue_capacity, |c| c as usize);
                InterfaceQueue::with_ingress(self.queue_capacity, local, t.spacing())
            }
            k => InterfaceQueue::new(k, self.queue_capacity),
        }
    }

    /// What the schemes across layers are built from (`scheme`).
    pub fn scheme_setup(&self) -> crate::scheme::SchemeSetup {
        crate::scheme::SchemeSetup {
            nred: self.nred_setup(),
            throttle: self.throttle_input(),
        }
    }

    /// What Neighborhood RED is built from (`scheme`).
    fn nred_setup(&self) -> crate::scheme::NredSetup {
        crate::scheme::NredSetup {
            cfg: self.nred.clone(),
            active: self.queue == QueueKind::Nred,
            traced: self.neighborhood_node.map(|n| (n, self.node_ids[n as usize])),
            nodes: self.positions.len(),
            seed: self.seed,
        }
    }
    /// Canonical JSON of the file with defaults filled in (for hashing).
    pub fn canonical_json(&self) -> String {
        serde_json::to_string(&self.file).expect("scenario serialises")
    }
}

#[cfg(test)]
mod tests;
