//! The receiving side: reassembly, in-order delivery and ACK generation
//! with delayed ACKs (RFC 5681 §4.2, RFC 1122 §4.2.3.2).

use std::collections::BTreeMap;

use super::{Segment, TcpConfig};
use crate::time::{Duration, SimTime};

/// Counters of one receiver.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Data segments received.
    pub data_segments: u64,
    /// Segments that carried no byte not already held.
    pub duplicate_segments: u64,
    /// Segments that arrived beyond a gap.
    pub out_of_order_segments: u64,
    /// ACKs handed to the network.
    pub acks_sent: u64,
}

/// One TCP receiver.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    delayed_ack: bool,
    delayed_ack_timeout: Duration,
    /// Next byte expected (RFC 793 RCV.NXT); everything below was delivered.
    rcv_nxt: u64,
    /// Bytes held beyond a gap: start -> end, disjoint, none touching
    /// `rcv_nxt`.
    ooo: BTreeMap<u64, u64>,
    /// In-order segments received since the last ACK.
    unacked_segments: u32,
    /// Delayed-ACK timer.
    ack_deadline: Option<SimTime>,
    /// ACKs owed to the network now.
    acks_due: u32,
    /// Send time of the latest data segment, echoed in every ACK (ns-2's
    /// `TCPSink` echoes the last segment's timestamp, not RFC 7323's
    /// TS.Recent).
    ts_recent: SimTime,
    stats: ReceiverStats,
}

impl TcpReceiver {
    /// A receiver expecting byte 0, with `cfg`'s delayed-ACK rule.
    pub fn new(cfg: &TcpConfig, _now: SimTime) -> Self {
        TcpReceiver {
            delayed_ack: cfg.delayed_ack,
            delayed_ack_timeout: cfg.delayed_ack_timeout(),
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            unacked_segments: 0,
            ack_deadline: None,
            acks_due: 0,
            ts_recent: SimTime::ZERO,
            stats: ReceiverStats::default(),
        }
    }

    /// A data segment arrived. Returns the bytes newly delivered in order
    /// to the application (never a byte twice).
    pub fn handle_segment(&mut self, now: SimTime, seg: &Segment) -> u64 {
        if seg.is_ack || seg.len == 0 {
            return 0;
        }
        self.stats.data_segments += 1;
        self.ts_recent = seg.sent_at;
        let (start, end) = (seg.seq, seg.end());
        if end <= self.rcv_nxt || self.is_held(start, end) {
            // Nothing new: ACK at once so that the sender learns where the
            // receiver stands (RFC 793 §3.9, RFC 5681 §4.2).
            self.stats.duplicate_segments += 1;
            self.ack_now();
            return 0;
        }
        if start > self.rcv_nxt {
            // Beyond a gap: hold it and send a duplicate ACK at once
            // (RFC 5681 §4.2).
            self.stats.out_of_order_segments += 1;
            self.insert_ooo(start, end);
            self.ack_now();
            return 0;
        }
        let before = self.rcv_nxt;
        let had_gap = !self.ooo.is_empty();
        self.rcv_nxt = end;
        while let Some((&s, &e)) = self.ooo.first_key_value() {
            if s > self.rcv_nxt {
                break;
            }
            self.rcv_nxt = self.rcv_nxt.max(e);
            self.ooo.remove(&s);
        }
        if had_gap || !self.delayed_ack {
            // A segment that fills (part of) a gap is ACKed at once
            // (RFC 5681 §4.2), as is every segment without delayed ACKs.
            self.ack_now();
        } else {
            // Delayed ACK: at least every second segment, and within the
            // timeout (RFC 5681 §4.2, RFC 1122 §4.2.3.2).
            self.unacked_segments += 1;
            if self.unacked_segments >= 2 {
                self.ack_now();
            } else if self.ack_deadline.is_none() {
                self.ack_deadline = Some(now + self.delayed_ack_timeout);
            }
        }
        self.rcv_nxt - before
    }

    /// Whether `start..end` lies entirely within one held block.
    fn is_held(&self, start: u64, end: u64) -> bool {
        match self.ooo.range(..=start).next_back() {
            Some((_, &e)) => e >= end,
            None => false,
        }
    }

    /// Adds `start..end` (with `start > rcv_nxt`) to the held blocks,
    /// merging overlapping and touching ones.
    fn insert_ooo(&mut self, mut start: u64, mut end: u64) {
        if let Some((&s, &e)) = self.ooo.range(..=start).next_back() {
            if e >= start {
                start = s;
                end = end.max(e);
                self.ooo.remove(&s);
            }
        }
        while let Some((&s, &e)) = self.ooo.range(start..).next() {
            if s > end {
                break;
            }
            end = end.max(e);
            self.ooo.remove(&s);
        }
        self.ooo.insert(start, end);
    }

    fn ack_now(&mut self) {
        self.acks_due += 1;
        self.unacked_segments = 0;
        self.ack_deadline = None;
    }

    /// The delayed-ACK timer, at or after [`Self::poll_timeout`].
    pub fn handle_timeout(&mut self, now: SimTime) {
        if matches!(self.ack_deadline, Some(d) if d <= now) {
            self.ack_now();
        }
    }

    /// The next ACK to send, if any; call until `None`.
    pub fn poll_transmit(&mut self, now: SimTime) -> Option<Segment> {
        if self.acks_due == 0 {
            return None;
        }
        self.acks_due -= 1;
        self.stats.acks_sent += 1;
        Some(Segment {
            seq: 0,
            ack: self.rcv_nxt,
            len: 0,
            is_ack: true,
            retransmit: false,
            sent_at: now,
            ts_echo: self.ts_recent,
        })
    }

    /// When the delayed-ACK timer fires.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        self.ack_deadline
    }

    /// Bytes delivered in order so far.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }
    /// Bytes held beyond gaps.
    pub fn buffered_bytes(&self) -> u64 {
        self.ooo.iter().map(|(s, e)| e - s).sum()
    }
    /// Counters so far.
    pub fn stats(&self) -> &ReceiverStats {
        &self.stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(seq: u64, len: u32) -> Segment {
        Segment {
            seq,
            ack: 0,
            len,
            is_ack: false,
            retransmit: false,
            sent_at: SimTime::ZERO,
            ts_echo: SimTime::ZERO,
        }
    }

    fn acks(r: &mut TcpReceiver, now: SimTime) -> Vec<u64> {
        std::iter::from_fn(|| r.poll_transmit(now).map(|s| s.ack)).collect()
    }

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    #[test]
    fn delayed_ack_timer_fires_for_a_lone_segment() {
        let cfg = TcpConfig::default();
        let mut r = TcpReceiver::new(&cfg, SimTime::ZERO);
        assert_eq!(r.handle_segment(ms(10), &data(0, 1000)), 1000);
        assert!(acks(&mut r, ms(10)).is_empty());
        assert_eq!(r.poll_timeout(), Some(ms(110)));
        r.handle_timeout(ms(109));
        assert!(acks(&mut r, ms(109)).is_empty());
        r.handle_timeout(ms(110));
        assert_eq!(acks(&mut r, ms(110)), vec![1000]);
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn second_segment_is_acked_at_once() {
        let cfg = TcpConfig::default();
        let mut r = TcpReceiver::new(&cfg, SimTime::ZERO);
        r.handle_segment(ms(10), &data(0, 1000));
        assert!(acks(&mut r, ms(10)).is_empty());
        r.handle_segment(ms(20), &data(1000, 1000));
        assert_eq!(acks(&mut r, ms(20)), vec![2000]);
        assert_eq!(r.poll_timeout(), None);
        // The count starts over: a third segment waits again.
        r.handle_segment(ms(30), &data(2000, 1000));
        assert!(acks(&mut r, ms(30)).is_empty());
        assert_eq!(r.poll_timeout(), Some(ms(130)));
    }

    #[test]
    fn without_delayed_acks_every_segment_is_acked() {
        let cfg = TcpConfig {
            delayed_ack: false,
            ..TcpConfig::default()
        };
        let mut r = TcpReceiver::new(&cfg, SimTime::ZERO);
        r.handle_segment(ms(1), &data(0, 500));
        assert_eq!(acks(&mut r, ms(1)), vec![500]);
        r.handle_segment(ms(2), &data(500, 500));
        assert_eq!(acks(&mut r, ms(2)), vec![1000]);
        assert_eq!(r.poll_timeout(), None);
    }

    #[test]
    fn out_of_order_gets_immediate_dupacks_and_gap_fill_acks() {
        let cfg = TcpConfig::default();
        let mut r = TcpReceiver::new(&cfg, SimTime::ZERO);
        r.handle_segment(ms(1), &data(0, 100));
        assert!(acks(&mut r, ms(1)).is_empty());
        assert_eq!(r.handle_segment(ms(2), &data(200, 100)), 0);
        assert_eq!(r.handle_segment(ms(3), &data(300, 100)), 0);
        // Two duplicate ACKs, each at once; the pending delayed ACK goes too.
        assert_eq!(acks(&mut r, ms(3)), vec![100, 100]);
        assert_eq!(r.buffered_bytes(), 200);
        assert_eq!(r.handle_segment(ms(4), &data(100, 100)), 300);
        assert_eq!(acks(&mut r, ms(4)), vec![400]);
        assert_eq!(r.buffered_bytes(), 0);
    }

    #[test]
    fn acks_echo_the_latest_data_segments_send_time() {
        let cfg = TcpConfig::default();
        let mut r = TcpReceiver::new(&cfg, SimTime::ZERO);
        let seg = |seq, sent| Segment {
            sent_at: ms(sent),
            ..data(seq, 100)
        };
        r.handle_segment(ms(10), &seg(0, 3));
        r.handle_segment(ms(11), &seg(100, 5));
        let a = r.poll_transmit(ms(11)).unwrap();
        assert_eq!((a.ack, a.ts_echo, a.sent_at), (200, ms(5), ms(11)));
        // A duplicate ACK for an out-of-order segment echoes that segment.
        r.handle_segment(ms(12), &seg(300, 7));
        assert_eq!(r.poll_transmit(ms(12)).unwrap().ts_echo, ms(7));
    }

    #[test]
    fn reassembly_merges_overlaps_and_never_delivers_twice() {
        let cfg = TcpConfig::default();
        let mut r = TcpReceiver::new(&cfg, SimTime::ZERO);
        let mut delivered = 0;
        for (s, l) in [(500, 100), (700, 100), (550, 200), (900, 50), (0, 300)] {
            delivered += r.handle_segment(ms(1), &data(s, l));
        }
        assert_eq!(delivered, 300);
        assert_eq!(r.buffered_bytes(), 300 + 50);
        // Duplicates, inside a held block and below rcv_nxt.
        assert_eq!(r.handle_segment(ms(2), &data(600, 100)), 0);
        assert_eq!(r.handle_segment(ms(2), &data(0, 100)), 0);
        assert_eq!(r.stats().duplicate_segments, 2);
        // Overlapping rcv_nxt fills the gap up to the held block's end.
        delivered += r.handle_segment(ms(3), &data(250, 300));
        assert_eq!(delivered, 800);
        assert_eq!(r.rcv_nxt(), 800);
        delivered += r.handle_segment(ms(4), &data(800, 100));
        assert_eq!(delivered, 950);
        assert_eq!(r.buffered_bytes(), 0);
    }
}
