//! Max-min fair C-load shares over L-regions: Osipov and Tschudin (2007),
//! §3.2 and §3.3. A pure function of the topology and the routes.
//!
//! An L-region is the 1 Mbit/s transmission range around a central node
//! (any node, carrying traffic or not, §3.1). An association (a flow: its
//! source, relays and destination) is in the region if any of its nodes is
//! within that range of the centre. Eq. (1) counts it once however many of
//! its nodes lie inside (Γ is an indicator), and every region's boundary
//! C-load is 1. The shares φ are max-min fair over those constraints: the
//! algorithm of §3.3 lets every region suggest (1 − Σ assigned) / fresh to
//! its fresh associations, assigns the smallest suggestion to the fresh
//! associations of every region that makes it, and repeats.
//!
//! Shares are exact rationals: the suggestions are compared exactly, so ties
//! between regions (the paper's "choose those which suggest the minimal
//! C-load share") are real ties, not floating-point accidents.

use crate::phy::channel::Position;
use std::cmp::Ordering;
use std::fmt;

/// A non-negative rational number, always reduced (den > 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ratio {
    num: i128,
    den: i128,
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    a = a.abs();
    b = b.abs();
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Ratio {
    /// No load.
    pub const ZERO: Ratio = Ratio { num: 0, den: 1 };
    /// A whole region's boundary C-load (eq. (1)).
    pub const ONE: Ratio = Ratio { num: 1, den: 1 };

    /// `num / den`, reduced. Panics on a zero denominator (a broken invariant).
    pub fn new(num: i128, den: i128) -> Ratio {
        assert!(den != 0, "ratio with zero denominator");
        let g = gcd(num, den).max(1);
        let s = if den < 0 { -1 } else { 1 };
        Ratio {
            num: s * num / g,
            den: s * den / g,
        }
    }

    /// Numerator in lowest terms.
    pub fn numer(self) -> i128 {
        self.num
    }

    /// Denominator in lowest terms, positive.
    pub fn denom(self) -> i128 {
        self.den
    }

    /// The nearest float, for output and rate arithmetic.
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// `self / k`: a region's remaining load split over `k` fresh
    /// associations (§3.3). Panics if `k` is 0.
    pub fn div_int(self, k: i128) -> Ratio {
        Ratio::new(self.num, self.den * k)
    }
}

impl std::ops::Add for Ratio {
    type Output = Ratio;
    fn add(self, o: Ratio) -> Ratio {
        Ratio::new(self.num * o.den + o.num * self.den, self.den * o.den)
    }
}

impl std::ops::Sub for Ratio {
    type Output = Ratio;
    fn sub(self, o: Ratio) -> Ratio {
        Ratio::new(self.num * o.den - o.num * self.den, self.den * o.den)
    }
}

impl Ord for Ratio {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.num * o.den).cmp(&(o.num * self.den))
    }
}

impl PartialOrd for Ratio {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

impl fmt::Display for Ratio {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.den == 1 {
            write!(f, "{}", self.num)
        } else {
            write!(f, "{}/{}", self.num, self.den)
        }
    }
}

/// One L-region: its central node and the associations (flow indices,
/// ascending) that load it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// The central node.
    pub centre: u32,
    /// Flow indices with a node within range of the centre, ascending.
    pub members: Vec<usize>,
}

/// The L-regions of a network (§3.1): one per node whose 1 Mbit/s range
/// (`range_m`, inclusive) reaches a node of at least one association.
/// `paths[a]` lists the nodes of association a (None: not active, so in no
/// region). Regions come in centre order; regions with the same member set
/// are all kept, since each is a region of the paper's model.
pub fn l_regions(positions: &[Position], paths: &[Option<Vec<u32>>], range_m: f64) -> Vec<Region> {
    // Inclusive, like the transmission range; the slack absorbs rounding of
    // coordinates written in decimal (126 m spacing: 2 x 126 = 252 > 250).
    let reach = range_m * (1.0 + 1e-12);
    (0..positions.len())
        .filter_map(|c| {
            let centre = positions[c];
            let members: Vec<usize> = paths
                .iter()
                .enumerate()
                .filter(|(_, p)| {
                    p.as_ref()
                        .is_some_and(|p| p.iter().any(|&v| positions[v as usize].distance(&centre) <= reach))
                })
                .map(|(a, _)| a)
                .collect();
            (!members.is_empty()).then_some(Region {
                centre: c as u32,
                members,
            })
        })
        .collect()
}

/// The max-min fair allocation and how §3.3's algorithm reached it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Allocation {
    /// φ_a of each association; None for one in no region (not active).
    pub shares: Vec<Option<Ratio>>,
    /// The iteration (from 1) in which each association was assigned.
    pub iteration: Vec<u32>,
    /// Per association, the indices (into the regions given) of its
    /// bottleneck regions: those at the minimum when it was assigned.
    pub bottlenecks: Vec<Vec<usize>>,
    /// Iterations the algorithm took.
    pub iterations: u32,
}

/// §3.3's centralized algorithm over `regions` (each a list of member
/// association indices below `n`). Every region's boundary C-load is 1.
pub fn maxmin_shares(regions: &[Vec<usize>], n: usize) -> Allocation {
    let mut shares: Vec<Option<Ratio>> = vec![None; n];
    let mut iteration = vec![0u32; n];
    let mut bottlenecks = vec![Vec::new(); n];
    let mut round = 0;
    loop {
        // Step 1: every region with a fresh association suggests a share.
        let mut best: Option<Ratio> = None;
        let mut suggestions: Vec<Option<Ratio>> = Vec::with_capacity(regions.len());
        for members in regions {
            let fresh = members.iter().filter(|&&a| shares[a].is_none()).count();
            if fresh == 0 {
                suggestions.push(None);
                continue;
            }
            let assigned = members
                .iter()
                .filter_map(|&a| shares[a])
                .fold(Ratio::ZERO, |x, y| x + y);
            let s = (Ratio::ONE - assigned).div_int(fresh as i128);
            // Suggestions never fall between iterations (the minimum region
            // keeps at least its own fresh share), so they stay positive.
            assert!(s > Ratio::ZERO, "L-region suggests a share <= 0");
            best = Some(best.map_or(s, |b| b.min(s)));
            suggestions.push(Some(s));
        }
        let Some(min) = best else { break };
        round += 1;
        // Step 2: every region at the minimum assigns it to its fresh
        // associations; ties are all applied in this iteration.
        let mut newly = Vec::new();
        for (r, members) in regions.iter().enumerate() {
            if suggestions[r] != Some(min) {
                continue;
            }
            for &a in members.iter().filter(|&&a| shares[a].is_none()) {
                if !newly.contains(&a) {
                    newly.push(a);
                }
                bottlenecks[a].push(r);
            }
        }
        for a in newly {
            shares[a] = Some(min);
            iteration[a] = round;
        }
    }
    Allocation {
        shares,
        iteration,
        bottlenecks,
        iterations: round,
    }
}

/// Whether an allocation is feasible (Σ φ ≤ 1 in every region) and
/// max-min fair in the sense of D5: every association has a bottleneck
/// region (D4: saturated, and no member holds a larger share).
pub fn is_maxmin_fair(regions: &[Vec<usize>], shares: &[Option<Ratio>]) -> bool {
    let load = |members: &Vec<usize>| {
        members
            .iter()
            .filter_map(|&a| shares[a])
            .fold(Ratio::ZERO, |x, y| x + y)
    };
    if regions.iter().any(|m| load(m) > Ratio::ONE) {
        return false;
    }
    shares.iter().enumerate().all(|(a, s)| match s {
        None => !regions.iter().any(|m| m.contains(&a)),
        Some(phi) => regions.iter().any(|m| {
            m.contains(&a) && load(m) == Ratio::ONE && m.iter().all(|&b| shares[b].is_some_and(|x| x <= *phi))
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn r(n: i128, d: i128) -> Option<Ratio> {
        Some(Ratio::new(n, d))
    }

    fn p(x: f64, y: f64) -> Position {
        Position { x, y }
    }

    #[test]
    fn ratios_reduce_and_order() {
        assert_eq!(Ratio::new(2, 6), Ratio::new(1, 3));
        assert_eq!(Ratio::new(2, 6).to_string(), "1/3");
        assert_eq!(Ratio::new(4, 2).to_string(), "2");
        assert!(Ratio::new(1, 3) < Ratio::new(2, 5));
        assert_eq!((Ratio::ONE - Ratio::new(1, 3)).div_int(2), Ratio::new(1, 3));
    }

    /// Figure 7 of the paper (§5.4), rebuilt in spec-throttle.md §2.4:
    /// 126 m lattice, 250 m L-regions. TCP1 (4 hops) 1-2-3-4-5 along y = 0;
    /// TCP2 (3 hops) 6-7-8-9 along y = -126 from x = -252; TCP3 (1 hop)
    /// 10-11 along y = 126; TCP4 (2 hops) 12-13-14 along y = -126 from x = 504.
    fn fig7() -> (Vec<Position>, Vec<Option<Vec<u32>>>) {
        let s = 126.0;
        let mut pos = Vec::new();
        for k in 0..5 {
            pos.push(p(s * k as f64, 0.0)); // nodes 1..5 -> 0..4
        }
        for k in 0..4 {
            pos.push(p(-2.0 * s + s * k as f64, -s)); // 6..9 -> 5..8
        }
        pos.push(p(0.0, s)); // 10 -> 9
        pos.push(p(s, s)); // 11 -> 10
        for k in 0..3 {
            pos.push(p(4.0 * s + s * k as f64, -s)); // 12..14 -> 11..13
        }
        let paths = vec![
            Some(vec![0, 1, 2, 3, 4]),
            Some(vec![5, 6, 7, 8]),
            Some(vec![9, 10]),
            Some(vec![11, 12, 13]),
        ];
        (pos, paths)
    }

    #[test]
    fn figure_7_shares_one_third_and_two_thirds_in_two_iterations() {
        let (pos, paths) = fig7();
        let regions = l_regions(&pos, &paths, 250.0);
        // The spec's table: {1,2,3} at centres 1, 2, 3; {1,4} at 4, 5, 12, 13.
        let centres_of = |set: &[usize]| -> Vec<u32> {
            regions
                .iter()
                .filter(|g| g.members == set)
                .map(|g| g.centre + 1)
                .collect()
        };
        assert_eq!(centres_of(&[0, 1, 2]), vec![1, 2, 3]);
        assert_eq!(centres_of(&[0, 3]), vec![4, 5, 12, 13]);
        assert_eq!(centres_of(&[0, 1]), vec![7, 8, 9]);
        assert_eq!(centres_of(&[0, 2]), vec![10, 11]);
        assert_eq!(centres_of(&[1]), vec![6]);
        assert_eq!(centres_of(&[3]), vec![14]);
        let members: Vec<Vec<usize>> = regions.iter().map(|g| g.members.clone()).collect();
        let a = maxmin_shares(&members, 4);
        assert_eq!(a.shares, vec![r(1, 3), r(1, 3), r(1, 3), r(2, 3)]);
        assert_eq!(a.iteration, vec![1, 1, 1, 2]);
        assert_eq!(a.iterations, 2);
        // L-region 1 (the three {1,2,3} regions) bottlenecks TCP1-3, L-region 2 ({1,4}) TCP4.
        let bn = |f: usize| -> Vec<u32> { a.bottlenecks[f].iter().map(|&i| regions[i].centre + 1).collect() };
        assert_eq!(bn(0), vec![1, 2, 3]);
        assert_eq!(bn(2), vec![1, 2, 3]);
        assert_eq!(bn(3), vec![4, 5, 12, 13]);
        assert!(is_maxmin_fair(&members, &a.shares));
    }

    /// Figure 2's six flows (its geometry is lost; §3.3 says the algorithm
    /// ends after two iterations). A membership with that property: region A
    /// holds flows 0-3 (1/4 each, iteration 1), region B flows 3-5: 1 − 1/4
    /// left for two fresh flows, 3/8 each (iteration 2); region C holds
    /// flows 4-5 alone and is not a bottleneck.
    #[test]
    fn figure_2_like_six_flows_in_two_iterations() {
        let regions = vec![vec![0, 1, 2, 3], vec![3, 4, 5], vec![4, 5]];
        let a = maxmin_shares(&regions, 6);
        assert_eq!(a.shares, vec![r(1, 4), r(1, 4), r(1, 4), r(1, 4), r(3, 8), r(3, 8)]);
        assert_eq!(a.iterations, 2);
        assert_eq!(a.bottlenecks[4], vec![1]);
        assert!(is_maxmin_fair(&regions, &a.shares));
    }

    #[test]
    fn parallel_packed_chains_share_one_over_n() {
        // spec §2.3: n chains 50 m apart with 126 m hops; a middle-row node's
        // region holds a node of every chain.
        for n in 2..=9usize {
            let h = 3;
            let mut pos = Vec::new();
            let mut paths = Vec::new();
            for k in 0..n {
                let first = pos.len() as u32;
                for j in 0..=h {
                    pos.push(p(126.0 * j as f64, 50.0 * k as f64));
                }
                paths.push(Some((first..=first + h).collect()));
            }
            let regions: Vec<Vec<usize>> = l_regions(&pos, &paths, 250.0).into_iter().map(|g| g.members).collect();
            let a = maxmin_shares(&regions, n);
            assert!(
                a.shares.iter().all(|s| *s == r(1, n as i128)),
                "n = {n}: {:?}",
                a.shares
            );
        }
    }

    #[test]
    fn table_2_chain_from_one_source_shares_one_third() {
        let pos: Vec<Position> = (0..4).map(|k| p(126.0 * k as f64, 0.0)).collect();
        let paths = vec![Some(vec![0, 1]), Some(vec![0, 1, 2]), Some(vec![0, 1, 2, 3])];
        let regions: Vec<Vec<usize>> = l_regions(&pos, &paths, 250.0).into_iter().map(|g| g.members).collect();
        assert_eq!(maxmin_shares(&regions, 3).shares, vec![r(1, 3); 3]);
    }

    #[test]
    fn inactive_flows_are_in_no_region_and_get_no_share() {
        let pos = vec![p(0.0, 0.0), p(100.0, 0.0), p(1000.0, 0.0), p(1100.0, 0.0)];
        let paths = vec![Some(vec![0, 1]), None, Some(vec![2, 3])];
        let regions = l_regions(&pos, &paths, 250.0);
        assert!(regions.iter().all(|g| !g.members.contains(&1)));
        let members: Vec<Vec<usize>> = regions.into_iter().map(|g| g.members).collect();
        let a = maxmin_shares(&members, 3);
        // Two flows out of each other's regions: each alone, share 1.
        assert_eq!(a.shares, vec![r(1, 1), None, r(1, 1)]);
        assert_eq!(a.iterations, 1);
    }

    /// Brute force: the leximin-largest feasible vector on the grid of
    /// multiples of 1/12, shares > 0. Max-min fair shares of at most four
    /// associations are multiples of 1/12: each iteration divides by the
    /// number of fresh associations it assigns, which sum to at most 4
    /// (partitions of 4: 4, 3·1, 2·2, 2·1·1, 1 — all divide 12).
    fn brute_force(regions: &[Vec<usize>], n: usize) -> Vec<Ratio> {
        const D: i128 = 12;
        let mut best: Option<(Vec<i128>, Vec<i128>)> = None;
        let mut x = vec![1i128; n];
        loop {
            let feasible = regions.iter().all(|m| m.iter().map(|&a| x[a]).sum::<i128>() <= D);
            if feasible {
                let mut sorted = x.clone();
                sorted.sort_unstable();
                if best.as_ref().is_none_or(|(b, _)| sorted > *b) {
                    best = Some((sorted, x.clone()));
                }
            }
            // Next grid point (odometer).
            let mut i = 0;
            while i < n {
                x[i] += 1;
                if x[i] <= D {
                    break;
                }
                x[i] = 1;
                i += 1;
            }
            if i == n {
                break;
            }
        }
        best.expect("1/12 each is feasible with at most 4 associations")
            .1
            .into_iter()
            .map(|k| Ratio::new(k, D))
            .collect()
    }

    fn memberships(max_flows: usize, max_regions: usize) -> impl Strategy<Value = (usize, Vec<Vec<usize>>)> {
        (1..=max_flows).prop_flat_map(move |n| {
            let region = proptest::collection::vec(any::<bool>(), n).prop_map(|bits| {
                bits.iter()
                    .enumerate()
                    .filter(|(_, b)| **b)
                    .map(|(a, _)| a)
                    .collect::<Vec<usize>>()
            });
            (
                Just(n),
                proptest::collection::vec(region, 1..=max_regions).prop_map(move |mut rs| {
                    rs.retain(|m| !m.is_empty());
                    // Every association loads at least the region around its source.
                    for a in 0..n {
                        rs.push(vec![a]);
                    }
                    rs
                }),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(100))]

        #[test]
        fn agrees_with_a_brute_force_maxmin_solver((n, regions) in memberships(4, 6)) {
            let a = maxmin_shares(&regions, n);
            let shares: Vec<Ratio> = a.shares.iter().map(|s| s.expect("every flow is in a region")).collect();
            prop_assert_eq!(shares, brute_force(&regions, n));
            prop_assert!(is_maxmin_fair(&regions, &a.shares));
        }

        #[test]
        fn random_topologies_get_feasible_shares_with_a_bottleneck_each(
            coords in proptest::collection::vec((0.0..1500.0f64, 0.0..1500.0f64), 4..30),
            flows in proptest::collection::vec(proptest::collection::vec(any::<proptest::sample::Index>(), 2..6), 1..10),
            range in 100.0..600.0f64,
        ) {
            let pos: Vec<Position> = coords.iter().map(|&(x, y)| p(x, y)).collect();
            let paths: Vec<Option<Vec<u32>>> = flows
                .iter()
                .map(|f| {
                    let mut v: Vec<u32> = f.iter().map(|i| i.index(pos.len()) as u32).collect();
                    v.dedup();
                    Some(v)
                })
                .collect();
            let regions: Vec<Vec<usize>> = l_regions(&pos, &paths, range).into_iter().map(|g| g.members).collect();
            let a = maxmin_shares(&regions, paths.len());
            prop_assert!(a.shares.iter().all(|s| s.is_some_and(|x| x > Ratio::ZERO && x <= Ratio::ONE)));
            prop_assert!(is_maxmin_fair(&regions, &a.shares));
            // Each association's bottleneck regions contain it.
            for (f, bn) in a.bottlenecks.iter().enumerate() {
                prop_assert!(!bn.is_empty());
                prop_assert!(bn.iter().all(|&i| regions[i].contains(&f)));
            }
        }
    }
}
