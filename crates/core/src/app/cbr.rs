//! Constant bit rate: one packet of `packet_bytes` every
//! `packet_bytes × 8 / rate` seconds from `start` until `stop`.

use crate::time::{Duration, SimTime};

/// A CBR source over UDP, as ns-2's `Application/Traffic/CBR`: the
/// open-loop load that shows the MAC's unfairness without TCP's reaction.
#[derive(Clone, Debug)]
pub struct Cbr {
    interval: Duration,
    next: SimTime,
    stop: SimTime,
    seq: u64,
}

impl Cbr {
    /// `rate_kbps` in kbit/s (10^3 bit/s); the interval rounds to whole
    /// ns and is at least 1 ns, so that time advances.
    pub fn new(packet_bytes: u32, rate_kbps: f64, start: SimTime, stop: SimTime) -> Self {
        let secs = packet_bytes as f64 * 8.0 / (rate_kbps * 1000.0);
        Cbr {
            interval: Duration::from_secs_f64(secs).max(Duration(1)),
            next: start,
            stop,
            seq: 0,
        }
    }

    /// When the next packet is due, if before `stop`.
    pub fn next_send(&self) -> Option<SimTime> {
        (self.next < self.stop).then_some(self.next)
    }

    /// Emits the due packet: returns its sequence number.
    pub fn on_send(&mut self) -> u64 {
        self.next += self.interval;
        self.seq += 1;
        self.seq - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paces_and_stops() {
        // 1000 B at 80 kbit/s: one packet every 100 ms.
        let mut c = Cbr::new(1000, 80.0, SimTime::from_secs_f64(1.0), SimTime::from_secs_f64(1.25));
        let mut times = Vec::new();
        while let Some(t) = c.next_send() {
            times.push(t);
            c.on_send();
        }
        assert_eq!(
            times,
            vec![SimTime(1_000_000_000), SimTime(1_100_000_000), SimTime(1_200_000_000)]
        );
    }
}
