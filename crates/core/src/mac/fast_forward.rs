//! Fast-forward (Berger et al., "TCP-Friendly Medium Access Control for
//! Ad-Hoc Wireless Networks: Alleviating Self-Contention", §3.2): a relay
//! acknowledges a data frame and solicits its next hop in one frame, the
//! ACK-RTS, so that the packet moves out of its sender's interference range
//! before the sender contends again.
//!
//! ```text
//!  A: ...DATA ──────────> B
//!  A <── ACK-RTS ──> C    B      (RA = A for the ACK, second RA = C for the RTS)
//!                    C ── CTS ─> B
//!                    C <─ DATA_f B
//!                    C ── ACK ─> B
//! ```
//!
//! The transitions live in the DCF's state machine (`dcf.rs`). Which packet
//! is forwarded, the probability `p` and the route check are decided by the
//! node stack when the DCF asks (`MacAction::WantForward`), since they need
//! the queue and routing.

use super::frame::ACK_BYTES;
use serde::{Deserialize, Serialize};

/// ACK-RTS: frame control 2, Duration 2, RA of the ACK 6, RA of the RTS 6,
/// TA 6, FCS 4: an ACK plus 12 bytes (§3.2, "+12 bytes").
pub const ACK_RTS_BYTES: u32 = ACK_BYTES + 12;

/// Which queued packets may be fast-forwarded (§3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Policy {
    /// "the packet currently at the head of the interface queue -
    /// regardless of destination".
    Any,
    /// Packets "waiting to be sent to the same next hop as the incoming
    /// packet".
    Link,
    /// Packets "intended for the same transport layer end-point": read as
    /// the incoming packet's flow towards the same next hop, which keeps a
    /// TCP connection's data apart from its ACKs going the other way.
    Flow,
}

fn no_limit(limit: &u32) -> bool {
    *limit == 0
}

/// `[mac.fast_forward]`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FastForward {
    /// Whether fast-forward is on.
    pub enabled: bool,
    /// Probability that an eligible reception is fast-forwarded (§3.2's
    /// probabilistic fairness limit; 0.75 in Fig. 5).
    pub p: f64,
    /// Which queued packets may go on (§3.2).
    pub policy: Policy,
    /// §3.2's other fairness limit: "the number of consecutive
    /// fast-forward events a given packet can undergo". A relay does not
    /// fast-forward a packet that arrived over this many fast-forwarded
    /// hops in a row (`Msdu::ff_run`); a hop sent by contention starts the
    /// count again. 0: no limit. The paper's "obvious choice" is
    /// ⌈interference range / transmission range⌉ = ⌈550/250⌉ = 3.
    #[serde(skip_serializing_if = "no_limit")]
    pub consecutive_limit: u32,
}

impl Default for FastForward {
    fn default() -> Self {
        FastForward {
            enabled: false,
            p: 0.75,
            policy: Policy::Link,
            consecutive_limit: 0,
        }
    }
}

impl FastForward {
    /// Whether every key has its default.
    pub fn is_default(&self) -> bool {
        *self == FastForward::default()
    }

    /// Checks the values; the message starts with the offending key.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.p > 0.0 && self.p <= 1.0) {
            return Err(format!("p = {}: must be in (0, 1]", self.p));
        }
        if self.consecutive_limit > u32::from(u8::MAX) {
            return Err(format!(
                "consecutive_limit = {}: must be an integer from 0 (no limit) to {}",
                self.consecutive_limit,
                u8::MAX
            ));
        }
        Ok(())
    }

    /// Whether a packet that came over `run` fast-forwarded hops in a row
    /// may be fast-forwarded once more.
    pub fn allows(&self, run: u8) -> bool {
        self.consecutive_limit == 0 || u32::from(run) < self.consecutive_limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_consecutive_limit() {
        let off = FastForward::default();
        assert!(off.allows(0) && off.allows(u8::MAX));
        let three = FastForward {
            consecutive_limit: 3,
            ..off
        };
        assert_eq!(
            (0..6).map(|r| three.allows(r)).collect::<Vec<_>>(),
            [true, true, true, false, false, false]
        );
        assert!(three.validate().is_ok());
        let err = FastForward {
            consecutive_limit: 256,
            ..off
        }
        .validate()
        .unwrap_err();
        assert!(
            err.contains("consecutive_limit = 256") && err.contains("0 (no limit) to 255"),
            "{err}"
        );
    }
}
