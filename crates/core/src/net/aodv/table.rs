//! The routing table (RFC 3561 §6.2), kept as a vector sorted by
//! destination address, so that every walk over it is in address order and
//! a look-up is a search by halving: entries are looked up per packet and
//! added per discovery, and on a 100-node field a tree's search cost twice
//! as much. Lifetimes are applied when an entry is read:
//! an active route whose lifetime has passed becomes invalid and is deleted
//! DELETE_PERIOD later, exactly as a timer would do it, without a timer.

use super::NodeAddr;
use crate::time::{Duration, SimTime};

/// `a` is newer than `b` in 32-bit sequence-number space: the difference
/// read as a signed integer is positive, so the comparison survives
/// rollover (§6.1).
pub fn seq_newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Valid,
    Invalid,
}

#[derive(Clone, Debug)]
pub(super) struct Route {
    pub seq: u32,
    /// The "valid destination sequence number" flag.
    pub valid_seq: bool,
    pub state: State,
    pub hop_count: u8,
    pub next_hop: NodeAddr,
    /// Neighbours that route through this node to the destination (§6.2), sorted.
    pub precursors: Vec<NodeAddr>,
    /// Valid route: when it stops being active. Invalid route: when it is deleted.
    pub lifetime: SimTime,
}

impl Route {
    pub fn new(seq: u32, valid_seq: bool, hop_count: u8, next_hop: NodeAddr, lifetime: SimTime) -> Route {
        Route {
            seq,
            valid_seq,
            state: State::Valid,
            hop_count,
            next_hop,
            precursors: Vec::new(),
            lifetime,
        }
    }

    pub fn is_active(&self, now: SimTime) -> bool {
        self.state == State::Valid && self.lifetime > now
    }

    pub fn add_precursor(&mut self, n: NodeAddr) {
        if let Err(i) = self.precursors.binary_search(&n) {
            self.precursors.insert(i, n);
        }
    }

    /// Lifetime becomes at least `until` (§6.2: refreshed on use).
    pub fn extend_lifetime(&mut self, until: SimTime) {
        self.lifetime = self.lifetime.max(until);
    }

    /// Marks the route invalid and schedules its deletion (§6.11 steps 2 and 3).
    pub fn invalidate(&mut self, now: SimTime, delete_period: Duration) {
        self.state = State::Invalid;
        self.lifetime = now + delete_period;
    }

    /// Applies lifetime expiry; false when the entry is due for deletion.
    /// An expiring route gets its sequence number incremented like a broken
    /// one (§6.1: "lost or expired link"): a later RREQ then asks for newer
    /// information than any neighbour may hold through this node, so no
    /// neighbour can answer with a route that leads back here.
    fn age(&mut self, now: SimTime, delete_period: Duration) -> bool {
        if self.state == State::Valid && self.lifetime <= now {
            if self.valid_seq {
                self.seq = self.seq.wrapping_add(1);
            }
            self.state = State::Invalid;
            self.lifetime += delete_period;
        }
        !(self.state == State::Invalid && self.lifetime <= now)
    }
}

/// A copy of one routing-table entry, for callers outside the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RouteInfo {
    /// Where packets for the destination go next.
    pub next_hop: NodeAddr,
    /// Hops to the destination.
    pub hop_count: u8,
    /// The destination's sequence number.
    pub seq: u32,
    /// Whether `seq` is known (§6.1's Valid Destination Sequence Number flag).
    pub valid_seq: bool,
    /// Usable for data now.
    pub active: bool,
    /// Active route: end of its lifetime. Invalid route: its deletion time.
    pub expires: SimTime,
}

pub(super) struct RouteTable {
    /// By increasing destination address, each destination once.
    routes: Vec<(NodeAddr, Route)>,
    delete_period: Duration,
}

impl RouteTable {
    pub fn new(delete_period: Duration) -> RouteTable {
        RouteTable {
            routes: Vec::new(),
            delete_period,
        }
    }

    /// The entry for `dst`, valid or invalid, after applying expiry.
    pub fn get_mut(&mut self, now: SimTime, dst: NodeAddr) -> Option<&mut Route> {
        // One search, whether the entry stays or goes.
        let at = self.find(dst).ok()?;
        if self.routes[at].1.age(now, self.delete_period) {
            Some(&mut self.routes[at].1)
        } else {
            self.routes.remove(at);
            None
        }
    }

    /// Where `dst`'s entry is, or where it would go.
    fn find(&self, dst: NodeAddr) -> Result<usize, usize> {
        self.routes.binary_search_by_key(&dst, |&(d, _)| d)
    }

    /// The entry for `dst` if it is an active route.
    pub fn active_mut(&mut self, now: SimTime, dst: NodeAddr) -> Option<&mut Route> {
        self.get_mut(now, dst).filter(|r| r.is_active(now))
    }

    pub fn insert(&mut self, dst: NodeAddr, route: Route) {
        match self.find(dst) {
            Ok(at) => self.routes[at].1 = route,
            Err(at) => self.routes.insert(at, (dst, route)),
        }
    }

    /// Every entry in address order, after applying expiry to all of them.
    pub fn iter_mut(&mut self, now: SimTime) -> impl Iterator<Item = (&NodeAddr, &mut Route)> {
        let dp = self.delete_period;
        self.routes.retain_mut(|(_, r)| r.age(now, dp));
        self.routes.iter_mut().map(|(d, r)| (&*d, r))
    }

    pub fn any_active(&self, now: SimTime) -> bool {
        self.routes.iter().any(|(_, r)| r.is_active(now))
    }

    pub fn info(&self, now: SimTime, dst: NodeAddr) -> Option<RouteInfo> {
        let mut r = self.routes[self.find(dst).ok()?].1.clone();
        if !r.age(now, self.delete_period) {
            return None;
        }
        Some(RouteInfo {
            next_hop: r.next_hop,
            hop_count: r.hop_count,
            seq: r.seq,
            valid_seq: r.valid_seq,
            active: r.is_active(now),
            expires: r.lifetime,
        })
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.routes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_numbers_compare_across_rollover() {
        assert!(seq_newer(5, 3));
        assert!(!seq_newer(3, 5));
        assert!(!seq_newer(7, 7));
        assert!(seq_newer(0, u32::MAX));
        assert!(seq_newer(2, u32::MAX - 3));
        assert!(!seq_newer(u32::MAX, 0));
        // Half the space apart is the edge: i32::MIN is not positive.
        assert!(seq_newer(0x7fff_ffff, 0));
        assert!(!seq_newer(0x8000_0000, 0));
    }

    #[test]
    fn expired_routes_turn_invalid_then_disappear() {
        let dp = Duration::from_millis(15_000);
        let mut t = RouteTable::new(dp);
        t.insert(9, Route::new(4, true, 2, 3, SimTime(1_000)));
        assert!(t.active_mut(SimTime(999), 9).is_some());
        assert!(t.active_mut(SimTime(1_000), 9).is_none());
        let info = t.info(SimTime(1_000), 9).unwrap();
        assert!(!info.active);
        assert_eq!(info.seq, 5, "expiry counts as a lost link (§6.1)");
        assert_eq!(info.expires, SimTime(1_000) + dp);
        assert!(t.get_mut(SimTime(1_000) + dp, 9).is_none());
        assert_eq!(t.len(), 0);
    }

    #[test]
    fn precursors_stay_sorted_and_unique() {
        let mut r = Route::new(0, false, 1, 1, SimTime(10));
        for n in [5, 2, 5, 9, 2] {
            r.add_precursor(n);
        }
        assert_eq!(r.precursors, vec![2, 5, 9]);
    }
}
