//! Quick-exchange (Berger et al., "TCP-Friendly Medium Access Control for
//! Ad-Hoc Wireless Networks: Alleviating Self-Contention", §3.1): the
//! receiver of an RTS returns a packet of its own for the RTS's sender
//! inside the same reservation.
//!
//! ```text
//!  A: RTS ──────────────> B         (Duration: 3·SIFS + CTS + DATA1 + ACK)
//!  A <────────────── CTS(τ) B       (τ: the extra time the exchange needs)
//!  A: DATA1 ────────────> B         (Duration extended by τ if A honours)
//!  A <──────── DATA2+ACK1 B         (one frame: Data+CF-Ack)
//!  A: ACK2 ─────────────> B
//! ```
//!
//! The transitions live in the DCF's state machine (`dcf.rs`); this file
//! holds the option and the sizes and times the exchange is built from.
//! When quick-exchange is on, every CTS carries the τ field (τ = 0: no
//! exchange), so all CTSs have one size and the RTS's Duration can count
//! on it before the answer is known.

use super::frame::CTS_BYTES;
use crate::phy::Rate;
use crate::time::Duration;
use serde::{Deserialize, Serialize};

/// A CTS with the 2-byte τ field (a Duration-sized field).
pub const CTS_QE_BYTES: u32 = CTS_BYTES + 2;
/// DATA2+ACK1: the data header (24), the ACK's header check sequence (4)
/// and the FCS (4) around the MSDU; one PHY and one MAC header saved.
pub const DATA_ACK_OVERHEAD_BYTES: u32 = 32;

/// `[mac.quick_exchange]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct QuickExchange {
    /// Whether quick-exchange is on.
    pub enabled: bool,
    /// Cap on the two MSDUs' combined size in bytes (IP packets), §4.2:
    /// "the combined size of the packets be under a threshold (1400 bytes
    /// in our experiments)".
    pub max_bytes: u32,
    /// Whether an RTS sender honours a CTS(τ); `false` declines every
    /// exchange (the paper only says "if the RTS-sender wishes to honor").
    pub honor: bool,
}

impl Default for QuickExchange {
    fn default() -> Self {
        QuickExchange {
            enabled: false,
            max_bytes: 1400,
            honor: true,
        }
    }
}

impl QuickExchange {
    /// Whether every key has its default.
    pub fn is_default(&self) -> bool {
        *self == QuickExchange::default()
    }

    /// Checks the values; the message starts with the offending key.
    pub fn validate(&self) -> Result<(), String> {
        if self.max_bytes == 0 {
            return Err("max_bytes = 0: must be an integer >= 1".into());
        }
        Ok(())
    }
}

/// Air time of DATA2+ACK1 carrying an MSDU of `msdu_bytes`.
pub fn data_ack_time(rate: Rate, msdu_bytes: u32) -> Duration {
    rate.airtime(msdu_bytes + DATA_ACK_OVERHEAD_BYTES)
}

/// τ = T(DATA2+ACK1) − T(ACK1) + SIFS + T(ACK2): what the exchange needs
/// beyond the standard one, whose reservation ends with ACK1.
pub fn tau(data_ack: Duration, ack1: Duration, sifs: Duration, ack2: Duration) -> Duration {
    data_ack + sifs + ack2 - ack1
}

/// T(DATA2+ACK1) from τ, as the RTS sender computes it for its timeout.
pub fn data_ack_time_of(tau: Duration, ack1: Duration, sifs: Duration, ack2: Duration) -> Duration {
    Duration((tau + ack1).as_nanos().saturating_sub((sifs + ack2).as_nanos()))
}

/// The MSDU size a data frame of air time `t` at `rate` carries (the
/// inverse of `Rate::airtime`, rounded down): the RTS receiver learns
/// DATA1's size from the RTS's Duration.
pub fn msdu_bytes_of(rate: Rate, t: Duration, overhead_bytes: u32) -> u32 {
    let psdu_us = t.as_nanos().saturating_sub(crate::phy::PLCP_OVERHEAD.as_nanos()) / 1000;
    let bytes = (psdu_us as f64 * rate.mbps() / 8.0).floor() as u32;
    bytes.saturating_sub(overhead_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mac::frame::{ACK_BYTES, DATA_OVERHEAD_BYTES};

    #[test]
    fn sizes_and_times_of_the_paper_traffic() {
        // A TCP ACK (40-B MSDU) as DATA2+ACK1: 192 + 72·4 = 480 µs; τ = 490.
        let d2a1 = data_ack_time(Rate::MBPS_2, 40);
        assert_eq!(d2a1, Duration::from_micros(480));
        let ack = Rate::MBPS_1.airtime(ACK_BYTES);
        let sifs = Duration::from_micros(10);
        let t = tau(d2a1, ack, sifs, ack);
        assert_eq!(t, Duration::from_micros(490));
        assert_eq!(data_ack_time_of(t, ack, sifs, ack), d2a1);
        // At 11 Mbit/s DATA2+ACK1 is shorter than an ACK at 1 Mbit/s.
        let short = data_ack_time(Rate::MBPS_11, 40);
        assert_eq!(tau(short, ack, sifs, ack), short + sifs);
        assert_eq!(Rate::MBPS_1.airtime(CTS_QE_BYTES), Duration::from_micros(320));
        // DATA1 of a 1040-B segment lasts 4464 µs, and the size comes back.
        let t = Rate::MBPS_2.airtime(1040 + DATA_OVERHEAD_BYTES);
        assert_eq!(t, Duration::from_micros(4464));
        assert_eq!(msdu_bytes_of(Rate::MBPS_2, t, DATA_OVERHEAD_BYTES), 1040);
        // At 11 Mbit/s the air time is rounded up; the size never exceeds.
        for b in [40, 1028, 1040] {
            let t = Rate::MBPS_11.airtime(b + DATA_OVERHEAD_BYTES);
            let back = msdu_bytes_of(Rate::MBPS_11, t, DATA_OVERHEAD_BYTES);
            assert!(back <= b + 1 && back + 2 >= b, "{b} -> {back}");
        }
    }
}
