//! Hostile scenario files for `scenario::load`: a valid base scenario (one
//! of several shapes) with keys set to edge values, wrong types, tables
//! where numbers belong, and occasionally bytes cut or repeated. Shared by
//! the test that runs in CI (`tests/fuzz_scenario.rs`) and the long campaign
//! (`examples/fuzz_scenario.rs`).
//!
//! The property: `load` answers (a scenario or an error with a message)
//! within seconds (at most 10 s of CPU); a scenario it accepts, when small,
//! runs without a panic, simulated time advances (never 200,000 events at
//! one instant), and the packet ledger balances at the end.

#![allow(dead_code)]

use manetfair_core::scenario::{load, Format};
use manetfair_core::sim::{Advance, Simulator};
use proptest::prelude::*;
use std::time::Instant;

const BASES: &[&str] = &[
    // UDP over a chain.
    "duration_s = 2.0\n[topology]\nkind = \"chain\"\nnodes = 4\nspacing_m = 200.0\n\
     [[flow]]\nsrc = 0\ndst = 3\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 200.0\n",
    // TCP over a grid with RTS/CTS and RED.
    "duration_s = 2.0\n[mac]\nrts_threshold_bytes = 0\nqueue = \"red\"\n[topology]\nkind = \"grid\"\nrows = 3\ncols = 3\nspacing_m = 200.0\n\
     [[flow]]\nsrc = 0\ndst = 8\n[[flow]]\nsrc = 2\ndst = 6\ntransport = \"tcp-reno\"\n",
    // AODV in a random field with random waypoint.
    "duration_s = 2.0\n[routing]\nprotocol = \"aodv\"\n[routing.aodv]\nhello_enabled = true\n\
     [topology]\nkind = \"random\"\nnodes = 8\nwidth_m = 600.0\nheight_m = 600.0\n\
     [mobility]\nupdate_interval_s = 0.1\n[mobility.random_waypoint]\nspeed_max_mps = 20.0\npause_s = 0.5\n\
     [[flow]]\nsrc = 0\ndst = 5\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 100.0\n",
    // NRED on explicit nodes with a traced neighbourhood and HTTP flows.
    "duration_s = 2.0\n[mac]\nqueue = \"nred\"\n[nred]\nt_ncn_s = 0.5\n[topology]\nkind = \"explicit\"\n\
     [[node]]\nid = 1\nx_m = 0.0\ny_m = 0.0\n[[node]]\nid = 2\nx_m = 200.0\ny_m = 0.0\n[[node]]\nid = 3\nx_m = 400.0\ny_m = 0.0\n\
     [trace]\nneighborhood_node = 2\n[[flow]]\nsrc = 1\ndst = 3\napp = \"http\"\n",
    // Scripted and ns-2 mobility.
    "duration_s = 2.0\n[topology]\nkind = \"chain\"\nnodes = 3\nspacing_m = 200.0\n\
     [mobility]\nns2_movements = \"$node_(2) set X_ 400.0\\n$ns_ at 0.5 \\\"$node_(2) setdest 300.0 50.0 10.0\\\"\\n\"\n\
     [[mobility.node]]\nid = 0\npath = [[0.0, 0.0, 0.0], [1.0, 50.0, 0.0]]\n\
     [[flow]]\nsrc = 0\ndst = 2\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 50.0\n",
];

/// Every key a scenario may set, and the kind of value it takes.
#[derive(Clone, Copy, Debug)]
enum Kind {
    Time,
    Int,
    Real,
    Bool,
    Name(&'static [&'static str]),
    Nodes,
}

const KEYS: &[(&str, Kind)] = &[
    ("duration_s", Kind::Time),
    ("seed", Kind::Int),
    ("name", Kind::Name(&["x", ""])),
    ("radio.data_rate_mbps", Kind::Real),
    ("radio.basic_rate_mbps", Kind::Real),
    ("radio.tx_range_m", Kind::Real),
    ("radio.cs_range_m", Kind::Real),
    ("radio.interference_range_m", Kind::Real),
    ("radio.capture_threshold_db", Kind::Real),
    ("radio.lock_on_sensed", Kind::Bool),
    ("radio.propagation", Kind::Name(&["two-ray-ground", "friis"])),
    ("mac.rts_threshold_bytes", Kind::Int),
    ("mac.short_retry_limit", Kind::Int),
    ("mac.long_retry_limit", Kind::Int),
    ("mac.queue", Kind::Name(&["droptail", "red", "nred", "fifo"])),
    ("mac.queue_capacity_pkts", Kind::Int),
    ("mac.slot_us", Kind::Int),
    ("mac.sifs_us", Kind::Int),
    ("mac.cw_min", Kind::Int),
    ("mac.cw_max", Kind::Int),
    ("mac.ack_rate_mbps", Kind::Real),
    ("mac.eifs_after_sensed", Kind::Bool),
    ("routing.protocol", Kind::Name(&["static", "aodv", "olsr"])),
    ("routing.aodv.active_route_timeout_ms", Kind::Time),
    ("routing.aodv.hello_interval_ms", Kind::Time),
    ("routing.aodv.hello_enabled", Kind::Bool),
    ("routing.aodv.net_diameter", Kind::Int),
    ("routing.aodv.node_traversal_time_ms", Kind::Time),
    ("routing.aodv.rreq_retries", Kind::Int),
    ("routing.aodv.ttl_start", Kind::Int),
    ("routing.aodv.broadcast_jitter_ms", Kind::Time),
    ("routing.aodv.buffer_capacity_pkts", Kind::Int),
    ("routing.aodv.buffer_timeout_s", Kind::Time),
    ("routing.aodv.local_repair", Kind::Bool),
    (
        "topology.kind",
        Kind::Name(&["chain", "grid", "random", "explicit", "ring"]),
    ),
    ("topology.nodes", Kind::Int),
    ("topology.rows", Kind::Int),
    ("topology.cols", Kind::Int),
    ("topology.spacing_m", Kind::Real),
    ("topology.width_m", Kind::Real),
    ("topology.height_m", Kind::Real),
    ("flow.0.src", Kind::Int),
    ("flow.0.dst", Kind::Int),
    (
        "flow.0.transport",
        Kind::Name(&["udp", "tcp-newreno", "tcp-reno", "tcp-vegas"]),
    ),
    ("flow.0.app", Kind::Name(&["cbr", "ftp", "http", "voip"])),
    ("flow.0.packet_bytes", Kind::Int),
    ("flow.0.start_s", Kind::Time),
    ("flow.0.stop_s", Kind::Time),
    ("flow.0.rate_kbps", Kind::Real),
    ("flow.0.route", Kind::Nodes),
    ("tcp.initial_cwnd_pkts", Kind::Int),
    ("tcp.max_window_pkts", Kind::Int),
    ("tcp.min_rto_s", Kind::Time),
    ("tcp.initial_rto_s", Kind::Time),
    ("tcp.max_rto_s", Kind::Time),
    ("tcp.clock_granularity_s", Kind::Time),
    ("tcp.delayed_ack_timeout_s", Kind::Time),
    ("tcp.dupack_threshold", Kind::Int),
    ("onoff.object_size_mean_bytes", Kind::Real),
    ("onoff.object_size_shape", Kind::Real),
    ("onoff.object_size_max_bytes", Kind::Int),
    ("onoff.objects_per_page_mean", Kind::Real),
    ("onoff.think_time_mean_s", Kind::Time),
    ("mobility.update_interval_s", Kind::Time),
    ("mobility.random_waypoint.speed_max_mps", Kind::Real),
    ("mobility.random_waypoint.speed_min_mps", Kind::Real),
    ("mobility.random_waypoint.pause_s", Kind::Time),
    ("mobility.random_waypoint.width_m", Kind::Real),
    ("mobility.random_waypoint.nodes", Kind::Nodes),
    (
        "mobility.ns2_movements",
        Kind::Name(&["", "$node_(0) set X_ nan", "$ns_ at -1 \"$node_(0) setdest 1 1 1\""]),
    ),
    ("trace.node_series", Kind::Bool),
    ("trace.neighborhood_node", Kind::Int),
    ("red.min_th", Kind::Real),
    ("red.max_th", Kind::Real),
    ("red.max_p", Kind::Real),
    ("red.w_q", Kind::Real),
    ("red.pkt_time_s", Kind::Time),
    ("nred.t_interval_s", Kind::Time),
    ("nred.t_ncn_s", Kind::Time),
    ("nred.lifetime_s", Kind::Time),
    ("nred.W", Kind::Real),
    ("nred.incoming", Kind::Name(&["all", "forwarding", "some"])),
    ("colour", Kind::Bool),
];

/// Numbers at the edges of what the validators and the engine handle.
const EDGE_REALS: &[f64] = &[
    0.0,
    -0.0,
    -1.0,
    1e-300,
    1e-12,
    1e-10,
    1e-9,
    4e-7,
    1e-6,
    0.5,
    1.0,
    2.0,
    5.5,
    11.0,
    250.0,
    1e6,
    1e7,
    1.0000001e7,
    1e9,
    1.85e10,
    1e13,
    1e300,
    f64::MAX,
    f64::MIN_POSITIVE,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];
const EDGE_INTS: &[i64] = &[
    0,
    1,
    2,
    3,
    7,
    31,
    255,
    256,
    1023,
    65_535,
    1 << 20,
    1_000_000,
    1_000_001,
    u32::MAX as i64,
    u32::MAX as i64 + 1,
    i64::MAX,
    i64::MIN,
    -1,
];

/// A value of any TOML type, biased to the kind the key takes.
fn value(kind: Kind) -> BoxedStrategy<toml::Value> {
    use toml::Value as V;
    let edge_real = proptest::sample::select(EDGE_REALS).prop_map(V::Float);
    let any_real = any::<f64>().prop_map(V::Float);
    let edge_int = proptest::sample::select(EDGE_INTS).prop_map(V::Integer);
    let small_int = (0i64..40).prop_map(V::Integer);
    let wrong = prop_oneof![
        Just(V::String("x".into())),
        Just(V::Boolean(true)),
        Just(V::Array(vec![])),
        Just(V::Table(Default::default())),
        (1usize..200).prop_map(|depth| {
            let mut v = V::Integer(1);
            for _ in 0..depth {
                v = V::Array(vec![v]);
            }
            v
        }),
    ];
    match kind {
        Kind::Time | Kind::Real => prop_oneof![4 => edge_real, 2 => any_real, 1 => edge_int, 1 => wrong].boxed(),
        Kind::Int => prop_oneof![3 => edge_int, 3 => small_int, 1 => edge_real, 1 => wrong].boxed(),
        Kind::Bool => prop_oneof![3 => any::<bool>().prop_map(V::Boolean), 1 => wrong].boxed(),
        Kind::Name(names) => prop_oneof![
            4 => proptest::sample::select(names).prop_map(|s| V::String(s.to_string())),
            1 => "[a-z\\-]{0,12}".prop_map(V::String),
            1 => wrong
        ]
        .boxed(),
        Kind::Nodes => prop_oneof![
            3 => proptest::collection::vec(prop_oneof![small_int, edge_int], 0..6).prop_map(V::Array),
            1 => wrong
        ]
        .boxed(),
    }
}

/// Sets `path` (dotted; numbers index arrays) in `root`, creating tables.
fn set(root: &mut toml::Table, path: &str, v: toml::Value) {
    let parts: Vec<&str> = path.split('.').collect();
    let mut here = root;
    for (i, part) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        if let Some(next) = parts.get(i + 1).and_then(|n| n.parse::<usize>().ok()) {
            // An array of tables: index `next` of `part`.
            let arr = here
                .entry(part.to_string())
                .or_insert_with(|| toml::Value::Array(vec![]));
            let toml::Value::Array(items) = arr else { return };
            while items.len() <= next {
                items.push(toml::Value::Table(Default::default()));
            }
            let toml::Value::Table(t) = &mut items[next] else {
                return;
            };
            let rest: Vec<&str> = parts[i + 2..].to_vec();
            if rest.is_empty() {
                return;
            }
            return set(t, &rest.join("."), v);
        }
        if last {
            here.insert(part.to_string(), v);
            return;
        }
        let entry = here
            .entry(part.to_string())
            .or_insert_with(|| toml::Value::Table(Default::default()));
        let toml::Value::Table(t) = entry else { return };
        here = t;
    }
}

/// A hostile scenario file: a base with 1-4 keys set, as TOML text, with a
/// byte-level cut or repeat now and then.
pub fn scenario_text() -> impl Strategy<Value = String> {
    let edit = (0..KEYS.len()).prop_flat_map(|k| value(KEYS[k].1).prop_map(move |v| (k, v)));
    (
        0..BASES.len(),
        proptest::collection::vec(edit, 1..4),
        prop_oneof![8 => Just(None), 1 => (any::<usize>(), 1usize..20, any::<bool>()).prop_map(Some)],
    )
        .prop_map(|(b, edits, bytes)| {
            let mut t: toml::Table = BASES[b].parse().expect("bases are valid TOML");
            for (k, v) in edits {
                set(&mut t, KEYS[k].0, v);
            }
            let mut text = toml::to_string(&t).unwrap_or_else(|_| BASES[b].to_string());
            if let Some((at, len, repeat)) = bytes {
                let mut cut = at % (text.len() + 1);
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                let mut end = (cut + len).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                let piece = text[cut..end].to_string();
                if repeat {
                    text.insert_str(cut, &piece);
                } else {
                    text.replace_range(cut..end, "");
                }
            }
            text
        })
}

/// What one input did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    Refused,
    Ran,
    /// Accepted, but too large to run in a fuzz case.
    Accepted,
}

/// CPU seconds this thread has used (Linux; None elsewhere): on a loaded
/// machine, at the lowest priority, wall time says little about the work.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

/// Loads `text` and, when small, runs it; panics (the failure) on a panic
/// inside, a slow answer (10 s of CPU, or 120 s of wall time), time that
/// stands still, or an unbalanced ledger.
pub fn check(text: &str) -> Outcome {
    let started = Instant::now();
    let cpu = cpu_seconds();
    let loaded = load(text, Format::Toml, None, None);
    let took = started.elapsed().as_secs_f64();
    let cpu_took = cpu.zip(cpu_seconds()).map(|(a, b)| b - a).unwrap_or(took);
    assert!(
        cpu_took < 10.0 && took < 120.0,
        "load took {cpu_took:.2} s of CPU, {took:.2} s of wall time"
    );
    let sc = match loaded {
        Err(e) => {
            assert!(!e.message.is_empty(), "an error without a message");
            return Outcome::Refused;
        }
        Ok(sc) => sc,
    };
    if sc.estimate.bytes > 64 << 20 || sc.node_ids.len() > 2000 {
        return Outcome::Accepted;
    }
    let mut sim = Simulator::new(sc);
    let started = Instant::now();
    let mut before = sim.now();
    for _ in 0..20 {
        match sim.run_for(manetfair_core::SimTime::MAX, 200_000) {
            Advance::Done => {
                assert!(sim.ledger_balanced(), "the ledger does not balance");
                return Outcome::Ran;
            }
            _ => {
                assert!(
                    sim.now() > before,
                    "200,000 events at {} without time advancing",
                    sim.now()
                );
                before = sim.now();
            }
        }
        if started.elapsed().as_secs_f64() > 5.0 {
            break;
        }
    }
    Outcome::Ran
}
