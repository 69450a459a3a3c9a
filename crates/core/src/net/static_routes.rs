//! Static routing: hop-count shortest paths over the transmission-range
//! connectivity graph, computed once by breadth-first search from each
//! destination in use. Ties break towards the lowest node index, so routes
//! are deterministic. A flow's explicit `route` overrides them (its ACKs
//! take the reverse path).

use std::collections::{BTreeMap, VecDeque};

pub const UNREACHABLE: u32 = u32::MAX;

#[derive(Default)]
pub struct StaticRoutes {
    /// For each destination in use: next hop of every node (or UNREACHABLE).
    by_dst: BTreeMap<u32, Vec<u32>>,
    /// Per flow: (node, next hop) along the explicit path, both directions.
    explicit: Vec<Option<ExplicitPath>>,
}

#[derive(Clone, Debug)]
struct ExplicitPath {
    src: u32,
    dst: u32,
    forward: Vec<(u32, u32)>,
    reverse: Vec<(u32, u32)>,
}

/// Hop distances from `dst` (UNREACHABLE where there is no path).
pub fn hop_distances(adj: &[Vec<u32>], dst: u32) -> Vec<u32> {
    let mut dist = vec![UNREACHABLE; adj.len()];
    dist[dst as usize] = 0;
    let mut q = VecDeque::from([dst]);
    while let Some(v) = q.pop_front() {
        for &u in &adj[v as usize] {
            if dist[u as usize] == UNREACHABLE {
                dist[u as usize] = dist[v as usize] + 1;
                q.push_back(u);
            }
        }
    }
    dist
}

impl StaticRoutes {
    /// `adj[v]` lists v's neighbours within transmission range, ascending.
    pub fn new(adj: &[Vec<u32>], dsts: impl IntoIterator<Item = u32>, flows: usize) -> Self {
        let mut by_dst = BTreeMap::new();
        for d in dsts {
            by_dst.entry(d).or_insert_with(|| {
                let dist = hop_distances(adj, d);
                (0..adj.len())
                    .map(|v| {
                        if v as u32 == d || dist[v] == UNREACHABLE {
                            return UNREACHABLE;
                        }
                        adj[v]
                            .iter()
                            .copied()
                            .find(|&u| dist[u as usize] + 1 == dist[v])
                            .unwrap_or(UNREACHABLE)
                    })
                    .collect()
            });
        }
        StaticRoutes {
            by_dst,
            explicit: vec![None; flows],
        }
    }

    /// Pins `flow` to `path` (node indices from source to destination).
    pub fn set_explicit(&mut self, flow: u32, path: &[u32]) {
        self.explicit[flow as usize] = Some(ExplicitPath {
            src: path[0],
            dst: path[path.len() - 1],
            forward: path.windows(2).map(|w| (w[0], w[1])).collect(),
            reverse: path.windows(2).map(|w| (w[1], w[0])).collect(),
        });
    }

    pub fn next_hop(&self, node: u32, dst: u32, flow: Option<u32>) -> Option<u32> {
        if let Some(p) = flow
            .and_then(|f| self.explicit.get(f as usize))
            .and_then(|x| x.as_ref())
        {
            let hops = if dst == p.dst {
                &p.forward
            } else if dst == p.src {
                &p.reverse
            } else {
                return None;
            };
            return hops.iter().find(|(from, _)| *from == node).map(|(_, to)| *to);
        }
        self.by_dst
            .get(&dst)
            .map(|nh| nh[node as usize])
            .filter(|&h| h != UNREACHABLE)
    }

    /// Hop count of the route from `src` to `dst`, if any.
    pub fn hops(&self, src: u32, dst: u32, flow: Option<u32>) -> Option<u32> {
        let mut at = src;
        let mut n = 0;
        while at != dst {
            at = self.next_hop(at, dst, flow)?;
            n += 1;
            if n > 1_000_000 {
                return None;
            }
        }
        Some(n)
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
        let r = StaticRoutes::new(&diamond(), [3, 0], 1);
        assert_eq!(r.next_hop(0, 3, None), Some(1));
        assert_eq!(r.next_hop(3, 0, None), Some(1));
        assert_eq!(r.hops(0, 3, None), Some(2));
        assert_eq!(r.next_hop(3, 3, None), None);
    }

    #[test]
    fn explicit_route_both_directions() {
        let mut r = StaticRoutes::new(&diamond(), [3, 0], 1);
        r.set_explicit(0, &[0, 2, 3]);
        assert_eq!(r.next_hop(0, 3, Some(0)), Some(2));
        assert_eq!(r.next_hop(2, 3, Some(0)), Some(3));
        assert_eq!(r.next_hop(3, 0, Some(0)), Some(2));
        assert_eq!(r.next_hop(2, 0, Some(0)), Some(0));
        assert_eq!(r.hops(0, 3, Some(0)), Some(2));
    }

    #[test]
    fn unreachable() {
        let adj = vec![vec![1], vec![0], vec![]];
        let r = StaticRoutes::new(&adj, [2], 0);
        assert_eq!(r.next_hop(0, 2, None), None);
        assert_eq!(hop_distances(&adj, 2)[0], UNREACHABLE);
    }
}
