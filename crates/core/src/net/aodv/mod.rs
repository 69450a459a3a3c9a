//! AODV (RFC 3561) as a state machine without I/O, one instance per node.
//!
//! Every handler takes the current time and its input and appends what the
//! node must do to an output buffer of [`AodvAction`]s: broadcast or unicast a
//! control message, send a data packet that was waiting for a route, or drop
//! one. [`Aodv::poll_timeout`] says when [`Aodv::handle_timeout`] must next be
//! called. Data packets are opaque handles `P`; the caller owns the packets.
//!
//! What is implemented: route discovery with expanding ring search and binary
//! exponential backoff (§6.3, §6.4), RREQ handling and duplicate detection
//! (§6.5), RREPs from destinations and from intermediates, with the D and G
//! flags (§6.6), forward route set-up (§6.7), HELLO messages (§6.9, off by
//! default), link-layer failure detection and RERRs with precursor lists
//! (§6.10, §6.11), local repair (§6.12, off by default), RREQ and RERR rate
//! limits, and a FIFO buffer for packets waiting for a route. Not
//! implemented: RREP-ACK and blacklisting of unidirectional links (§6.8),
//! multicast.
//! See `docs/aodv.md` for the choices where the RFC leaves room.

mod config;
mod message;
mod table;
#[cfg(test)]
mod tests;

pub use config::AodvConfig;
pub use message::{AodvMessage, Rerr, Rrep, Rreq, IP_UDP_HEADER_BYTES};
pub use table::{seq_newer, RouteInfo};

use crate::time::{Duration, SimTime};
use config::Params;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use table::{Route, RouteTable};

/// A node's address (its id).
pub type NodeAddr = u32;

/// Why AODV gave up on a data packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropCause {
    /// Route discovery failed after RREQ_RETRIES, or a packet to forward had
    /// no active route (§6.11 case ii).
    NoRoute,
    /// The buffer of packets awaiting a route was full; the oldest goes.
    BufferFull,
    /// The packet waited longer than the buffer timeout.
    BufferTimeout,
}

/// What the node must do after a handler returns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AodvAction<P> {
    /// Link-layer broadcast with IP TTL `ttl`, after `jitter` has passed.
    Broadcast {
        /// The message.
        msg: AodvMessage,
        /// Its IP TTL.
        ttl: u8,
        /// How long to wait first (§6.3's broadcast jitter).
        jitter: Duration,
    },
    /// Link-layer unicast to a neighbour with IP TTL `ttl`, now.
    Unicast {
        /// The neighbour.
        next_hop: NodeAddr,
        /// The message.
        msg: AodvMessage,
        /// Its IP TTL.
        ttl: u8,
    },
    /// A buffered data packet now has a route.
    SendData {
        /// The packet.
        packet: P,
        /// Its next hop.
        next_hop: NodeAddr,
    },
    /// A data packet AODV will not deliver.
    DropData {
        /// The packet.
        packet: P,
        /// Why.
        cause: DropCause,
    },
}

/// Control traffic this node has sent, by type.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AodvCounters {
    /// RREQs this node started.
    pub rreq_originated: u64,
    /// RREQs this node rebroadcast.
    pub rreq_forwarded: u64,
    /// RREPs this node created, as destination or as intermediate (gratuitous ones included).
    pub rrep_originated: u64,
    /// RREPs this node passed on towards their originator.
    pub rrep_forwarded: u64,
    /// RERRs this node sent.
    pub rerr_sent: u64,
    /// HELLOs this node sent.
    pub hello_sent: u64,
    /// RERRs not sent because of RERR_RATELIMIT.
    pub rerr_rate_limited: u64,
    /// Bytes of all control messages sent, IP and UDP headers included.
    pub control_bytes: u64,
}

/// One route discovery in progress (§6.3, §6.4).
#[derive(Clone, Copy, Debug)]
struct Discovery {
    /// TTL of the last (or the pending) RREQ.
    ttl: u8,
    /// RREQs sent so far with TTL = NET_DIAMETER.
    max_ttl_sends: u32,
    /// When the wait for a RREP ends, or when a rate-limited RREQ may go.
    deadline: SimTime,
    /// The RREQ is held back by RREQ_RATELIMIT and goes at `deadline`.
    rate_limited: bool,
    /// A local repair (§6.12): the hop count of the broken route. One RREQ
    /// only; its failure ends in a RERR.
    repair_of_hops: Option<u8>,
}

impl Discovery {
    /// A discovery whose first RREQ (TTL `ttl`) goes at `now`.
    fn starting(now: SimTime, ttl: u8, repair_of_hops: Option<u8>) -> Self {
        Discovery {
            ttl,
            max_ttl_sends: 0,
            deadline: now,
            rate_limited: false,
            repair_of_hops,
        }
    }
}

struct Buffered<P> {
    dst: NodeAddr,
    packet: P,
    expires: SimTime,
}

/// (originator, RREQ ID) pairs seen in the last PATH_DISCOVERY_TIME (§6.3, §6.5).
#[derive(Default)]
struct RreqCache {
    seen: BTreeSet<(NodeAddr, u32)>,
    /// Insertion order is expiry order, since every entry lives equally long.
    order: VecDeque<(SimTime, NodeAddr, u32)>,
}

impl RreqCache {
    /// Records the pair; true if it had been seen already.
    fn seen_before(&mut self, now: SimTime, orig: NodeAddr, id: u32, keep: Duration) -> bool {
        while let Some(&(t, o, i)) = self.order.front() {
            if t > now {
                break;
            }
            self.order.pop_front();
            self.seen.remove(&(o, i));
        }
        if !self.seen.insert((orig, id)) {
            return true;
        }
        self.order.push_back((now + keep, orig, id));
        false
    }
}

/// At most `limit` messages in any one-second window; 0 means no limit.
struct RateLimiter {
    limit: u32,
    sent: VecDeque<SimTime>,
}

const ONE_SECOND: Duration = Duration::from_millis(1000);

impl RateLimiter {
    fn new(limit: u32) -> RateLimiter {
        RateLimiter {
            limit,
            sent: VecDeque::new(),
        }
    }

    /// The earliest time at or after `now` when one more message may go.
    fn next_allowed(&mut self, now: SimTime) -> SimTime {
        if self.limit == 0 {
            return now;
        }
        while self.sent.front().is_some_and(|&t| t + ONE_SECOND <= now) {
            self.sent.pop_front();
        }
        if (self.sent.len() as u64) < u64::from(self.limit) {
            now
        } else {
            self.sent[self.sent.len() - self.limit as usize] + ONE_SECOND
        }
    }

    fn record(&mut self, now: SimTime) {
        if self.limit > 0 {
            self.sent.push_back(now);
        }
    }
}

/// One node's AODV.
pub struct Aodv<P: Copy> {
    me: NodeAddr,
    p: Params,
    rng: Pcg64Mcg,
    /// This node's own sequence number (§6.1).
    seq: u32,
    /// The last RREQ ID this node used (§6.3).
    rreq_id: u32,
    routes: RouteTable,
    rreq_cache: RreqCache,
    discoveries: BTreeMap<NodeAddr, Discovery>,
    buffer: VecDeque<Buffered<P>>,
    rreq_limit: RateLimiter,
    rerr_limit: RateLimiter,
    next_hello: Option<SimTime>,
    last_broadcast: Option<SimTime>,
    /// Neighbours known from HELLOs and when their link is presumed lost (§6.10).
    neighbors: BTreeMap<NodeAddr, SimTime>,
    counters: AodvCounters,
}

impl<P: Copy> Aodv<P> {
    /// `cfg` must have passed [`AodvConfig::validate`]. `rng` draws the
    /// broadcast jitter and nothing else.
    pub fn new(me: NodeAddr, cfg: &AodvConfig, rng: Pcg64Mcg) -> Self {
        debug_assert!(cfg.validate().is_ok(), "{:?}", cfg.validate());
        let p = cfg.params();
        Aodv {
            me,
            routes: RouteTable::new(p.delete_period),
            next_hello: p.hello_enabled.then_some(SimTime::ZERO + p.hello_interval),
            rreq_limit: RateLimiter::new(p.rreq_ratelimit),
            rerr_limit: RateLimiter::new(p.rerr_ratelimit),
            p,
            rng,
            seq: 0,
            rreq_id: 0,
            rreq_cache: RreqCache::default(),
            discoveries: BTreeMap::new(),
            buffer: VecDeque::new(),
            last_broadcast: None,
            neighbors: BTreeMap::new(),
            counters: AodvCounters::default(),
        }
    }

    /// This node's address.
    pub fn addr(&self) -> NodeAddr {
        self.me
    }

    /// This node's own destination sequence number.
    pub fn own_seq(&self) -> u32 {
        self.seq
    }

    /// The routing-table entry for `dst` as it stands at `now`.
    pub fn route(&self, now: SimTime, dst: NodeAddr) -> Option<RouteInfo> {
        self.routes.info(now, dst)
    }

    /// The next hop of an active route to `dst`, without refreshing it.
    pub fn next_hop(&self, now: SimTime, dst: NodeAddr) -> Option<NodeAddr> {
        self.route(now, dst).filter(|r| r.active).map(|r| r.next_hop)
    }

    /// Whether a route discovery for `dst` is under way.
    pub fn discovery_in_progress(&self, dst: NodeAddr) -> bool {
        self.discoveries.contains_key(&dst)
    }

    /// Packets waiting for a route.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    /// Control traffic this node has sent.
    pub fn counters(&self) -> &AodvCounters {
        &self.counters
    }

    /// Control messages sent, all types together (routing overhead).
    pub fn control_packets_sent(&self) -> u64 {
        let c = &self.counters;
        c.rreq_originated + c.rreq_forwarded + c.rrep_originated + c.rrep_forwarded + c.rerr_sent + c.hello_sent
    }

    /// A data packet from this node's transport (`originated_here`), or one
    /// received for forwarding. Returns the next hop if there is an active
    /// route (whose lifetime this refreshes, §6.2). Otherwise a packet of
    /// this node's own is buffered and a discovery started (§6.3); a packet
    /// to forward is dropped with a RERR (§6.11 case ii).
    pub fn route_data(
        &mut self,
        now: SimTime,
        dst: NodeAddr,
        packet: P,
        originated_here: bool,
        out: &mut Vec<AodvAction<P>>,
    ) -> Option<NodeAddr> {
        debug_assert_ne!(dst, self.me, "route_data for a packet addressed to this node");
        if let Some(next_hop) = self.routes.active_mut(now, dst).map(|r| r.next_hop) {
            self.note_route_used(now, dst, next_hop);
            return Some(next_hop);
        }
        if originated_here {
            self.buffer_packet(now, dst, packet, out);
            if !self.discoveries.contains_key(&dst) {
                self.start_discovery(now, dst, out);
            }
        } else if self.repairing(dst) {
            // §6.12: data waits while the route is being repaired.
            self.buffer_packet(now, dst, packet, out);
        } else {
            out.push(AodvAction::DropData {
                packet,
                cause: DropCause::NoRoute,
            });
            self.rerr_no_route(now, dst, out);
        }
        None
    }

    fn buffer_packet(&mut self, now: SimTime, dst: NodeAddr, packet: P, out: &mut Vec<AodvAction<P>>) {
        if self.buffer.len() >= self.p.buffer_capacity {
            if let Some(old) = self.buffer.pop_front() {
                out.push(AodvAction::DropData {
                    packet: old.packet,
                    cause: DropCause::BufferFull,
                });
            }
        }
        self.buffer.push_back(Buffered {
            dst,
            packet,
            expires: now + self.p.buffer_timeout,
        });
    }

    fn repairing(&self, dst: NodeAddr) -> bool {
        self.discoveries.get(&dst).is_some_and(|d| d.repair_of_hops.is_some())
    }

    /// Data for `dst` went to (or came from) neighbour `next_hop`: the route
    /// to `dst` through it and the route to the neighbour stay active for at
    /// least ACTIVE_ROUTE_TIMEOUT more (§6.2). Call it also with the source
    /// and the previous hop of every data packet received, so that the
    /// reverse route lives as long as the flow.
    pub fn note_route_used(&mut self, now: SimTime, dst: NodeAddr, next_hop: NodeAddr) {
        let until = now + self.p.active_route_timeout;
        if let Some(r) = self.routes.active_mut(now, dst) {
            if r.next_hop == next_hop {
                r.extend_lifetime(until);
            }
        }
        if let Some(r) = self.routes.active_mut(now, next_hop) {
            if r.next_hop == next_hop {
                r.extend_lifetime(until);
            }
        }
    }

    /// A control message arrived from neighbour `from` with IP TTL `ttl`.
    pub fn handle_message(
        &mut self,
        now: SimTime,
        from: NodeAddr,
        msg: &AodvMessage,
        ttl: u8,
        out: &mut Vec<AodvAction<P>>,
    ) {
        if from == self.me {
            return;
        }
        if let Some(t) = self.neighbors.get_mut(&from) {
            // §6.10: any packet from a neighbour shows the link is up.
            *t = (*t).max(now + self.p.hello_lifetime());
        }
        match msg {
            AodvMessage::Rreq(r) => self.recv_rreq(now, from, r, ttl, out),
            AodvMessage::Rrep(r) if r.is_hello() => self.recv_hello(now, from, r, out),
            AodvMessage::Rrep(r) => self.recv_rrep(now, from, r, ttl, out),
            AodvMessage::Rerr(e) => self.recv_rerr(now, from, e, out),
            AodvMessage::RrepAck => {}
        }
    }

    /// The MAC gave up on a frame to `next_hop` (§6.11 case i): every active
    /// route through it becomes invalid with its sequence number incremented,
    /// and the precursors of those routes get a RERR. The caller decides what
    /// happens to the frame itself and to others queued for that neighbour
    /// (ns-2 drops them; giving them to `route_data` again re-routes them).
    pub fn handle_link_failure(&mut self, now: SimTime, next_hop: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        self.neighbors.remove(&next_hop);
        let dp = self.p.delete_period;
        let mut unreachable = Vec::new();
        let mut recipients = BTreeSet::new();
        for (&dst, r) in self.routes.iter_mut(now) {
            if r.is_active(now) && r.next_hop == next_hop {
                if r.valid_seq {
                    r.seq = r.seq.wrapping_add(1);
                }
                r.invalidate(now, dp);
                if !r.precursors.is_empty() {
                    unreachable.push((dst, r.seq));
                    recipients.extend(r.precursors.drain(..));
                }
            }
        }
        self.send_rerr(now, unreachable, recipients, false, out);
    }

    /// The MAC gave up on data `packet` from `src` to `dst` sent to
    /// `next_hop`. Does what `handle_link_failure` does and, with local
    /// repair on (§6.12), keeps the packet while this node (not the source)
    /// looks for a new route to a destination at most MAX_REPAIR_TTL hops
    /// away. Returns the packet if AODV did not keep it; the caller then
    /// drops it. Frames still queued for the same neighbour may be passed
    /// here too: those for a destination under repair join the wait.
    pub fn handle_data_failure(
        &mut self,
        now: SimTime,
        next_hop: NodeAddr,
        src: NodeAddr,
        dst: NodeAddr,
        packet: P,
        out: &mut Vec<AodvAction<P>>,
    ) -> Option<P> {
        let keep = if self.repairing(dst) {
            true
        } else if self.p.local_repair && src != self.me {
            let max = self.p.max_repair_ttl;
            let broken = self
                .routes
                .active_mut(now, dst)
                .filter(|r| r.next_hop == next_hop && r.hop_count <= max)
                .is_some();
            if broken {
                self.start_local_repair(now, src, dst, out);
            }
            broken
        } else {
            false
        };
        self.handle_link_failure(now, next_hop, out);
        if keep {
            self.buffer_packet(now, dst, packet, out);
            None
        } else {
            Some(packet)
        }
    }

    /// §6.12: the route to `dst` is invalid with its sequence number
    /// incremented but keeps its precursors; one RREQ with TTL
    /// max(MIN_REPAIR_TTL, hops to the source / 2) + LOCAL_ADD_TTL, where
    /// MIN_REPAIR_TTL is the broken route's hop count.
    fn start_local_repair(&mut self, now: SimTime, src: NodeAddr, dst: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        let dp = self.p.delete_period;
        let Some(r) = self.routes.active_mut(now, dst) else {
            return;
        };
        if r.valid_seq {
            r.seq = r.seq.wrapping_add(1);
        }
        r.invalidate(now, dp);
        let old_hops = r.hop_count;
        let src_hops = self.routes.get_mut(now, src).map_or(0, |r| r.hop_count);
        let ttl = u32::from(old_hops.max(src_hops / 2)) + u32::from(self.p.local_add_ttl);
        let ttl = ttl.min(u32::from(self.p.net_diameter)) as u8;
        self.discoveries
            .insert(dst, Discovery::starting(now, ttl, Some(old_hops)));
        self.send_rreq(now, dst, out);
    }

    /// Runs whatever is due at `now`: RREQ retries, discovery failures,
    /// buffer timeouts, HELLOs and neighbour losses.
    pub fn handle_timeout(&mut self, now: SimTime, out: &mut Vec<AodvAction<P>>) {
        while self.buffer.front().is_some_and(|b| b.expires <= now) {
            let b = self.buffer.pop_front().expect("front exists");
            out.push(AodvAction::DropData {
                packet: b.packet,
                cause: DropCause::BufferTimeout,
            });
        }
        let due: Vec<NodeAddr> = self
            .discoveries
            .iter()
            .filter(|(_, d)| d.deadline <= now)
            .map(|(&dst, _)| dst)
            .collect();
        for dst in due {
            self.discovery_timeout(now, dst, out);
        }
        if let Some(t) = self.next_hello.filter(|&t| t <= now) {
            // §6.9: only a node on an active route, and only if it has not
            // broadcast anything in the last HELLO_INTERVAL.
            let quiet = self
                .last_broadcast
                .is_none_or(|b| now.saturating_since(b) >= self.p.hello_interval);
            if quiet && self.routes.any_active(now) {
                self.send_hello(now, out);
            }
            let mut next = t;
            while next <= now {
                next += self.p.hello_interval;
            }
            self.next_hello = Some(next);
        }
        let lost: Vec<NodeAddr> = self
            .neighbors
            .iter()
            .filter(|(_, &t)| t <= now)
            .map(|(&n, _)| n)
            .collect();
        for n in lost {
            self.handle_link_failure(now, n, out);
        }
    }

    /// When `handle_timeout` must next run, if ever.
    pub fn poll_timeout(&self) -> Option<SimTime> {
        let buffer = self.buffer.front().map(|b| b.expires);
        let discovery = self.discoveries.values().map(|d| d.deadline).min();
        let neighbor = self.neighbors.values().copied().min();
        [buffer, discovery, self.next_hello, neighbor]
            .into_iter()
            .flatten()
            .min()
    }

    // ---- route discovery (§6.3, §6.4) ----

    fn start_discovery(&mut self, now: SimTime, dst: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        // §6.4: a destination known before starts at its last hop count plus TTL_INCREMENT.
        let ttl = match self.routes.get_mut(now, dst) {
            Some(r) => u32::from(r.hop_count) + u32::from(self.p.ttl_increment),
            None => u32::from(self.p.ttl_start),
        };
        let ttl = self.p.next_ring_ttl(ttl);
        self.discoveries.insert(dst, Discovery::starting(now, ttl, None));
        self.send_rreq(now, dst, out);
    }

    /// Broadcasts the discovery's RREQ at its current TTL and sets the time
    /// to wait for a RREP: RING_TRAVERSAL_TIME below NET_DIAMETER,
    /// NET_TRAVERSAL_TIME doubled per earlier try at NET_DIAMETER.
    fn send_rreq(&mut self, now: SimTime, dst: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        let allowed = self.rreq_limit.next_allowed(now);
        let Some(d) = self.discoveries.get_mut(&dst) else {
            return;
        };
        if allowed > now {
            d.deadline = allowed;
            d.rate_limited = true;
            return;
        }
        d.rate_limited = false;
        let ttl = d.ttl;
        d.deadline = if ttl >= self.p.net_diameter {
            let backoff = 1u64 << d.max_ttl_sends.min(40);
            d.max_ttl_sends += 1;
            let wait = self.p.net_traversal_time.as_nanos().saturating_mul(backoff);
            now + Duration::from_nanos(wait)
        } else {
            now + self.p.ring_traversal_time(ttl)
        };
        self.rreq_limit.record(now);
        // §6.1: own sequence number up before originating a discovery; §6.3: new RREQ ID.
        self.seq = self.seq.wrapping_add(1);
        self.rreq_id = self.rreq_id.wrapping_add(1);
        self.rreq_cache
            .seen_before(now, self.me, self.rreq_id, self.p.path_discovery_time);
        let (dst_seq, unknown_seq) = match self.routes.get_mut(now, dst) {
            Some(r) if r.valid_seq => (r.seq, false),
            _ => (0, true),
        };
        let msg = AodvMessage::Rreq(Rreq {
            gratuitous: self.p.gratuitous_rrep,
            dest_only: self.p.destination_only,
            unknown_seq,
            hop_count: 0,
            rreq_id: self.rreq_id,
            dst,
            dst_seq,
            orig: self.me,
            orig_seq: self.seq,
        });
        self.counters.rreq_originated += 1;
        self.broadcast(now, msg, ttl, out);
    }

    fn discovery_timeout(&mut self, now: SimTime, dst: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        if self.routes.active_mut(now, dst).is_some() {
            self.release(now, dst, out);
            return;
        }
        let Some(d) = self.discoveries.get_mut(&dst) else {
            return;
        };
        if d.rate_limited {
            // The held-back RREQ goes now, at the TTL already chosen.
        } else if d.repair_of_hops.is_some() {
            // §6.12: the repair failed; proceed as for a break (§6.11).
            self.discoveries.remove(&dst);
            self.drop_buffered(dst, out);
            let mut recipients = BTreeSet::new();
            let mut unreachable = Vec::new();
            if let Some(r) = self.routes.get_mut(now, dst) {
                if !r.precursors.is_empty() {
                    unreachable.push((dst, r.seq));
                    recipients.extend(r.precursors.drain(..));
                }
            }
            self.send_rerr(now, unreachable, recipients, false, out);
            return;
        } else if d.ttl < self.p.net_diameter {
            d.ttl = self.p.next_ring_ttl(u32::from(d.ttl) + u32::from(self.p.ttl_increment));
        } else if d.max_ttl_sends > self.p.rreq_retries {
            // §6.3: RREQ_RETRIES tries at NET_DIAMETER have failed.
            self.discoveries.remove(&dst);
            self.drop_buffered(dst, out);
            return;
        }
        self.send_rreq(now, dst, out);
    }

    fn drop_buffered(&mut self, dst: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        let buffer = std::mem::take(&mut self.buffer);
        for b in buffer {
            if b.dst == dst {
                out.push(AodvAction::DropData {
                    packet: b.packet,
                    cause: DropCause::NoRoute,
                });
            } else {
                self.buffer.push_back(b);
            }
        }
    }

    /// A route to `dst` has become active: end its discovery and send the
    /// packets waiting for it, oldest first.
    fn release(&mut self, now: SimTime, dst: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        if !self.discoveries.contains_key(&dst) {
            return;
        }
        let Some((next_hop, hops, seq, precursors)) = self
            .routes
            .active_mut(now, dst)
            .map(|r| (r.next_hop, r.hop_count, r.seq, r.precursors.clone()))
        else {
            return;
        };
        let discovery = self.discoveries.remove(&dst);
        if discovery.and_then(|d| d.repair_of_hops).is_some_and(|old| hops > old) {
            // §6.12: repaired, but longer; tell the precursors without
            // deleting their routes (N flag).
            let recipients = precursors.into_iter().collect();
            self.send_rerr(now, vec![(dst, seq)], recipients, true, out);
        }
        let buffer = std::mem::take(&mut self.buffer);
        let mut sent = false;
        for b in buffer {
            if b.dst == dst {
                out.push(AodvAction::SendData {
                    packet: b.packet,
                    next_hop,
                });
                sent = true;
            } else {
                self.buffer.push_back(b);
            }
        }
        if sent {
            self.note_route_used(now, dst, next_hop);
        }
    }

    // ---- receiving control messages ----

    /// §6.5 step 1 and §6.7: the sender of a RREQ or RREP is a neighbour;
    /// create or refresh the one-hop route to it (without a valid sequence
    /// number when new).
    fn update_neighbor_route(&mut self, now: SimTime, from: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        let until = now + self.p.active_route_timeout;
        match self.routes.get_mut(now, from) {
            Some(r) => {
                let was_active = r.is_active(now);
                r.state = table::State::Valid;
                r.next_hop = from;
                r.hop_count = 1;
                r.lifetime = if was_active { r.lifetime.max(until) } else { until };
            }
            None => self.routes.insert(from, Route::new(0, false, 1, from, until)),
        }
        self.release(now, from, out);
    }

    fn recv_rreq(&mut self, now: SimTime, from: NodeAddr, r: &Rreq, ttl: u8, out: &mut Vec<AodvAction<P>>) {
        self.update_neighbor_route(now, from, out);
        if r.orig == self.me
            || self
                .rreq_cache
                .seen_before(now, r.orig, r.rreq_id, self.p.path_discovery_time)
        {
            return; // §6.5: duplicate, silently discarded
        }
        let hops = r.hop_count.saturating_add(1);

        // §6.5: reverse route to the originator, created, or updated under
        // the rules of §6.2 (as ns-2's AODV, the papers' simulator, does;
        // ns-3 updates it from every new RREQ): from a newer originator
        // sequence number, the same one over fewer hops, or when the
        // table's number is not valid or the route is no longer active. A
        // copy of an old RREQ that comes back after PATH_DISCOVERY_TIME
        // carries the number the route already has, and must not turn the
        // route the way the copy came.
        let min_life = self
            .p
            .net_traversal_time
            .mul(2)
            .as_nanos()
            .saturating_sub(self.p.node_traversal_time.mul(2 * u64::from(hops)).as_nanos());
        let until = now + Duration::from_nanos(min_life);
        let (rev_next, rev_hops) = match self.routes.get_mut(now, r.orig) {
            Some(rt) => {
                let was_active = rt.is_active(now);
                let fresher = !rt.valid_seq
                    || !was_active
                    || seq_newer(r.orig_seq, rt.seq)
                    || (r.orig_seq == rt.seq && hops < rt.hop_count);
                if fresher {
                    rt.seq = r.orig_seq;
                    rt.valid_seq = true;
                    rt.state = table::State::Valid;
                    rt.next_hop = from;
                    rt.hop_count = hops;
                    rt.lifetime = if was_active { rt.lifetime.max(until) } else { until };
                }
                (rt.next_hop, rt.hop_count)
            }
            None => {
                self.routes
                    .insert(r.orig, Route::new(r.orig_seq, true, hops, from, until));
                (from, hops)
            }
        };
        self.release(now, r.orig, out);

        if r.dst == self.me {
            // §6.1, §6.6.1: take the RREQ's destination sequence number if it
            // is newer (it is then own + 1 in the usual case), and answer.
            if !r.unknown_seq && seq_newer(r.dst_seq, self.seq) {
                self.seq = r.dst_seq;
            }
            let rrep = Rrep {
                hop_count: 0,
                dst: self.me,
                dst_seq: self.seq,
                orig: r.orig,
                lifetime: self.p.my_route_timeout,
            };
            self.counters.rrep_originated += 1;
            // The reply follows the reverse route, which is the way this
            // RREQ came unless the route held is fresher. Its IP TTL is the
            // route's hop count (as ns-3 sends it): enough to reach the
            // originator along it, and a bound on its travel if the routes
            // it follows form a loop.
            self.unicast(rev_next, AodvMessage::Rrep(rrep), rev_hops, out);
            return;
        }

        if !r.dest_only {
            if let Some(fwd) = self.routes.active_mut(now, r.dst) {
                if fwd.valid_seq && (r.unknown_seq || !seq_newer(r.dst_seq, fwd.seq)) {
                    self.reply_as_intermediate(now, from, r, out);
                    return;
                }
            }
        }

        // §6.5: not answered; pass it on while the TTL lasts.
        if ttl > 1 {
            let (mut dst_seq, mut unknown_seq) = (r.dst_seq, r.unknown_seq);
            if let Some(known) = self.routes.get_mut(now, r.dst) {
                if known.valid_seq && (unknown_seq || seq_newer(known.seq, dst_seq)) {
                    dst_seq = known.seq;
                    unknown_seq = false;
                }
            }
            let fwd = Rreq {
                hop_count: hops,
                dst_seq,
                unknown_seq,
                ..*r
            };
            self.counters.rreq_forwarded += 1;
            self.broadcast(now, AodvMessage::Rreq(fwd), ttl - 1, out);
        }
    }

    /// §6.6.2 and §6.6.3: this node has a fresh enough route to the RREQ's
    /// destination.
    fn reply_as_intermediate(&mut self, now: SimTime, from: NodeAddr, r: &Rreq, out: &mut Vec<AodvAction<P>>) {
        let (fwd_next, fwd_hops, fwd_seq, fwd_left) = {
            let fwd = self.routes.get_mut(now, r.dst).expect("active route checked");
            fwd.add_precursor(from);
            (fwd.next_hop, fwd.hop_count, fwd.seq, fwd.lifetime.saturating_since(now))
        };
        let (rev_next, rev_hops, rev_left) = {
            let rev = self.routes.get_mut(now, r.orig).expect("reverse route just set");
            rev.add_precursor(fwd_next);
            (rev.next_hop, rev.hop_count, rev.lifetime.saturating_since(now))
        };
        let rrep = Rrep {
            hop_count: fwd_hops,
            dst: r.dst,
            dst_seq: fwd_seq,
            orig: r.orig,
            lifetime: fwd_left,
        };
        self.counters.rrep_originated += 1;
        self.unicast(rev_next, AodvMessage::Rrep(rrep), rev_hops, out);
        if r.gratuitous {
            let grat = Rrep {
                hop_count: rev_hops,
                dst: r.orig,
                dst_seq: r.orig_seq,
                orig: r.dst,
                lifetime: rev_left,
            };
            self.counters.rrep_originated += 1;
            self.unicast(fwd_next, AodvMessage::Rrep(grat), fwd_hops, out);
        }
    }

    /// `ttl`: the IP TTL the reply came with.
    fn recv_rrep(&mut self, now: SimTime, from: NodeAddr, r: &Rrep, ttl: u8, out: &mut Vec<AodvAction<P>>) {
        self.update_neighbor_route(now, from, out);
        if r.dst == self.me {
            return;
        }
        let hops = r.hop_count.saturating_add(1);
        let until = now + r.lifetime;
        // §6.7: forward route to the destination, if the RREP is fresher.
        let updated = match self.routes.get_mut(now, r.dst) {
            Some(rt) => {
                let fresher = !rt.valid_seq
                    || seq_newer(r.dst_seq, rt.seq)
                    || (r.dst_seq == rt.seq && (!rt.is_active(now) || hops < rt.hop_count));
                if fresher {
                    rt.state = table::State::Valid;
                    rt.valid_seq = true;
                    rt.seq = r.dst_seq;
                    rt.next_hop = from;
                    rt.hop_count = hops;
                    rt.lifetime = until;
                }
                fresher
            }
            None => {
                self.routes
                    .insert(r.dst, Route::new(r.dst_seq, true, hops, from, until));
                true
            }
        };
        if updated {
            self.release(now, r.dst, out);
        }
        if r.orig == self.me {
            return;
        }
        // §6.7 forwards a RREP that created or updated the route. A RREP that
        // only confirms the route held (same sequence number) is forwarded
        // too, as ns-3 does: a destination answering a RREQ without a newer
        // sequence number (§6.6.1) repeats its old one, and the originator
        // still needs the reply.
        let confirms = self.routes.active_mut(now, r.dst).is_some_and(|rt| rt.seq == r.dst_seq);
        if !updated && !confirms {
            return;
        }
        // Forward the RREP towards the originator along the reverse route.
        let ext = now + self.p.active_route_timeout;
        let Some(rev_next) = self.routes.active_mut(now, r.orig).map(|rev| {
            rev.extend_lifetime(ext);
            rev.add_precursor(from);
            rev.next_hop
        }) else {
            return;
        };
        for (dst, precursor) in [(r.dst, rev_next), (from, rev_next), (rev_next, from)] {
            if let Some(rt) = self.routes.active_mut(now, dst) {
                rt.add_precursor(precursor);
            }
        }
        // Forwarding spends one of the reply's TTL, and one that arrived
        // with less than 2 goes no further (ns-3's RecvReply). A reply that
        // only confirms a route is forwarded too (above), so without this
        // bound it would circle for as long as the reverse routes towards
        // its originator form a loop.
        if ttl < 2 {
            return;
        }
        let fwd = Rrep { hop_count: hops, ..*r };
        self.counters.rrep_forwarded += 1;
        self.unicast(rev_next, AodvMessage::Rrep(fwd), ttl - 1, out);
    }

    /// §6.9: a HELLO keeps (or makes) the route to the neighbour active.
    fn recv_hello(&mut self, now: SimTime, from: NodeAddr, r: &Rrep, out: &mut Vec<AodvAction<P>>) {
        let until = now + r.lifetime;
        match self.routes.get_mut(now, from) {
            Some(rt) => {
                let was_active = rt.is_active(now);
                rt.state = table::State::Valid;
                rt.next_hop = from;
                rt.hop_count = 1;
                rt.seq = r.dst_seq;
                rt.valid_seq = true;
                rt.lifetime = if was_active { rt.lifetime.max(until) } else { until };
            }
            None => self.routes.insert(from, Route::new(r.dst_seq, true, 1, from, until)),
        }
        if self.p.hello_enabled {
            let t = now + self.p.hello_lifetime();
            let e = self.neighbors.entry(from).or_insert(t);
            *e = (*e).max(t);
        }
        self.release(now, from, out);
    }

    /// §6.11 case iii: routes through the RERR's sender to the listed
    /// destinations are invalid; tell their precursors in turn.
    fn recv_rerr(&mut self, now: SimTime, from: NodeAddr, e: &Rerr, out: &mut Vec<AodvAction<P>>) {
        let dp = self.p.delete_period;
        let mut unreachable = Vec::new();
        let mut recipients = BTreeSet::new();
        for &(dst, seq) in &e.unreachable {
            let Some(r) = self.routes.active_mut(now, dst) else {
                continue;
            };
            if r.next_hop != from {
                continue;
            }
            if e.no_delete {
                // §6.12: a route was repaired upstream; keep ours and only
                // pass the news on.
                if !r.precursors.is_empty() {
                    unreachable.push((dst, seq));
                    recipients.extend(r.precursors.iter().copied());
                }
                continue;
            }
            r.seq = seq;
            r.invalidate(now, dp);
            if !r.precursors.is_empty() {
                unreachable.push((dst, seq));
                recipients.extend(r.precursors.drain(..));
            }
        }
        self.send_rerr(now, unreachable, recipients, e.no_delete, out);
    }

    // ---- sending ----

    /// §6.11 case ii: a packet to forward has no active route. The previous
    /// hop is unknown here, so the RERR goes to the precursors if any, else
    /// to all neighbours (as ns-2 does).
    fn rerr_no_route(&mut self, now: SimTime, dst: NodeAddr, out: &mut Vec<AodvAction<P>>) {
        let (seq, recipients) = match self.routes.get_mut(now, dst) {
            Some(r) if r.valid_seq => (r.seq, std::mem::take(&mut r.precursors)),
            _ => (0, Vec::new()),
        };
        if !self.rerr_allowed(now) {
            return;
        }
        let msg = AodvMessage::Rerr(Rerr {
            no_delete: false,
            unreachable: vec![(dst, seq)],
        });
        self.counters.rerr_sent += 1;
        match recipients.as_slice() {
            [one] => self.unicast(*one, msg, 1, out),
            _ => self.broadcast(now, msg, 1, out),
        }
    }

    /// §6.11: one RERR to the precursors of the unreachable destinations,
    /// unicast if there is one, broadcast with TTL 1 otherwise.
    fn send_rerr(
        &mut self,
        now: SimTime,
        unreachable: Vec<(NodeAddr, u32)>,
        recipients: BTreeSet<NodeAddr>,
        no_delete: bool,
        out: &mut Vec<AodvAction<P>>,
    ) {
        if unreachable.is_empty() || recipients.is_empty() || !self.rerr_allowed(now) {
            return;
        }
        let msg = AodvMessage::Rerr(Rerr { no_delete, unreachable });
        self.counters.rerr_sent += 1;
        if recipients.len() == 1 {
            let one = *recipients.first().expect("one recipient");
            self.unicast(one, msg, 1, out);
        } else {
            self.broadcast(now, msg, 1, out);
        }
    }

    /// RERR_RATELIMIT (§6.11): excess RERRs are not sent.
    fn rerr_allowed(&mut self, now: SimTime) -> bool {
        if self.rerr_limit.next_allowed(now) > now {
            self.counters.rerr_rate_limited += 1;
            return false;
        }
        self.rerr_limit.record(now);
        true
    }

    fn send_hello(&mut self, now: SimTime, out: &mut Vec<AodvAction<P>>) {
        let hello = Rrep {
            hop_count: 0,
            dst: self.me,
            dst_seq: self.seq,
            orig: self.me,
            lifetime: self.p.hello_lifetime(),
        };
        self.counters.hello_sent += 1;
        self.broadcast(now, AodvMessage::Rrep(hello), 1, out);
    }

    fn broadcast(&mut self, now: SimTime, msg: AodvMessage, ttl: u8, out: &mut Vec<AodvAction<P>>) {
        let max = self.p.jitter_max.as_nanos();
        let jitter = if max == 0 {
            Duration::ZERO
        } else {
            Duration::from_nanos(self.rng.gen_range(0..=max))
        };
        self.counters.control_bytes += u64::from(msg.wire_bytes());
        self.last_broadcast = Some(now);
        out.push(AodvAction::Broadcast { msg, ttl, jitter });
    }

    fn unicast(&mut self, next_hop: NodeAddr, msg: AodvMessage, ttl: u8, out: &mut Vec<AodvAction<P>>) {
        self.counters.control_bytes += u64::from(msg.wire_bytes());
        out.push(AodvAction::Unicast { next_hop, msg, ttl });
    }
}

impl From<DropCause> for super::DropCause {
    /// The network layer's drop causes: a full route buffer counts as a
    /// queue overflow, like a full interface queue.
    fn from(c: DropCause) -> super::DropCause {
        match c {
            DropCause::NoRoute => super::DropCause::NoRoute,
            DropCause::BufferFull => super::DropCause::QueueOverflow,
            DropCause::BufferTimeout => super::DropCause::BufferTimeout,
        }
    }
}
