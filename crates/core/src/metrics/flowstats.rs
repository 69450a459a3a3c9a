//! Per-flow delay, jitter and forwarding statistics of the kind ns-3's
//! FlowMonitor keeps (`FlowMonitor::FlowStats`: delaySum, jitterSum,
//! timesForwarded, delayHistogram), gathered at each delivery in constant
//! time and memory.
//!
//! Percentiles come from a log-binned histogram rather than from every
//! delay kept: the bins are those of an HDR histogram with 16 linear
//! sub-bins per power of two of nanoseconds, so that a bin is at most 1/16
//! of its lower edge wide (6.25 %) and a percentile, read as its bin's
//! midpoint, is within 3.2 % of the exact order statistic. The counts grow
//! with the largest delay seen (about 500 bins for delays up to 20 min),
//! never with the number of packets.

use crate::time::Duration;
use serde::Serialize;

/// log2 of the sub-bins per octave.
const SUB_BITS: u32 = 4;
/// Sub-bins per octave; delays below this many nanoseconds get a bin each.
const SUB: u64 = 1 << SUB_BITS;

/// The histogram bin of a delay of `ns` nanoseconds.
pub fn bin_of(ns: u64) -> usize {
    if ns < SUB {
        return ns as usize;
    }
    let e = 63 - ns.leading_zeros();
    let sub = (ns >> (e - SUB_BITS)) & (SUB - 1);
    (SUB + u64::from(e - SUB_BITS) * SUB + sub) as usize
}

/// The lower edge of bin `b`, nanoseconds (inclusive).
pub fn bin_lo(b: usize) -> u64 {
    let b = b as u64;
    if b < SUB {
        return b;
    }
    let e = (b - SUB) / SUB;
    let sub = (b - SUB) % SUB;
    (SUB + sub) << e
}

/// The upper edge of bin `b`, nanoseconds (exclusive).
pub fn bin_hi(b: usize) -> u64 {
    bin_lo(b + 1)
}

/// One flow's delivered packets: delays, their variation and hops.
#[derive(Clone, Debug, Default)]
pub struct DelayStats {
    /// Packets recorded.
    pub count: u64,
    /// Σ delay, the numerator of the mean delay.
    pub sum: Duration,
    min: Duration,
    max: Duration,
    /// The previous delivery's delay (RFC 3550's transit time of packet i−1).
    last: Option<Duration>,
    /// RFC 3550 §6.4.1's interarrival jitter J, nanoseconds.
    jitter_ns: f64,
    /// Σ |D(i−1, i)|, FlowMonitor's jitterSum.
    jitter_sum: Duration,
    /// Σ (hops − 1): the times packets were forwarded on their way
    /// (FlowMonitor's timesForwarded, counted for delivered packets).
    pub forwarded: u64,
    hist: Vec<u64>,
}

impl DelayStats {
    /// Records a packet delivered after `delay`, having crossed `hops` links.
    pub fn record(&mut self, delay: Duration, hops: u32) {
        if self.count == 0 || delay < self.min {
            self.min = delay;
        }
        self.max = self.max.max(delay);
        self.count += 1;
        self.sum += delay;
        self.forwarded += u64::from(hops.saturating_sub(1));
        if let Some(last) = self.last {
            // D(i−1, i) = (R_i − R_{i−1}) − (S_i − S_{i−1}) = transit_i −
            // transit_{i−1}, in the order of arrival; J += (|D| − J) / 16.
            let d = if delay >= last { delay - last } else { last - delay };
            self.jitter_sum += d;
            self.jitter_ns += (d.as_nanos() as f64 - self.jitter_ns) / 16.0;
        }
        self.last = Some(delay);
        let b = bin_of(delay.as_nanos());
        if b >= self.hist.len() {
            self.hist.resize(b + 1, 0);
        }
        self.hist[b] += 1;
    }

    /// The `q`-quantile (0 < q ≤ 1) by nearest rank, ⌈q·n⌉: its histogram
    /// bin's midpoint, kept within the exact minimum and maximum (so that
    /// a single packet, or all equal delays, give the exact value).
    pub fn quantile_s(&self, q: f64) -> Option<f64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (b, &c) in self.hist.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let mid = (bin_lo(b) + bin_hi(b) - 1) / 2;
                let ns = mid.clamp(self.min.as_nanos(), self.max.as_nanos());
                return Some(ns as f64 / 1e9);
            }
        }
        None
    }

    /// The summary's view of these statistics.
    pub fn summary(&self) -> DelaySummary {
        let some = self.count > 0;
        let pairs = self.count.saturating_sub(1);
        DelaySummary {
            min_delay_s: some.then(|| self.min.as_secs_f64()),
            median_delay_s: self.quantile_s(0.5),
            p95_delay_s: self.quantile_s(0.95),
            p99_delay_s: self.quantile_s(0.99),
            max_delay_s: some.then(|| self.max.as_secs_f64()),
            jitter_s: (pairs > 0).then_some(self.jitter_ns / 1e9),
            mean_jitter_s: (pairs > 0).then(|| self.jitter_sum.as_secs_f64() / pairs as f64),
            times_forwarded: self.forwarded,
            delay_histogram: DelayHistogram {
                bin_lo_s: self.nonempty().map(|b| bin_lo(b) as f64 / 1e9).collect(),
                bin_hi_s: self.nonempty().map(|b| bin_hi(b) as f64 / 1e9).collect(),
                count: self.nonempty().map(|b| self.hist[b]).collect(),
            },
        }
    }

    fn nonempty(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.hist.len()).filter(|&b| self.hist[b] > 0)
    }
}

/// The delay fields of a flow's summary (docs/contract.md §3), flattened
/// into `FlowSummary`.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct DelaySummary {
    /// Shortest one-way delay (creation at the source to delivery), s;
    /// `None` when nothing was delivered, as for every delay below.
    pub min_delay_s: Option<f64>,
    /// Median, 95th and 99th percentile one-way delay (nearest rank, from
    /// the histogram: within 3.2 % of the exact value).
    pub median_delay_s: Option<f64>,
    /// 95th percentile, as the median.
    pub p95_delay_s: Option<f64>,
    /// 99th percentile, as the median.
    pub p99_delay_s: Option<f64>,
    /// Longest one-way delay, exact.
    pub max_delay_s: Option<f64>,
    /// RFC 3550 §6.4.1's interarrival jitter after the last delivery: the
    /// running mean deviation J += (|D| − J)/16 of the transit-time
    /// differences of consecutive deliveries.
    pub jitter_s: Option<f64>,
    /// FlowMonitor's jitterSum / (rxPackets − 1): the plain mean of |D|.
    pub mean_jitter_s: Option<f64>,
    /// Σ over delivered packets of the relays they crossed (hops − 1).
    pub times_forwarded: u64,
    /// The histogram the percentiles are read from.
    pub delay_histogram: DelayHistogram,
}

/// The non-empty bins of a flow's delay histogram, as columns.
#[derive(Clone, Debug, Serialize, PartialEq, Default)]
pub struct DelayHistogram {
    /// Lower edge of each bin, s (inclusive).
    pub bin_lo_s: Vec<f64>,
    /// Upper edge of each bin, s (exclusive).
    pub bin_hi_s: Vec<f64>,
    /// Delivered packets whose delay falls in each bin.
    pub count: Vec<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_tile_the_line_and_are_at_most_a_sixteenth_wide() {
        for b in 0..900 {
            assert_eq!(bin_hi(b), bin_lo(b + 1));
            assert_eq!(bin_of(bin_lo(b)), b);
            assert_eq!(bin_of(bin_hi(b) - 1), b);
            let (lo, hi) = (bin_lo(b), bin_hi(b));
            assert!(lo < 16 || (hi - lo) * 16 <= lo, "bin {b}: {lo}..{hi}");
        }
    }

    #[test]
    fn rfc3550_jitter_and_percentiles_on_hand_made_delays() {
        let mut s = DelayStats::default();
        let ms = |x: u64| Duration::from_millis(x);
        for (d, hops) in [(10, 1), (14, 2), (12, 3), (20, 1)] {
            s.record(ms(d), hops);
        }
        // |D| = 4, 2, 8 ms: J = 0.25, 0.359375, 0.83691406 ms.
        let j = ((4.0 / 16.0 * 15.0 / 16.0 + 2.0 / 16.0) * 15.0 / 16.0 + 8.0 / 16.0) * 1e-3;
        let sm = s.summary();
        assert!((sm.jitter_s.unwrap() - j).abs() < 1e-12);
        assert!((sm.mean_jitter_s.unwrap() - 14e-3 / 3.0).abs() < 1e-12);
        assert_eq!(sm.times_forwarded, 3);
        assert_eq!(sm.min_delay_s, Some(0.010));
        assert_eq!(sm.p99_delay_s, Some(0.020));
        // Rank 2 of 4 is 12 ms; its bin's midpoint is within 3.2 %.
        let med = sm.median_delay_s.unwrap();
        assert!((med - 0.012).abs() <= 0.012 * 0.032, "{med}");
        assert_eq!(sm.delay_histogram.count.iter().sum::<u64>(), 4);
    }
}
