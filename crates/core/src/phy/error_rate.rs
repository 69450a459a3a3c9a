//! The DSSS/CCK error-rate model of 802.11b (IEEE 802.11-2012 §16, §17):
//! the probability that a chunk of bits sent at one rate survives a
//! constant SINR. These are the closed forms and integrals of the model
//! ns-3 implements (`DsssErrorRateModel`, validated by G. Pei and T. R.
//! Henderson, "Validation of ns-3 802.11b PHY model", 2010), written here
//! from their published sources:
//!
//! - 1 Mbit/s, DBPSK: P_b = ½·exp(−E_b/N_0) (J. G. Proakis, *Digital
//!   Communications*, 4th ed., 2001, eq. 5.2-69).
//! - 2 Mbit/s, DQPSK: P_b ≈ (√2+1)/√(8π√2) · γ^(−½) · exp(−(2−√2)·γ), with
//!   γ = E_b/N_0 (G. Ferrari and G. E. Corazza, "Tight bounds and accurate
//!   approximations for DQPSK transmission bit error rate", Electronics
//!   Letters 40(20), 2004, eq. 8).
//! - 5.5 and 11 Mbit/s, CCK: the symbol error probability of a set of
//!   bi-orthogonal signals (Proakis §5.2), which is how M. B. Pursley and
//!   T. C. Royster evaluate CCK ("Properties and performance of the IEEE
//!   802.11b complementary-code-key signal sets", IEEE Trans. Commun. 57(2),
//!   2009, eqs. (17) and (18)): 16 bi-orthogonal signals for 5.5 Mbit/s, and
//!   256-CCK as two independent 16-ary decisions for 11 Mbit/s.
//!
//! **Spreading gain.** The SINR is measured over the 22 MHz channel; the
//! energy per bit against the noise density is the SINR times the
//! bandwidth over the bit rate: E_b/N_0 = SINR · 22 MHz / R_b (22 at
//! 1 Mbit/s; 11 per bit at 2 Mbit/s, DQPSK carrying 2 bits per 1 MHz
//! symbol). CCK sends 1.375 M symbols/s: E_s/N_0 = SINR · 22/1.375 = 16·SINR.
//!
//! A chunk's success probability is (1 − P_b)^bits for the differential
//! modulations and (1 − P_s)^(bits/k) for CCK (k = 4 or 8 bits per symbol).
//! Success probabilities are returned as natural logarithms, so that a
//! frame's chunks add up without underflow.

use super::Rate;
use std::f64::consts::{PI, SQRT_2};

/// Bandwidth of an 802.11b channel, over which noise and SINR are measured.
pub const CHANNEL_WIDTH_HZ: f64 = 22e6;
/// CCK symbol rate (5.5 and 11 Mbit/s).
const CCK_SYMBOL_RATE_HZ: f64 = 1.375e6;

/// DBPSK bit error probability at 1 Mbit/s (Proakis eq. 5.2-69).
pub fn dbpsk_ber(sinr: f64) -> f64 {
    let eb_n0 = sinr * CHANNEL_WIDTH_HZ / 1e6;
    0.5 * (-eb_n0).exp()
}

/// DQPSK bit error probability at 2 Mbit/s (Ferrari and Corazza eq. 8).
/// The approximation exceeds ½ below about −3.4 dB, where no bit is
/// better than a coin toss: it is capped at ½.
pub fn dqpsk_ber(sinr: f64) -> f64 {
    let eb_n0 = sinr * CHANNEL_WIDTH_HZ / 1e6 / 2.0;
    if eb_n0 <= 0.0 {
        return 0.5;
    }
    let c = (SQRT_2 + 1.0) / (8.0 * PI * SQRT_2).sqrt();
    (c / eb_n0.sqrt() * (-(2.0 - SQRT_2) * eb_n0).exp()).min(0.5)
}

/// Symbol error probability of 2·`pairs` bi-orthogonal signals detected
/// coherently, where β = √(2·E_s/N_0) is the decision distance in noise
/// standard deviations (Proakis §5.2):
///
/// P_c = ∫_{−β}^{∞} [1 − 2Q(x + β)]^(pairs−1) φ(x) dx, and P_s = 1 − P_c,
///
/// evaluated as P_s = Q(β) + ∫_{−β}^{∞} (1 − [1 − 2Q(x + β)]^(pairs−1)) φ(x) dx
/// so that small error probabilities keep their relative accuracy.
/// Composite Simpson's rule over the part of the line where φ matters.
pub fn biorthogonal_ser(pairs: u32, beta: f64) -> f64 {
    const LIMIT: f64 = 10.0; // φ(10) ≈ 8e-23
    const STEPS: usize = 400; // even
    let lo = (-beta).max(-LIMIT);
    let hi = LIMIT;
    let h = (hi - lo) / STEPS as f64;
    let n1 = (pairs - 1) as f64;
    let f = |x: f64| -> f64 {
        let q = q_function(x + beta).min(0.5);
        -(n1 * (-2.0 * q).ln_1p()).exp_m1() * normal_pdf(x)
    };
    let mut sum = f(lo) + f(hi);
    for i in 1..STEPS {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        sum += w * f(lo + i as f64 * h);
    }
    (q_function(beta) + sum * h / 3.0).clamp(0.0, 1.0)
}

/// CCK at 5.5 Mbit/s: 16 bi-orthogonal signals, β = √(16·SINR).
pub fn cck_5_5_ser(sinr: f64) -> f64 {
    let es_n0 = sinr * CHANNEL_WIDTH_HZ / CCK_SYMBOL_RATE_HZ;
    biorthogonal_ser(8, es_n0.max(0.0).sqrt())
}

/// CCK at 11 Mbit/s: two independent 16-ary decisions, each with half the
/// symbol energy: P_s = 1 − (1 − P_16(β = √(8·SINR)))².
pub fn cck_11_ser(sinr: f64) -> f64 {
    let es_n0 = sinr * CHANNEL_WIDTH_HZ / CCK_SYMBOL_RATE_HZ;
    let p = biorthogonal_ser(8, (es_n0 / 2.0).max(0.0).sqrt());
    1.0 - (1.0 - p) * (1.0 - p)
}

/// ln of the probability that `bits` bits at `rate` all survive a constant
/// `sinr` (a linear power ratio).
pub fn ln_chunk_success(rate: Rate, sinr: f64, bits: f64) -> f64 {
    if bits <= 0.0 {
        return 0.0;
    }
    let (p, units) = match rate.index() {
        0 => (dbpsk_ber(sinr), bits),
        1 => (dqpsk_ber(sinr), bits),
        2 => (cck_5_5_ser(sinr), bits / 4.0),
        _ => (cck_11_ser(sinr), bits / 8.0),
    };
    if p >= 1.0 {
        return f64::NEG_INFINITY;
    }
    units * (-p).ln_1p()
}

/// Per rate (`Rate::index`), the SINR from which no chunk of a frame can
/// fail but with a probability below 1e-18: the largest frame (2346 bytes
/// with its PLCP header) loses less than that. Above it a chunk's success
/// probability is 1 to double precision, and need not be computed.
pub fn certain_sinr() -> &'static [f64; 4] {
    static CERTAIN: std::sync::OnceLock<[f64; 4]> = std::sync::OnceLock::new();
    CERTAIN.get_or_init(|| {
        const MAX_BITS: f64 = 2346.0 * 8.0 + 48.0;
        Rate::ALL.map(|rate| {
            // Bisection in dB between certain failure and certain success.
            let (mut lo, mut hi) = (-20.0_f64, 60.0_f64);
            for _ in 0..60 {
                let mid = 0.5 * (lo + hi);
                if -ln_chunk_success(rate, 10f64.powf(mid / 10.0), MAX_BITS) < 1e-18 {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            10f64.powf(hi / 10.0)
        })
    })
}

/// The standard normal density.
fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * PI).sqrt()
}

/// Q(y) = P(N(0,1) > y) = ½·erfc(y/√2).
pub fn q_function(y: f64) -> f64 {
    0.5 * erfc(y / SQRT_2)
}

/// The complementary error function, with a fractional error below 1.2e-7
/// everywhere: the Chebyshev fit of W. H. Press et al., *Numerical Recipes*,
/// 2nd ed., 1992, §6.2 (`erfcc`).
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98 + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db(x: f64) -> f64 {
        10f64.powf(x / 10.0)
    }
    fn close(a: f64, b: f64, rel: f64) {
        assert!((a - b).abs() <= rel * b.abs(), "{a:e} vs {b:e}");
    }

    // Reference values computed independently with mpmath at 30 digits
    // (mpmath.erfc, mpmath.quad over [−β, ∞)) straight from the formulas in
    // the module doc: P_b = ½·exp(−22·s); P_b = c·(11s)^(−½)·exp(−(2−√2)·11s);
    // P_c = ∫ (1 − erfc((x+β)/√2))^7 φ(x) dx with β = √(16s) (5.5) and
    // 1 − (1 − P_s(β = √(8s)))² (11), s the linear SINR.

    #[test]
    fn erfc_against_reference() {
        close(erfc(0.5), 0.479_500_122_186_953_5, 2e-7);
        close(erfc(2.0), 4.677_734_981_047_266e-3, 2e-7);
        close(erfc(5.0), 1.537_459_794_428_035e-12, 2e-7);
        close(erfc(-1.0), 1.842_700_792_949_715, 2e-7);
    }

    #[test]
    fn dbpsk_and_dqpsk_at_known_sinr() {
        close(dbpsk_ber(db(-5.0)), 4.759_689_043_177_168e-4, 1e-12);
        close(dbpsk_ber(db(-3.0)), 8.135_557_241_637_154e-6, 1e-12);
        close(dqpsk_ber(db(0.0)), 1.942_047_831_906_986e-4, 1e-12);
        close(dqpsk_ber(db(2.0)), 3.560_166_027_947_649e-6, 1e-12);
        // Below about −3.4 dB the approximation passes ½ and is capped there.
        assert!(dqpsk_ber(db(-10.0)) < 0.5);
        assert_eq!(dqpsk_ber(db(-20.0)), 0.5);
    }

    #[test]
    fn cck_symbol_error_at_known_sinr() {
        close(cck_5_5_ser(db(0.0)), 2.399_879_774_066_518e-2, 1e-6);
        close(cck_5_5_ser(db(4.0)), 4.970_651_212_577_805e-5, 1e-6);
        close(cck_11_ser(db(4.0)), 1.714_746_453_025_27e-2, 1e-6);
        close(cck_11_ser(db(8.0)), 6.987_270_363_559_844e-6, 1e-6);
    }

    #[test]
    fn above_the_certain_sinr_nothing_fails() {
        for rate in Rate::ALL {
            let s = certain_sinr()[rate.index()];
            assert!(-ln_chunk_success(rate, s, 18816.0) < 1e-18);
            assert!(-ln_chunk_success(rate, s * 0.9, 18816.0) >= 1e-18, "{rate:?}");
        }
        // DBPSK is certain from about 3 dB, CCK at 11 Mbit/s needs far more.
        assert!(certain_sinr()[0] < certain_sinr()[3]);
    }

    #[test]
    fn packet_error_rates_order_the_rates() {
        // 1000-byte payload: the SINR for 10 % PER rises with the rate
        // (about −3.2, +1.4, +4.0 and +7.0 dB for 1, 2, 5.5 and 11 Mbit/s).
        let per = |rate: Rate, sinr_db: f64| 1.0 - ln_chunk_success(rate, db(sinr_db), 8000.0).exp();
        for (rate, at) in [
            (Rate::MBPS_1, -3.2),
            (Rate::MBPS_2, 1.4),
            (Rate::MBPS_5_5, 4.0),
            (Rate::MBPS_11, 7.0),
        ] {
            let p = per(rate, at);
            assert!((0.03..0.3).contains(&p), "{rate:?} at {at} dB: PER {p}");
            assert!(per(rate, at + 1.0) < p && per(rate, at - 1.0) > p);
        }
        assert_eq!(ln_chunk_success(Rate::MBPS_2, 1.0, 0.0), 0.0);
    }
}
