//! An event queue ordered by (time, insertion sequence): ties break in the
//! order events were scheduled, so a run is a pure function of its inputs.
//! Cancellation is lazy: a timer carries a generation number and a stale one
//! is ignored by its owner when popped (as in nexosim's scheduler). The run
//! loop tells the queue which events are stale (`pop_before`'s `live`), and
//! those of a bucket are dropped as it becomes current, before it is sorted:
//! on a busy field most access timers are cancelled by the next busy edge,
//! a third of the entries of a bucket.
//!
//! The structure suits a wireless simulation, where almost every event is
//! scheduled a few microseconds to a few milliseconds ahead (propagation,
//! SIFS, slots, frame airtimes): a timing wheel of `WHEEL` buckets of
//! `2^shift` ns each covers the next 17 ms to 17 s. Scheduling into the wheel
//! appends to a bucket (O(1)); a two-level bitmap finds the next non-empty
//! bucket; a bucket is sorted once, when it becomes current, and only if an
//! entry was appended before an earlier one (a bit per bucket records it:
//! signals are scheduled nearest receiver first, so most buckets fill in
//! order). Events beyond the wheel's span wait in a binary heap and move
//! into the wheel as it turns.
//!
//! The bucket width adapts to the event rate (`adapt`): moving to the next
//! bucket costs about a hundred instructions, so buckets of one event each
//! are wasteful (a 100-node grid), while hundreds of events per bucket
//! cost sorting and insertion into the current bucket (10,000 nodes). Every
//! `ADAPT_EVERY` bucket changes the queue looks at how many events each
//! bucket held, and halves or doubles the width to keep that between
//! `MIN_PER_BUCKET` and `MAX_PER_BUCKET`, re-filing the pending events. The
//! order never depends on the width: it is always (time, sequence).
//!
//! The hot path is inlined at the caller: `schedule` into a later bucket,
//! and `pop_before`, the run loop's one call per event (it peeks and pops
//! at once). Only moving to the next bucket is a call. Instruction counts
//! (callgrind) are in docs/architecture.md and bench/RESULTS.md.

use crate::time::SimTime;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Bucket width at the start: 4,096 ns.
const START_SHIFT: u32 = 12;
/// Bucket widths the adaptation may choose: 256 ns to 262 µs.
const MIN_SHIFT: u32 = 8;
const MAX_SHIFT: u32 = 18;
/// Bucket changes between two looks at the width.
const ADAPT_EVERY: u32 = 1024;
/// Events popped per bucket below which the width doubles, and above which
/// it halves. Measured (callgrind, whole runs): the instruction count is
/// flat from about 4 to 25 events per bucket on a 100-node grid and on
/// 1,000- and 10,000-node fields, and rises outside.
const MIN_PER_BUCKET: u32 = 4;
const MAX_PER_BUCKET: u32 = 12;
/// Buckets in the wheel (a power of two).
const WHEEL: u64 = 1 << 16;
const MASK: u64 = WHEEL - 1;
const WORDS: usize = (WHEEL / 64) as usize;
const SUMMARY_WORDS: usize = WORDS / 64;
/// The sequence number of the run's limit (`set_limit`), below every
/// event's: an event at the limit's instant comes after it.
const LIMIT_SEQ: u64 = 0;

#[derive(Clone, Copy)]
struct Entry<E> {
    /// The event's time in ns, then its insertion sequence number: the order.
    at: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> (u64, u64) {
        (self.at, self.seq)
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}

/// The run's one event queue: a timing wheel with a heap behind it, popped
/// in (time, insertion sequence) order whatever the bucket width.
pub struct EventQueue<E> {
    /// The current bucket, sorted by key; entries before `head` are popped.
    current: Vec<Entry<E>>,
    head: usize,
    /// Absolute bucket number (time >> shift) of the current bucket.
    cursor: u64,
    /// The current bucket's last instant (ns): while the bucket is used
    /// up, nothing queued lies at or before it (`is_next`).
    cursor_last: u64,
    /// Bucket width: `2^shift` ns.
    shift: u32,
    /// Since the last look at the width: bucket changes, and events popped.
    advances: u32,
    pops: u32,
    len: usize,
    next_seq: u64,
    now: SimTime,
    popped: u64,
    /// Events `take_if_next` refused: on the signal walks, a step that had
    /// to be queued because another event came first.
    refused: u64,
    buckets: Box<[Vec<Entry<E>>]>,
    /// Bit per bucket: not empty.
    bits: Box<[u64; WORDS]>,
    /// Bit per word of `bits`: that word is not zero.
    summary: [u64; SUMMARY_WORDS],
    /// Bit per bucket: an entry was appended before an earlier one, so the
    /// bucket needs sorting when it becomes current.
    unsorted: Box<[u64; WORDS]>,
    /// Emptied bucket vectors, kept for reuse so that scheduling does not
    /// allocate and idle buckets hold no memory.
    pool: Vec<Vec<Entry<E>>>,
    /// Events at or beyond `cursor + WHEEL` buckets.
    far: BinaryHeap<Reverse<Entry<E>>>,
    /// The time of the queued limit (`set_limit`), if one is.
    limit: Option<u64>,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero, with buckets of `2^START_SHIFT` ns.
    pub fn new() -> Self {
        EventQueue {
            current: Vec::new(),
            head: 0,
            cursor: 0,
            cursor_last: (1 << START_SHIFT) - 1,
            shift: START_SHIFT,
            advances: 0,
            pops: 0,
            len: 0,
            next_seq: LIMIT_SEQ + 1,
            now: SimTime::ZERO,
            popped: 0,
            refused: 0,
            buckets: (0..WHEEL).map(|_| Vec::new()).collect(),
            bits: Box::new([0; WORDS]),
            summary: [0; SUMMARY_WORDS],
            unsorted: Box::new([0; WORDS]),
            pool: Vec::new(),
            far: BinaryHeap::new(),
            limit: None,
        }
    }

    #[inline(always)]
    fn bucket_of(&self, at: u64) -> u64 {
        at >> self.shift
    }

    fn set_cursor(&mut self, cursor: u64) {
        self.cursor = cursor;
        self.cursor_last = (cursor << self.shift) | ((1 << self.shift) - 1);
    }

    /// The time of the last event popped.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far (the run summary's `events`).
    pub fn events_popped(&self) -> u64 {
        self.popped
    }

    /// How many times `take_if_next` refused.
    pub fn refused(&self) -> u64 {
        self.refused
    }

    /// Events queued, the limit (`set_limit`) not counted.
    pub fn len(&self) -> usize {
        self.len - usize::from(self.limit.is_some())
    }

    /// No event queued, the limit not counted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedules `event` at `at`; scheduling in the past is a broken invariant.
    ///
    /// The common case, a bucket of the wheel after the current one, is an
    /// append and two bit sets, inlined at the caller.
    #[inline(always)]
    pub fn schedule(&mut self, at: SimTime, event: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.schedule_reserved(at, seq, event);
    }

    /// Reserves `n` consecutive insertion sequence numbers and returns the
    /// first: events scheduled later with them (`schedule_reserved`) take
    /// the place in the order they would have had if scheduled now.
    pub fn reserve(&mut self, n: u64) -> u64 {
        let first = self.next_seq;
        self.next_seq += n;
        first
    }

    /// Schedules `event` at `at` with a sequence number from `reserve`
    /// (each used once).
    #[inline(always)]
    pub fn schedule_reserved(&mut self, at: SimTime, seq: u64, event: E) {
        assert!(at >= self.now, "event scheduled in the past");
        debug_assert!(seq < self.next_seq, "sequence number not reserved");
        let e = Entry { at: at.0, seq, event };
        self.len += 1;
        let ahead = self.bucket_of(at.0).wrapping_sub(self.cursor);
        if ahead.wrapping_sub(1) < WHEEL - 1 {
            self.push_wheel(e);
        } else {
            self.place_slow(e);
        }
    }

    #[inline(always)]
    fn push_wheel(&mut self, e: Entry<E>) {
        let slot = (self.bucket_of(e.at) & MASK) as usize;
        let word = slot / 64;
        let bit = 1u64 << (slot % 64);
        let bucket = &mut self.buckets[slot];
        match bucket.last() {
            // Appended in order (the common case: signals are scheduled
            // nearest receiver first): the bucket stays sorted.
            Some(last) => {
                if last.key() > e.key() {
                    self.unsorted[word] |= bit;
                }
            }
            None => {
                if bucket.capacity() == 0 {
                    if let Some(v) = self.pool.pop() {
                        *bucket = v;
                    }
                }
                self.bits[word] |= bit;
                self.summary[word / 64] |= 1 << (word % 64);
            }
        }
        bucket.push(e);
    }

    /// The current bucket (or an earlier one: after `peek_time` moved the
    /// cursor, the caller may schedule before it), or beyond the wheel.
    #[inline(never)]
    fn place_slow(&mut self, e: Entry<E>) {
        if self.bucket_of(e.at) > self.cursor {
            self.place_later(e);
            return;
        }
        // Keep the current bucket sorted. After its last entry: an append.
        // Before it, when some of the bucket was popped: into the used-up
        // slot before the head, moving forward the entries that come
        // first, so the vector does not grow; on the grid, whose wide
        // buckets take the MAC's SIFS and slot timers, those are few.
        // Otherwise an append and a step of insertion sort from the end.
        let key = e.key();
        if self.head > 0 && self.current.last().is_some_and(|l| l.key() > key) {
            self.head -= 1;
            let tail = &mut self.current[self.head..];
            let mut i = 0;
            while i + 1 < tail.len() && tail[i + 1].key() < key {
                tail[i] = tail[i + 1];
                i += 1;
            }
            tail[i] = e;
            return;
        }
        self.current.push(e);
        let mut i = self.current.len() - 1;
        while i > self.head && self.current[i - 1].key() > key {
            self.current[i] = self.current[i - 1];
            i -= 1;
        }
        self.current[i] = e;
    }

    /// A later bucket of the wheel (far events moving in) or beyond it; kept
    /// apart so that `place_slow`'s common path stays small.
    #[cold]
    #[inline(never)]
    fn place_later(&mut self, e: Entry<E>) {
        if self.bucket_of(e.at) < self.cursor + WHEEL {
            self.push_wheel(e);
        } else {
            self.far.push(Reverse(e));
        }
    }

    /// The first non-empty wheel slot in `lo..hi`.
    fn first_set(&self, lo: usize, hi: usize) -> Option<usize> {
        if lo >= hi {
            return None;
        }
        let mut w = lo / 64;
        let head = self.bits[w] & (!0u64 << (lo % 64));
        if head != 0 {
            let s = w * 64 + head.trailing_zeros() as usize;
            return (s < hi).then_some(s);
        }
        w += 1;
        // Jump over empty words with the summary bitmap.
        while w * 64 < hi {
            let sw = w / 64;
            let words = self.summary[sw] & (!0u64 << (w % 64));
            if words == 0 {
                w = (sw + 1) * 64;
                continue;
            }
            w = sw * 64 + words.trailing_zeros() as usize;
            let s = w * 64 + self.bits[w].trailing_zeros() as usize;
            return (s < hi).then_some(s);
        }
        None
    }

    /// The first non-empty wheel slot at or after `from`, circularly, as
    /// an offset from `from` in buckets.
    fn next_set(&self, from: usize) -> Option<u64> {
        let n = WHEEL as usize;
        self.first_set(from, n)
            .map(|s| (s - from) as u64)
            .or_else(|| self.first_set(0, from).map(|s| (s + n - from) as u64))
    }

    /// The current bucket is used up: makes the next non-empty one current.
    /// False if the queue is empty.
    ///
    /// Events of the new bucket before `stop` that `live` says are dead
    /// (a timer cancelled since it was queued, which its owner would
    /// ignore) are dropped before the bucket is sorted, and counted as
    /// popped: `pop_before`.
    #[inline(never)]
    fn advance(&mut self, stop: u64, live: impl Fn(&E) -> bool) -> bool {
        self.current.clear();
        self.head = 0;
        loop {
            if self.len == 0 {
                return false;
            }
            self.advances += 1;
            if self.advances == ADAPT_EVERY {
                self.adapt();
                if self.head < self.current.len() {
                    return true;
                }
            }
            if self.next_bucket(stop, &live) {
                return true;
            }
        }
    }

    /// Moves the cursor to the next non-empty bucket and makes it current,
    /// its dead events dropped (`advance`); false if none is left of it.
    fn next_bucket(&mut self, stop: u64, live: &impl Fn(&E) -> bool) -> bool {
        let from = ((self.cursor + 1) & MASK) as usize;
        let next = match self.next_set(from) {
            Some(off) => self.cursor + 1 + off,
            // The wheel is empty: jump to the earliest far event.
            None => self.bucket_of(self.far.peek().expect("len > 0").0.at),
        };
        self.set_cursor(next);
        // Far events now within the wheel's span move in.
        while let Some(Reverse(e)) = self.far.peek() {
            if self.bucket_of(e.at) >= self.cursor + WHEEL {
                break;
            }
            let Reverse(e) = self.far.pop().expect("peeked");
            self.place_slow(e);
        }
        let slot = (self.cursor & MASK) as usize;
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        if self.bits[word] & bit != 0 {
            let mut sort = self.unsorted[word] & bit != 0;
            self.unmark(slot);
            let mut b = std::mem::take(&mut self.buckets[slot]);
            if !self.current.is_empty() {
                // Far events of this bucket, moved in above.
                b.append(&mut self.current);
                sort = true;
            }
            // A bucket that reaches `stop` keeps its dead: the run may
            // stop before them.
            if self.cursor < stop >> self.shift {
                let held = b.len();
                b.retain(|e| live(&e.event));
                let dead = held - b.len();
                self.len -= dead;
                self.pops += dead as u32;
                self.popped += dead as u64;
            }
            if sort {
                // Time above sequence in one integer: one comparison in
                // the sort's inner loop instead of two (the same order).
                b.sort_unstable_by_key(|e| (u128::from(e.at) << 64) | u128::from(e.seq));
            }
            let old = std::mem::replace(&mut self.current, b);
            if old.capacity() > 0 {
                self.pool.push(old);
            }
        }
        self.head < self.current.len()
    }

    /// Clears wheel slot `slot`'s bits (not empty, needs sorting), and its
    /// word's summary bit if that word is left empty: the slot is emptied.
    fn unmark(&mut self, slot: usize) {
        let (word, bit) = (slot / 64, 1u64 << (slot % 64));
        self.bits[word] &= !bit;
        self.unsorted[word] &= !bit;
        if self.bits[word] == 0 {
            self.summary[word / 64] &= !(1 << (word % 64));
        }
    }

    /// Halves or doubles the bucket width if the buckets since the last
    /// look held too many or too few events each (module doc).
    fn adapt(&mut self) {
        let per_bucket = self.pops / self.advances;
        let shift = if per_bucket < MIN_PER_BUCKET {
            (self.shift + 1).min(MAX_SHIFT)
        } else if per_bucket > MAX_PER_BUCKET {
            (self.shift - 1).max(MIN_SHIFT)
        } else {
            self.shift
        };
        (self.advances, self.pops) = (0, 0);
        if shift != self.shift {
            self.set_shift(shift);
        }
    }

    /// Re-files every pending event under buckets of `2^shift` ns. Only
    /// where events sit changes, never their order.
    fn set_shift(&mut self, shift: u32) {
        let mut all: Vec<Entry<E>> = Vec::with_capacity(self.len);
        all.extend_from_slice(&self.current[self.head..]);
        self.current.clear();
        self.head = 0;
        for word in 0..WORDS {
            let mut bits = self.bits[word];
            while bits != 0 {
                let slot = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let mut b = std::mem::take(&mut self.buckets[slot]);
                all.append(&mut b);
                self.pool.push(b);
            }
            self.bits[word] = 0;
            self.unsorted[word] = 0;
        }
        self.summary = [0; SUMMARY_WORDS];
        all.extend(self.far.drain().map(|Reverse(e)| e));
        all.sort_unstable_by_key(Entry::key);
        self.shift = shift;
        // Every pending event lies at or after `now`.
        self.set_cursor(self.bucket_of(self.now.0));
        for e in all {
            let b = self.bucket_of(e.at);
            if b == self.cursor {
                self.current.push(e);
            } else if b < self.cursor + WHEEL {
                self.push_wheel(e);
            } else {
                self.far.push(Reverse(e));
            }
        }
    }

    /// Makes `current` hold the earliest events; false if the queue is empty.
    /// `stop` and `live` as for `pop_before`.
    #[inline]
    fn settle(&mut self, stop: u64, live: impl Fn(&E) -> bool) -> bool {
        self.head < self.current.len() || self.advance(stop, live)
    }

    /// The time of the next event, live or stale; `&mut` because it may
    /// turn the wheel to find it.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        if !self.settle(0, |_| true) {
            return None;
        }
        self.current.get(self.head).map(|e| SimTime(e.at))
    }

    /// Queues `limit` at `stop` (or now, if that is later), ahead of every
    /// event at that instant, until `clear_limit`: the run loop's limit.
    /// `pop_before(stop)` never pops it, and `take_if_next` refuses a step
    /// at or after it as after any queued event, so a walk stops there
    /// without a comparison of its own on every step. Out of line: once
    /// per run.
    #[inline(never)]
    pub fn set_limit(&mut self, stop: SimTime, limit: E) {
        self.clear_limit();
        let at = stop.max(self.now);
        self.limit = Some(at.0);
        self.schedule_reserved(at, LIMIT_SEQ, limit);
    }

    /// Removes the limit `set_limit` queued, wherever it now sits: at the
    /// current bucket's head when the run reached it, otherwise in its
    /// bucket or beyond the wheel.
    #[inline(never)]
    pub fn clear_limit(&mut self) {
        let Some(at) = self.limit.take() else {
            return;
        };
        let is_limit = |e: &Entry<E>| e.at == at && e.seq == LIMIT_SEQ;
        self.len -= 1;
        if let Some(i) = self.current[self.head..].iter().position(is_limit) {
            self.current.remove(self.head + i);
            return;
        }
        let slot = (self.bucket_of(at) & MASK) as usize;
        let bucket = &mut self.buckets[slot];
        if let Some(i) = bucket.iter().position(is_limit) {
            bucket.remove(i);
            if bucket.is_empty() {
                self.unmark(slot);
            }
            return;
        }
        self.far.retain(|Reverse(e)| !is_limit(e));
    }

    /// Runs the event with key (`at`, `seq`) without queueing it, if it
    /// would be the next one popped: it lies before every queued event,
    /// the run's limit among them (`set_limit`), so a step at or after the
    /// limit is refused. May refuse when it cannot tell cheaply (an earlier
    /// event might sit in `at`'s bucket); the caller then queues it.
    /// Advances `now` and counts it as popped, as `pop_before` would. Used
    /// to walk the receivers of one transmission, whose arrivals are
    /// usually nearer together than any other event.
    #[inline]
    pub fn take_if_next(&mut self, at: SimTime, seq: u64) -> bool {
        let next = self.is_next(at, seq);
        if next {
            self.now = at;
            self.popped += 1;
        } else {
            self.refused += 1;
        }
        next
    }

    /// Whether the event with key (`at`, `seq`) would be the next popped
    /// (`take_if_next`).
    #[inline(always)]
    fn is_next(&self, at: SimTime, seq: u64) -> bool {
        debug_assert!(at >= self.now && seq < self.next_seq);
        if let Some(e) = self.current.get(self.head) {
            if (e.at, e.seq) < (at.0, seq) {
                return false;
            }
        } else if at.0 > self.cursor_last {
            // The current bucket is used up, and `at` lies in a later one
            // (rare: when it lies in the used-up bucket itself, nothing
            // queued comes before it, which one comparison tells).
            return self.none_queued_until(at);
        }
        true
    }

    /// `is_next` when the current bucket is used up and `at` lies in a
    /// later one: an earlier event can only sit in a bucket after the
    /// cursor's, up to and including `at`'s. Far events lie beyond the
    /// wheel's span. Out of line, so that the walks' steps keep their
    /// registers.
    #[cold]
    #[inline(never)]
    fn none_queued_until(&self, at: SimTime) -> bool {
        let b = self.bucket_of(at.0);
        debug_assert!(b > self.cursor);
        if b - self.cursor > 64 {
            return false;
        }
        (self.cursor + 1..=b).all(|x| {
            let slot = (x & MASK) as usize;
            self.bits[slot / 64] & (1 << (slot % 64)) == 0
        })
    }

    /// Pops the earliest event if it lies before `stop`, and advances `now`
    /// to its time: the run loop's one call per event.
    ///
    /// `live` tells the events the caller would ignore when popped: a timer
    /// cancelled since it was queued (cancellation is lazy). Those of a
    /// bucket that becomes current are dropped at once, unsorted and
    /// unpopped one by one, and counted as popped, as they would have been
    /// by the time the run passes them (if they lie before `stop`). The
    /// order of the others does not change; a timer cancelled after its
    /// bucket became current is popped as before.
    #[inline]
    pub fn pop_before(&mut self, stop: SimTime, live: impl Fn(&E) -> bool) -> Option<(SimTime, E)> {
        if !self.settle(stop.0, live) {
            return None;
        }
        let e = self.current.get(self.head)?;
        if e.at >= stop.0 {
            return None;
        }
        let (at, event) = (e.at, e.event);
        self.head += 1;
        self.len -= 1;
        self.pops += 1;
        self.now = SimTime(at);
        self.popped += 1;
        Some((self.now, event))
    }

    /// Pops the earliest event and advances `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        if !self.settle(0, |_| true) {
            return None;
        }
        let e = *self.current.get(self.head)?;
        self.head += 1;
        self.len -= 1;
        self.pops += 1;
        self.now = SimTime(e.at);
        self.popped += 1;
        Some((self.now, e.event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_break_by_insertion_order() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(5), 'b');
        q.schedule(SimTime(5), 'c');
        q.schedule(SimTime(1), 'a');
        q.schedule(SimTime(5), 'd');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
        assert_eq!(q.now(), SimTime(5));
        assert_eq!(q.events_popped(), 4);
    }

    #[test]
    fn pop_before_stops_at_the_limit() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 'a');
        q.schedule(SimTime(20), 'b');
        assert_eq!(q.pop_before(SimTime(20), |_| true), Some((SimTime(10), 'a')));
        assert_eq!(q.pop_before(SimTime(20), |_| true), None);
        assert_eq!((q.len(), q.now()), (1, SimTime(10)));
        assert_eq!(q.pop_before(SimTime(21), |_| true), Some((SimTime(20), 'b')));
        assert_eq!(q.pop_before(SimTime::MAX, |_| true), None);
    }

    /// Events for the current bucket once some of it was popped: before
    /// its last entry they take the used-up slot before the head ('x'
    /// between two entries, 'y' behind an entry of its own time); after
    /// it they are appended ('z'); with no used-up slot left, one goes in
    /// from the end ('w').
    #[test]
    fn the_current_bucket_takes_events_in_front_of_its_head() {
        let mut q = EventQueue::new();
        for (t, e) in [(10, 'a'), (20, 'b'), (30, 'c'), (40, 'd'), (50, 'e')] {
            q.schedule(SimTime(t), e);
        }
        assert_eq!(q.pop(), Some((SimTime(10), 'a')));
        assert_eq!(q.pop(), Some((SimTime(20), 'b')));
        // Between 'c' and 'd'; at the head's own time (after it, as
        // scheduled later); behind the last; at now, before the head.
        q.schedule(SimTime(35), 'x');
        q.schedule(SimTime(30), 'y');
        q.schedule(SimTime(60), 'z');
        q.schedule(SimTime(20), 'w');
        let order: Vec<(u64, char)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
        assert_eq!(
            order,
            vec![
                (20, 'w'),
                (30, 'c'),
                (30, 'y'),
                (35, 'x'),
                (40, 'd'),
                (50, 'e'),
                (60, 'z')
            ]
        );
    }

    #[test]
    fn scheduling_before_a_bucket_that_peek_made_current() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(100_000), 'c');
        // The cursor moves to 100 µs; `now` stays at 0.
        assert_eq!(q.peek_time(), Some(SimTime(100_000)));
        q.schedule(SimTime(5_000), 'a');
        q.schedule(SimTime(100_000), 'd');
        q.schedule(SimTime(7_000), 'b');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c', 'd']);
    }

    #[test]
    fn a_bucket_filled_out_of_order_is_sorted() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(1), 'x');
        // One 4,096 ns bucket, appended out of order, ties in insertion order.
        for (t, e) in [(8_191, 'd'), (4_096, 'a'), (8_000, 'b'), (8_000, 'c')] {
            q.schedule(SimTime(t), e);
        }
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['x', 'a', 'b', 'c', 'd']);
    }

    #[test]
    fn far_events_and_wheel_wraps() {
        let mut q = EventQueue::new();
        let span = WHEEL << START_SHIFT;
        q.schedule(SimTime(3 * span + 7), 3);
        q.schedule(SimTime(span - 1), 1);
        q.schedule(SimTime(span + 5), 2);
        q.schedule(SimTime(10), 0);
        assert_eq!(q.peek_time(), Some(SimTime(10)));
        let got: Vec<(u64, i32)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
        assert_eq!(got, vec![(10, 0), (span - 1, 1), (span + 5, 2), (3 * span + 7, 3)]);
        assert!(q.is_empty() && q.pop().is_none());
    }

    /// Delays like a simulation's (sub-µs to seconds) against a sorted model.
    fn delay() -> impl Strategy<Value = u64> {
        prop_oneof![0u64..2_000, 0u64..2_000_000, 0u64..300_000_000, 0u64..5_000_000_000]
    }

    #[test]
    fn a_reserved_event_takes_its_place_in_the_order() {
        let mut q = EventQueue::new();
        let seq = q.reserve(1);
        q.schedule(SimTime(5), 'b');
        q.schedule_reserved(SimTime(5), seq, 'a');
        q.schedule(SimTime(5), 'c');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['a', 'b', 'c']);
    }

    #[test]
    fn take_if_next_only_when_nothing_queued_comes_first() {
        let mut q = EventQueue::new();
        let first = q.reserve(3);
        q.schedule(SimTime(2_100), 'x');
        // Before the queued event: taken without queueing, counted.
        assert!(q.take_if_next(SimTime(1_500), first));
        assert_eq!((q.now(), q.events_popped(), q.len()), (SimTime(1_500), 1, 1));
        q.schedule(SimTime(2_500), 'y');
        let later = q.reserve(1);
        // 'x' and 'y' come first: the caller queues it.
        assert!(!q.take_if_next(SimTime(4_000), later));
        q.schedule_reserved(SimTime(4_000), later, 'z');
        assert_eq!(q.pop(), Some((SimTime(2_100), 'x')));
        // Reserved before 'y' and at its time: taken ahead of it.
        assert!(q.take_if_next(SimTime(2_500), first + 1));
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['y', 'z']);
        // The refusal is counted, the takes are not.
        assert_eq!(q.refused(), 1);
    }

    /// Runs 10,000 bursts of `burst` events at one instant, `gap` ns apart
    /// (the first event of each burst schedules the next), checking that
    /// time never goes back; returns the bucket width the queue settled on.
    fn settled_shift(gap: u64, burst: usize) -> u32 {
        let mut q = EventQueue::new();
        q.schedule(SimTime(0), (0u32, true));
        let mut last = SimTime::ZERO;
        while let Some((t, (n, leads))) = q.pop() {
            assert!(t >= last);
            last = t;
            if leads && n < 10_000 {
                let next = SimTime(t.0 + gap);
                q.schedule(next, (n + 1, true));
                for _ in 1..burst {
                    q.schedule(next, (n + 1, false));
                }
            }
        }
        q.shift
    }

    #[test]
    fn bucket_width_follows_the_event_rate() {
        // One event per 50 µs: buckets widen to the widest.
        let sparse = settled_shift(50_000, 1);
        // 64 events every µs: buckets narrow to the narrowest.
        let dense = settled_shift(1_000, 64);
        assert_eq!((sparse, dense), (MAX_SHIFT, MIN_SHIFT));
    }

    /// The limit: a step at or after it is refused, `pop_before` stops at
    /// it, and clearing it leaves the queue as it was, wherever it sat (the
    /// current bucket, a later one, beyond the wheel).
    #[test]
    fn a_walk_stops_at_the_limit() {
        for stop in [5_000, 5_000_000, 1 << 40] {
            let mut q = EventQueue::new();
            let seq = q.reserve(4);
            q.set_limit(SimTime(stop), '!');
            assert!(q.is_empty());
            // (A step in the limit's bucket but before it may be refused:
            // `take_if_next` does not look into later buckets.)
            assert!(q.take_if_next(SimTime(100), seq));
            assert!(!q.take_if_next(SimTime(stop), seq + 1));
            assert!(!q.take_if_next(SimTime(stop + 1), seq + 2));
            q.schedule_reserved(SimTime(stop), seq + 1, 'a');
            assert_eq!(q.pop_before(SimTime(stop), |_| true), None);
            q.clear_limit();
            assert_eq!(q.len(), 1);
            let seq = q.reserve(1);
            assert!(q.take_if_next(SimTime(200), seq));
            assert_eq!(q.pop(), Some((SimTime(stop), 'a')));
            assert_eq!(q.pop(), None);
        }
        // Cleared after the run reached it: it is the current bucket's head.
        let mut q = EventQueue::new();
        q.schedule(SimTime(9_000), 'b');
        q.set_limit(SimTime(8_000), '!');
        assert_eq!(q.pop_before(SimTime(8_000), |_| true), None);
        q.clear_limit();
        assert_eq!(q.pop(), Some((SimTime(9_000), 'b')));
        assert!(q.is_empty());
    }

    proptest! {
        /// Reserving a sequence number and later either taking the event
        /// directly (`take_if_next`) or queueing it gives the order a sorted
        /// model gives, as when a transmission's receivers are walked, and
        /// neither passes the run's limit (`set_limit`).
        #[test]
        fn reserved_events_match_a_sorted_model(
            ops in proptest::collection::vec((0u8..5, 0u64..3_000), 1..400),
        ) {
            let mut q = EventQueue::new();
            let mut model: Vec<(u64, u64)> = Vec::new();
            let mut reserved: Vec<(u64, u64)> = Vec::new();
            let mut last = (0u64, 0u64);
            let mut taken = 0u64;
            let mut limit: Option<u64> = None;
            for (op, dt) in ops {
                model.sort();
                let stop = limit.unwrap_or(u64::MAX);
                match op {
                    0 => {
                        let got = q.pop_before(SimTime(stop), |_| true).map(|(t, e)| (t.0, e));
                        let want = match model.first() {
                            Some(&(at, _)) if at < stop => Some(model.remove(0)),
                            _ => None,
                        };
                        prop_assert_eq!(got, want);
                        if let Some(k) = got { last = k; }
                    }
                    1 => {
                        let seq = q.reserve(1);
                        reserved.push((q.now().0 + dt, seq));
                    }
                    2 => {
                        // Use the oldest reservation still after the last event.
                        reserved.retain(|&k| k > last);
                        if !reserved.is_empty() {
                            let (at, seq) = reserved.remove(0);
                            let first = model.first().copied();
                            if q.take_if_next(SimTime(at), seq) {
                                prop_assert!(first.is_none_or(|f| (at, seq) < f));
                                prop_assert!(at < stop);
                                prop_assert_eq!(q.now(), SimTime(at));
                                last = (at, seq);
                                taken += 1;
                            } else {
                                // Refusing is allowed (it only costs a queue
                                // entry); the order must come out the same.
                                q.schedule_reserved(SimTime(at), seq, seq);
                                model.push((at, seq));
                            }
                        }
                    }
                    3 => {
                        let seq = q.reserve(1);
                        let at = q.now().0 + dt;
                        q.schedule_reserved(SimTime(at), seq, seq);
                        model.push((at, seq));
                    }
                    _ => {
                        if limit.take().is_some() {
                            q.clear_limit();
                        } else {
                            let at = q.now().0 + dt;
                            q.set_limit(SimTime(at), u64::MAX);
                            limit = Some(at);
                        }
                    }
                }
                prop_assert_eq!(q.len(), model.len());
            }
            q.clear_limit();
            model.sort();
            let popped_before = q.events_popped();
            let rest: Vec<(u64, u64)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
            prop_assert_eq!(q.events_popped() - popped_before, rest.len() as u64);
            prop_assert_eq!(rest, model);
            prop_assert!(taken <= q.events_popped());
        }

        #[test]
        fn dead_events_are_dropped_in_order_and_counted(
            ops in proptest::collection::vec((0u8..6, delay()), 1..600),
        ) {
            let mut q: EventQueue<usize> = EventQueue::new();
            // Every event scheduled, by key; those `dead` are ones their
            // owner would ignore (a cancelled timer).
            let mut model: Vec<(u64, usize)> = Vec::new();
            let mut scheduled: Vec<u64> = Vec::new();
            let mut dead: Vec<bool> = Vec::new();
            let mut furthest = 0;
            for (op, dt) in ops {
                model.sort();
                match op {
                    0 | 1 => {
                        let stop = q.now().0 + dt;
                        furthest = furthest.max(stop);
                        let got = q.pop_before(SimTime(stop), |&e| !dead[e]).map(|(t, e)| (t.0, e));
                        match got {
                            Some(k) => {
                                // Only dead events may be passed over, and
                                // a dead one may still come out (killed
                                // after its bucket became current).
                                let at = model.iter().position(|&m| m == k);
                                prop_assert!(at.is_some(), "{:?} popped twice or never queued", k);
                                let at = at.unwrap();
                                prop_assert!(model[..at].iter().all(|&(_, e)| dead[e]));
                                model.drain(..=at);
                            }
                            None => {
                                prop_assert!(model.iter().all(|&(t, e)| t >= stop || dead[e]));
                                model.retain(|&(t, _)| t >= stop);
                                // Everything before `stop` was popped or
                                // dropped, and nothing after the furthest
                                // limit asked for yet.
                                let below = |s: u64| scheduled.iter().filter(|&&t| t < s).count() as u64;
                                prop_assert!(q.events_popped() >= below(stop));
                                prop_assert!(q.events_popped() <= below(furthest));
                            }
                        }
                    }
                    2 => {
                        // Kill a queued event, chosen by `dt`.
                        if !model.is_empty() {
                            let (_, e) = model[dt as usize % model.len()];
                            dead[e] = true;
                        }
                    }
                    3 => q.set_shift(MIN_SHIFT + (dt % u64::from(MAX_SHIFT - MIN_SHIFT + 1)) as u32),
                    _ => {
                        let t = q.now().0 + dt;
                        q.schedule(SimTime(t), dead.len());
                        model.push((t, dead.len()));
                        scheduled.push(t);
                        dead.push(false);
                    }
                }
            }
            model.sort();
            while let Some((t, e)) = q.pop_before(SimTime::MAX, |&e| !dead[e]) {
                let at = model.iter().position(|&m| m == (t.0, e)).expect("queued once");
                prop_assert!(model[..at].iter().all(|&(_, e)| dead[e]));
                model.drain(..=at);
            }
            prop_assert!(model.iter().all(|&(_, e)| dead[e]));
            prop_assert_eq!(q.events_popped(), scheduled.len() as u64);
            prop_assert!(q.is_empty());
        }

        #[test]
        fn matches_a_sorted_model(ops in proptest::collection::vec((0u8..5, delay()), 1..600)) {
            let mut q = EventQueue::new();
            let mut model: Vec<(u64, usize)> = Vec::new();
            for (i, (op, dt)) in ops.into_iter().enumerate() {
                model.sort();
                if op == 0 {
                    let got = q.pop().map(|(t, e)| (t.0, e));
                    let want = if model.is_empty() { None } else { Some(model.remove(0)) };
                    prop_assert_eq!(got, want);
                } else if op == 1 {
                    // A limit `dt` after now: pops only what lies before it.
                    let stop = q.now().0 + dt;
                    let got = q.pop_before(SimTime(stop), |_| true).map(|(t, e)| (t.0, e));
                    let want = match model.first() {
                        Some(&(t, _)) if t < stop => Some(model.remove(0)),
                        _ => None,
                    };
                    prop_assert_eq!(got, want);
                } else if op == 2 {
                    // Peeking may move the cursor past `now`.
                    prop_assert_eq!(q.peek_time().map(|t| t.0), model.first().map(|m| m.0));
                } else if op == 3 {
                    // Re-filing under another bucket width keeps the order.
                    q.set_shift(MIN_SHIFT + (dt % u64::from(MAX_SHIFT - MIN_SHIFT + 1)) as u32);
                } else {
                    let t = q.now().0 + dt;
                    q.schedule(SimTime(t), i);
                    model.push((t, i));
                }
                prop_assert_eq!(q.len(), model.len());
            }
            model.sort();
            let rest: Vec<(u64, usize)> = std::iter::from_fn(|| q.pop().map(|(t, e)| (t.0, e))).collect();
            prop_assert_eq!(rest, model);
        }
    }
}
