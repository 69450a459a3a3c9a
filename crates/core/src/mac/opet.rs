//! OPET (Zhai, Chen and Fang, "hop-by-hop congestion control for TCP in
//! MANETs", §I): three mechanisms inside the 802.11 MAC. The paper's
//! mechanism section is lost; what is built here is the reconstruction of
//! docs/opet.md, every choice there with its reason.
//!
//! ```text
//!  fast relay:       i decoded a DATA to forward: its next access draws from [0, cw_relay]
//!  backward pressure u ── RTS(f) ──> i      i holds >= q_bp packets of f
//!                    u <── NCTS ──── i      Duration 0; u blocks (f, i), puts the MSDU back,
//!                                           no retry counted, CW not doubled
//!  resume            u <── RTR(f) ── i      i's count of f fell below q_bp (DIFS + [0, cw_relay])
//!                    u ── DATA(f) ─> i      SIFS after the RTR, from the MSDU in hand or the second slot
//!                    u <── ACK ───── i
//! ```
//!
//! The DCF's transitions live in `dcf.rs`. Who is congested, the per-flow
//! queues and the blocked table need the queue and the flows, so the node
//! stack decides them when the DCF asks (`MacAction::RtsFor`,
//! `MacAction::WantRtrData`) or tells (`MacAction::Blocked`,
//! `MacAction::RtrAnswered`, `MacAction::RtrAbandoned`).

use super::frame::CTS_BYTES;
use serde::{Deserialize, Serialize};

/// RTR: a CTS (frame control, Duration, RA, FCS) plus the flow label.
pub fn rtr_bytes(label_bytes: u32) -> u32 {
    CTS_BYTES + label_bytes
}

/// Which flow the scheduler serves next among the unblocked ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheduler {
    /// Round-robin over the flows (the "for Each Flow" of the name).
    RoundRobin,
    /// The oldest packet whose flow is not blocked.
    Fifo,
}

/// Where the source's own packets wait.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceBuffer {
    /// In the shared interface queue: they overflow there (ns-2's IFQ).
    Ifq,
    /// Beyond the interface queue's capacity: the source never drops.
    Unbounded,
}

/// What a ready-to-receive frame does to the upstream node's block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Resume {
    /// The block is lifted: the upstream node sends the flow's next packet
    /// by RTS, which meets a negative CTS again if the node is still at q_bp.
    Unblock,
    /// The block stays (renewed): the downstream node pulls each packet
    /// with a ready-to-receive frame while it keeps its record, a three-way
    /// handshake per packet.
    Pull,
}

/// `[mac.opet]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Opet {
    /// Whether OPET is on.
    pub enabled: bool,
    /// q_bp: a relay holding this many packets of a flow refuses its RTS.
    pub bp_threshold_pkts: u32,
    /// The fast-relay window: backoff slots drawn from [0, cw_relay].
    pub cw_relay: u32,
    /// Bytes the flow label adds to an RTS and makes an RTR longer than a CTS.
    pub flow_label_bytes: u32,
    /// RTR transmissions per resume before the record is dropped.
    pub rtr_attempts: u32,
    /// A block not lifted by an RTR ends after this long.
    pub block_timeout_s: f64,
    /// How the per-flow queues are served.
    pub scheduler: Scheduler,
    /// Whether a source's own packets are bounded by the queue's capacity.
    pub source_buffer: SourceBuffer,
    /// How a refused flow resumes.
    pub resume: Resume,
}

impl Default for Opet {
    fn default() -> Self {
        Opet {
            enabled: false,
            bp_threshold_pkts: 1,
            cw_relay: 7,
            flow_label_bytes: 4,
            rtr_attempts: 2,
            block_timeout_s: 0.1,
            scheduler: Scheduler::RoundRobin,
            source_buffer: SourceBuffer::Ifq,
            resume: Resume::Unblock,
        }
    }
}

impl Opet {
    /// Whether every key has its default.
    pub fn is_default(&self) -> bool {
        *self == Opet::default()
    }

    /// Checks the keys; `cw_min` is the DCF's (the relay window is smaller).
    pub fn validate(&self, cw_min: u32) -> Result<(), String> {
        if self.bp_threshold_pkts == 0 || self.bp_threshold_pkts > 1000 {
            return Err(format!(
                "bp_threshold_pkts = {}: must be an integer from 1 to 1000",
                self.bp_threshold_pkts
            ));
        }
        if !(u64::from(self.cw_relay) + 1).is_power_of_two() || self.cw_relay >= cw_min {
            return Err(format!(
                "cw_relay = {}: must be 2^k - 1 and below mac.cw_min = {cw_min} (e.g. 7)",
                self.cw_relay
            ));
        }
        if self.flow_label_bytes > 12 {
            return Err(format!(
                "flow_label_bytes = {}: must be from 0 to 12",
                self.flow_label_bytes
            ));
        }
        if self.rtr_attempts == 0 || self.rtr_attempts > 16 {
            return Err(format!(
                "rtr_attempts = {}: must be an integer from 1 to 16",
                self.rtr_attempts
            ));
        }
        if !(self.block_timeout_s > 0.0 && self.block_timeout_s <= 3600.0) {
            return Err(format!(
                "block_timeout_s = {}: must be > 0 and at most 3600",
                self.block_timeout_s
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_reconstruction_and_validate() {
        let o = Opet::default();
        assert!(!o.enabled && o.bp_threshold_pkts == 1 && o.cw_relay == 7 && o.rtr_attempts == 2);
        assert_eq!(rtr_bytes(o.flow_label_bytes), 18);
        assert!(o.validate(31).is_ok());
        let bad = |o: Opet| o.validate(31).unwrap_err();
        assert!(bad(Opet { cw_relay: 6, ..o }).contains("cw_relay = 6"));
        assert!(bad(Opet { cw_relay: 31, ..o }).contains("below mac.cw_min"));
        assert!(bad(Opet {
            bp_threshold_pkts: 0,
            ..o
        })
        .contains("bp_threshold_pkts = 0"));
        assert!(bad(Opet {
            block_timeout_s: 0.0,
            ..o
        })
        .contains("block_timeout_s"));
        assert!(bad(Opet { rtr_attempts: 0, ..o }).contains("rtr_attempts"));
    }
}
