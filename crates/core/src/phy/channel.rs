//! The shared channel: node positions and, for each node, the list of nodes
//! within interference range (by default the carrier-sense range) with the
//! received power, the propagation delay and the rates that decode there
//! precomputed. A uniform grid with cells of the interference range finds
//! neighbours in O(1) cells; lists change only when a node moves, so a
//! transmission touches only its neighbourhood (DESIGN.md principle 5) and
//! never recomputes propagation.

use super::propagation::{Thresholds, TwoRayGround};
use super::{PhyConfig, Rate, RateSet};
use crate::time::Duration;
use std::collections::HashMap;

/// A point on the plane, metres; the model is flat (ns-2 ignores Z too).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Position {
    /// ns-2's `X_`, metres.
    pub x: f64,
    /// ns-2's `Y_`, metres.
    pub y: f64,
}

impl Position {
    /// Euclidean distance, metres: what path loss and propagation delay use.
    pub fn distance(&self, o: &Position) -> f64 {
        ((self.x - o.x).powi(2) + (self.y - o.y).powi(2)).sqrt()
    }
}

/// A node within interference range of the list's owner, with what a
/// frame from the owner looks like there, computed once per move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbor {
    /// The receiving node's index.
    pub node: u32,
    /// Received power of the owner's signal, W (two-ray ground).
    pub power_w: f64,
    /// Propagation delay, distance / c.
    pub delay: Duration,
    /// The rates whose frames from the owner decode here (within each
    /// rate's range).
    pub rates: RateSet,
    /// Every rate of a unicast exchange decodes here: a link for routing.
    pub in_rx_range: bool,
}

impl Neighbor {
    /// The fastest rate that decodes here.
    pub fn best_rate(&self) -> Option<Rate> {
        self.rates.best()
    }
}

/// Who hears whom and how strongly, for every node of the run.
pub struct Channel {
    model: TwoRayGround,
    /// The received powers that the scenario's ranges stand for.
    pub thresholds: Thresholds,
    tx_range_m: f64,
    rate_range_m: [f64; 4],
    link_rates: RateSet,
    /// Signals reach this far; the grid's cell size.
    reach_m: f64,
    positions: Vec<Position>,
    neighbors: Vec<Vec<Neighbor>>,
    /// Per node, the same neighbours by increasing delay (then id): signals
    /// scheduled in this order reach the event queue in time order. Kept as
    /// a copy, updated in place when a node moves, so that a move costs one
    /// removal and one insertion per touched list rather than a sort of each.
    by_delay: Vec<Vec<Neighbor>>,
    /// Lists by delay not yet brought up to date with the list by id. A
    /// mobility step marks them all; each is sorted when its node next
    /// transmits (`neighbors_by_delay`), since most nodes do not transmit
    /// between two steps.
    stale: Vec<bool>,
    /// Scratch of `sort_by_delay`: the order after its first pass.
    order: Vec<u32>,
    grid: HashMap<(i64, i64), Vec<u32>>,
    /// Lists by delay out with frames in flight (`lend_by_delay`).
    lent: usize,
}

impl Channel {
    /// Nodes at `positions` (index = node), with ranges from `cfg`.
    pub fn new(positions: Vec<Position>, cfg: &PhyConfig) -> Self {
        let model = TwoRayGround::default();
        let thresholds = Thresholds::from_config(&model, cfg);
        let n = positions.len();
        let mut ch = Channel {
            model,
            thresholds,
            tx_range_m: cfg.tx_range_m,
            rate_range_m: cfg.rate_range_m,
            link_rates: cfg.link_rates,
            reach_m: cfg.interference_range_m.max(cfg.cs_range_m),
            positions,
            neighbors: vec![Vec::new(); n],
            by_delay: vec![Vec::new(); n],
            stale: vec![true; n],
            order: Vec::new(),
            grid: HashMap::new(),
            lent: 0,
        };
        for i in 0..n as u32 {
            let c = ch.cell(&ch.positions[i as usize]);
            ch.grid.entry(c).or_default().push(i);
        }
        ch.rebuild();
        ch
    }

    /// Nodes within reach of `node` (interference range), by increasing propagation delay.
    pub fn neighbors_by_delay(&mut self, node: u32) -> &[Neighbor] {
        let i = node as usize;
        if self.stale[i] {
            self.refresh_by_delay(i);
        }
        &self.by_delay[i]
    }

    /// `node`'s list by delay handed over to a frame going on the air,
    /// instead of copied: only on a field whose nodes never move, where the
    /// list cannot change while the frame is in flight. It comes back with
    /// `give_back_by_delay` after the frame's last signal ends. (If the list
    /// is still out with an earlier frame of the node, which 802.11's
    /// timing leaves no room for unless signals travel longer than a SIFS,
    /// the frame gets a copy.)
    pub fn lend_by_delay(&mut self, node: u32) -> Vec<Neighbor> {
        let i = node as usize;
        if self.by_delay[i].is_empty() && !self.neighbors[i].is_empty() && !self.stale[i] {
            let mut copy = Vec::new();
            sort_by_delay(&self.neighbors[i], &mut copy, &mut self.order);
            return copy;
        }
        if self.stale[i] {
            self.refresh_by_delay(i);
        }
        self.lent += 1;
        std::mem::take(&mut self.by_delay[i])
    }

    /// Takes back a list `lend_by_delay` handed out for `node`: into its
    /// place if that is empty (a copy's return finds it taken, or filled by
    /// the list's own return, and is dropped).
    pub fn give_back_by_delay(&mut self, node: u32, list: Vec<Neighbor>) {
        let i = node as usize;
        if self.by_delay[i].is_empty() {
            self.by_delay[i] = list;
            self.lent -= 1;
        }
    }

    #[inline(never)]
    fn refresh_by_delay(&mut self, i: usize) {
        sort_by_delay(&self.neighbors[i], &mut self.by_delay[i], &mut self.order);
        self.stale[i] = false;
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the channel has no node.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// Where `node` is now (its last mobility step).
    pub fn position(&self, node: u32) -> Position {
        self.positions[node as usize]
    }

    /// Nodes within reach of `node` (interference range), by increasing id.
    pub fn neighbors(&self, node: u32) -> &[Neighbor] {
        &self.neighbors[node as usize]
    }

    /// The transmission-range graph: for each node, the nodes that decode
    /// its frames, by increasing id (what routing works on).
    pub fn rx_adjacency(&self) -> Vec<Vec<u32>> {
        self.neighbors
            .iter()
            .map(|list| list.iter().filter(|nb| nb.in_rx_range).map(|nb| nb.node).collect())
            .collect()
    }

    /// Whether `to` decodes frames from `from` at every rate of a unicast
    /// exchange (each within its rate's range).
    pub fn in_rx_range(&self, from: u32, to: u32) -> bool {
        let d = self.positions[from as usize].distance(&self.positions[to as usize]);
        self.rates_at(d).covers(self.link_rates)
    }

    /// The decode range of `tx_range_m`, for messages.
    pub fn tx_range_m(&self) -> f64 {
        self.tx_range_m
    }

    /// The rates that decode at distance `d`.
    fn rates_at(&self, d: f64) -> RateSet {
        // Bit k of a set is the rate of index k, whose range is `rate_range_m[k]`.
        let mut bits = 0;
        for (k, &range) in self.rate_range_m.iter().enumerate() {
            bits |= u8::from(self.within(d, range)) << k;
        }
        RateSet(bits)
    }

    /// Distances equal to a range count as inside it: a frame decodes at
    /// exactly `tx_range_m` (a relative tolerance absorbs rounding in sqrt).
    fn within(&self, d: f64, range: f64) -> bool {
        d <= range * (1.0 + 1e-12)
    }

    fn cell(&self, p: &Position) -> (i64, i64) {
        ((p.x / self.reach_m).floor() as i64, (p.y / self.reach_m).floor() as i64)
    }

    /// The nodes in the 3×3 cells around node `i`'s (`i` among them): every
    /// node within reach of it, and some beyond.
    fn nearby(&self, i: u32) -> impl Iterator<Item = u32> + '_ {
        let (cx, cy) = self.cell(&self.positions[i as usize]);
        (-1..=1)
            .flat_map(move |dx| (-1..=1).map(move |dy| (cx + dx, cy + dy)))
            .flat_map(|c| self.grid.get(&c).into_iter().flatten().copied())
    }

    fn compute_neighbors(&self, i: u32) -> Vec<Neighbor> {
        let mut out: Vec<Neighbor> = self
            .nearby(i)
            .filter(|&j| j != i)
            .filter_map(|j| self.link(i, j))
            .collect();
        out.sort_unstable_by_key(|n| n.node);
        out
    }

    fn link(&self, i: u32, j: u32) -> Option<Neighbor> {
        let d = self.positions[i as usize].distance(&self.positions[j as usize]);
        if !self.within(d, self.reach_m) {
            return None;
        }
        let rates = self.rates_at(d);
        Some(Neighbor {
            node: j,
            power_w: self.model.rx_power_w(d),
            delay: Duration::from_nanos(round_nonneg(d / super::SPEED_OF_LIGHT * 1e9)),
            rates,
            in_rx_range: rates.covers(self.link_rates),
        })
    }

    /// Moves several nodes at once (a mobility step). When a quarter of the
    /// nodes or more move, every list is built afresh at the new positions:
    /// the same lists that moving them one at a time gives (the property
    /// test below), for O(nodes × degree) work instead of a removal and an
    /// insertion in a sorted list per (moved node, neighbour), O(moved ×
    /// degree²) in all. On a 100-node field where every node hears almost
    /// every other, that was most of a mobile run's time.
    ///
    /// Kept out of line: inlined into the run loop through the mobility
    /// event, it changed how LLVM compiled the signal path of static runs
    /// (+1.6 % instructions on the 10 s grid, which never moves).
    #[inline(never)]
    pub fn set_positions(&mut self, moves: &[(u32, Position)]) {
        assert_eq!(self.lent, 0, "lists by delay are lent on fields that never move");
        if moves.len() * 4 < self.positions.len() {
            for &(node, p) in moves {
                self.set_position(node, p);
            }
            return;
        }
        for &(node, p) in moves {
            self.place(node, p);
        }
        self.rebuild();
    }

    /// Builds every list at the current positions. Each pair within reach
    /// is computed once, for both ends (distance, power, delay and rates
    /// are symmetric, bit for bit). Visiting the pairs (i, j > i) by
    /// increasing i, then j, appends to every list in increasing id, so no
    /// list by id needs sorting. The candidates of node i are the members
    /// of the 3×3 cells around its cell, kept per occupied cell as a bitmap
    /// by id (its nonzero words only) and read from the word of i on: the
    /// members are marked once per cell, not once per node (on a 100-node
    /// field every node's 3×3 cells hold every node, and marking them for
    /// each node was an eighth of a rebuild). The lists by delay are left
    /// stale until used. The vectors are reused.
    fn rebuild(&mut self) {
        for list in &mut self.neighbors {
            list.clear();
        }
        let n = self.positions.len();
        let (cell_of, start, words) = self.candidate_words();
        for i in 0..n as u32 {
            let c = cell_of[i as usize] as usize;
            let first = i as usize / 64;
            let candidates = &words[start[c]..start[c + 1]];
            let from = candidates.partition_point(|&(w, _)| (w as usize) < first);
            for &(w, bits) in &candidates[from..] {
                // In the word of i, only the ids above i.
                let mut bits = if w as usize == first {
                    bits & (u64::MAX << (i % 64) << 1)
                } else {
                    bits
                };
                while bits != 0 {
                    let j = w * 64 + bits.trailing_zeros();
                    bits &= bits - 1;
                    if let Some(nb) = self.link(i, j) {
                        self.neighbors[i as usize].push(nb);
                        self.neighbors[j as usize].push(Neighbor { node: i, ..nb });
                    }
                }
            }
        }
        self.stale.fill(true);
    }

    /// Per node, the number `c` of its occupied cell; per occupied cell,
    /// the members of the 3×3 cells around it as the nonzero words of a
    /// bitmap by id, in word order (`words[start[c]..start[c + 1]]`, each
    /// word with its index).
    fn candidate_words(&self) -> (Vec<u32>, Vec<usize>, Vec<(u32, u64)>) {
        let n = self.positions.len();
        let mut cell_of = vec![0u32; n];
        let mut start = vec![0usize];
        let mut words = Vec::new();
        let mut marks = vec![0u64; n.div_ceil(64)];
        for (c, (&(cx, cy), members)) in self.grid.iter().enumerate() {
            for &m in members {
                cell_of[m as usize] = c as u32;
            }
            let (mut lo, mut hi) = (marks.len(), 0);
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for &j in self.grid.get(&(cx + dx, cy + dy)).into_iter().flatten() {
                        let w = j as usize / 64;
                        marks[w] |= 1 << (j % 64);
                        (lo, hi) = (lo.min(w), hi.max(w));
                    }
                }
            }
            for (w, word) in marks.iter_mut().enumerate().take(hi + 1).skip(lo) {
                let bits = std::mem::take(word);
                if bits != 0 {
                    words.push((w as u32, bits));
                }
            }
            start.push(words.len());
        }
        (cell_of, start, words)
    }

    /// Sets `node`'s position and its cell of the grid, and nothing else.
    fn place(&mut self, node: u32, p: Position) {
        let old_cell = self.cell(&self.positions[node as usize]);
        self.positions[node as usize] = p;
        let new_cell = self.cell(&p);
        if old_cell != new_cell {
            if let Some(v) = self.grid.get_mut(&old_cell) {
                v.retain(|&x| x != node);
            }
            self.grid.entry(new_cell).or_default().push(node);
        }
    }

    /// Moves `node`; its own list and its old and new neighbours' lists are updated.
    pub fn set_position(&mut self, node: u32, p: Position) {
        self.place(node, p);
        for k in 0..self.neighbors[node as usize].len() {
            let j = self.neighbors[node as usize][k].node as usize;
            if let Ok(at) = self.neighbors[j].binary_search_by_key(&node, |n| n.node) {
                self.neighbors[j].remove(at);
            }
            if self.stale[j] {
                continue;
            }
            if let Some(at) = self.by_delay[j].iter().position(|n| n.node == node) {
                self.by_delay[j].remove(at);
            }
        }
        let fresh = self.compute_neighbors(node);
        for nb in &fresh {
            let back = self.link(nb.node, node).expect("links are symmetric");
            let j = nb.node as usize;
            let at = self.neighbors[j].partition_point(|n| n.node < node);
            self.neighbors[j].insert(at, back);
            if self.stale[j] {
                continue;
            }
            let key = (back.delay, back.node);
            let at = self.by_delay[j].partition_point(|n| (n.delay, n.node) < key);
            self.by_delay[j].insert(at, back);
        }
        self.stale[node as usize] = true;
        self.neighbors[node as usize] = fresh;
    }
}

/// `x.round() as u64` for finite `x >= 0`, without the call to libm's
/// `round` that x86-64's baseline instruction set needs (a mobility step
/// computes a delay per pair of nodes within reach). Exact: below 2^53 the
/// fraction `x - trunc(x)` is representable, and a tie rounds up, away
/// from zero, as `round` does.
fn round_nonneg(x: f64) -> u64 {
    // Below 2^63 through `i64`, which converts in one instruction each way
    // where `u64` takes a dozen.
    if x < 9_223_372_036_854_775_808.0 {
        let whole = x as i64;
        return whole as u64 + u64::from(x - whole as f64 >= 0.5);
    }
    let whole = x as u64;
    whole.saturating_add(u64::from(x - whole as f64 >= 0.5))
}

/// Delays below this (1,228 m of reach) sort by their two 6-bit digits.
const RADIX_DELAY_LIMIT_NS: u64 = 1 << (2 * RADIX_BITS);
const RADIX_BITS: u32 = 6;
const RADIX: usize = 1 << RADIX_BITS;

/// Replaces `out` with `list` (by id) by increasing delay, then id.
///
/// A sort by delay alone that keeps the order of equal delays gives (delay,
/// id), since `list` is in id order. A mobility step leaves every list to
/// sort again, so this runs once per transmitting node and step: a radix
/// sort of the delay's two low digits (least significant first, each pass
/// stable) costs about 55 instructions a neighbour, where a comparison sort
/// of one key per neighbour cost about 85. Delays of a reach beyond
/// `RADIX_DELAY_LIMIT_NS` take the standard library's stable sort.
fn sort_by_delay(list: &[Neighbor], out: &mut Vec<Neighbor>, order: &mut Vec<u32>) {
    out.clear();
    let digit = |n: &Neighbor, pass: u32| (n.delay.as_nanos() >> (pass * RADIX_BITS)) as usize % RADIX;
    // Where each digit's run starts, for the low digit and the high one;
    // `bits` has a bit at or above the limit's if some delay does.
    let mut starts = [[0u32; RADIX]; 2];
    let mut bits = 0;
    for n in list {
        bits |= n.delay.as_nanos();
        starts[0][digit(n, 0)] += 1;
        starts[1][digit(n, 1)] += 1;
    }
    if bits >= RADIX_DELAY_LIMIT_NS {
        out.extend_from_slice(list);
        out.sort_by_key(|n| n.delay);
        return;
    }
    for counts in &mut starts {
        let mut at = 0;
        for c in counts.iter_mut() {
            (*c, at) = (at, at + *c);
        }
    }
    order.clear();
    order.resize(list.len(), 0);
    for (k, n) in list.iter().enumerate() {
        let slot = &mut starts[0][digit(n, 0)];
        order[*slot as usize] = k as u32;
        *slot += 1;
    }
    out.extend_from_slice(list);
    for &k in order.iter() {
        let n = list[k as usize];
        let slot = &mut starts[1][digit(&n, 1)];
        out[*slot as usize] = n;
        *slot += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(n: usize, spacing: f64) -> Channel {
        let pos = (0..n)
            .map(|i| Position {
                x: i as f64 * spacing,
                y: 0.0,
            })
            .collect();
        Channel::new(pos, &PhyConfig::with_ranges(250.0, 550.0, 10.0))
    }

    #[test]
    fn decodes_at_exactly_tx_range_and_senses_to_cs_range() {
        let ch = chain(4, 250.0);
        assert!(ch.in_rx_range(0, 1));
        assert!(!ch.in_rx_range(0, 2));
        let ids: Vec<u32> = ch.neighbors(1).iter().map(|n| n.node).collect();
        assert_eq!(ids, vec![0, 2, 3]); // 3 is at 500 m: sensed, not decoded
        assert!(ch.neighbors(1)[0].power_w >= ch.thresholds.rx_w);
        assert!(ch.neighbors(1)[2].power_w < ch.thresholds.rx_w);
        assert!(ch.neighbors(1)[2].power_w >= ch.thresholds.cs_w);
        let ch = chain(2, 250.5);
        assert!(!ch.in_rx_range(0, 1));
    }

    #[test]
    fn per_rate_ranges_1_mbps_at_250_m_and_11_mbps_at_30_m() {
        let pos = [0.0, 30.0, 31.0, 250.0, 251.0, 700.0]
            .into_iter()
            .map(|x| Position { x, y: 0.0 })
            .collect();
        let mut cfg = PhyConfig::with_ranges(250.0, 550.0, 10.0);
        cfg.rate_range_m[Rate::MBPS_11.index()] = 30.0;
        cfg.interference_range_m = 700.0;
        cfg.link_rates = RateSet::NONE.with(Rate::MBPS_1).with(Rate::MBPS_11);
        let ch = Channel::new(pos, &cfg);
        let best: Vec<Option<Rate>> = ch.neighbors(0).iter().map(|n| n.best_rate()).collect();
        // 30 m: every rate; 31 and 250 m: up to 5.5; 251 m and 700 m: none.
        assert_eq!(
            best,
            vec![
                Some(Rate::MBPS_11),
                Some(Rate::MBPS_5_5),
                Some(Rate::MBPS_5_5),
                None,
                None
            ]
        );
        assert!(ch.neighbors(0)[2].rates.contains(Rate::MBPS_1));
        // A routing link needs 1 and 11 Mbit/s: only the node at 30 m.
        assert_eq!(ch.rx_adjacency()[0], vec![1]);
        assert!(ch.in_rx_range(0, 1) && !ch.in_rx_range(0, 2));
        // The node at 700 m is beyond carrier sense but within the
        // interference range: delivered, below the carrier-sense threshold.
        let far = ch.neighbors(0)[4];
        assert_eq!(far.node, 5);
        assert!(far.power_w < ch.thresholds.cs_w);
        assert!(ch.thresholds.rx_w_at(Rate::MBPS_11) > ch.thresholds.rx_w_at(Rate::MBPS_1));
    }

    #[test]
    fn moving_updates_both_sides() {
        let mut ch = chain(3, 200.0);
        ch.set_position(2, Position { x: 2000.0, y: 0.0 });
        assert_eq!(ch.neighbors(0).len(), 1);
        assert!(ch.neighbors(2).is_empty());
        ch.set_position(2, Position { x: 100.0, y: 50.0 });
        let ids: Vec<u32> = ch.neighbors(1).iter().map(|n| n.node).collect();
        assert_eq!(ids, vec![0, 2]);
        let fresh = chain(3, 200.0);
        assert_eq!(fresh.neighbors(0).len(), 2);
        // Node 1 sees 0 at 200 m and 2 at about 112 m: nearer first.
        let near: Vec<u32> = ch.neighbors_by_delay(1).iter().map(|n| n.node).collect();
        assert_eq!(near, vec![2, 0]);
    }

    /// A lent list is the list by delay; lent again before it comes back,
    /// a copy of it; after both come back the channel holds it as before.
    #[test]
    fn a_lent_list_comes_back() {
        let mut ch = chain(4, 200.0);
        let want = ch.neighbors_by_delay(1).to_vec();
        let first = ch.lend_by_delay(1);
        assert_eq!(first, want);
        let second = ch.lend_by_delay(1);
        assert_eq!(second, want);
        ch.give_back_by_delay(1, second);
        ch.give_back_by_delay(1, first);
        assert_eq!(ch.neighbors_by_delay(1), &want[..]);
        assert_eq!(ch.lent, 0);
        // A node with no neighbour lends an empty list.
        let mut lone = chain(1, 200.0);
        let none = lone.lend_by_delay(0);
        assert!(none.is_empty());
        lone.give_back_by_delay(0, none);
        assert_eq!(lone.lent, 0);
    }

    /// Lists are lent only on fields that never move: a move while one is
    /// out is a broken invariant, not a silent error.
    #[test]
    #[should_panic(expected = "never move")]
    fn moving_while_a_list_is_lent_panics() {
        let mut ch = chain(3, 200.0);
        let _out = ch.lend_by_delay(0);
        ch.set_positions(&[(2, Position { x: 500.0, y: 0.0 })]);
    }

    /// Every list of `ch`, by id and by delay, is what the definition gives
    /// at `pos`: every other node within reach (`link`, tried for every
    /// ordered pair), by id, and by (delay, id) with a plain sort. This
    /// checks the pairwise rebuild (`Channel::new`, a mobility step) and the
    /// one-at-a-time moves against the same naive lists.
    fn same_as_naive(ch: &mut Channel, pos: &[Position]) -> Result<(), proptest::test_runner::TestCaseError> {
        for i in 0..pos.len() as u32 {
            proptest::prop_assert_eq!(ch.position(i), pos[i as usize]);
            let naive: Vec<Neighbor> = (0..pos.len() as u32)
                .filter(|&j| j != i)
                .filter_map(|j| ch.link(i, j))
                .collect();
            proptest::prop_assert_eq!(ch.neighbors(i), &naive[..]);
            let mut naive_by_delay = naive.clone();
            naive_by_delay.sort_by_key(|n| (n.delay, n.node));
            proptest::prop_assert_eq!(ch.neighbors_by_delay(i), &naive_by_delay[..]);
        }
        Ok(())
    }

    /// `round_nonneg` is `round` on the delays' domain: ties (k + 0.5 round
    /// up), the largest double below one half, and numbers too large to
    /// have a fraction.
    #[test]
    fn rounding_a_delay_matches_libm() {
        for x in [
            0.0,
            0.25,
            0.5,
            0.499_999_999_999_999_94,
            1.5,
            2.5,
            833.499_999_9,
            833.5,
            1_834.2,
            4_503_599_627_370_495.5,
            9_007_199_254_740_993.0,
            9_223_372_036_854_774_784.0,
            9_223_372_036_854_775_808.0,
            1e19,
        ] {
            assert_eq!(round_nonneg(x), x.round() as u64, "{x}");
        }
    }

    proptest::proptest! {
        /// Moving nodes in steps (`set_positions`, rebuilt or one at a
        /// time by how many move) leaves every list as building the
        /// channel afresh at the final positions would.
        #[test]
        fn steps_match_a_fresh_channel(
            start in proptest::collection::vec((0.0..1500.0f64, 0.0..1500.0f64), 2..25),
            steps in proptest::collection::vec(
                proptest::collection::vec((0usize..25, 0.0..1500.0f64, 0.0..1500.0f64), 1..25),
                1..6,
            ),
        ) {
            let cfg = PhyConfig::with_ranges(250.0, 550.0, 10.0);
            let at = |(x, y): (f64, f64)| Position { x, y };
            let mut pos: Vec<Position> = start.into_iter().map(at).collect();
            let mut ch = Channel::new(pos.clone(), &cfg);
            for step in steps {
                let mut moves: Vec<(u32, Position)> = Vec::new();
                for (i, x, y) in step {
                    let i = i % pos.len();
                    if moves.iter().all(|m| m.0 != i as u32) {
                        pos[i] = Position { x, y };
                        moves.push((i as u32, pos[i]));
                    }
                }
                ch.set_positions(&moves);
                // Bring some lists by delay up to date between steps, so
                // that both the in-place updates of fresh lists and the
                // sort of stale ones are exercised.
                for i in (moves.len() % 3..pos.len()).step_by(3) {
                    ch.neighbors_by_delay(i as u32);
                }
            }
            same_as_naive(&mut ch, &pos)?;
        }

        /// Moving nodes one at a time leaves every list, by id and by delay,
        /// as building the channel afresh at the final positions would.
        #[test]
        fn moves_match_a_fresh_channel(
            start in proptest::collection::vec((0.0..1500.0f64, 0.0..1500.0f64), 2..25),
            moves in proptest::collection::vec((0usize..25, 0.0..1500.0f64, 0.0..1500.0f64), 1..40),
        ) {
            let cfg = PhyConfig::with_ranges(250.0, 550.0, 10.0);
            let at = |(x, y): (f64, f64)| Position { x, y };
            let mut pos: Vec<Position> = start.into_iter().map(at).collect();
            let mut ch = Channel::new(pos.clone(), &cfg);
            for (i, x, y) in moves {
                let i = i % pos.len();
                pos[i] = Position { x, y };
                ch.set_position(i as u32, pos[i]);
                if x < 750.0 {
                    ch.neighbors_by_delay(((i * 7) % pos.len()) as u32);
                }
            }
            same_as_naive(&mut ch, &pos)?;
        }
    }

    proptest::proptest! {
        /// The radix sort, and the stable sort beyond its reach, give the
        /// order of (delay, id) for any list by id, ties and all.
        #[test]
        fn sorting_by_delay_matches_a_plain_sort(
            delays in proptest::collection::vec(
                proptest::prop_oneof![0u64..64, 0u64..RADIX_DELAY_LIMIT_NS, 0u64..3 * RADIX_DELAY_LIMIT_NS],
                0..200,
            ),
        ) {
            let list: Vec<Neighbor> = delays
                .iter()
                .enumerate()
                .map(|(k, &d)| Neighbor {
                    node: 3 * k as u32,
                    power_w: 1.0,
                    delay: Duration::from_nanos(d),
                    rates: RateSet::NONE,
                    in_rx_range: false,
                })
                .collect();
            let (mut out, mut order) = (Vec::new(), Vec::new());
            sort_by_delay(&list, &mut out, &mut order);
            let mut naive = list.clone();
            naive.sort_unstable_by_key(|n| (n.delay, n.node));
            proptest::prop_assert_eq!(out, naive);
        }
    }

    proptest::proptest! {
        #[test]
        fn rounding_any_delay_matches_libm(x in 0.0f64..1e7) {
            proptest::prop_assert_eq!(round_nonneg(x), x.round() as u64);
        }
    }
}
