//! The run summary (CONTRACT.md §3) and the 1 s traces. Field order is the
//! contract's; serialisation is deterministic, so equal runs print equal bytes.

use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    pub src: i64,
    pub dst: i64,
    pub transport: String,
    /// Hops of the route the flow's data took (static: its route).
    pub hops: Option<u32>,
    pub throughput_kbps: f64,
    pub delivered_bytes: u64,
    pub series_kbps: Vec<f64>,
    /// Packets the application handed down, and packets delivered.
    pub packets_sent: u64,
    pub packets_delivered: u64,
    /// Mean one-way delay of delivered packets, seconds.
    pub mean_delay_s: Option<f64>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct MacSummary {
    pub frames_sent: BTreeMap<&'static str, u64>,
    pub collisions: BTreeMap<&'static str, u64>,
    pub retry_drops: u64,
    pub duplicates: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LedgerSummary {
    pub generated: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    pub balanced: bool,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    pub name: String,
    pub seed: u64,
    pub duration_s: f64,
    pub wall_s: f64,
    pub events: u64,
    pub flows: Vec<FlowSummary>,
    pub aggregate_kbps: f64,
    pub jain_index: f64,
    pub mac: MacSummary,
    pub drops: BTreeMap<&'static str, u64>,
    pub ledger: LedgerSummary,
    pub nodes: usize,
    pub simulator: String,
}

impl Summary {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("summary serialises")
    }
}

/// Time series in 1 s bins, as columns.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct Traces {
    pub bin_s: f64,
    pub time_s: Vec<f64>,
    pub flow_throughput_kbps: Vec<Vec<f64>>,
    /// Time-averaged interface queue length per node and bin.
    pub queue_len_pkts: Vec<Vec<f64>>,
    /// Fraction of each bin the radio was not idle (tx, rx or carrier sense).
    pub radio_busy_frac: Vec<Vec<f64>>,
    /// Fraction of each bin the NAV was set.
    pub nav_busy_frac: Vec<Vec<f64>>,
    /// Per flow: TCP sender state at the end of each bin (None for UDP).
    pub tcp: Vec<Option<TcpTrace>>,
}

#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct TcpTrace {
    pub cwnd_pkts: Vec<f64>,
    pub ssthresh_pkts: Vec<f64>,
    pub srtt_s: Vec<Option<f64>>,
    pub rttvar_s: Vec<Option<f64>>,
}

impl Traces {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("traces serialise")
    }
}
