//! `platform`: which simulator's rules a scenario runs under.
//!
//! `"standard"` (the default) follows IEEE 802.11-2012 and the RFCs.
//! `"ns2"` is the platform four of the five papers ran: ns-2.35's defaults
//! (`tcl/lib/ns-default.tcl`) replace manetfair's for every key the file
//! does not set, and the `[ns2]` rules, each a departure of ns-2.35's
//! 802.11 and TCP from the standard, are switched on. Each rule is a key of
//! its own, so that one can be switched off to see what it does
//! (docs/models.md lists each with the ns-2.35 source line it reproduces).

use crate::names::named;
use serde::{Deserialize, Serialize};

/// `platform`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Platform {
    /// IEEE 802.11-2012, RFC 5681/6582/6298: manetfair's own model.
    #[default]
    Standard,
    /// ns-2.35's defaults and rules.
    Ns2,
}
named!(Platform, "a platform", [Platform::Standard => "standard", Platform::Ns2 => "ns2"]);

impl Platform {
    /// Whether this is the default (`"standard"`), left out of the
    /// canonical form so that the results store keys of standard runs stay
    /// as they were.
    pub fn is_standard(&self) -> bool {
        *self == Platform::Standard
    }
}

/// The `[ns2]` table: ns-2.35's departures from 802.11 and from RFC 5681,
/// each off on the standard platform and on under `platform = "ns2"`
/// (`arp` excepted: an artefact, on only when asked).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ns2Rules {
    /// The addressee of an RTS sends the CTS only if it is idle SIFS after
    /// the RTS: not receiving or sensing a frame, not transmitting, its NAV
    /// clear (`mac-802_11.cc` `check_pktCTRL` :941 and `is_idle` :445-455).
    pub cts_if_idle: bool,
    /// A weaker frame that starts during a reception and is captured out
    /// sets the NAV to EIFS plus that frame's duration (`capture` :555).
    pub capture_nav: bool,
    /// A frame that arrives while the station transmits locks its receiver,
    /// in error, beyond the end of the transmission; EIFS follows. One that
    /// ends during the transmission is dropped silently (`recv` :1594,
    /// `recv_timer` :1645).
    pub lock_through_tx: bool,
    /// EIFS is a NAV set at the end of the erroneous frame (`recv_timer`
    /// `set_nav(EIFS)`), so that DIFS follows it (`navHandler` :781) and no
    /// RTS is answered during it.
    pub eifs_nav: bool,
    /// The data frame's MAC header carries a fourth address: 34 bytes with
    /// the FCS instead of 28 (`mac-802_11.h` :193-202, `hdr_mac802_11`).
    pub four_address_header: bool,
    /// Packet sizes as ns-2's agents make them: a UDP agent's packet counts
    /// its payload alone, and AODV adds a 20-byte IP header at the source to
    /// every packet but TCP's (`aodv.cc` :575-583), whose agent already
    /// counts 40 bytes of TCP/IP header (`tcpip_base_hdr_size_`): UDP is 8
    /// bytes shorter than the standard's, TCP the same.
    pub ip_header_per_agent: bool,
    /// An RTO sets ssthresh to half of min(cwnd, window) in whole packets,
    /// at least 2, on every expiry, with cwnd taken without NewReno's
    /// inflation (`tcp.cc` `timeout` :1912, `slowdown` :1241-1330,
    /// `windowd` :904; `tcp-newreno.cc` keeps the inflation in `dupwnd_`).
    pub rto_ssthresh_window: bool,
    /// ns-2's ARP (`mac/arp.cc`, `net::arp`): one packet held per
    /// unresolved next hop, a request repeated only when a new packet
    /// arrives. An artefact, off even under `platform = "ns2"` unless set.
    pub arp: bool,
}

impl Ns2Rules {
    /// Every rule off (the standard platform).
    pub fn is_default(&self) -> bool {
        *self == Ns2Rules::default()
    }
}

/// ns-2.35's defaults for the keys manetfair has, as a scenario file would
/// set them (`tcl/lib/ns-default.tcl`; the radio thresholds of
/// `Phy/WirelessPhy` give 250 m decode and 550 m carrier sense under two-ray
/// ground). Merged under the user's file: a key the file sets wins.
pub const NS2_DEFAULTS: &str = r#"
[ns2]
cts_if_idle = true
capture_nav = true
lock_through_tx = true
eifs_nav = true
four_address_header = true
ip_header_per_agent = true
rto_ssthresh_window = true

[radio]
data_rate_mbps = 1.0          # Mac/802_11 dataRate_ 1Mb
basic_rate_mbps = 1.0         # Mac/802_11 basicRate_ 1Mb
tx_range_m = 250.0            # RXThresh_ 3.652e-10 W at Pt_ 0.28183815 W
cs_range_m = 550.0            # CSThresh_ 1.559e-11 W
capture_threshold_db = 10.0   # CPThresh_ 10
propagation = "two-ray-ground"
reception = "threshold"
lock_on_sensed = true

[mac]
rts_threshold_bytes = 0       # RTSThreshold_ 0
short_retry_limit = 7         # ShortRetryLimit_ 7
long_retry_limit = 4          # LongRetryLimit_ 4
queue_capacity_pkts = 50      # Queue/DropTail/PriQueue, ifqlen 50
slot_us = 20                  # SlotTime_ 20 us
sifs_us = 10                  # SIFS_ 10 us
cw_min = 31                   # CWMin_ 31
cw_max = 1023                 # CWMax_ 1023
eifs_after_sensed = true      # frames below RXThresh_ reach the MAC in error

[routing.aodv]                # ns-2.35 aodv/aodv.h
active_route_timeout_ms = 10000   # ACTIVE_ROUTE_TIMEOUT 10 s
my_route_timeout_ms = 10000       # MY_ROUTE_TIMEOUT 10 s
node_traversal_time_ms = 30       # NODE_TRAVERSAL_TIME 0.03 s
net_diameter = 30                 # NETWORK_DIAMETER
timeout_buffer = 0                # 2 x TTL x NODE_TRAVERSAL_TIME per ring
ttl_start = 5                     # TTL_START
rreq_retries = 3                  # RREQ_RETRIES
path_discovery_time_ms = 6000     # BCAST_ID_SAVE 6 s
rreq_ratelimit_per_s = 0          # no rate limit
rerr_ratelimit_per_s = 0
local_repair = true               # AODV_LOCAL_REPAIR

[tcp]
max_window_pkts = 20          # Agent/TCP window_ 20
initial_cwnd_pkts = 2         # windowInit_ 2
min_rto_s = 0.2               # minrto_ 0.2
initial_rto_s = 3.0           # rtxcur_init_ 3.0
max_rto_s = 60.0              # maxrto_ 60
clock_granularity_s = 0.01    # tcpTick_ 0.01
delayed_ack = false           # Agent/TCPSink acknowledges every segment
dupack_threshold = 3          # numdupacks_ 3

[tcp.mtcp]
cw_source = "ns2-unbounded"   # M-TCP's CW is ns-2's cwnd_, uncapped (maxcwnd_ 0)
"#;

/// Fills `doc` (a scenario file as a JSON value) with the platform's
/// defaults for every key it does not set.
pub fn fill_defaults(doc: &mut serde_json::Value, platform: Platform) {
    if platform == Platform::Ns2 {
        let defaults: toml::Table = NS2_DEFAULTS.parse().expect("the ns-2 defaults are TOML");
        let defaults = serde_json::to_value(defaults).expect("TOML values convert to JSON");
        merge_under(doc, &defaults);
    }
}

/// Adds to `doc` every key of `defaults` that `doc` lacks, table by table.
fn merge_under(doc: &mut serde_json::Value, defaults: &serde_json::Value) {
    let (Some(doc), Some(defaults)) = (doc.as_object_mut(), defaults.as_object()) else {
        return;
    };
    for (key, value) in defaults {
        match doc.get_mut(key) {
            Some(mine) if mine.is_object() && value.is_object() => merge_under(mine, value),
            Some(_) => {}
            None => {
                doc.insert(key.clone(), value.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_file_wins_over_the_defaults_table_by_table() {
        let mut doc = json!({"tcp": {"max_window_pkts": 8}, "ns2": {"cts_if_idle": false}, "duration_s": 1.0});
        fill_defaults(&mut doc, Platform::Ns2);
        assert_eq!(doc["tcp"]["max_window_pkts"], 8);
        assert_eq!(doc["tcp"]["min_rto_s"], 0.2);
        assert_eq!(doc["ns2"]["cts_if_idle"], false);
        assert_eq!(doc["ns2"]["capture_nav"], true);
        assert_eq!(doc["radio"]["data_rate_mbps"], 1.0);
        assert_eq!(doc["duration_s"], 1.0);
    }

    #[test]
    fn the_standard_platform_adds_nothing() {
        let mut doc = json!({"duration_s": 1.0});
        fill_defaults(&mut doc, Platform::Standard);
        assert_eq!(doc, json!({"duration_s": 1.0}));
    }

    #[test]
    fn every_default_is_a_key_of_the_file() {
        let mut doc = json!({"duration_s": 1.0, "topology": {"kind": "chain", "nodes": 2, "spacing_m": 200.0}});
        fill_defaults(&mut doc, Platform::Ns2);
        let file: super::super::ScenarioFile = serde_json::from_value(doc).expect("the defaults parse");
        assert!(file.ns2.cts_if_idle && !file.ns2.is_default());
        assert!(!file.tcp.delayed_ack);
        assert_eq!(file.tcp.mtcp.cw_source, crate::transport::tcp::CwSource::Ns2Unbounded);
    }
}
