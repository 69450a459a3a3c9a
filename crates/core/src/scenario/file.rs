//! The scenario file as written (CONTRACT.md §2): serde structs with the
//! documented defaults. Unknown keys are refused. Serialising a parsed file
//! gives the canonical form with every default filled in.

use serde::{Deserialize, Serialize};

fn default_name() -> String {
    "scenario".to_string()
}
fn one() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    #[serde(default = "default_name")]
    pub name: String,
    pub duration_s: f64,
    #[serde(default = "one")]
    pub seed: u64,
    #[serde(default)]
    pub radio: RadioFile,
    #[serde(default)]
    pub mac: MacFile,
    #[serde(default)]
    pub routing: RoutingFile,
    pub topology: TopologyFile,
    #[serde(default, rename = "node", skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeFile>,
    #[serde(default, rename = "flow")]
    pub flows: Vec<FlowFile>,
    #[serde(default)]
    pub tcp: crate::transport::tcp::TcpConfig,
    #[serde(default)]
    pub onoff: crate::app::onoff::OnOffConfig,
    #[serde(default)]
    pub mobility: MobilityFile,
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

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RadioFile {
    pub data_rate_mbps: f64,
    pub basic_rate_mbps: f64,
    pub tx_range_m: f64,
    pub cs_range_m: f64,
    pub propagation: String,
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
}

impl Default for RadioFile {
    fn default() -> Self {
        RadioFile {
            data_rate_mbps: 2.0,
            basic_rate_mbps: 1.0,
            tx_range_m: 250.0,
            cs_range_m: 550.0,
            propagation: "two-ray-ground".into(),
            capture_threshold_db: 10.0,
            lock_on_sensed: true,
            tx_range_by_rate_m: None,
            interference_range_m: None,
            profile: None,
            card: None,
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MacFile {
    pub rts_threshold_bytes: u32,
    pub short_retry_limit: u32,
    pub long_retry_limit: u32,
    pub queue: String,
    pub queue_capacity_pkts: u32,
    pub slot_us: u32,
    pub sifs_us: u32,
    pub cw_min: u32,
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
}

impl Default for MacFile {
    fn default() -> Self {
        MacFile {
            rts_threshold_bytes: 0,
            short_retry_limit: 7,
            long_retry_limit: 4,
            queue: "droptail".into(),
            queue_capacity_pkts: 50,
            slot_us: 20,
            sifs_us: 10,
            cw_min: 31,
            cw_max: 1023,
            ack_rate_mbps: None,
            eifs_after_sensed: true,
            quick_exchange: Default::default(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct RoutingFile {
    pub protocol: String,
    /// RFC 3561 parameters, used with `protocol = "aodv"` (docs/aodv.md).
    pub aodv: crate::net::aodv::AodvConfig,
}

impl Default for RoutingFile {
    fn default() -> Self {
        RoutingFile {
            protocol: "static".into(),
            aodv: Default::default(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct TopologyFile {
    pub kind: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spacing_m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cols: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub width_m: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub height_m: Option<f64>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeFile {
    pub id: i64,
    pub x_m: f64,
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

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FlowFile {
    pub src: i64,
    pub dst: i64,
    #[serde(default = "default_transport")]
    pub transport: String,
    #[serde(default = "default_app")]
    pub app: String,
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: u32,
    #[serde(default)]
    pub start_s: f64,
    /// Defaults to the end of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_kbps: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<i64>>,
    /// Later explicit routes (static routing): from `at_s` on, data and
    /// ACKs take `route` and its reverse.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub route_changes: Vec<RouteChangeFile>,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteChangeFile {
    pub at_s: f64,
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
}

impl Default for TraceFile {
    fn default() -> Self {
        TraceFile {
            node_series: true,
            neighborhood_node: None,
        }
    }
}

/// `[mobility]`: which nodes move and how (docs/scenario.md).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct MobilityFile {
    /// How often moving nodes' positions are pushed to the channel.
    pub update_interval_s: f64,
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

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RandomWaypointFile {
    pub speed_max_mps: f64,
    /// Either an absolute minimum speed or a fraction of the maximum (the
    /// self-contention paper uses 10%); default 0.1 × max.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_min_mps: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed_min_fraction: Option<f64>,
    #[serde(default)]
    pub pause_s: f64,
    /// The area; defaults to the topology's (random) or its bounding box.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width_m: Option<f64>,
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
    pub id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<Vec<[f64; 3]>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<Vec<[f64; 4]>>,
}
