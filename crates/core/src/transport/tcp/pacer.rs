//! The sender's pacing queue: segments the window has released wait here
//! for their slot, so that consecutive segments leave at least one pacing
//! interval apart (TCP-AP's and M-TCP's rate-based sending within the
//! window). Only pacing variants use it; the window alone decides otherwise.
//!
//! A queued segment counts as outstanding for the window but has not left:
//! flushing the queue (fast retransmit, RTO) hands its bytes back to the
//! window, so nothing flushed is lost and nothing waits for a timeout.

use std::collections::VecDeque;

use crate::time::{Duration, SimTime};

/// A FIFO of (first byte, length) with the time the last segment left.
#[derive(Clone, Debug, Default)]
pub struct Pacer {
    queue: VecDeque<(u64, u32)>,
    /// When the last paced segment left; `None` after a flush or before the
    /// first one, so that the next segment leaves at once.
    last_release: Option<SimTime>,
}

impl Pacer {
    /// A segment released by the window.
    pub fn push(&mut self, seq: u64, len: u32) {
        self.queue.push_back((seq, len));
    }

    /// When the head may leave for a pacing interval `gap`: one interval
    /// after the last release, or `None` when nothing holds it back.
    pub fn release_at(&self, gap: Duration) -> Option<SimTime> {
        self.last_release.map(|t| t + gap)
    }

    /// Takes the head if its slot has come, skipping bytes below `snd_una`
    /// (acknowledged while they waited).
    pub fn pop(&mut self, now: SimTime, gap: Duration, snd_una: u64) -> Option<(u64, u32)> {
        if self.release_at(gap).is_some_and(|t| t > now) {
            return None;
        }
        while let Some((seq, len)) = self.queue.pop_front() {
            let end = seq + len as u64;
            if end <= snd_una {
                continue;
            }
            let start = seq.max(snd_una);
            self.last_release = Some(now);
            return Some((start, (end - start) as u32));
        }
        None
    }

    /// Drops the segments acknowledged while they waited (a go-back-N
    /// resend whose original arrived after all), so that an empty queue
    /// asks for no wake-up.
    pub fn discard_acked(&mut self, snd_una: u64) {
        while self
            .queue
            .front()
            .is_some_and(|&(seq, len)| seq + len as u64 <= snd_una)
        {
            self.queue.pop_front();
        }
    }

    /// Empties the queue and restarts pacing (the next segment leaves at
    /// once). Returns the first byte that was waiting, so that the sender
    /// can send it again later.
    pub fn flush(&mut self) -> Option<u64> {
        self.last_release = None;
        let first = self.queue.front().map(|&(seq, _)| seq);
        self.queue.clear();
        first
    }

    /// No segment waits for its slot.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
    /// Segments waiting for their slot.
    pub fn len(&self) -> usize {
        self.queue.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> SimTime {
        SimTime(v * 1_000_000)
    }

    #[test]
    fn acknowledged_segments_are_discarded() {
        let mut p = Pacer::default();
        p.push(0, 100);
        p.push(100, 100);
        p.push(200, 100);
        p.discard_acked(150);
        assert_eq!(p.len(), 2);
        // The partly acknowledged head stays; `pop` sends only its rest.
        assert_eq!(p.pop(ms(0), Duration::from_millis(5), 150), Some((150, 50)));
        p.discard_acked(300);
        assert!(p.is_empty());
    }

    #[test]
    fn segments_leave_one_interval_apart() {
        let gap = Duration::from_millis(10);
        let mut p = Pacer::default();
        for k in 0..3 {
            p.push(k * 100, 100);
        }
        // The first leaves at once, the next not before 10 ms later.
        assert_eq!(p.pop(ms(0), gap, 0), Some((0, 100)));
        assert_eq!(p.pop(ms(9), gap, 0), None);
        assert_eq!(p.release_at(gap), Some(ms(10)));
        assert_eq!(p.pop(ms(10), gap, 0), Some((100, 100)));
        // A longer interval, set meanwhile, applies to the next slot.
        assert_eq!(p.pop(ms(25), Duration::from_millis(20), 0), None);
        assert_eq!(p.pop(ms(30), Duration::from_millis(20), 0), Some((200, 100)));
        assert!(p.is_empty());
    }

    #[test]
    fn acknowledged_bytes_are_skipped_and_trimmed() {
        let mut p = Pacer::default();
        p.push(0, 100);
        p.push(100, 100);
        p.push(200, 100);
        assert_eq!(p.pop(ms(0), Duration::ZERO, 150), Some((150, 50)));
        assert_eq!(p.len(), 1);
    }

    #[test]
    fn flush_returns_the_first_waiting_byte_and_restarts_pacing() {
        let gap = Duration::from_millis(10);
        let mut p = Pacer::default();
        p.push(0, 100);
        p.push(100, 100);
        assert!(p.pop(ms(0), gap, 0).is_some());
        assert_eq!(p.flush(), Some(100));
        assert!(p.is_empty());
        assert_eq!(p.release_at(gap), None);
        assert_eq!(p.flush(), None);
        p.push(100, 100);
        assert_eq!(
            p.pop(ms(1), gap, 0),
            Some((100, 100)),
            "after a flush the next leaves at once"
        );
    }
}
