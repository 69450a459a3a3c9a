//! Named per-rate decode ranges of 802.11b (`radio.profile`): which of
//! 1, 2, 5.5 and 11 Mbit/s decodes how far. Carrier sense stays one range
//! for every rate (`cs_range_m`).
//!
//! - `"osipov-ranges"`: the ranges Osipov and Tschudin (2007, §5.1) give,
//!   250 m at 1 Mbit/s and 30 m at 11 Mbit/s. They give none for 2 and 5.5
//!   Mbit/s; those are interpolated log-linearly (log range linear in log
//!   rate): 135.4 m and 55.4 m.
//! - `"sensitivity"`: the receive threshold of each rate is a card's
//!   sensitivity for it, relative to its 1 Mbit/s sensitivity, with the
//!   1 Mbit/s range at `tx_range_m`; each range is where the propagation
//!   model's received power falls to that threshold. Card tables at 8 % FER
//!   (`radio.card`): ORiNOCO (the default; 11 Mbit/s at about 125 m when
//!   1 Mbit/s reaches 250 m under two-ray ground), Cisco Aironet 340, Cisco
//!   a/b/g in b mode, and ns-2's dei80211mr equivalent.
//!
//! Under ns-2's two-ray ground 30 m at 11 Mbit/s cannot come from any card
//! table: it lies in the Friis region, 27.7 dB above the 1 Mbit/s threshold.

use super::propagation::TwoRayGround;

/// The values `radio.profile` accepts.
pub const PROFILES: &[&str] = &["osipov-ranges", "sensitivity"];

/// A card's sensitivity in dBm at 1, 2, 5.5 and 11 Mbit/s.
pub struct Card {
    /// The `radio.card` value.
    pub name: &'static str,
    /// Sensitivity at 8 % FER, dBm, by `Rate::index`.
    pub dbm: [f64; 4],
}

/// The card tables `radio.card` names: data-sheet sensitivities, and the
/// values of ns-2's dei80211mr 802.11b PHY.
pub const CARDS: &[Card] = &[
    Card {
        name: "orinoco",
        dbm: [-94.0, -91.0, -87.0, -82.0],
    },
    Card {
        name: "cisco-aironet-340",
        dbm: [-90.0, -88.0, -87.0, -83.0],
    },
    Card {
        name: "cisco-abg",
        dbm: [-94.0, -93.0, -92.0, -90.0],
    },
    Card {
        name: "ns2-dei80211mr",
        dbm: [-98.0, -95.0, -91.0, -88.0],
    },
];

/// The card `radio.card` names, if it is one of [`CARDS`].
pub fn card(name: &str) -> Option<&'static Card> {
    CARDS.iter().find(|c| c.name == name)
}

const RATES_MBPS: [f64; 4] = [1.0, 2.0, 5.5, 11.0];

/// Osipov and Tschudin's 250 m at 1 Mbit/s and 30 m at 11 Mbit/s, with 2
/// and 5.5 Mbit/s log-linear between them.
pub fn osipov_ranges() -> [f64; 4] {
    let (r1, r11) = (250.0f64, 30.0f64);
    RATES_MBPS.map(|rate: f64| r1 * (r11 / r1).powf(rate.ln() / 11f64.ln()))
}

/// Per-rate ranges from `card`'s sensitivities, the 1 Mbit/s one at `range_1_m`.
pub fn sensitivity_ranges(model: &TwoRayGround, range_1_m: f64, card: &Card) -> [f64; 4] {
    let p1 = model.rx_power_w(range_1_m);
    card.dbm
        .map(|dbm| distance_at(model, p1 * 10f64.powf((dbm - card.dbm[0]) / 10.0)))
}

/// The distance at which the received power falls to `power_w` (the model
/// decreases with distance), to a micrometre.
pub fn distance_at(model: &TwoRayGround, power_w: f64) -> f64 {
    let (mut near, mut far) = (1e-3, 1e7);
    while far - near > 1e-6 {
        let mid = 0.5 * (near + far);
        if model.rx_power_w(mid) >= power_w {
            near = mid;
        } else {
            far = mid;
        }
    }
    near
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osipov_ranges_keep_the_papers_ends() {
        let r = osipov_ranges();
        assert!((r[0] - 250.0).abs() < 1e-9 && (r[3] - 30.0).abs() < 1e-9);
        assert!((r[1] - 135.4).abs() < 0.1, "{}", r[1]);
        assert!((r[2] - 55.4).abs() < 0.1, "{}", r[2]);
    }

    #[test]
    fn orinoco_puts_11_mbps_near_125_m() {
        let m = TwoRayGround::default();
        let r = sensitivity_ranges(&m, 250.0, card("orinoco").unwrap());
        assert!((r[0] - 250.0).abs() < 1e-3);
        // 12 dB under two-ray ground (power ~ d^-4): 250 / 10^(12/40) = 125.3 m.
        assert!((r[3] - 250.0 / 10f64.powf(12.0 / 40.0)).abs() < 0.01, "{}", r[3]);
        assert!(r[0] > r[1] && r[1] > r[2] && r[2] > r[3]);
        // The inverse is exact against the model.
        let p = m.rx_power_w(42.0);
        assert!((distance_at(&m, p) - 42.0).abs() < 1e-5);
    }
}
