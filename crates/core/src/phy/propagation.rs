//! Two-ray ground reflection with Friis free space below the crossover
//! distance, with ns-2's constants (914 MHz, 1.5 m antennas, unit gains,
//! system loss 1). Transmit power is ns-2's 0.28183815 W; the receive and
//! carrier-sense thresholds are the received powers at `tx_range_m` and
//! `cs_range_m`, so a frame decodes at exactly the transmission range.

use std::f64::consts::PI;

/// Carrier frequency: ns-2's `freq_` (the WaveLAN card it models), which
/// sets λ for Friis and the crossover distance.
pub const FREQUENCY_HZ: f64 = 914e6;
/// Transmit and receive antenna height, ns-2's `Z_`.
pub const ANTENNA_HEIGHT_M: f64 = 1.5;
/// ns-2's system loss `L_`: none.
pub const SYSTEM_LOSS: f64 = 1.0;
/// ns-2's `Pt_`: with `RXThresh_` 3.652e-10 W it puts the decode range at
/// 250 m under two-ray ground.
pub const TX_POWER_W: f64 = 0.281_838_15;

/// Path loss as ns-2's `Propagation/TwoRayGround`: Friis free space
/// P_r = P_t λ² / ((4π)² d² L) below the crossover distance, two-ray
/// P_r = P_t h_t² h_r² / (d⁴ L) beyond (Rappaport, *Wireless
/// Communications*, 2nd ed., eqs. (4.1) and (4.52)), unit antenna gains.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TwoRayGround {
    /// Transmit power, W; the same for every node.
    pub tx_power_w: f64,
    lambda: f64,
    crossover_m: f64,
}

impl Default for TwoRayGround {
    fn default() -> Self {
        let lambda = super::SPEED_OF_LIGHT / FREQUENCY_HZ;
        TwoRayGround {
            tx_power_w: TX_POWER_W,
            lambda,
            // d_c = 4π h_t h_r / λ: below it the ground reflection is not
            // yet destructive and Friis holds (ns-2 TwoRayGround).
            crossover_m: 4.0 * PI * ANTENNA_HEIGHT_M * ANTENNA_HEIGHT_M / lambda,
        }
    }
}

impl TwoRayGround {
    /// d_c = 4π h_t h_r / λ, where the model switches from Friis to two-ray
    /// (about 86 m at ns-2's constants).
    pub fn crossover_m(&self) -> f64 {
        self.crossover_m
    }

    /// Received power in watts at distance `d` metres.
    pub fn rx_power_w(&self, d: f64) -> f64 {
        let d = d.max(1e-3);
        if d < self.crossover_m {
            self.tx_power_w * self.lambda * self.lambda / ((4.0 * PI).powi(2) * d * d * SYSTEM_LOSS)
        } else {
            let h2 = ANTENNA_HEIGHT_M * ANTENNA_HEIGHT_M;
            self.tx_power_w * h2 * h2 / (d.powi(4) * SYSTEM_LOSS)
        }
    }
}

/// Thresholds derived from the scenario's ranges: the received power at
/// each range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Thresholds {
    /// Received power at `tx_range_m`.
    pub rx_w: f64,
    /// Decode threshold per rate (`Rate::index`): the power at that rate's
    /// range, so that one receiver hears 1 Mbit/s far and 11 Mbit/s near.
    pub rx_w_by_rate: [f64; 4],
    /// Carrier-sense threshold: received power at `cs_range_m`.
    pub cs_w: f64,
    /// Capture ratio as a power ratio (10 dB -> 10.0).
    pub capture_ratio: f64,
}

impl Thresholds {
    /// Thresholds for one decode range at every rate.
    pub fn from_ranges(model: &TwoRayGround, tx_range_m: f64, cs_range_m: f64, capture_db: f64) -> Self {
        Self::from_config(
            model,
            &super::PhyConfig::with_ranges(tx_range_m, cs_range_m, capture_db),
        )
    }

    /// Thresholds for a scenario's radio: each range becomes the power
    /// `model` delivers there.
    pub fn from_config(model: &TwoRayGround, cfg: &super::PhyConfig) -> Self {
        Thresholds {
            rx_w: model.rx_power_w(cfg.tx_range_m),
            rx_w_by_rate: cfg.rate_range_m.map(|d| model.rx_power_w(d)),
            cs_w: model.rx_power_w(cfg.cs_range_m),
            capture_ratio: 10f64.powf(cfg.capture_db / 10.0),
        }
    }

    /// The power a frame at `rate` needs to be decodable.
    pub fn rx_w_at(&self, rate: super::Rate) -> f64 {
        self.rx_w_by_rate[rate.index()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns2_reference_thresholds() {
        let m = TwoRayGround::default();
        // ns-2's RXThresh_ for 250 m and CSThresh_ for 550 m.
        let rx = m.rx_power_w(250.0);
        let cs = m.rx_power_w(550.0);
        assert!((rx - 3.652e-10).abs() / 3.652e-10 < 1e-3, "{rx}");
        assert!((cs - 1.559e-11).abs() / 1.559e-11 < 1e-3, "{cs}");
        assert!((m.crossover_m() - 86.2).abs() < 0.1);
    }

    #[test]
    fn continuous_enough_and_monotone() {
        let m = TwoRayGround::default();
        let mut last = f64::INFINITY;
        for d in 1..1000 {
            let p = m.rx_power_w(d as f64);
            assert!(p < last);
            last = p;
        }
    }
}
