//! The scenario file as written (CONTRACT.md §2): serde structs with the
//! documented defaults. Unknown keys are refused. Serialising a parsed file
//! gives the canonical form with every default filled in.

use super::platform::{Ns2Rules, Platform};
use crate::names::named;
pub use crate::net::routing::RoutingKind;
use crate::net::QueueKind;
use serde::{Deserialize, Serialize};

/// `radio.propagation`: how received power falls with distance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Friis up to the crossover distance, then d^-4 (ns-2's TwoRayGround).
    TwoRayGround,
}
named!(Propagation, "a propagation model", [Propagation::TwoRayGround => "two-ray-ground"]);

/// `topology.kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TopologyKind {
    /// A line of `nodes` nodes, `spacing_m` apart.
    #[default]
    Chain,
    /// `rows` × `cols` nodes, `spacing_m` apart.
    Grid,
    /// `nodes` nodes placed uniformly at random in `width_m` × `height_m`.
    Random,
    /// The `[[node]]` tables' positions.
    Explicit,
}
named!(TopologyKind, "a topology kind", [
    TopologyKind::Chain => "chain",
    TopologyKind::Grid => "grid",
    TopologyKind::Random => "random",
    TopologyKind::Explicit => "explicit",
]);

fn default_name() -> String {
    "scenario".to_string()
}
fn one() -> u64 {
    1
}

/// A scenario file as written (TOML or JSON), before validation: every table and key of docs/scenario.md.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// `name` in the top level (docs/scenario.md).
    #[serde(default = "default_name")]
    pub name: String,
    /// Whose rules the run follows (`platform.rs`): the standard's, or
    /// ns-2.35's defaults and `[ns2]` rules.
    #[serde(default, skip_serializing_if = "Platform::is_standard")]
    pub platform: Platform,
    /// `[ns2]`: ns-2.35's departures from the standard, one key each.
    #[serde(default, skip_serializing_if = "Ns2Rules::is_default")]
    pub ns2: Ns2Rules,
    /// `duration_s` in the top level (docs/scenario.md).
    pub duration_s: f64,
    /// `seed` in the top level (docs/scenario.md).
    #[serde(default = "one")]
    pub seed: u64,
    /// `radio` in the top level (docs/scenario.md).
    #[serde(default)]
    pub radio: RadioFile,
    /// `mac` in the top level (docs/scenario.md).
    #[serde(default)]
    pub mac: MacFile,
    /// `routing` in the top level (docs/scenario.md).
    #[serde(default)]
    pub routing: RoutingFile,
    /// `topology` in the top level (docs/scenario.md).
    pub topology: TopologyFile,
    /// `nodes` in the top level (docs/scenario.md).
    #[serde(default, rename = "node", skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeFile>,
    /// `flows` in the top level (docs/scenario.md).
    #[serde(default, rename = "flow")]
    pub flows: Vec<FlowFile>,
    /// `[traffic]`: flows generated from the seed, numbered after the
    /// `[[flow]]` tables (docs/scenario.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traffic: Option<TrafficFile>,
    /// `tcp` in the top level (docs/scenario.md).
    #[serde(default)]
    pub tcp: crate::transport::tcp::TcpConfig,
    /// `onoff` in the top level (docs/scenario.md).
    #[serde(default)]
    pub onoff: crate::app::onoff::OnOffConfig,
    /// `mobility` in the top level (docs/scenario.md).
    #[serde(default)]
    pub mobility: MobilityFile,
    /// `trace` in the top level (docs/scenario.md).
    #[serde(default)]
    pub trace: TraceFile,
    /// How throughput is measured (`[metrics]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<MetricsFile>,
    /// RED's parameters (`mac.queue = "red"`); filled with defaults then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<crate::net::red::RedConfig>,
    /// NRED's parameters (`mac.queue = "nred"`); filled with defaults then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nred: Option<crate::net::nred::NredConfig>,
    /// Ingress throttling (`mac.queue = "throttle"`, filled with defaults
    /// then); with another queue the shares are computed and reported only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throttle: Option<crate::net::throttle::ThrottleConfig>,
}

/// `[radio]`: rates, ranges, propagation and the reception model.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RadioFile {
    /// `data_rate_mbps` in `[radio]` (docs/scenario.md).
    pub data_rate_mbps: f64,
    /// `basic_rate_mbps` in `[radio]` (docs/scenario.md).
    pub basic_rate_mbps: f64,
    /// `tx_range_m` in `[radio]` (docs/scenario.md).
    pub tx_range_m: f64,
    /// `cs_range_m` in `[radio]` (docs/scenario.md).
    pub cs_range_m: f64,
    /// `propagation` in `[radio]` (docs/scenario.md).
    pub propagation: Propagation,
    /// `capture_threshold_db` in `[radio]` (docs/scenario.md).
    pub capture_threshold_db: f64,
    /// Whether a signal below the receive threshold locks the receiver, as
    /// in ns-2 (so a stronger frame arriving during it is lost); false lets
    /// it only interfere, as ns-3's preamble detection does.
    pub lock_on_sensed: bool,
    /// Decode range per rate, keyed by the rate in Mbit/s ("1", "2", "5.5",
    /// "11"); rates not listed decode to `tx_range_m`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_range_by_rate_m: Option<std::collections::BTreeMap<String, f64>>,
    /// How far signals are delivered, as interference beyond
    /// `cs_range_m`; default `cs_range_m`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interference_range_m: Option<f64>,
    /// A named set of per-rate decode ranges (`phy::profiles`):
    /// "osipov-ranges" or "sensitivity" (with `card`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The card whose sensitivities the "sensitivity" profile uses (default "orinoco").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub card: Option<String>,
    /// Which reception model decides whether a frame is received.
    #[serde(skip_serializing_if = "ReceptionKind::is_threshold")]
    pub reception: ReceptionKind,
    /// The SINR model's settings (`reception = "sinr"`); filled with
    /// defaults then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sinr: Option<SinrFile>,
}

/// `radio.reception`.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ReceptionKind {
    /// Threshold capture, as ns-2 (and the papers).
    #[default]
    Threshold,
    /// Cumulative-interference SINR with preamble detection, as ns-3.
    Sinr,
}

impl ReceptionKind {
    fn is_threshold(&self) -> bool {
        *self == ReceptionKind::Threshold
    }
}

/// `[radio.sinr]`: ns-3's defaults.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SinrFile {
    /// `noise_figure_db` in `[radio.sinr]` (docs/scenario.md).
    pub noise_figure_db: f64,
    /// `preamble_detection_db` in `[radio.sinr]` (docs/scenario.md).
    pub preamble_detection_db: f64,
    /// `frame_capture` in `[radio.sinr]` (docs/scenario.md).
    pub frame_capture: bool,
    /// `frame_capture_margin_db` in `[radio.sinr]` (docs/scenario.md).
    pub frame_capture_margin_db: f64,
    /// `frame_capture_window_us` in `[radio.sinr]` (docs/scenario.md).
    pub frame_capture_window_us: f64,
}

impl Default for SinrFile {
    fn default() -> Self {
        SinrFile {
            noise_figure_db: 7.0,
            preamble_detection_db: 4.0,
            frame_capture: false,
            frame_capture_margin_db: 5.0,
            frame_capture_window_us: 16.0,
        }
    }
}

impl Default for RadioFile {
    fn default() -> Self {
        RadioFile {
            data_rate_mbps: 2.0,
            basic_rate_mbps: 1.0,
            tx_range_m: 250.0,
            cs_range_m: 550.0,
            propagation: Propagation::TwoRayGround,
            capture_threshold_db: 10.0,
            lock_on_sensed: true,
            tx_range_by_rate_m: None,
            interference_range_m: None,
            profile: None,
            card: None,
            reception: ReceptionKind::Threshold,
            sinr: None,
        }
    }
}

/// `[mac]`: the DCF's parameters, the queue and the MAC extensions.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MacFile {
    /// `rts_threshold_bytes` in `[mac]` (docs/scenario.md).
    pub rts_threshold_bytes: u32,
    /// `short_retry_limit` in `[mac]` (docs/scenario.md).
    pub short_retry_limit: u32,
    /// `long_retry_limit` in `[mac]` (docs/scenario.md).
    pub long_retry_limit: u32,
    /// `queue` in `[mac]` (docs/scenario.md).
    pub queue: QueueKind,
    /// `queue_capacity_pkts` in `[mac]` (docs/scenario.md).
    pub queue_capacity_pkts: u32,
    /// `slot_us` in `[mac]` (docs/scenario.md).
    pub slot_us: u32,
    /// `sifs_us` in `[mac]` (docs/scenario.md).
    pub sifs_us: u32,
    /// `cw_min` in `[mac]` (docs/scenario.md).
    pub cw_min: u32,
    /// `cw_max` in `[mac]` (docs/scenario.md).
    pub cw_max: u32,
    /// ACK frames' rate; default the basic rate (ns-2, the papers). ns-3
    /// answers at the data rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_rate_mbps: Option<f64>,
    /// EIFS after a frame that was only sensed (below the receive
    /// threshold), as ns-2 does; ns-3 does not.
    pub eifs_after_sensed: bool,
    /// `[mac.quick_exchange]` (docs/selfcontention.md).
    #[serde(skip_serializing_if = "crate::mac::quick_exchange::QuickExchange::is_default")]
    pub quick_exchange: crate::mac::quick_exchange::QuickExchange,
    /// `[mac.fast_forward]` (docs/selfcontention.md).
    #[serde(skip_serializing_if = "crate::mac::fast_forward::FastForward::is_default")]
    pub fast_forward: crate::mac::fast_forward::FastForward,
    /// `[mac.opet]` (docs/opet.md).
    #[serde(skip_serializing_if = "crate::mac::opet::Opet::is_default")]
    pub opet: crate::mac::opet::Opet,
    /// The summary reports `mac.msdus_started` and `mac.first_rts_failed`
    /// (docs/selfcontention.md).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub count_first_rts: bool,
}

impl Default for MacFile {
    fn default() -> Self {
        MacFile {
            rts_threshold_bytes: 0,
            short_retry_limit: 7,
            long_retry_limit: 4,
            queue: QueueKind::DropTail,
            queue_capacity_pkts: 50,
            slot_us: 20,
            sifs_us: 10,
            cw_min: 31,
            cw_max: 1023,
            ack_rate_mbps: None,
            eifs_after_sensed: true,
            quick_exchange: Default::default(),
            fast_forward: Default::default(),
            opet: Default::default(),
            count_first_rts: false,
        }
    }
}

/// `[routing]`: the protocol and AODV's options.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingFile {
    /// `protocol` in `[routing]` (docs/scenario.md).
    pub protocol: RoutingKind,
    /// RFC 3561 parameters, used with `protocol = "aodv"` (docs/aodv.md).
    pub aodv: crate::net::aodv::AodvConfig,
}

impl Default for RoutingFile {
    fn default() -> Self {
        RoutingFile {
            protocol: RoutingKind::Static,
            aodv: Default::default(),
        }
    }
}

/// `[topology]`: a generated topology, or `explicit` for `[[node]]` tables.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    /// `kind` in `[topology]` (docs/scenario.md).
    pub kind: TopologyKind,
    /// `nodes` in `[topology]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    /// `spacing_m` in `[topology]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spacing_m: Option<f64>,
    /// `rows` in `[topology]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u32>,
    /// `cols` in `[topology]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cols: Option<u32>,
    /// `width_m` in `[topology]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width_m: Option<f64>,
    /// `height_m` in `[topology]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height_m: Option<f64>,
}

/// One `[[node]]`: its id and position.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeFile {
    /// `id` in a `[[node]]` table (docs/scenario.md).
    pub id: i64,
    /// `x_m` in a `[[node]]` table (docs/scenario.md).
    pub x_m: f64,
    /// `y_m` in a `[[node]]` table (docs/scenario.md).
    pub y_m: f64,
}

fn default_transport() -> String {
    "tcp-newreno".into()
}
fn default_app() -> String {
    "ftp".into()
}
fn default_packet_bytes() -> u32 {
    1000
}

/// One `[[flow]]`: its ends, transport, application and times.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowFile {
    /// `src` in a `[[flow]]` table (docs/scenario.md).
    pub src: i64,
    /// `dst` in a `[[flow]]` table (docs/scenario.md).
    pub dst: i64,
    /// `transport` in a `[[flow]]` table (docs/scenario.md).
    #[serde(default = "default_transport")]
    pub transport: String,
    /// `app` in a `[[flow]]` table (docs/scenario.md).
    #[serde(default = "default_app")]
    pub app: String,
    /// `packet_bytes` in a `[[flow]]` table (docs/scenario.md).
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// `start_s` in a `[[flow]]` table (docs/scenario.md).
    #[serde(default)]
    pub start_s: f64,
    /// Defaults to the end of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// `rate_kbps` in a `[[flow]]` table (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_kbps: Option<f64>,
    /// `route` in a `[[flow]]` table (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<i64>>,
    /// Later explicit routes (static routing): from `at_s` on, data and
    /// ACKs take `route` and its reverse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub route_changes: Vec<RouteChangeFile>,
}

/// A change of a flow's explicit route at `at_s`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteChangeFile {
    /// `at_s` in a route change of a `[[flow]]` (docs/scenario.md).
    pub at_s: f64,
    /// `route` in a route change of a `[[flow]]` (docs/scenario.md).
    pub route: Vec<i64>,
}

/// `[metrics]`: the measurement window of `throughput_kbps`.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MetricsFile {
    /// Every flow's window starts this long after the last flow's start
    /// (a flow that starts later is measured from its own start): a
    /// warm-up once all flows run, as Osipov and Tschudin's 12 s (§5.1).
    #[serde(default)]
    pub warmup_s: f64,
}

/// `[traffic]`: traffic generated from the seed.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrafficFile {
    /// `[traffic.random_pairs]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_pairs: Option<RandomPairsFile>,
}

fn yes() -> bool {
    true
}

/// `[earliest, latest]`: exactly two numbers.
fn two_times<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<[f64; 2], D::Error> {
    let v: Vec<f64> = serde::Deserialize::deserialize(d)?;
    <[f64; 2]>::try_from(v.as_slice()).map_err(|_| {
        serde::de::Error::custom(format!(
            "{} values; expected two, [earliest, latest] in seconds",
            v.len()
        ))
    })
}

/// `[traffic.random_pairs]`: `count` source-destination pairs drawn from the
/// seed, each with the flow keys below and a start time drawn uniformly in
/// `start_s` (the random-field experiments of Berger et al. §4.2, whose
/// pairs and start times the paper does not list).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomPairsFile {
    /// `count` in `[traffic.random_pairs]` (docs/scenario.md).
    pub count: u32,
    /// `transport` in `[traffic.random_pairs]` (docs/scenario.md).
    #[serde(default = "default_transport")]
    pub transport: String,
    /// `app` in `[traffic.random_pairs]` (docs/scenario.md).
    #[serde(default = "default_app")]
    pub app: String,
    /// `packet_bytes` in `[traffic.random_pairs]` (docs/scenario.md).
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    /// `[earliest, latest]` start, seconds; default `[0, 0]`. Exactly two
    /// values: a third used to be ignored without a word.
    #[serde(default, deserialize_with = "two_times")]
    pub start_s: [f64; 2],
    /// Defaults to the end of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    /// `rate_kbps` in `[traffic.random_pairs]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_kbps: Option<f64>,
    /// Both ends of every pair in one connected component of the
    /// transmission-range graph at time 0.
    #[serde(default = "yes")]
    pub connected: bool,
    /// No node is an end of two pairs.
    #[serde(default = "yes")]
    pub distinct_nodes: bool,
}

/// What the run records beyond the summary.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct TraceFile {
    /// Per-node 1 s series (queue length, radio busy fraction).
    pub node_series: bool,
    /// A node whose neighborhood queue is traced: the real size (packets
    /// queued at it and its 1-hop neighbours, plus packets at 2-hop
    /// neighbours for one of its 1-hop neighbours) and NRED's estimate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neighborhood_node: Option<i64>,
    /// The grain of every series (throughput, queue, busy and NAV fractions,
    /// TCP state): 1 s unless a finer look at one run is wanted. Left out of
    /// the canonical form at its default, so that scenarios written before
    /// the key existed keep their hash (and their stored runs).
    #[serde(skip_serializing_if = "is_one_second")]
    pub series_interval_s: f64,
}

fn is_one_second(v: &f64) -> bool {
    *v == 1.0
}

impl Default for TraceFile {
    fn default() -> Self {
        TraceFile {
            node_series: true,
            neighborhood_node: None,
            series_interval_s: 1.0,
        }
    }
}

/// `[mobility]`: which nodes move and how (docs/scenario.md).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MobilityFile {
    /// How often moving nodes' positions are pushed to the channel.
    pub update_interval_s: f64,
    /// `random_waypoint` in `[mobility]` (docs/scenario.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_waypoint: Option<RandomWaypointFile>,
    /// An ns-2 movement file (setdest format), relative to the scenario file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns2_file: Option<String>,
    /// The movement file's text (filled in from `ns2_file` by the loader).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns2_movements: Option<String>,
    /// Scripted nodes.
    #[serde(rename = "node", skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<ScriptedFile>,
}

impl Default for MobilityFile {
    fn default() -> Self {
        MobilityFile {
            update_interval_s: 0.1,
            random_waypoint: None,
            ns2_file: None,
            ns2_movements: None,
            nodes: Vec::new(),
        }
    }
}

/// `[mobility.random_waypoint]`: speeds, pause and area.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomWaypointFile {
    /// `speed_max_mps` in `[mobility.random_waypoint]` (docs/scenario.md).
    pub speed_max_mps: f64,
    /// Either an absolute minimum speed or a fraction of the maximum (the
    /// self-contention paper uses 10%); default 0.1 × max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_min_mps: Option<f64>,
    /// `speed_min_fraction` in `[mobility.random_waypoint]` (docs/scenario.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_min_fraction: Option<f64>,
    /// `pause_s` in `[mobility.random_waypoint]` (docs/scenario.md).
    #[serde(default)]
    pub pause_s: f64,
    /// The area; defaults to the topology's (random) or its bounding box.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width_m: Option<f64>,
    /// `height_m` in `[mobility.random_waypoint]` (docs/scenario.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height_m: Option<f64>,
    /// Which nodes move; default all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<i64>>,
}

/// One scripted node: `path` as (t, x, y) points, or `moves` as
/// (t, x, y, speed): at t head for (x, y) at speed m/s.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScriptedFile {
    /// `id` in a scripted node of `[mobility]` (docs/scenario.md).
    pub id: i64,
    /// `path` in a scripted node of `[mobility]` (docs/scenario.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<[f64; 3]>>,
    /// `moves` in a scripted node of `[mobility]` (docs/scenario.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<[f64; 4]>>,
}

// ---- validation: each table checks its own keys --------------------------

use super::ScenarioError;
use crate::mac::frame::{DATA_OVERHEAD_BYTES, NS2_DATA_OVERHEAD_BYTES};
use crate::mac::DcfConfig;
use crate::phy::Rate;
use crate::time::{Duration, Num};

type Checked<T> = Result<T, ScenarioError>;

/// An 802.11b rate given in Mbit/s.
pub(crate) fn rate(key: &str, mbps: f64) -> Checked<Rate> {
    Rate::from_mbps(mbps).ok_or_else(|| {
        ScenarioError::new(
            key,
            format!("{} is not an 802.11b rate; allowed: 1, 2, 5.5, 11", Num(mbps)),
        )
    })
}

/// The radio's rates, as the MAC needs them.
#[derive(Clone, Copy, Debug)]
pub struct Rates {
    /// The rate of DATA frames.
    pub data: Rate,
    /// The basic rate: control frames and broadcasts.
    pub basic: Rate,
}

impl RadioFile {
    /// Checks every `[radio]` key; returns the rates.
    pub fn validate(&self) -> Checked<Rates> {
        let rates = Rates {
            data: rate("radio.data_rate_mbps", self.data_rate_mbps)?,
            basic: rate("radio.basic_rate_mbps", self.basic_rate_mbps)?,
        };
        super::length("radio.tx_range_m", self.tx_range_m)?;
        super::length("radio.cs_range_m", self.cs_range_m)?;
        if self.cs_range_m < self.tx_range_m {
            return Err(ScenarioError::new(
                "radio.cs_range_m",
                format!(
                    "{} is below radio.tx_range_m = {}; carrier sense must reach at least as far as decoding",
                    Num(self.cs_range_m),
                    Num(self.tx_range_m)
                ),
            ));
        }
        if !(self.capture_threshold_db.is_finite() && self.capture_threshold_db >= 0.0) {
            return Err(ScenarioError::new(
                "radio.capture_threshold_db",
                format!("{} must be a number of dB >= 0", Num(self.capture_threshold_db)),
            ));
        }
        Ok(rates)
    }
}

/// Largest slot time and SIFS, µs: far above any PHY's (802.11b: 20 and
/// 10), and small enough that a backoff of `mac.cw_max` slots stays far
/// inside u64 nanoseconds.
pub const MAX_MAC_US: u32 = 1_000_000;
/// Largest contention window: 2^20 - 1 slots (802.11b's aCWmax is 1023).
pub const MAX_CW: u32 = (1 << 20) - 1;

impl RadioFile {
    /// The radio's ranges per rate and its interference reach; the link
    /// rates are those of the MAC's unicast exchange.
    pub fn resolve(&self, dcf: &DcfConfig) -> Checked<super::RadioParams> {
        let mut p = super::RadioParams::with_ranges(self.tx_range_m, self.cs_range_m, self.capture_threshold_db);
        p.lock_on_sensed = self.lock_on_sensed;
        p.link_rates = [dcf.data_rate, dcf.basic_rate, dcf.ack_rate].into_iter().collect();
        for (name, &range) in self.tx_range_by_rate_m.iter().flatten() {
            let key = format!("radio.tx_range_by_rate_m.\"{name}\"");
            let rate = name.parse::<f64>().ok().and_then(Rate::from_mbps).ok_or_else(|| {
                ScenarioError::new(
                    &key,
                    format!("\"{name}\" is not an 802.11b rate; allowed: \"1\", \"2\", \"5.5\", \"11\""),
                )
            })?;
            super::positive(&key, range)?;
            if range > self.cs_range_m {
                return Err(ScenarioError::new(
                    key,
                    format!(
                        "{} is beyond radio.cs_range_m = {}; carrier sense must reach at least as far as decoding",
                        Num(range),
                        Num(self.cs_range_m)
                    ),
                ));
            }
            p.rate_range_m[rate.index()] = range;
        }
        if let Some(ranges) = self.profile_ranges()? {
            p.rate_range_m = ranges;
        }
        if let Some(d) = self.interference_range_m {
            super::length("radio.interference_range_m", d)?;
            if d < self.cs_range_m {
                return Err(ScenarioError::new(
                    "radio.interference_range_m",
                    format!(
                        "{} is below radio.cs_range_m = {}; signals must reach at least as far as carrier sense",
                        Num(d),
                        Num(self.cs_range_m)
                    ),
                ));
            }
            p.interference_range_m = d;
        }
        if let (ReceptionKind::Sinr, Some(f)) = (self.reception, &self.sinr) {
            p.reception = crate::phy::reception::ReceptionModel::Sinr(f.resolve(self.tx_range_m)?);
        }
        Ok(p)
    }
}

impl RadioFile {
    /// The per-rate ranges of `profile` (`phy::profiles`), if one is named.
    fn profile_ranges(&self) -> Checked<Option<[f64; 4]>> {
        use crate::phy::profiles;
        let list = |xs: &[&str]| xs.iter().map(|x| format!("\"{x}\"")).collect::<Vec<_>>().join(", ");
        let Some(name) = &self.profile else {
            if self.card.is_some() {
                return Err(ScenarioError::new(
                    "radio.card",
                    "only the profile \"sensitivity\" reads a card",
                ));
            }
            return Ok(None);
        };
        if self.tx_range_by_rate_m.is_some() {
            return Err(ScenarioError::new(
                "radio.profile",
                "give either a profile or radio.tx_range_by_rate_m, not both",
            ));
        }
        if self.card.is_some() && name != "sensitivity" {
            return Err(ScenarioError::new(
                "radio.card",
                format!("only the profile \"sensitivity\" reads a card, not \"{name}\""),
            ));
        }
        let ranges = match name.as_str() {
            "osipov-ranges" => profiles::osipov_ranges(),
            "sensitivity" => {
                let card_name = self.card.as_deref().unwrap_or("orinoco");
                let card = profiles::card(card_name).ok_or_else(|| {
                    let names: Vec<&str> = profiles::CARDS.iter().map(|c| c.name).collect();
                    ScenarioError::new(
                        "radio.card",
                        format!("\"{card_name}\" is not a known card; allowed: {}", list(&names)),
                    )
                })?;
                profiles::sensitivity_ranges(&crate::phy::propagation::TwoRayGround::default(), self.tx_range_m, card)
            }
            other => {
                return Err(ScenarioError::new(
                    "radio.profile",
                    format!("\"{other}\" is not a profile; allowed: {}", list(profiles::PROFILES)),
                ))
            }
        };
        if let Some(far) = ranges.iter().copied().find(|&d| d > self.cs_range_m) {
            return Err(ScenarioError::new(
                "radio.cs_range_m",
                format!(
                    "{} is below the {far:.1} m the profile \"{name}\" decodes to; carrier sense must reach at least as far as decoding",
                    Num(self.cs_range_m)
                ),
            ));
        }
        Ok(Some(ranges))
    }
}

impl SinrFile {
    /// Checks every `[radio.sinr]` key, and that a lone frame at the
    /// transmission range can be detected at all.
    pub fn resolve(&self, tx_range_m: f64) -> Checked<crate::phy::reception::SinrConfig> {
        for (key, v) in [
            ("radio.sinr.noise_figure_db", self.noise_figure_db),
            ("radio.sinr.frame_capture_margin_db", self.frame_capture_margin_db),
            ("radio.sinr.frame_capture_window_us", self.frame_capture_window_us),
        ] {
            if !(v.is_finite() && (0.0..=1e6).contains(&v)) {
                return Err(ScenarioError::new(
                    key,
                    format!("{} must be a number between 0 and 1e6", Num(v)),
                ));
            }
        }
        if !(self.preamble_detection_db.is_finite() && self.preamble_detection_db.abs() <= 100.0) {
            return Err(ScenarioError::new(
                "radio.sinr.preamble_detection_db",
                format!(
                    "{} must be a number of dB between -100 and 100",
                    Num(self.preamble_detection_db)
                ),
            ));
        }
        let cfg = crate::phy::reception::SinrConfig {
            noise_figure_db: self.noise_figure_db,
            preamble_detection_db: self.preamble_detection_db,
            frame_capture: self.frame_capture,
            capture_margin_db: self.frame_capture_margin_db,
            capture_window: Duration::from_secs_f64(self.frame_capture_window_us * 1e-6),
        };
        let at_range = crate::phy::propagation::TwoRayGround::default().rx_power_w(tx_range_m);
        let snr_db = 10.0 * (at_range / cfg.noise_w()).log10();
        if snr_db < self.preamble_detection_db {
            return Err(ScenarioError::new(
                "radio.tx_range_m",
                format!(
                    "{} m: under radio.reception = \"sinr\" a lone frame there has an SNR of {snr_db:.1} dB over the noise floor, below radio.sinr.preamble_detection_db = {}; shorten the range or lower the noise figure",
                    Num(tx_range_m),
                    Num(self.preamble_detection_db)
                ),
            ));
        }
        Ok(cfg)
    }
}

impl MacFile {
    /// Checks every `[mac]` key; returns the DCF's configuration, with the
    /// MAC rules of `[ns2]` that are switched on.
    pub fn resolve(&self, rates: &Rates, ns2: &Ns2Rules) -> Checked<DcfConfig> {
        for (key, v, max) in [
            ("mac.short_retry_limit", self.short_retry_limit, 255),
            ("mac.long_retry_limit", self.long_retry_limit, 255),
            ("mac.queue_capacity_pkts", self.queue_capacity_pkts, u32::MAX),
            ("mac.slot_us", self.slot_us, MAX_MAC_US),
            ("mac.sifs_us", self.sifs_us, MAX_MAC_US),
        ] {
            if v == 0 || v > max {
                return Err(ScenarioError::new(
                    key,
                    format!("{v} is not allowed; must be an integer from 1 to {max}"),
                ));
            }
        }
        self.quick_exchange
            .validate()
            .map_err(|e| ScenarioError::keyed("mac.quick_exchange", &e))?;
        self.fast_forward
            .validate()
            .map_err(|e| ScenarioError::keyed("mac.fast_forward", &e))?;
        self.opet
            .validate(self.cw_min)
            .map_err(|e| ScenarioError::keyed("mac.opet", &e))?;
        if self.opet.enabled {
            let other = if self.quick_exchange.enabled {
                Some("mac.quick_exchange")
            } else if self.fast_forward.enabled {
                Some("mac.fast_forward")
            } else if self.queue != QueueKind::DropTail {
                Some("mac.queue")
            } else {
                None
            };
            if let Some(key) = other {
                return Err(ScenarioError::new(
                    "mac.opet.enabled",
                    format!("true is not allowed together with {key}: OPET runs on plain DCF with mac.queue = \"droptail\" (its per-flow queues replace it)"),
                ));
            }
        }
        let cw_ok = |cw: u32| (1..=MAX_CW).contains(&cw) && (u64::from(cw) + 1).is_power_of_two();
        if !cw_ok(self.cw_min) {
            return Err(ScenarioError::new(
                "mac.cw_min",
                format!("{} must be 2^k - 1 with 1 <= k <= 20 (e.g. 31)", self.cw_min),
            ));
        }
        if !cw_ok(self.cw_max) || self.cw_max < self.cw_min {
            return Err(ScenarioError::new(
                "mac.cw_max",
                format!(
                    "{} must be 2^k - 1 with k <= 20, and >= mac.cw_min = {}",
                    self.cw_max, self.cw_min
                ),
            ));
        }
        Ok(DcfConfig {
            slot: Duration::from_micros(u64::from(self.slot_us)),
            sifs: Duration::from_micros(u64::from(self.sifs_us)),
            cw_min: self.cw_min,
            cw_max: self.cw_max,
            short_retry_limit: self.short_retry_limit,
            long_retry_limit: self.long_retry_limit,
            rts_threshold_bytes: self.rts_threshold_bytes,
            data_rate: rates.data,
            basic_rate: rates.basic,
            ack_rate: match self.ack_rate_mbps {
                Some(v) => rate("mac.ack_rate_mbps", v)?,
                None => rates.basic,
            },
            quick_exchange: self.quick_exchange,
            fast_forward: self.fast_forward,
            opet: self.opet,
            count_first_rts: self.count_first_rts,
            cts_if_idle: ns2.cts_if_idle,
            capture_nav: ns2.capture_nav,
            eifs_nav: ns2.eifs_nav,
            data_overhead_bytes: if ns2.four_address_header {
                NS2_DATA_OVERHEAD_BYTES
            } else {
                DATA_OVERHEAD_BYTES
            },
            promiscuous: true,
        })
    }
}
