//! AODV parameters. Defaults are the constants of RFC 3561 §10; the derived
//! ones (NET_TRAVERSAL_TIME, PATH_DISCOVERY_TIME, MY_ROUTE_TIMEOUT,
//! DELETE_PERIOD) follow the RFC's formulas unless given explicitly.

use crate::time::{Duration, Span, Unit};
use serde::{Deserialize, Serialize};

/// The `[routing.aodv]` table of a scenario. Times carry their unit in the key.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AodvConfig {
    /// ACTIVE_ROUTE_TIMEOUT (§10: 3000 ms).
    pub active_route_timeout_ms: f64,
    /// ALLOWED_HELLO_LOSS (§10: 2).
    pub allowed_hello_loss: u32,
    /// HELLO_INTERVAL (§10: 1000 ms).
    pub hello_interval_ms: f64,
    /// Send and use HELLO messages (§6.9). Off, as in most simulation studies
    /// that rely on link-layer failure detection (§6.10).
    pub hello_enabled: bool,
    /// NET_DIAMETER in hops (§10: 35).
    pub net_diameter: u32,
    /// NODE_TRAVERSAL_TIME (§10: 40 ms).
    pub node_traversal_time_ms: f64,
    /// NET_TRAVERSAL_TIME; default 2 * NODE_TRAVERSAL_TIME * NET_DIAMETER.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub net_traversal_time_ms: Option<f64>,
    /// PATH_DISCOVERY_TIME; default 2 * NET_TRAVERSAL_TIME.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_discovery_time_ms: Option<f64>,
    /// MY_ROUTE_TIMEOUT; default 2 * ACTIVE_ROUTE_TIMEOUT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub my_route_timeout_ms: Option<f64>,
    /// DELETE_PERIOD; default K * max(ACTIVE_ROUTE_TIMEOUT, HELLO_INTERVAL), K = 5.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delete_period_ms: Option<f64>,
    /// RREQ_RETRIES (§10: 2): further RREQs at TTL = NET_DIAMETER after the first.
    pub rreq_retries: u32,
    /// RREQ_RATELIMIT (§10: 10 per second); 0 disables the limit.
    pub rreq_ratelimit_per_s: u32,
    /// RERR_RATELIMIT (§10: 10 per second); 0 disables the limit.
    pub rerr_ratelimit_per_s: u32,
    /// TIMEOUT_BUFFER (§10: 2).
    pub timeout_buffer: u32,
    /// TTL_START (§10: 1).
    pub ttl_start: u32,
    /// TTL_INCREMENT (§10: 2).
    pub ttl_increment: u32,
    /// TTL_THRESHOLD (§10: 7).
    pub ttl_threshold: u32,
    /// Set the D flag in this node's RREQs: only the destination may answer (§5.1).
    pub destination_only: bool,
    /// Set the G flag in this node's RREQs: an intermediate that answers also
    /// sends a gratuitous RREP to the destination (§6.6.3).
    pub gratuitous_rrep: bool,
    /// Repair a broken route at the node upstream of the break (§6.12).
    /// Off by default, as the RFC leaves it optional.
    pub local_repair: bool,
    /// LOCAL_ADD_TTL (§10: 2).
    pub local_add_ttl: u32,
    /// MAX_REPAIR_TTL in hops; default 0.3 * NET_DIAMETER, rounded down.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_repair_ttl: Option<u32>,
    /// Upper bound of the uniform delay before every broadcast (RREQ, RERR,
    /// HELLO), as ns-2 and ns-3 do to desynchronise rebroadcasts (10 ms).
    pub broadcast_jitter_ms: f64,
    /// Packets waiting for a route, all destinations together (ns-2: 64).
    pub buffer_capacity_pkts: u32,
    /// How long a packet may wait for a route (ns-2: 30 s).
    pub buffer_timeout_s: f64,
}

impl Default for AodvConfig {
    fn default() -> Self {
        AodvConfig {
            active_route_timeout_ms: 3000.0,
            allowed_hello_loss: 2,
            hello_interval_ms: 1000.0,
            hello_enabled: false,
            net_diameter: 35,
            node_traversal_time_ms: 40.0,
            net_traversal_time_ms: None,
            path_discovery_time_ms: None,
            my_route_timeout_ms: None,
            delete_period_ms: None,
            rreq_retries: 2,
            rreq_ratelimit_per_s: 10,
            rerr_ratelimit_per_s: 10,
            timeout_buffer: 2,
            ttl_start: 1,
            ttl_increment: 2,
            ttl_threshold: 7,
            destination_only: false,
            gratuitous_rrep: false,
            local_repair: false,
            local_add_ttl: 2,
            max_repair_ttl: None,
            broadcast_jitter_ms: 10.0,
            buffer_capacity_pkts: 64,
            buffer_timeout_s: 30.0,
        }
    }
}

/// Longest time any parameter may take (about 11.6 days), so that sums of
/// times never approach `u64` nanoseconds.
const MAX_MS: u64 = 1_000_000_000;
const DELETE_PERIOD_K: u64 = 5;

fn key(k: &str) -> String {
    format!("routing.aodv.{k}")
}

fn check_int(k: &str, v: u32, lo: u32, hi: u32) -> Result<(), String> {
    if v < lo || v > hi {
        return Err(format!("{} = {v} is out of range: allowed {lo}..={hi}", key(k)));
    }
    Ok(())
}

/// Every time goes through the one time validator: positive times are at
/// least 1 µs (HELLO_INTERVAL is a period; 0 ns would stop the clock), and
/// none exceeds `max_ms`.
fn check_time(k: &str, v: f64, zero_ok: bool, max_ms: u64, unit: Unit) -> Result<(), String> {
    let span = if zero_ok { Span::NON_NEGATIVE } else { Span::POSITIVE };
    span.at_most(Duration::from_millis(max_ms))
        .check(&key(k), v, unit)
        .map(|_| ())
}

fn ms(v: f64) -> Duration {
    Duration::from_nanos((v * 1e6).round() as u64)
}

impl AodvConfig {
    /// Checks every key; the message names the key, its value and what is allowed.
    pub fn validate(&self) -> Result<(), String> {
        let ms = Unit::Millis;
        check_time(
            "active_route_timeout_ms",
            self.active_route_timeout_ms,
            false,
            MAX_MS,
            ms,
        )?;
        check_int("allowed_hello_loss", self.allowed_hello_loss, 1, 1000)?;
        check_time("hello_interval_ms", self.hello_interval_ms, false, MAX_MS, ms)?;
        check_int("net_diameter", self.net_diameter, 1, 255)?;
        check_time(
            "node_traversal_time_ms",
            self.node_traversal_time_ms,
            false,
            1_000_000,
            ms,
        )?;
        for (k, v) in [
            ("net_traversal_time_ms", self.net_traversal_time_ms),
            ("path_discovery_time_ms", self.path_discovery_time_ms),
            ("my_route_timeout_ms", self.my_route_timeout_ms),
            ("delete_period_ms", self.delete_period_ms),
        ] {
            if let Some(v) = v {
                check_time(k, v, false, MAX_MS, ms)?;
            }
        }
        check_int("rreq_retries", self.rreq_retries, 0, 30)?;
        check_int("rreq_ratelimit_per_s", self.rreq_ratelimit_per_s, 0, 1_000_000)?;
        check_int("rerr_ratelimit_per_s", self.rerr_ratelimit_per_s, 0, 1_000_000)?;
        check_int("timeout_buffer", self.timeout_buffer, 0, 255)?;
        check_int("ttl_start", self.ttl_start, 1, self.net_diameter)?;
        check_int("ttl_increment", self.ttl_increment, 1, 255)?;
        check_int("ttl_threshold", self.ttl_threshold, self.ttl_start, self.net_diameter)?;
        check_int("local_add_ttl", self.local_add_ttl, 0, 255)?;
        if let Some(v) = self.max_repair_ttl {
            check_int("max_repair_ttl", v, 1, self.net_diameter)?;
        }
        check_time("broadcast_jitter_ms", self.broadcast_jitter_ms, true, 1_000_000, ms)?;
        check_int("buffer_capacity_pkts", self.buffer_capacity_pkts, 1, 1_000_000)?;
        check_time(
            "buffer_timeout_s",
            self.buffer_timeout_s,
            false,
            1_000_000_000,
            Unit::Seconds,
        )?;
        Ok(())
    }

    pub(super) fn params(&self) -> Params {
        let active_route_timeout = ms(self.active_route_timeout_ms);
        let hello_interval = ms(self.hello_interval_ms);
        let node_traversal_time = ms(self.node_traversal_time_ms);
        let net_traversal_time = self
            .net_traversal_time_ms
            .map(ms)
            .unwrap_or(node_traversal_time.mul(2 * u64::from(self.net_diameter)));
        Params {
            active_route_timeout,
            my_route_timeout: self.my_route_timeout_ms.map(ms).unwrap_or(active_route_timeout.mul(2)),
            node_traversal_time,
            net_traversal_time,
            path_discovery_time: self.path_discovery_time_ms.map(ms).unwrap_or(net_traversal_time.mul(2)),
            delete_period: self
                .delete_period_ms
                .map(ms)
                .unwrap_or(active_route_timeout.max(hello_interval).mul(DELETE_PERIOD_K)),
            hello_enabled: self.hello_enabled,
            hello_interval,
            allowed_hello_loss: u64::from(self.allowed_hello_loss),
            net_diameter: self.net_diameter.min(255) as u8,
            ttl_start: self.ttl_start.min(255) as u8,
            ttl_increment: self.ttl_increment.min(255) as u8,
            ttl_threshold: self.ttl_threshold.min(255) as u8,
            timeout_buffer: u64::from(self.timeout_buffer),
            rreq_retries: self.rreq_retries,
            rreq_ratelimit: self.rreq_ratelimit_per_s,
            rerr_ratelimit: self.rerr_ratelimit_per_s,
            destination_only: self.destination_only,
            gratuitous_rrep: self.gratuitous_rrep,
            local_repair: self.local_repair,
            local_add_ttl: self.local_add_ttl.min(255) as u8,
            max_repair_ttl: self.max_repair_ttl.unwrap_or(self.net_diameter * 3 / 10).min(255) as u8,
            jitter_max: ms(self.broadcast_jitter_ms),
            buffer_capacity: self.buffer_capacity_pkts as usize,
            buffer_timeout: ms(self.buffer_timeout_s * 1000.0),
        }
    }
}

/// The configuration in integer time, computed once.
#[derive(Clone, Debug)]
pub(super) struct Params {
    pub active_route_timeout: Duration,
    pub my_route_timeout: Duration,
    pub node_traversal_time: Duration,
    pub net_traversal_time: Duration,
    pub path_discovery_time: Duration,
    pub delete_period: Duration,
    pub hello_enabled: bool,
    pub hello_interval: Duration,
    pub allowed_hello_loss: u64,
    pub net_diameter: u8,
    pub ttl_start: u8,
    pub ttl_increment: u8,
    pub ttl_threshold: u8,
    pub timeout_buffer: u64,
    pub rreq_retries: u32,
    pub rreq_ratelimit: u32,
    pub rerr_ratelimit: u32,
    pub destination_only: bool,
    pub gratuitous_rrep: bool,
    pub local_repair: bool,
    pub local_add_ttl: u8,
    pub max_repair_ttl: u8,
    pub jitter_max: Duration,
    pub buffer_capacity: usize,
    pub buffer_timeout: Duration,
}

impl Params {
    /// RING_TRAVERSAL_TIME = 2 * NODE_TRAVERSAL_TIME * (TTL_VALUE + TIMEOUT_BUFFER) (§10).
    pub fn ring_traversal_time(&self, ttl: u8) -> Duration {
        self.node_traversal_time.mul(2 * (u64::from(ttl) + self.timeout_buffer))
    }

    /// ALLOWED_HELLO_LOSS * HELLO_INTERVAL: how long a neighbour's HELLO vouches for the link (§6.9).
    pub fn hello_lifetime(&self) -> Duration {
        self.hello_interval.mul(self.allowed_hello_loss)
    }

    /// The TTL after `ttl` in the expanding ring search (§6.4): add
    /// TTL_INCREMENT; beyond TTL_THRESHOLD use NET_DIAMETER.
    pub fn next_ring_ttl(&self, ttl: u32) -> u8 {
        if ttl > u32::from(self.ttl_threshold) {
            self.net_diameter
        } else {
            ttl.min(u32::from(self.net_diameter)) as u8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_rfc_constants() {
        let c = AodvConfig::default();
        assert!(c.validate().is_ok());
        let p = c.params();
        assert_eq!(p.active_route_timeout, Duration::from_millis(3000));
        assert_eq!(p.my_route_timeout, Duration::from_millis(6000));
        assert_eq!(p.net_traversal_time, Duration::from_millis(2800));
        assert_eq!(p.path_discovery_time, Duration::from_millis(5600));
        assert_eq!(p.delete_period, Duration::from_millis(15000));
        assert_eq!(p.ring_traversal_time(1), Duration::from_millis(240));
        assert_eq!(p.ring_traversal_time(7), Duration::from_millis(720));
        assert_eq!(p.buffer_timeout, Duration::from_millis(30_000));
        assert_eq!(p.jitter_max, Duration::from_millis(10));
        assert_eq!(p.hello_lifetime(), Duration::from_millis(2000));
        assert!(!p.local_repair);
        assert_eq!((p.local_add_ttl, p.max_repair_ttl), (2, 10));
    }

    #[test]
    fn ring_ttls_jump_to_net_diameter_past_the_threshold() {
        let p = AodvConfig::default().params();
        assert_eq!(p.next_ring_ttl(3), 3);
        assert_eq!(p.next_ring_ttl(7), 7);
        assert_eq!(p.next_ring_ttl(9), 35);
    }

    #[test]
    fn parses_toml_with_integers_for_times_and_rejects_unknown_keys() {
        let c: AodvConfig =
            toml::from_str("active_route_timeout_ms = 5000\nttl_start = 3\nhello_enabled = true").unwrap();
        assert_eq!(c.active_route_timeout_ms, 5000.0);
        assert_eq!(c.ttl_start, 3);
        assert!(c.hello_enabled);
        assert_eq!(c.net_diameter, 35);
        let e = toml::from_str::<AodvConfig>("ttl_strat = 3").unwrap_err();
        assert!(e.to_string().contains("ttl_strat"), "{e}");
        // Serialised and read back, a configuration is unchanged.
        let back: AodvConfig = toml::from_str(&toml::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn validation_names_key_value_and_range() {
        let c = AodvConfig {
            ttl_start: 0,
            ..AodvConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert!(e.contains("routing.aodv.ttl_start = 0"), "{e}");
        assert!(e.contains("1..=35"), "{e}");

        let c = AodvConfig {
            ttl_threshold: 40,
            ..AodvConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert!(e.contains("routing.aodv.ttl_threshold = 40"), "{e}");

        let c = AodvConfig {
            node_traversal_time_ms: f64::NAN,
            ..AodvConfig::default()
        };
        assert!(c.validate().unwrap_err().contains("node_traversal_time_ms"));

        let c = AodvConfig {
            delete_period_ms: Some(-1.0),
            ..AodvConfig::default()
        };
        assert!(c.validate().unwrap_err().contains("delete_period_ms = -1"));

        // A HELLO interval that rounds to 0 ns would stop the clock.
        let c = AodvConfig {
            hello_interval_ms: 1e-7,
            ..AodvConfig::default()
        };
        let e = c.validate().unwrap_err();
        assert!(
            e.starts_with("routing.aodv.hello_interval_ms = 1e-7: rounds to 0 ns"),
            "{e}"
        );

        let c = AodvConfig {
            broadcast_jitter_ms: 0.0,
            ..AodvConfig::default()
        };
        assert!(c.validate().is_ok());
    }
}
