//! Neighborhood RED (Xu, Gerla, Qi, Shu, MobiCom 2003, §5): RED applied to
//! the distributed queue of a node's neighborhood. Three parts, each a
//! state machine without I/O: detection from radio-state times (`ncd`),
//! notification (`ncn`), and the distributed drop (`dnpd`). `Nred` is one
//! node's agent combining them; the simulator feeds it radio edges, timer
//! ticks and notifications and carries out what it returns.
//! docs/nred.md lists every choice the paper leaves open.

pub mod dnpd;
pub mod ncd;
pub mod ncn;

use crate::time::{Duration, Num, SimTime, Span, Unit};
use dnpd::Dnpd;
use ncd::{IdleMeter, Ncd, RadioTimes};
use ncn::{calculate_pb, may_notify, Blocked, NcnInputs, NcnStore};
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// Size of an NCN packet at the network layer: a 20-byte IP header and
/// ⟨packetType (1), reserved (1), lifetime in ms (2), normalizedP_b (4)⟩.
pub const NCN_BYTES: u32 = 28;

/// The `[nred]` table, keys named as in the paper (W and C also accept
/// lowercase w and c). Defaults: §7 (w_q 0.2, min_th 100, max_th 240,
/// max_p 0.14) and §6.1/§7.2 (T_interval 100 ms, lifetime 2 s).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct NredConfig {
    /// min_th of the neighborhood queue, packets (§5.3).
    pub min_th: f64,
    /// max_th, packets.
    pub max_th: f64,
    /// max_p: the drop probability at max_th.
    pub max_p: f64,
    /// w_q: the weight of the average's update.
    pub w_q: f64,
    /// T_interval: how often radio-state times are read (§5.1).
    pub t_interval_s: f64,
    /// T_NCN: how often Algorithm 5.1 runs (not given; lifetime / 2).
    pub t_ncn_s: f64,
    /// Lifetime carried in each NCN packet (§5.2: at least 2 × T_NCN).
    pub lifetime_s: f64,
    /// Channel bandwidth W, bit/s.
    #[serde(rename = "W", alias = "w")]
    pub w_bps: f64,
    /// Average packet size C, bits: W/C ≈ 244 makes a saturated channel's
    /// index about the paper's observed 240 (§6.2).
    #[serde(rename = "C", alias = "c")]
    pub c_bits: f64,
    /// Condition (iii): a node is suffering in contention when
    /// avg_tx + avg_rx is below this (same units as min_th).
    pub suffer_th: f64,
    /// Condition (ii): a node that forwarded or received a flow's packet
    /// within this time (or runs an open transport connection) is on a path.
    pub path_timeout_s: f64,
    /// Neighbours (nodes whose RTS or DATA this node decoded) are
    /// forgotten after this long; NCN is unicast to one of them.
    pub neighbor_timeout_s: f64,
    /// Which received packets the incoming side of Algorithm 5.2 sees:
    /// "all" (every data packet received from a neighbour, §5.3) or
    /// "forwarding" (only those this node forwards).
    pub incoming: Incoming,
}

/// `nred.incoming`: which received packets Algorithm 5.2's incoming side sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Incoming {
    /// Every data packet received from a neighbour (§5.3).
    All,
    /// Only the packets this node forwards.
    Forwarding,
}
crate::names::named!(Incoming, "an incoming-packet filter", [
    Incoming::All => "all",
    Incoming::Forwarding => "forwarding",
]);

impl Default for NredConfig {
    fn default() -> Self {
        NredConfig {
            min_th: 100.0,
            max_th: 240.0,
            max_p: 0.14,
            w_q: 0.2,
            t_interval_s: 0.1,
            t_ncn_s: 1.0,
            lifetime_s: 2.0,
            w_bps: 2e6,
            c_bits: 8192.0,
            suffer_th: 50.0,
            path_timeout_s: 3.0,
            neighbor_timeout_s: 5.0,
            incoming: Incoming::All,
        }
    }
}

impl NredConfig {
    /// Checks the values; the message starts with the offending key. Times
    /// go through the one time validator ([`Span`]): T_interval and T_NCN
    /// are periods of repeating ticks, so a value rounding to 0 ns would
    /// stop simulated time.
    pub fn validate(&self) -> Result<(), String> {
        crate::net::red::validate_red_params(self.min_th, self.max_th, self.max_p, self.w_q)?;
        let s = Unit::Seconds;
        Span::POSITIVE.check("t_interval_s", self.t_interval_s, s)?;
        Span::POSITIVE.check("t_ncn_s", self.t_ncn_s, s)?;
        // The NCN packet carries the lifetime in 16 bits of ms.
        Span::POSITIVE
            .at_most(Duration::from_millis(65_000))
            .check("lifetime_s", self.lifetime_s, s)
            .map_err(|e| format!("{e} (the NCN packet carries it in 16 bits of ms)"))?;
        Span::POSITIVE.check("path_timeout_s", self.path_timeout_s, s)?;
        Span::POSITIVE.check("neighbor_timeout_s", self.neighbor_timeout_s, s)?;
        for (k, v) in [("W", self.w_bps), ("C", self.c_bits)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(format!("{k} = {}: must be a positive number", Num(v)));
            }
        }
        if !(self.suffer_th.is_finite() && self.suffer_th >= 0.0) {
            return Err(format!("suffer_th = {}: must be a number >= 0", Num(self.suffer_th)));
        }
        Ok(())
    }
}

/// A notification to send: unicast to `to`, overheard by the others.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NcnOut {
    /// The neighbour addressed.
    pub to: u32,
    /// normalizedP_b (§5.2).
    pub normalized_pb: f64,
    /// How long receivers apply it.
    pub lifetime: Duration,
}

/// Why a T_NCN tick sent nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quiet {
    /// One of conditions (i)-(iv) failed.
    Blocked(Blocked),
    /// All passed, but no neighbour is known to address the packet to.
    NoNeighbor,
}

/// Counters for the run summary.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NredStats {
    /// Notifications sent.
    pub ncn_sent: u64,
    /// Of those, notifications of a neighborhood at or above max_th
    /// (normalizedP_b = 1: neighbours drop every packet for the lifetime).
    pub ncn_saturated: u64,
    /// Notifications received.
    pub ncn_heard: u64,
    /// Ticks blocked by each of conditions (i)-(iv), in `Blocked::ALL` order.
    pub blocked: [u64; 4],
    /// Notifications that passed (i)-(iv) but found no known neighbour.
    pub no_neighbor: u64,
    /// Own packets dropped before the queue (Algorithm 5.2).
    pub drops_outgoing: u64,
    /// Packets from neighbours dropped on arrival.
    pub drops_incoming: u64,
}

/// One node's NRED agent.
#[derive(Clone, Debug)]
pub struct Nred {
    cfg: NredConfig,
    ncd: Ncd,
    meter: IdleMeter,
    rx_own: Duration,
    store: NcnStore,
    dnpd: Dnpd,
    last_flow_packet: Option<SimTime>,
    /// Known neighbours and when each was last heard, by node id.
    neighbors: Vec<(u32, SimTime)>,
    rng: Pcg64Mcg,
    /// The agent's counters.
    pub stats: NredStats,
    /// The last tick's p_b and normalizedP_b.
    pub pb: f64,
    /// The last tick's normalizedP_b.
    pub normalized_pb: f64,
}

impl Nred {
    /// An agent with `cfg`, drawing its drops from `rng`.
    pub fn new(cfg: NredConfig, rng: Pcg64Mcg) -> Self {
        let ncd = Ncd::new(cfg.w_q, cfg.w_bps, cfg.c_bits);
        Nred {
            cfg,
            ncd,
            meter: IdleMeter::default(),
            rx_own: Duration::ZERO,
            store: NcnStore::default(),
            dnpd: Dnpd::default(),
            last_flow_packet: None,
            neighbors: Vec::new(),
            rng,
            stats: NredStats::default(),
            pb: 0.0,
            normalized_pb: 0.0,
        }
    }

    /// The agent's options.
    pub fn config(&self) -> &NredConfig {
        &self.cfg
    }

    /// T_interval: how often radio-state times are read.
    pub fn t_interval(&self) -> Duration {
        Duration::from_secs_f64(self.cfg.t_interval_s)
    }

    /// T_NCN: how often the notification decision runs.
    pub fn t_ncn(&self) -> Duration {
        Duration::from_secs_f64(self.cfg.t_ncn_s)
    }

    /// The estimator's state (avg, avg_tx, avg_rx and the last indices).
    pub fn ncd(&self) -> &Ncd {
        &self.ncd
    }

    /// The normalizedP_b this node's drops follow at `now`.
    pub fn in_force(&self, now: SimTime) -> f64 {
        self.store.current(now)
    }

    // ---- radio observations ---------------------------------------------

    /// The medium turned busy; `nav_total` is the NAV's busy time so far.
    pub fn handle_medium_busy(&mut self, now: SimTime, nav_total: Duration) {
        self.meter.medium_busy(now, nav_total);
    }

    /// The medium turned idle; `nav_total` is the NAV's busy time so far.
    pub fn handle_medium_idle(&mut self, now: SimTime, nav_total: Duration) {
        self.meter.medium_idle(now, nav_total);
    }

    /// A frame addressed to this node (or broadcast) was received: its airtime is receiving time.
    pub fn handle_rx_airtime(&mut self, airtime: Duration) {
        self.rx_own += airtime;
    }

    /// An RTS or DATA frame from `from` was decoded: `from` is a neighbour.
    pub fn handle_heard(&mut self, now: SimTime, from: u32) {
        match self.neighbors.binary_search_by_key(&from, |&(n, _)| n) {
            Ok(i) => self.neighbors[i].1 = now,
            Err(i) => self.neighbors.insert(i, (from, now)),
        }
    }

    /// This node sent, forwarded or received a packet of a flow.
    pub fn handle_flow_packet(&mut self, now: SimTime) {
        self.last_flow_packet = Some(now);
    }

    // ---- timers -----------------------------------------------------------

    /// Every T_interval: NCD's sample. `tx_total` and `nav_total` are the
    /// radio's cumulative transmitting time and the NAV's busy time.
    pub fn handle_interval(&mut self, now: SimTime, tx_total: Duration, nav_total: Duration) {
        let t = RadioTimes {
            tx: tx_total,
            rx: self.rx_own,
            idle: self.meter.idle_time(now, nav_total),
        };
        self.ncd.sample(now, t);
    }

    /// Every T_NCN: Algorithm 5.1 and conditions (i)-(iv). `endpoint` says
    /// whether a transport connection of this node is open.
    pub fn handle_ncn_timer(&mut self, now: SimTime, endpoint: bool) -> Result<NcnOut, Quiet> {
        let (pb, norm) = calculate_pb(self.ncd.avg, self.cfg.min_th, self.cfg.max_th, self.cfg.max_p);
        self.pb = pb;
        self.normalized_pb = norm;
        let recent = self
            .last_flow_packet
            .is_some_and(|t| now.saturating_since(t) < Duration::from_secs_f64(self.cfg.path_timeout_s));
        let x = NcnInputs {
            pb,
            normalized_pb: norm,
            on_path: endpoint || recent,
            own_share: self.ncd.avg_tx + self.ncd.avg_rx,
            suffer_th: self.cfg.suffer_th,
            heard_max: self.store.heard_max(now, self.t_ncn()),
        };
        if let Err(b) = may_notify(&x) {
            self.stats.blocked[b as usize] += 1;
            return Err(Quiet::Blocked(b));
        }
        let keep = Duration::from_secs_f64(self.cfg.neighbor_timeout_s);
        self.neighbors.retain(|&(_, t)| now.saturating_since(t) < keep);
        if self.neighbors.is_empty() {
            self.stats.no_neighbor += 1;
            return Err(Quiet::NoNeighbor);
        }
        let to = self.neighbors[self.rng.gen_range(0..self.neighbors.len())].0;
        self.stats.ncn_sent += 1;
        self.stats.ncn_saturated += (norm >= 1.0) as u64;
        Ok(NcnOut {
            to,
            normalized_pb: norm,
            lifetime: Duration::from_secs_f64(self.cfg.lifetime_s),
        })
    }

    /// An NCN from `from` was received or overheard.
    pub fn handle_ncn(&mut self, now: SimTime, from: u32, normalized_pb: f64, lifetime: Duration) {
        self.stats.ncn_heard += 1;
        self.store.handle_ncn(now, from, normalized_pb, lifetime);
    }

    // ---- drops --------------------------------------------------------------

    /// Algorithm 5.2 on a packet entering the outgoing queue.
    pub fn outgoing_drop(&mut self, now: SimTime) -> bool {
        let norm = self.store.current(now);
        let u = if norm > 0.0 { self.rng.gen::<f64>() } else { 1.0 };
        let d = self.dnpd.outgoing(norm, self.ncd.avg_tx, u);
        self.stats.drops_outgoing += d as u64;
        d
    }

    /// Algorithm 5.2 on the incoming side, for a packet received from a neighbour.
    pub fn incoming_drop(&mut self, now: SimTime, forwarding: bool) -> bool {
        if !forwarding && self.cfg.incoming == Incoming::Forwarding {
            return false;
        }
        let norm = self.store.current(now);
        let u = if norm > 0.0 { self.rng.gen::<f64>() } else { 1.0 };
        let d = self.dnpd.incoming(norm, self.ncd.avg_rx, u);
        self.stats.drops_incoming += d as u64;
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, Purpose};

    fn agent() -> Nred {
        Nred::new(NredConfig::default(), stream(1, 0, Purpose::Scheme))
    }

    fn ms(x: u64) -> SimTime {
        SimTime::ZERO + Duration::from_millis(x)
    }

    /// Drives the agent with a medium that is busy `busy_ms` of every
    /// 100 ms (none of it this node's own traffic).
    fn load(a: &mut Nred, from_ms: u64, intervals: u64, busy_ms: u64) {
        for k in 0..intervals {
            let t0 = from_ms + 100 * k;
            a.handle_medium_busy(ms(t0), Duration::ZERO);
            a.handle_medium_idle(ms(t0 + busy_ms), Duration::ZERO);
            a.handle_interval(ms(t0 + 100), Duration::ZERO, Duration::ZERO);
        }
    }

    #[test]
    fn config_defaults_validate_and_names_follow_the_paper() {
        let c = NredConfig::default();
        assert!(c.validate().is_ok());
        let v = serde_json::to_value(&c).unwrap();
        assert_eq!(v["W"], 2e6);
        assert_eq!(v["C"], 8192.0);
        let lower: NredConfig = toml::from_str("w = 11e6\nc = 4000.0\nmax_p = 0.1").unwrap();
        assert_eq!((lower.w_bps, lower.c_bits, lower.max_p), (11e6, 4000.0, 0.1));
        let bad = NredConfig {
            max_th: 50.0,
            ..NredConfig::default()
        };
        assert!(bad.validate().unwrap_err().starts_with("max_th"));
    }

    #[test]
    fn a_congested_suffering_node_notifies_a_known_neighbour() {
        let mut a = agent();
        // 90% busy: q = 0.9 * 244.14 = 219.7; after 60 samples avg ≈ q.
        load(&mut a, 0, 60, 90);
        assert!((a.ncd().avg - 0.9 * 2e6 / 8192.0).abs() < 0.01);
        // Not on a path: blocked by (ii); then no neighbour known yet.
        assert_eq!(
            a.handle_ncn_timer(ms(6000), false),
            Err(Quiet::Blocked(Blocked::NotOnPath))
        );
        a.handle_flow_packet(ms(6000));
        assert_eq!(a.handle_ncn_timer(ms(6000), false), Err(Quiet::NoNeighbor));
        a.handle_heard(ms(6000), 4);
        let out = a.handle_ncn_timer(ms(6000), false).unwrap();
        assert_eq!(out.to, 4);
        let (pb, norm) = calculate_pb(a.ncd().avg, 100.0, 240.0, 0.14);
        assert!(pb > 0.1);
        assert_eq!(out.normalized_pb, norm);
        assert_eq!(out.lifetime, Duration::from_secs_f64(2.0));
    }

    #[test]
    fn a_node_with_a_large_own_share_stays_quiet() {
        let mut a = agent();
        // Busy 90 ms of each 100, all of it our own transmissions.
        let mut tx = Duration::ZERO;
        for k in 0..60u64 {
            let t0 = 100 * k;
            a.handle_medium_busy(ms(t0), Duration::ZERO);
            a.handle_medium_idle(ms(t0 + 90), Duration::ZERO);
            tx += Duration::from_millis(90);
            a.handle_interval(ms(t0 + 100), tx, Duration::ZERO);
        }
        a.handle_heard(ms(6000), 4);
        assert_eq!(
            a.handle_ncn_timer(ms(6000), true),
            Err(Quiet::Blocked(Blocked::NotSuffering))
        );
        assert_eq!(a.stats.blocked[Blocked::NotSuffering as usize], 1);
    }

    #[test]
    fn drops_follow_the_heard_notification_until_it_expires() {
        let mut a = agent();
        assert!(!(0..1000).any(|k| a.outgoing_drop(ms(k))));
        a.handle_ncn(ms(1000), 9, 1.0, Duration::from_secs_f64(2.0));
        assert!(a.outgoing_drop(ms(1500)));
        assert!(a.incoming_drop(ms(2999), true));
        assert!(!a.outgoing_drop(ms(3000)));
        assert_eq!(a.stats.drops_outgoing, 1);
        assert_eq!(a.stats.drops_incoming, 1);
    }
}
