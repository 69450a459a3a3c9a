//! Retransmission timeout per RFC 6298, in integer nanoseconds.

use super::TcpConfig;
use crate::time::Duration;

/// SRTT, RTTVAR and the backed-off RTO of one sender (RFC 6298 §2, §5).
#[derive(Clone, Debug)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    /// Times the RTO has been doubled since the last RTT sample (§5.5).
    backoff: u32,
    min_rto: Duration,
    initial_rto: Duration,
    max_rto: Duration,
    granularity: Duration,
}

/// The constant K of RFC 6298 §2.
const K: u64 = 4;

impl RttEstimator {
    /// No sample yet: the RTO is `cfg`'s initial one (RFC 6298 §2.1).
    pub fn new(cfg: &TcpConfig) -> Self {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            backoff: 0,
            min_rto: cfg.min_rto(),
            initial_rto: cfg.initial_rto(),
            max_rto: cfg.max_rto(),
            granularity: cfg.clock_granularity(),
        }
    }

    /// Takes one RTT measurement R (§2.2, §2.3) and clears the backoff, so
    /// that the RTO is computed afresh from the new estimate (§5.7).
    pub fn on_sample(&mut self, r: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = Duration(r.0 / 2);
            }
            Some(srtt) => {
                // RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|; SRTT <- 7/8 SRTT + 1/8 R'
                // (beta = 1/4, alpha = 1/8), updated in that order.
                let err = srtt.0.abs_diff(r.0);
                self.rttvar = Duration((3 * self.rttvar.0 + err) / 4);
                self.srtt = Some(Duration((7 * srtt.0 + r.0) / 8));
            }
        }
        self.backoff = 0;
    }

    /// Doubles the RTO after the timer expired (§5.5), up to the maximum.
    pub fn on_timeout(&mut self) {
        if self.rto() < self.max_rto {
            self.backoff += 1;
        }
    }

    /// RTO before backoff: SRTT + max(G, K RTTVAR), at least the minimum
    /// (§2.4) and at most the maximum (§2.5); the initial RTO before any
    /// sample (§2.1).
    pub fn base_rto(&self) -> Duration {
        match self.srtt {
            None => self.initial_rto,
            Some(srtt) => {
                let var = Duration(self.rttvar.0.saturating_mul(K)).max(self.granularity);
                Duration(srtt.0.saturating_add(var.0)).clamp(self.min_rto, self.max_rto)
            }
        }
    }

    /// The current RTO: the base doubled once per expiry, capped (§5.5).
    pub fn rto(&self) -> Duration {
        let base = self.base_rto().0;
        let shifted = if self.backoff >= 63 {
            u64::MAX
        } else {
            base.saturating_mul(1u64 << self.backoff)
        };
        Duration(shifted.min(self.max_rto.0))
    }

    /// SRTT; `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }
    /// RTTVAR; `None` before the first sample.
    pub fn rttvar(&self) -> Option<Duration> {
        self.srtt.map(|_| self.rttvar)
    }
    /// Doublings of the RTO since the last sample (RFC 6298 §5.5).
    pub fn backoff(&self) -> u32 {
        self.backoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> TcpConfig {
        TcpConfig {
            min_rto_s: 0.2,
            initial_rto_s: 1.0,
            max_rto_s: 10.0,
            clock_granularity_s: 0.01,
            ..TcpConfig::default()
        }
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = RttEstimator::new(&cfg());
        assert_eq!(e.rto(), Duration::from_millis(1000));
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.srtt(), Some(Duration::from_millis(100)));
        assert_eq!(e.rttvar(), Some(Duration::from_millis(50)));
        // 100 + 4 * 50 ms
        assert_eq!(e.rto(), Duration::from_millis(300));
    }

    #[test]
    fn later_samples_use_alpha_and_beta() {
        let mut e = RttEstimator::new(&cfg());
        e.on_sample(Duration::from_millis(100));
        e.on_sample(Duration::from_millis(180));
        // RTTVAR = 3/4 * 50 + 1/4 * 80 = 57.5; SRTT = 7/8 * 100 + 1/8 * 180 = 110
        assert_eq!(e.rttvar(), Some(Duration::from_micros(57_500)));
        assert_eq!(e.srtt(), Some(Duration::from_millis(110)));
        assert_eq!(e.rto(), Duration::from_millis(110 + 230));
    }

    #[test]
    fn granularity_and_minimum_bound_the_rto() {
        let mut e = RttEstimator::new(&cfg());
        for _ in 0..200 {
            e.on_sample(Duration::from_millis(250));
        }
        // RTTVAR decays to ~0, so G dominates: 250 + 10 ms.
        assert_eq!(e.rto(), Duration::from_millis(260));
        let mut e = RttEstimator::new(&cfg());
        e.on_sample(Duration::from_millis(10));
        // 10 + 4 * 5 = 30 ms, raised to the 200 ms minimum.
        assert_eq!(e.rto(), Duration::from_millis(200));
    }

    #[test]
    fn backoff_doubles_caps_at_max_and_resets_on_sample() {
        let mut e = RttEstimator::new(&cfg());
        e.on_sample(Duration::from_millis(100));
        let base = e.rto();
        let mut seen = vec![e.rto()];
        for _ in 0..8 {
            e.on_timeout();
            seen.push(e.rto());
        }
        for w in seen.windows(2) {
            let (a, b) = (w[0], w[1]);
            assert_eq!(b, Duration((a.0 * 2).min(10_000_000_000)));
        }
        assert_eq!(*seen.last().unwrap(), Duration::from_millis(10_000));
        e.on_sample(Duration::from_millis(100));
        assert_eq!(e.backoff(), 0);
        assert!(e.rto() < base.mul(2));
    }
}
