//! Distributed Neighborhood Packet Drop (Xu et al. §5.3, Algorithm 5.2):
//! a node's share of the neighborhood drop probability is
//! normalizedP_b · avg_tx on its outgoing queue and normalizedP_b · avg_rx on
//! its (virtual) incoming queue, each spread with RED's count.

use crate::net::red::counted_drop;

/// The local p_b of one side: 1 when the neighborhood is above max_th
/// (normalizedP_b = 1), else normalizedP_b times that side's average.
pub fn local_pb(normalized_pb: f64, side_avg: f64) -> f64 {
    if normalized_pb >= 1.0 {
        1.0
    } else {
        (normalized_pb * side_avg).max(0.0)
    }
}

/// The two counters of Algorithm 5.2 (count_tx, count_rx).
#[derive(Clone, Debug)]
pub struct Dnpd {
    /// Own packets sent since the last drop decision's reset.
    pub count_tx: i64,
    /// Packets received from neighbours since the reset.
    pub count_rx: i64,
}

impl Default for Dnpd {
    fn default() -> Self {
        Dnpd {
            count_tx: -1,
            count_rx: -1,
        }
    }
}

impl Dnpd {
    /// Algorithm 5.2 for a packet entering the outgoing queue; `u` is
    /// uniform in [0, 1). True: drop it.
    pub fn outgoing(&mut self, normalized_pb: f64, avg_tx: f64, u: f64) -> bool {
        counted_drop(&mut self.count_tx, local_pb(normalized_pb, avg_tx), u)
    }

    /// The same on the incoming side, with avg_rx and count_rx.
    pub fn incoming(&mut self, normalized_pb: f64, avg_rx: f64, u: f64) -> bool {
        counted_drop(&mut self.count_rx, local_pb(normalized_pb, avg_rx), u)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, Purpose};
    use crate::net::red::counted_drop_rate;
    use rand::Rng;

    #[test]
    fn local_share_is_normalized_pb_times_own_average() {
        assert!((local_pb(0.0005, 60.0) - 0.03).abs() < 1e-12);
        assert_eq!(local_pb(1.0, 3.0), 1.0);
        assert_eq!(local_pb(0.0, 100.0), 0.0);
    }

    #[test]
    fn no_notification_no_drop_and_count_resets() {
        let mut d = Dnpd::default();
        assert!(!d.outgoing(0.0, 100.0, 0.0));
        assert_eq!(d.count_tx, -1);
        assert!(!d.incoming(0.0, 100.0, 0.0));
        assert_eq!(d.count_rx, -1);
    }

    #[test]
    fn above_max_th_every_packet_drops() {
        let mut d = Dnpd::default();
        assert!((0..100).all(|_| d.outgoing(1.0, 0.5, 0.999_999)));
        assert!((0..100).all(|_| d.incoming(1.0, 0.0, 0.999_999)));
    }

    #[test]
    fn drop_rate_over_many_arrivals_matches_the_target() {
        // normalizedP_b = 0.14 / 200 at a neighbour whose avg_tx is 50 and
        // avg_rx is 20: local p_b 0.035 and 0.014.
        let mut rng = stream(3, 1, Purpose::Queue);
        let norm = 0.14 / 200.0;
        for (avg, outgoing) in [(50.0, true), (20.0, false)] {
            let mut d = Dnpd::default();
            let n = 400_000;
            let drops = (0..n)
                .filter(|_| {
                    let u = rng.gen::<f64>();
                    if outgoing {
                        d.outgoing(norm, avg, u)
                    } else {
                        d.incoming(norm, avg, u)
                    }
                })
                .count();
            let target = counted_drop_rate(local_pb(norm, avg));
            let got = drops as f64 / n as f64;
            let sd = (target * (1.0 - target) / n as f64).sqrt();
            assert!((got - target).abs() < 4.0 * sd, "avg {avg}: {got} vs {target}");
            // The count makes the rate about twice p_b (F&J §7).
            assert!((target / (2.0 * local_pb(norm, avg)) - 1.0).abs() < 0.05);
        }
    }
}
