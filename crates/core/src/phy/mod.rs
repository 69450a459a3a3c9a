//! 802.11b DSSS/CCK physical layer: propagation, airtime, the channel (who
//! hears whom), and per node a radio whose state-time accounting is kept
//! apart from the decision whether a frame is received (`reception`).

pub mod channel;
pub mod error_rate;
pub mod profiles;
pub mod propagation;
pub mod radio;
pub mod reception;

use crate::time::Duration;

/// Long PLCP preamble (144 bits) and PLCP header (48 bits), always sent at
/// 1 Mbit/s: 192 µs (IEEE 802.11-2012 §17.2.2, §17.3.4).
pub const PLCP_OVERHEAD: Duration = Duration::from_micros(192);

/// Speed of light used for propagation delay, m/s.
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// An 802.11b rate: its speed in units of 100 kbit/s (so 5.5 Mbit/s is
/// exact) above two bits of its position in `Rate::ALL`. Per-rate tables
/// are indexed on each signal start (the decode threshold), where one
/// mask costs less than three comparisons added up.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate(u32);

impl Rate {
    /// 1 Mbit/s DBPSK (IEEE 802.11-2012 §16), the rate of the PLCP
    /// preamble and header.
    pub const MBPS_1: Rate = Rate(10 << 2);
    /// 2 Mbit/s DQPSK (§16).
    pub const MBPS_2: Rate = Rate(20 << 2 | 1);
    /// 5.5 Mbit/s CCK (§17).
    pub const MBPS_5_5: Rate = Rate(55 << 2 | 2);
    /// 11 Mbit/s CCK (§17).
    pub const MBPS_11: Rate = Rate(110 << 2 | 3);
    /// Every 802.11b rate, slowest first; `index()` is the position here.
    pub const ALL: [Rate; 4] = [Rate::MBPS_1, Rate::MBPS_2, Rate::MBPS_5_5, Rate::MBPS_11];

    /// The 802.11b rates are 1, 2, 5.5 and 11 Mbit/s; anything else is refused.
    pub fn from_mbps(mbps: f64) -> Option<Rate> {
        Rate::ALL.into_iter().find(|r| (r.mbps() - mbps).abs() < 1e-9)
    }

    /// Position in `Rate::ALL`, for per-rate tables.
    #[inline(always)]
    pub fn index(self) -> usize {
        (self.0 & 3) as usize
    }

    /// The speed in units of 100 kbit/s.
    fn tenths(self) -> u32 {
        self.0 >> 2
    }

    /// The rate in Mbit/s, as scenario files and summaries give it.
    pub fn mbps(self) -> f64 {
        self.tenths() as f64 / 10.0
    }

    /// Air time of a PSDU of `bytes` at this rate, preamble and PLCP header
    /// included. The PSDU part is rounded up to whole microseconds, as the
    /// PLCP LENGTH field counts microseconds (§17.2.3.5).
    pub fn airtime(self, bytes: u32) -> Duration {
        // µs = bits / (rate in Mbit/s) = 10 · bits / (rate in 100 kbit/s)
        let psdu_us = (bytes as u64 * 8 * 10).div_ceil(u64::from(self.tenths()));
        PLCP_OVERHEAD + Duration::from_micros(psdu_us)
    }
}

/// The radio as a scenario configures it (`[radio]`, docs/scenario.md),
/// validated. Ranges are turned into power thresholds by `propagation`.
#[derive(Clone, Debug, PartialEq)]
pub struct PhyConfig {
    /// A frame decodes up to here (every rate without a range of its own).
    pub tx_range_m: f64,
    /// Carrier sense reaches here.
    pub cs_range_m: f64,
    /// The channel delivers signals up to here, as interference beyond
    /// `cs_range_m`; at least `cs_range_m`. Each receiver costs two events
    /// per frame, so this radius sets the price of a transmission.
    pub interference_range_m: f64,
    /// Decode range per rate, by `Rate::index` (`tx_range_m` unless set).
    pub rate_range_m: [f64; 4],
    /// The rates a unicast exchange uses (data, control, ACK): two nodes
    /// are neighbours for routing where every one of them decodes.
    pub link_rates: RateSet,
    /// Threshold model: a locked frame survives a later signal this many
    /// dB weaker (ns-2's `CPThresh_`, 10 dB).
    pub capture_db: f64,
    /// Threshold model: signals below the receive threshold lock the radio (ns-2).
    pub lock_on_sensed: bool,
    /// Threshold model, `[ns2] lock_through_tx`: a signal arriving during
    /// the radio's own transmission locks it beyond the transmission.
    pub lock_through_tx: bool,
    /// Threshold model, `[ns2] capture_nav`: report signals captured out.
    pub report_capture: bool,
    /// How a radio decides whether a frame is received (`radio.reception`).
    pub reception: reception::ReceptionModel,
}

impl PhyConfig {
    /// One decode range for every rate, interference to the carrier-sense range.
    pub fn with_ranges(tx_range_m: f64, cs_range_m: f64, capture_db: f64) -> Self {
        PhyConfig {
            tx_range_m,
            cs_range_m,
            interference_range_m: cs_range_m,
            rate_range_m: [tx_range_m; 4],
            link_rates: RateSet::NONE.with(Rate::MBPS_1).with(Rate::MBPS_2),
            capture_db,
            lock_on_sensed: true,
            lock_through_tx: false,
            report_capture: false,
            reception: reception::ReceptionModel::Threshold,
        }
    }
}

impl std::fmt::Debug for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Rate({})", self.tenths())
    }
}

/// A set of 802.11b rates (one bit per `Rate::index`), e.g. the rates a
/// receiver can decode from one transmitter.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RateSet(u8);

impl RateSet {
    /// No rate: a node in carrier-sense range only.
    pub const NONE: RateSet = RateSet(0);
    /// Every 802.11b rate.
    pub const ALL: RateSet = RateSet(0b1111);

    /// The set with `r` added.
    pub fn with(self, r: Rate) -> RateSet {
        RateSet(self.0 | 1 << r.index())
    }
    /// Whether `r` is in the set.
    pub fn contains(self, r: Rate) -> bool {
        self.0 & (1 << r.index()) != 0
    }
    /// Whether every rate of `other` is in this set.
    pub fn covers(self, other: RateSet) -> bool {
        self.0 & other.0 == other.0
    }
    /// The fastest rate in the set.
    pub fn best(self) -> Option<Rate> {
        Rate::ALL.into_iter().rev().find(|&r| self.contains(r))
    }
}

impl FromIterator<Rate> for RateSet {
    fn from_iter<I: IntoIterator<Item = Rate>>(it: I) -> Self {
        it.into_iter().fold(RateSet::NONE, RateSet::with)
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

    #[test]
    fn rate_sets() {
        for (i, r) in Rate::ALL.into_iter().enumerate() {
            assert_eq!(r.index(), i);
            assert_eq!(Rate::from_mbps(r.mbps()), Some(r));
        }
        assert!(Rate::ALL.windows(2).all(|w| w[0] < w[1]), "slowest first");
        assert_eq!(format!("{:?}", Rate::MBPS_5_5), "Rate(55)");
        let s: RateSet = [Rate::MBPS_1, Rate::MBPS_2].into_iter().collect();
        assert!(s.contains(Rate::MBPS_2) && !s.contains(Rate::MBPS_11));
        assert_eq!(s.best(), Some(Rate::MBPS_2));
        assert!(RateSet::ALL.covers(s) && !s.covers(RateSet::ALL));
        assert_eq!(RateSet::NONE.best(), None);
    }
}
