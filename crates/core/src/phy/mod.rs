//! 802.11b DSSS/CCK physical layer: propagation, airtime, per-node radio
//! state with capture, and the channel (who hears whom).

pub mod channel;
pub mod propagation;
pub mod radio;

use crate::time::Duration;

/// Long PLCP preamble (144 bits) and PLCP header (48 bits), always sent at
/// 1 Mbit/s: 192 µs (IEEE 802.11-2012 §17.2.2, §17.3.4).
pub const PLCP_OVERHEAD: Duration = Duration::from_micros(192);

/// Speed of light used for propagation delay, m/s.
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// An 802.11b rate. Stored in units of 100 kbit/s so 5.5 Mbit/s is exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u32);

impl Rate {
    pub const MBPS_1: Rate = Rate(10);
    pub const MBPS_2: Rate = Rate(20);
    pub const MBPS_5_5: Rate = Rate(55);
    pub const MBPS_11: Rate = Rate(110);

    /// The 802.11b rates are 1, 2, 5.5 and 11 Mbit/s; anything else is refused.
    pub fn from_mbps(mbps: f64) -> Option<Rate> {
        [Rate::MBPS_1, Rate::MBPS_2, Rate::MBPS_5_5, Rate::MBPS_11]
            .into_iter()
            .find(|r| (r.mbps() - mbps).abs() < 1e-9)
    }

    pub fn mbps(self) -> f64 {
        self.0 as f64 / 10.0
    }

    /// Air time of a PSDU of `bytes` at this rate, preamble and PLCP header
    /// included. The PSDU part is rounded up to whole microseconds, as the
    /// PLCP LENGTH field counts microseconds (§17.2.3.5).
    pub fn airtime(self, bytes: u32) -> Duration {
        // µs = bits / (rate in Mbit/s) = 10 · bits / (rate in 100 kbit/s)
        let psdu_us = (bytes as u64 * 8 * 10).div_ceil(self.0 as u64);
        PLCP_OVERHEAD + Duration::from_micros(psdu_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn airtimes_in_microseconds() {
        // ACK and CTS, 14 bytes at 1 Mbit/s: 192 + 112 µs.
        assert_eq!(Rate::MBPS_1.airtime(14), Duration::from_micros(304));
        // RTS, 20 bytes at 1 Mbit/s: 192 + 160 µs.
        assert_eq!(Rate::MBPS_1.airtime(20), Duration::from_micros(352));
        // 1000 B payload + 8 UDP + 20 IP + 28 MAC = 1056 B at 2 Mbit/s: 192 + 4224 µs.
        assert_eq!(Rate::MBPS_2.airtime(1056), Duration::from_micros(4416));
        // 1056 B at 11 Mbit/s: 8448 bits / 11 = 768 µs exactly.
        assert_eq!(Rate::MBPS_11.airtime(1056), Duration::from_micros(192 + 768));
        // 100 B at 5.5 Mbit/s: 800 / 5.5 = 145.45 -> 146 µs.
        assert_eq!(Rate::MBPS_5_5.airtime(100), Duration::from_micros(192 + 146));
        assert_eq!(Rate::from_mbps(5.5), Some(Rate::MBPS_5_5));
        assert_eq!(Rate::from_mbps(3.0), None);
    }
}
