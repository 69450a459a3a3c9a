//! Static routing: hop-count shortest paths over the transmission-range
//! connectivity graph, computed once per flow by breadth-first search from
//! its destination (for data) and from its source (for the flow's ACKs).
//! The next hop is the lowest-index neighbour one hop closer, so routes are
//! deterministic. A flow's explicit `route` overrides them (its ACKs take
//! the reverse path), and its `route_changes` switch both directions to a
//! new path at given instants (a scripted handover); a node no longer on
//! the path still forwards what it holds along the path it was on. Only the nodes on each path are stored: memory grows
//! with flows × hops, not with flows × nodes.

use crate::time::SimTime;
use std::collections::VecDeque;

/// The distance of a node no path reaches.
pub const UNREACHABLE: u32 = u32::MAX;

/// Breadth-first search that stops once the layer holding `stop` is done:
/// every node nearer to the root than `stop` has its exact distance.
pub struct Bfs {
    dist: Vec<u32>,
    touched: Vec<u32>,
    queue: VecDeque<u32>,
}

impl Bfs {
    /// A search over `nodes` nodes.
    pub fn new(nodes: usize) -> Self {
        Bfs {
            dist: vec![UNREACHABLE; nodes],
            touched: Vec::new(),
            queue: VecDeque::new(),
        }
    }

    /// Distances from `root`, complete up to the distance of `stop`.
    /// Returns the distance of `stop` (UNREACHABLE if none).
    pub fn run(&mut self, adj: &[Vec<u32>], root: u32, stop: u32) -> u32 {
        for &v in &self.touched {
            self.dist[v as usize] = UNREACHABLE;
        }
        self.touched.clear();
        self.queue.clear();
        self.dist[root as usize] = 0;
        self.touched.push(root);
        self.queue.push_back(root);
        while let Some(v) = self.queue.pop_front() {
            let d = self.dist[v as usize];
            if d >= self.dist[stop as usize] {
                break;
            }
            for &u in &adj[v as usize] {
                if self.dist[u as usize] == UNREACHABLE {
                    self.dist[u as usize] = d + 1;
                    self.touched.push(u);
                    self.queue.push_back(u);
                }
            }
        }
        self.dist[stop as usize]
    }

    /// The hop distance of `v` from the last root (`UNREACHABLE` if not reached).
    pub fn dist(&self, v: u32) -> u32 {
        self.dist[v as usize]
    }

    /// The shortest path from `from` to the last root, lowest-index
    /// neighbour first at every step; None if unreachable.
    pub fn path(&mut self, adj: &[Vec<u32>], root: u32, from: u32) -> Option<Vec<u32>> {
        if self.run(adj, root, from) == UNREACHABLE {
            return None;
        }
        let mut path = vec![from];
        let mut at = from;
        while at != root {
            let d = self.dist[at as usize];
            at = adj[at as usize]
                .iter()
                .copied()
                .filter(|&u| self.dist[u as usize] == d - 1)
                .min()
                .expect("a node at distance d has a neighbour at d - 1");
            path.push(at);
        }
        Some(path)
    }
}

/// Hop distance between two nodes (UNREACHABLE if none).
pub fn hop_distance(adj: &[Vec<u32>], from: u32, to: u32) -> u32 {
    Bfs::new(adj.len()).run(adj, to, from)
}

#[derive(Clone, Debug, Default)]
struct FlowPaths {
    src: u32,
    dst: u32,
    /// (node, next hop) towards `dst` and towards `src`.
    forward: Vec<(u32, u32)>,
    reverse: Vec<(u32, u32)>,
    /// Later paths: from each instant on, (forward, reverse) hops.
    changes: Vec<(SimTime, Vec<Hop>, Vec<Hop>)>,
}

/// (node, next hop).
type Hop = (u32, u32);
type Hops<'a> = (&'a [Hop], &'a [Hop]);

impl FlowPaths {
    /// The paths in force at `now`, newest first, then the older ones.
    /// Asked for every routed packet, so walked in place, not collected.
    fn phases(&self, now: SimTime) -> impl Iterator<Item = Hops<'_>> {
        let current = self.changes.iter().take_while(|c| c.0 <= now).count();
        self.changes[..current]
            .iter()
            .rev()
            .map(|c| (&c.1[..], &c.2[..]))
            .chain(std::iter::once((&self.forward[..], &self.reverse[..])))
    }
}

fn both_ways(path: &[u32]) -> (Vec<Hop>, Vec<Hop>) {
    let back: Vec<u32> = path.iter().rev().copied().collect();
    (hops_of(path), hops_of(&back))
}

fn hops_of(path: &[u32]) -> Vec<(u32, u32)> {
    path.windows(2).map(|w| (w[0], w[1])).collect()
}

/// Each flow's static path, and its changes over time.
#[derive(Default)]
pub struct StaticRoutes {
    flows: Vec<Option<FlowPaths>>,
}

impl StaticRoutes {
    /// `adj[v]` lists v's neighbours within transmission range; `flows`
    /// gives each flow's (src, dst, explicit path if any).
    pub fn new(adj: &[Vec<u32>], flows: &[(u32, u32, Option<&[u32]>)]) -> Self {
        Self::with_changes(adj, flows, &[])
    }

    /// As `new`, with `changes[f]` the (instant, path) changes of flow f
    /// (time-sorted; flows beyond the list have none).
    pub fn with_changes(
        adj: &[Vec<u32>],
        flows: &[(u32, u32, Option<&[u32]>)],
        changes: &[&[(SimTime, Vec<u32>)]],
    ) -> Self {
        let mut bfs = Bfs::new(adj.len());
        let flows = flows
            .iter()
            .enumerate()
            .map(|(i, &(src, dst, explicit))| {
                let (forward, reverse) = match explicit {
                    Some(path) => both_ways(path),
                    None => {
                        let fwd = bfs.path(adj, dst, src)?;
                        let rev = bfs.path(adj, src, dst)?;
                        (hops_of(&fwd), hops_of(&rev))
                    }
                };
                let changes = changes
                    .get(i)
                    .map(|cs| {
                        cs.iter()
                            .map(|(t, path)| {
                                let (f, r) = both_ways(path);
                                (*t, f, r)
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                Some(FlowPaths {
                    src,
                    dst,
                    forward,
                    reverse,
                    changes,
                })
            })
            .collect();
        StaticRoutes { flows }
    }

    /// Next hop at `node`, at `now`, of a packet of `flow` going to `dst`
    /// (the flow's destination, or its source for ACKs): on the path in
    /// force, or, for a node that left it, on the newest path it was on.
    pub fn next_hop(&self, now: SimTime, node: u32, dst: u32, flow: Option<u32>) -> Option<u32> {
        let p = self.flows.get(flow? as usize)?.as_ref()?;
        let towards_dst = if dst == p.dst {
            true
        } else if dst == p.src {
            false
        } else {
            return None;
        };
        p.phases(now).find_map(|(fwd, rev)| {
            let hops = if towards_dst { fwd } else { rev };
            hops.iter().find(|(from, _)| *from == node).map(|(_, to)| *to)
        })
    }

    /// Hop count of the flow's data path.
    pub fn hops(&self, flow: u32) -> Option<u32> {
        self.flows.get(flow as usize)?.as_ref().map(|p| p.forward.len() as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 - 1 - 3
    ///  \     /
    ///    2 --
    fn diamond() -> Vec<Vec<u32>> {
        vec![vec![1, 2], vec![0, 3], vec![0, 3], vec![1, 2]]
    }

    #[test]
    fn shortest_paths_with_lowest_id_ties() {
        let r = StaticRoutes::new(&diamond(), &[(0, 3, None)]);
        assert_eq!(r.next_hop(SimTime::ZERO, 0, 3, Some(0)), Some(1));
        assert_eq!(r.next_hop(SimTime::ZERO, 1, 3, Some(0)), Some(3));
        assert_eq!(r.next_hop(SimTime::ZERO, 3, 0, Some(0)), Some(1));
        assert_eq!(r.hops(0), Some(2));
        assert_eq!(r.next_hop(SimTime::ZERO, 3, 3, Some(0)), None);
        assert_eq!(r.next_hop(SimTime::ZERO, 0, 3, None), None);
    }

    #[test]
    fn explicit_route_both_directions() {
        let path = [0, 2, 3];
        let r = StaticRoutes::new(&diamond(), &[(0, 3, Some(&path[..]))]);
        assert_eq!(r.next_hop(SimTime::ZERO, 0, 3, Some(0)), Some(2));
        assert_eq!(r.next_hop(SimTime::ZERO, 2, 3, Some(0)), Some(3));
        assert_eq!(r.next_hop(SimTime::ZERO, 3, 0, Some(0)), Some(2));
        assert_eq!(r.next_hop(SimTime::ZERO, 2, 0, Some(0)), Some(0));
        assert_eq!(r.hops(0), Some(2));
    }

    #[test]
    fn route_changes_switch_both_ways_and_old_relays_finish_their_packets() {
        // 0 -> 1 -> 3 until t = 5 s, then 0 -> 2 -> 3.
        let path = [0, 1, 3];
        let change = [(SimTime::from_secs_f64(5.0), vec![0, 2, 3])];
        let r = StaticRoutes::with_changes(&diamond(), &[(0, 3, Some(&path[..]))], &[&change[..]]);
        let before = SimTime::from_secs_f64(4.9);
        let after = SimTime::from_secs_f64(5.0);
        assert_eq!(r.next_hop(before, 0, 3, Some(0)), Some(1));
        assert_eq!(r.next_hop(after, 0, 3, Some(0)), Some(2));
        assert_eq!(r.next_hop(after, 3, 0, Some(0)), Some(2));
        // Node 1 left the path; what it still holds goes on to 3 (and to 0).
        assert_eq!(r.next_hop(after, 1, 3, Some(0)), Some(3));
        assert_eq!(r.next_hop(after, 1, 0, Some(0)), Some(0));
    }

    #[test]
    fn unreachable() {
        let adj = vec![vec![1], vec![0], vec![]];
        let r = StaticRoutes::new(&adj, &[(0, 2, None)]);
        assert_eq!(r.next_hop(SimTime::ZERO, 0, 2, Some(0)), None);
        assert_eq!(r.hops(0), None);
        assert_eq!(hop_distance(&adj, 0, 2), UNREACHABLE);
        assert_eq!(hop_distance(&adj, 0, 1), 1);
    }

    #[test]
    fn early_stop_keeps_exact_distances_on_a_grid() {
        // A 5 x 5 grid, 4-neighbour links: distances are Manhattan.
        let n = 5u32;
        let adj: Vec<Vec<u32>> = (0..n * n)
            .map(|v| {
                let (r, c) = (v / n, v % n);
                let mut a = Vec::new();
                if r > 0 {
                    a.push(v - n);
                }
                if c > 0 {
                    a.push(v - 1);
                }
                if c + 1 < n {
                    a.push(v + 1);
                }
                if r + 1 < n {
                    a.push(v + n);
                }
                a
            })
            .collect();
        let mut bfs = Bfs::new(adj.len());
        let path = bfs.path(&adj, 24, 0).unwrap();
        assert_eq!(path.len(), 9);
        // Lowest index first: along row 0 is never chosen over column 0
        // unless lower; from 0 the neighbours are 1 and 5, so 1.
        assert_eq!(path[1], 1);
        for w in path.windows(2) {
            assert!(adj[w[0] as usize].contains(&w[1]));
        }
        assert_eq!(bfs.run(&adj, 12, 0), 4);
    }
}
