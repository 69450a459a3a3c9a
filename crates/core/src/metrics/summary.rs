//! The run summary (CONTRACT.md §3) and the 1 s traces. Field order is the
//! contract's; serialisation is deterministic, so equal runs print equal bytes.

use serde::Serialize;
use std::collections::BTreeMap;

pub use super::flowstats::DelaySummary;

/// One flow's entry of the summary's `flows` (CONTRACT.md §3).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct FlowSummary {
    /// The flow's index in the scenario's flow list.
    pub id: u32,
    /// Source node, by scenario id.
    pub src: i64,
    /// Destination node, by scenario id.
    pub dst: i64,
    /// `udp` or the TCP variant's name (`tcp-newreno`, ...).
    pub transport: String,
    /// Hops of the route the flow's data took (static: its route).
    pub hops: Option<u32>,
    /// Payload delivered in order and once during the measurement window,
    /// kbit/s (10^3 bit/s): what the papers plot as a flow's throughput.
    pub throughput_kbps: f64,
    /// Payload bytes behind `throughput_kbps`.
    pub delivered_bytes: u64,
    /// The same quantity per series bin (1 s unless
    /// `trace.series_interval_s` says otherwise), from time 0.
    pub series_kbps: Vec<f64>,
    /// Network-layer data packets the source sent, TCP retransmissions
    /// included (ns-3 FlowMonitor's txPackets).
    pub packets_sent: u64,
    /// Of those, packets delivered at the destination (rxPackets).
    pub packets_delivered: u64,
    /// Mean one-way delay of delivered packets, seconds.
    pub mean_delay_s: Option<f64>,
    /// Delay percentiles, jitter, relays crossed and the delay histogram
    /// (`metrics::flowstats`).
    #[serde(flatten)]
    pub delay: DelaySummary,
    /// The flow's own data packets (a TCP flow's segments, not its ACKs)
    /// dropped on the way, by cause (the names of the summary's `drops`).
    pub losses: BTreeMap<&'static str, u64>,
    /// The TCP sender's counters (TCP flows only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpFlowSummary>,
}

/// What a flow's TCP sender did (`transport::tcp::SenderStats`).
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct TcpFlowSummary {
    /// Data segments handed to the network, retransmissions included.
    pub data_segments: u64,
    /// Of those, segments carrying bytes sent before.
    pub retransmitted_segments: u64,
    /// Entries into fast retransmit and recovery.
    pub fast_retransmits: u64,
    /// Expiries of the retransmission timer.
    pub timeouts: u64,
}

/// The MAC's counters, summed over the nodes.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct MacSummary {
    /// Frames put on the air, by frame type (`rts`, `cts`, `data`, `ack`,
    /// and the remedies' own types when enabled).
    pub frames_sent: BTreeMap<&'static str, u64>,
    /// Frames their addressee did not decode because of interference, by
    /// frame type.
    pub collisions: BTreeMap<&'static str, u64>,
    /// MSDUs discarded at the retry limit (IEEE 802.11-2012 §9.3.4.4).
    pub retry_drops: u64,
    /// Data frames received again and discarded by the duplicate filter
    /// (§9.3.2.10).
    pub duplicates: u64,
    /// With `[mac] count_first_rts`: MSDUs whose first RTS went on the air
    /// after contention, and those whose first RTS got no CTS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msdus_started: Option<u64>,
    /// MSDUs whose first RTS got no CTS (see `msdus_started`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_rts_failed: Option<u64>,
    /// Quick-exchange's counters, with `[mac.quick_exchange]` enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qe: Option<QuickExchangeSummary>,
    /// Fast-forward's counters, with `[mac.fast_forward]` enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ff: Option<FastForwardSummary>,
    /// OPET's counters, with `[mac.opet]` enabled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opet: Option<OpetSummary>,
}

/// OPET (Zhai et al.; docs/opet.md), summed over the nodes.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct OpetSummary {
    /// Negative CTSs sent by congested nodes.
    pub ncts_sent: u64,
    /// Negative CTSs received: flows blocked towards a next hop.
    pub blocks: u64,
    /// Blocks that ended at `block_timeout_s`, not by a ready-to-receive frame.
    pub block_timeouts: u64,
    /// Σ over (flow, link) of the time spent blocked.
    pub blocked_time_s: f64,
    /// Ready-to-receive frames sent.
    pub rtr_sent: u64,
    /// Ready-to-receive frames answered by the flow's DATA.
    pub resumes: u64,
    /// Ready-to-receive frames that got no DATA (lost, or nothing to send).
    pub rtr_lost: u64,
    /// Resumes given up after `rtr_attempts` unanswered frames.
    pub rtr_abandoned: u64,
}

/// Fast-forward (Berger et al. §3.2), counted at the relays.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct FastForwardSummary {
    /// ACK-RTS frames sent.
    pub attempted: u64,
    /// Forwarded packets acknowledged by the next hop.
    pub completed: u64,
    /// ACK-RTS frames that got no CTS.
    pub no_cts: u64,
    /// Forwarded DATA frames (sent after the CTS) that got no ACK.
    pub data_failed: u64,
    /// Packets not fast-forwarded because of `consecutive_limit`.
    pub limited: u64,
}

/// Quick-exchange (Berger et al. §3.1), counted at the RTS receivers.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct QuickExchangeSummary {
    /// CTSs with τ > 0 sent.
    pub requested: u64,
    /// DATA1s received with their Duration extended.
    pub honored: u64,
    /// ACK2s received.
    pub completed: u64,
    /// Honoured exchanges whose DATA2+ACK1 or ACK2 went missing.
    pub failed: u64,
    /// CTSs with τ > 0 answered by a DATA1 not extended (its sender
    /// declined): the exchange went on as plain 802.11.
    pub fallen_back: u64,
}

/// Routing protocol overhead: control packets and bytes sent, by type.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct RoutingSummary {
    /// The scenario's `routing` value.
    pub protocol: String,
    /// Control packets sent, forwarded ones and HELLOs included.
    pub control_packets: u64,
    /// Their bytes above the link layer: the RFC 3561 §5 message plus IP
    /// and UDP headers.
    pub control_bytes: u64,
    /// Control packets by message type (`rreq`, `rrep`, `rerr`, ...).
    pub by_type: BTreeMap<&'static str, u64>,
}

/// Packet conservation: every network-layer packet made is delivered,
/// dropped with a cause, or still in flight at the end.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct LedgerSummary {
    /// Packets made anywhere: data, TCP ACKs, routing and control.
    pub generated: u64,
    /// Packets that reached their destination.
    pub delivered: u64,
    /// Packets dropped, each with a cause of `drops`.
    pub dropped: u64,
    /// Packets neither delivered nor dropped when the run ended.
    pub in_flight: u64,
    /// `in_flight` equals the packets the nodes still hold: none vanished
    /// without a cause.
    pub balanced: bool,
}

/// The run summary `manetfair run --json` prints (CONTRACT.md §3).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Summary {
    /// The scenario's name.
    pub name: String,
    /// The run's seed, from which every random stream derives.
    pub seed: u64,
    /// Simulated time, s.
    pub duration_s: f64,
    /// Wall-clock time of the run, s; the one field that differs between
    /// equal runs.
    pub wall_s: f64,
    /// Events popped from the event queue.
    pub events: u64,
    /// Per-flow results, in scenario order.
    pub flows: Vec<FlowSummary>,
    /// Σ of the flows' `throughput_kbps`.
    pub aggregate_kbps: f64,
    /// Jain's index over the flows' `throughput_kbps` (1 for one flow).
    pub jain_index: f64,
    /// Data packets (every flow's, retransmissions included) that never
    /// reached their destination, in percent of those sent:
    /// 100 (Σ packets_sent − Σ packets_delivered) / Σ packets_sent; 0 when
    /// nothing was sent. Packets still in flight at the end count as lost.
    pub loss_pct: f64,
    /// The form of Osipov and Tschudin's eq. (4) over the flows'
    /// `throughput_kbps` with an equal share of `aggregate_kbps` as every
    /// flow's optimum (`metrics::equal_share_unfairness`): the spread alone
    /// (the coefficient of variation; Jain = 1 / (1 + u²)), not the paper's u,
    /// whose optimum is each flow's max-min share (`maxmin_unfairness`).
    /// Absent for fewer than two flows or nothing delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub equal_share_unfairness: Option<f64>,
    /// The same value as `equal_share_unfairness`, under the name it first
    /// had; kept for the scripts that read it (docs/contract.md §3), deprecated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unfairness_index: Option<f64>,
    /// Osipov and Tschudin's u, eq. (4), against Thr_opt,i = φ_i · Thr_ref,i:
    /// φ_i the flow's max-min fair C-load share from the allocator
    /// (`metrics::maxmin`, §3.3), Thr_ref,i its throughput alone or Thr_max
    /// (`throttle.u_reference`). The `throttle` section's `u`; present where
    /// that section has it (an ingress-throttling scenario whose references
    /// are known).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub maxmin_unfairness: Option<f64>,
    /// MAC counters over all nodes.
    pub mac: MacSummary,
    /// Network-layer packets dropped, by cause (`queue_overflow`,
    /// `mac_retry`, `no_route`, `aqm`, and `arp` under `[ns2] arp`).
    pub drops: BTreeMap<&'static str, u64>,
    /// Packet conservation check.
    pub ledger: LedgerSummary,
    /// Routing overhead.
    pub routing: RoutingSummary,
    /// Number of nodes.
    pub nodes: usize,
    /// `manetfair` and the core's version, so a stored result names what
    /// produced it.
    pub simulator: String,
    /// One section per scheme the run uses, each under its own key: `nred`
    /// (NRED's overhead and actions, `NredSummary`) and `neighborhood` (how
    /// NRED's estimate follows the traced neighborhood queue,
    /// `NeighborhoodSummary`).
    #[serde(flatten)]
    pub schemes: SchemeSections,
}

/// Summary sections of the schemes of a run, in the order they were added,
/// serialised as keys of the summary itself: one type for every scheme
/// rather than a field each.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct SchemeSections {
    sections: Vec<(&'static str, serde_json::Value)>,
    maxmin_unfairness: Option<f64>,
}

impl SchemeSections {
    /// Adds the section `key`.
    pub fn push(&mut self, key: &'static str, section: &impl Serialize) {
        let value = serde_json::to_value(section).expect("summary sections serialise");
        self.sections.push((key, value));
    }

    /// The section `key`, if the run has it.
    pub fn get(&self, key: &str) -> Option<&serde_json::Value> {
        self.sections.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// Records Osipov and Tschudin's u, eq. (4), against max-min fair
    /// shares, for the summary's `maxmin_unfairness`: only a scheme that
    /// knows each flow's max-min share and reference throughput can.
    pub fn set_maxmin_unfairness(&mut self, u: Option<f64>) {
        self.maxmin_unfairness = u;
    }

    /// The u a scheme recorded with `set_maxmin_unfairness`, if any.
    pub fn maxmin_unfairness(&self) -> Option<f64> {
        self.maxmin_unfairness
    }
}

impl Serialize for SchemeSections {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(self.sections.len()))?;
        for (k, v) in &self.sections {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// Agreement of NRED's estimated neighborhood queue with the real one
/// (Xu et al. §6.1), over the 1 s bins while any flow is active.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct NeighborhoodSummary {
    /// The traced node, by scenario id.
    pub node: i64,
    /// Pearson correlation of estimate_avg and real_avg over the active bins.
    pub corr: Option<f64>,
    /// The same up to saturation: the first bin where the estimate reaches
    /// 95% of its largest value.
    pub corr_rising: Option<f64>,
    /// End of the bin where the estimate saturates, s.
    pub saturation_s: Option<f64>,
    /// Mean after saturation over the value at saturation, for each series:
    /// the estimate levels off while the real queue may keep growing.
    pub estimate_growth_after: Option<f64>,
    /// The same for the real queue.
    pub real_growth_after: Option<f64>,
    /// Mean estimate over the active bins (queue-size index).
    pub mean_estimate: f64,
    /// Mean real neighborhood queue over the active bins, packets.
    pub mean_real: f64,
}

/// NRED's control packets and drops over the run, all nodes together.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct NredSummary {
    /// NCN packets sent (each is also a packet in the ledger) and their bytes.
    pub ncn_sent: u64,
    /// Bytes of those NCN packets.
    pub ncn_bytes: u64,
    /// NCNs sent with normalizedP_b = 1 (average at or above max_th).
    pub ncn_saturated: u64,
    /// Notifications received or overheard.
    pub ncn_heard: u64,
    /// T_NCN ticks on which conditions (i)-(iv) blocked a notification.
    pub blocked: BTreeMap<&'static str, u64>,
    /// Notifications that passed (i)-(iv) but found no known neighbour.
    pub no_neighbor: u64,
    /// Packets dropped by Algorithm 5.2 entering the outgoing queue.
    pub drops_outgoing: u64,
    /// Packets dropped by Algorithm 5.2 on reception from a neighbour.
    pub drops_incoming: u64,
}

/// The traced node's neighborhood queue (Xu et al. §6.1, Figures 6-7),
/// sampled at the end of each bin.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct NeighborhoodTrace {
    /// The traced node, by scenario id.
    pub node: i64,
    /// NRED's estimate avg (queue-size index) at the node.
    pub estimate_avg: Vec<f64>,
    /// The real neighborhood queue (packets), averaged with the same w_q
    /// over samples every T_interval.
    pub real_avg: Vec<f64>,
    /// The real neighborhood queue, mean of the bin's T_interval samples.
    pub real_pkts: Vec<f64>,
}

impl Summary {
    /// The summary as one line of JSON, fields in the contract's order.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("summary serialises")
    }
}

/// Time series in 1 s bins, as columns.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct Traces {
    /// Bin width, s.
    pub bin_s: f64,
    /// Start of each bin, s.
    pub time_s: Vec<f64>,
    /// Per flow, goodput in each bin, kbit/s (as `series_kbps`).
    pub flow_throughput_kbps: Vec<Vec<f64>>,
    /// Time-averaged interface queue length per node and bin.
    pub queue_len_pkts: Vec<Vec<f64>>,
    /// Fraction of each bin the radio was not idle (tx, rx or carrier sense).
    pub radio_busy_frac: Vec<Vec<f64>>,
    /// Fraction of each bin the NAV was set.
    pub nav_busy_frac: Vec<Vec<f64>>,
    /// Per flow: TCP sender state at the end of each bin (None for UDP).
    pub tcp: Vec<Option<TcpTrace>>,
    /// `trace.neighborhood_node`'s neighborhood queue.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub neighborhood: Option<NeighborhoodTrace>,
}

/// One TCP sender's state at the end of each bin, the curves of the
/// papers' cwnd figures.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct TcpTrace {
    /// Congestion window, packets.
    pub cwnd_pkts: Vec<f64>,
    /// Slow-start threshold, packets.
    pub ssthresh_pkts: Vec<f64>,
    /// Smoothed RTT (RFC 6298 §2), s; `None` before the first sample.
    pub srtt_s: Vec<Option<f64>>,
    /// RTT variation (RFC 6298 §2), s; `None` before the first sample.
    pub rttvar_s: Vec<Option<f64>>,
    /// Expiries of the retransmission timer during each bin.
    pub timeouts: Vec<u64>,
    /// Entries into fast retransmit during each bin.
    pub fast_retransmits: Vec<u64>,
}

impl Traces {
    /// The traces as one line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("traces serialise")
    }
}
