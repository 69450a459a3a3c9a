//! Every kind of bad input gets a message naming the key, the bad value and
//! what is allowed.

use super::*;

const BASE: &str = r#"
duration_s = 10.0
[topology]
kind = "chain"
nodes = 3
spacing_m = 200.0
"#;

fn flow(extra: &str) -> String {
    format!("{BASE}\n[[flow]]\nsrc = 0\ndst = 2\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 100.0\n{extra}\n")
}

fn err(text: &str) -> ScenarioError {
    load(text, Format::Toml, None, None).expect_err("should be refused")
}

fn assert_err(text: &str, key: &str, words: &[&str]) {
    let e = err(text);
    assert_eq!(e.key, key, "{e}");
    for w in words {
        assert!(e.to_string().contains(w), "{e:?} lacks {w:?}");
    }
}

#[test]
fn a_good_file_loads_with_defaults_filled_in() {
    let sc = load(&flow(""), Format::Toml, None, None).unwrap();
    assert_eq!(sc.flows.len(), 1);
    assert_eq!(sc.queue_capacity, 50);
    let canon = sc.canonical_json();
    assert!(canon.contains("\"cs_range_m\":550.0"), "{canon}");
    // The canonical form loads back to the same scenario.
    assert_eq!(load(&canon, Format::Json, None, None).unwrap(), sc);
}

#[test]
fn not_toml() {
    let e = err("duration_s = = 3\n[topology");
    assert!(e.message.starts_with("not valid TOML"), "{e}");
}

#[test]
fn unknown_key_lists_what_is_allowed() {
    assert_err(
        &format!("{BASE}\n[mac]\nqueue_capacity = 5\n"),
        "mac.queue_capacity",
        &["queue_capacity_pkts", "line 9"],
    );
    assert_err(&format!("durations = 3\n{BASE}"), "durations", &["duration_s"]);
}

/// An unknown key's message names every allowed key, however many (serde's
/// list used to be cut at 200 characters, mid-word), and leads with the
/// nearest one when the key looks misspelt; a key far from all of them
/// gets the list alone.
#[test]
fn a_misspelt_key_gets_the_nearest_and_the_whole_list() {
    let e = err(&format!("{BASE}\n[mac]\nrts_treshold_bytes = 3000\n"));
    let text = e.to_string();
    assert!(text.contains("did you mean `rts_threshold_bytes`? Allowed: "), "{text}");
    for key in ["`cw_max`", "`ack_rate_mbps`", "`eifs_after_sensed`", "`quick_exchange`"] {
        assert!(text.contains(key), "{text} lacks {key}");
    }
    assert!(!text.contains("..."), "{text}");
    let far = err(&format!("{BASE}\n[mac]\nzzzzzzzz = 1\n")).to_string();
    assert!(far.contains("unknown field `zzzzzzzz`; allowed: `"), "{far}");
    assert!(!far.contains("did you mean"), "{far}");
    let kind = err(&BASE.replace("kind = \"chain\"", "kind = \"chian\"")).to_string();
    assert!(kind.contains("did you mean"), "{kind}");
}

#[test]
fn wrong_type() {
    assert_err(
        &BASE.replace("nodes = 3", "nodes = \"three\""),
        "topology.nodes",
        &["three"],
    );
}

#[test]
fn duration_must_be_positive() {
    assert_err(
        &BASE.replace("10.0", "-1.0"),
        "duration_s",
        &["-1", "negative", "1e-6 to 1e7 s"],
    );
    assert_err(&BASE.replace("10.0", "0.0"), "duration_s", &["positive"]);
}

#[test]
fn unknown_node_in_a_flow() {
    assert_err(&flow("").replace("dst = 2", "dst = 7"), "flow[0].dst", &["7", "0 to 2"]);
}

#[test]
fn src_equals_dst() {
    assert_err(&flow("").replace("dst = 2", "dst = 0"), "flow[0].dst", &["equals"]);
}

#[test]
fn flow_after_the_end() {
    assert_err(&flow("start_s = 12.0"), "flow[0].start_s", &["12", "duration_s = 10"]);
}

#[test]
fn cs_range_below_tx_range() {
    assert_err(
        &format!("{BASE}\n[radio]\ncs_range_m = 200.0\n"),
        "radio.cs_range_m",
        &["200", "tx_range_m"],
    );
}

#[test]
fn unreachable_destination() {
    let far = BASE.replace("spacing_m = 200.0", "spacing_m = 300.0");
    let text = format!("{far}\n[[flow]]\nsrc = 0\ndst = 2\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 1.0\n");
    assert_err(&text, "flow[0].dst", &["unreachable", "250"]);
}

#[test]
fn names_and_choices() {
    assert_err(
        &flow("").replace("\"udp\"", "\"tcp-vegas\""),
        "flow[0].transport",
        &["tcp-vegas", "tcp-newreno"],
    );
    assert_err(&flow("").replace("\"cbr\"", "\"ftp\""), "flow[0].app", &["ftp", "udp"]);
    assert_err(
        &format!("{BASE}\n[mac]\nqueue = \"fifo\"\n"),
        "mac.queue",
        &["fifo", "droptail"],
    );
    assert_err(
        &format!("{BASE}\n[radio]\ndata_rate_mbps = 54.0\n"),
        "radio.data_rate_mbps",
        &["54", "5.5"],
    );
    assert_err(
        &BASE.replace("\"chain\"", "\"ring\""),
        "topology.kind",
        &["ring", "grid"],
    );
    assert_err(
        &format!("{BASE}\n[routing]\nprotocol = \"olsr\"\n"),
        "routing.protocol",
        &["olsr", "static"],
    );
}

#[test]
fn topology_keys_per_kind() {
    assert_err(&BASE.replace("nodes = 3", "rows = 3"), "topology.rows", &["chain"]);
    assert_err(
        &BASE.replace("spacing_m = 200.0\n", ""),
        "topology.spacing_m",
        &["missing"],
    );
    let dup = "duration_s = 1.0\n[topology]\nkind = \"explicit\"\n[[node]]\nid = 1\nx_m = 0.0\ny_m = 0.0\n[[node]]\nid = 1\nx_m = 1.0\ny_m = 0.0\n";
    assert_err(dup, "node[1].id", &["unique"]);
}

#[test]
fn explicit_routes_are_checked() {
    assert_err(&flow("route = [0, 2]"), "flow[0].route", &["longer than", "250"]);
    assert_err(&flow("route = [0, 1]"), "flow[0].route", &["end at dst"]);
    assert!(load(&flow("route = [0, 1, 2]"), Format::Toml, None, None).is_ok());
}

#[test]
fn tcp_table_is_validated() {
    let t = format!("{BASE}\n[tcp]\nmax_window_pkts = 0\n");
    assert_err(&t, "tcp.max_window_pkts", &["0"]);
}

#[test]
fn overrides_apply_before_validation() {
    let sc = load(&flow(""), Format::Toml, Some(9), Some(20.0)).unwrap();
    assert_eq!((sc.seed, sc.duration), (9, SimTime::from_secs_f64(20.0)));
    assert!(load(&flow(""), Format::Toml, None, Some(-3.0)).is_err());
}

#[test]
fn queue_scheme_tables_are_checked_and_filled_in() {
    // Without the scheme its table stays out of the canonical form.
    let plain = load(&flow(""), Format::Toml, None, None).unwrap();
    assert!(!plain.canonical_json().contains("\"nred\""));
    let text = flow("[mac]\nqueue = \"nred\"\n[nred]\nw = 11e6\nmax_p = 0.1\n");
    let sc = load(&text, Format::Toml, None, None).unwrap();
    assert_eq!(sc.queue, QueueKind::Nred);
    assert_eq!((sc.nred.w_bps, sc.nred.max_p, sc.nred.min_th), (11e6, 0.1, 100.0));
    let canon = sc.canonical_json();
    assert!(canon.contains("\"W\":11000000.0"), "{canon}");
    assert_eq!(load(&canon, Format::Json, None, None).unwrap(), sc);
    let red = load(&flow("[mac]\nqueue = \"red\"\n"), Format::Toml, None, None).unwrap();
    assert_eq!(red.file.red, Some(crate::net::red::RedConfig::default()));
    assert_err(&flow("[red]\nmax_p = 1.5\n"), "red.max_p", &["1.5", "(0, 1]"]);
    assert_err(
        &flow("[nred]\nincoming = \"some\"\n"),
        "nred.incoming",
        &["\"all\"", "\"forwarding\""],
    );
    assert_err(
        &flow("[trace]\nneighborhood_node = 99\n"),
        "trace.neighborhood_node",
        &["99"],
    );
}

#[test]
fn large_random_fields_are_stored_in_spatial_order_with_ids_kept() {
    let text = "duration_s = 1.0\n[topology]\nkind = \"random\"\nnodes = 600\nwidth_m = 3000.0\nheight_m = 3000.0\n";
    let sc = load(text, Format::Toml, None, None).unwrap();
    let mut ids = sc.node_ids.clone();
    assert_ne!(
        ids,
        (0..600).collect::<Vec<i64>>(),
        "internal order differs from draw order"
    );
    ids.sort();
    assert_eq!(ids, (0..600).collect::<Vec<i64>>(), "every id once");
    // Same positions per id as a small field drawn from the same seed: the
    // first draws do not depend on the count.
    let small = load(&text.replace("600", "400"), Format::Toml, None, None).unwrap();
    for (k, &id) in sc.node_ids.iter().enumerate() {
        if id < 400 {
            assert_eq!(sc.positions[k], small.positions[id as usize]);
        }
    }
    // Consecutive internal indices are mostly near each other.
    let near = sc.positions.windows(2).filter(|w| w[0].distance(&w[1]) < 500.0).count();
    assert!(near > 450, "{near}");
}

// ---- hostile inputs (issue: nothing a user types can crash or hang a run) --

fn refused_fast(text: &str, key: &str, words: &[&str]) {
    let started = std::time::Instant::now();
    assert_err(text, key, words);
    let took = started.elapsed().as_secs_f64();
    assert!(took < 10.0, "refusing took {took} s");
}

#[test]
fn durations_beyond_the_bound_are_refused_before_anything_is_allocated() {
    // `duration_s = 1e9` passed `check` and then allocated 8 GB; 1e13 asked
    // for 147 GB; from 1.85e10 s on no time can even be represented.
    for d in ["1e9", "1e13", "1.85e10", "1e300", "inf", "nan"] {
        refused_fast(&BASE.replace("10.0", d), "duration_s", &["allowed: 1e-6 to 1e7 s"]);
    }
    assert_err(
        &BASE.replace("10.0", "1e13"),
        "duration_s",
        &["1e13", "above the longest allowed"],
    );
    let quiet = format!("{BASE}\n[trace]\nnode_series = false\n");
    let sc = load(&quiet, Format::Toml, None, Some(1e7)).unwrap();
    assert_eq!(sc.duration, SimTime(10_000_000 * 1_000_000_000));
}

#[test]
fn periods_that_round_to_zero_are_refused() {
    // Each of these looped forever at one instant of simulated time.
    for (table, key) in [
        ("nred", "t_interval_s"),
        ("nred", "t_ncn_s"),
        ("mobility", "update_interval_s"),
    ] {
        for v in ["1e-10", "1e-12"] {
            refused_fast(
                &format!("{BASE}\n[{table}]\n{key} = {v}\n"),
                &format!("{table}.{key}"),
                &[v, "rounds to 0 ns", "allowed: 1e-6 to 1e7 s"],
            );
        }
    }
    // Also with a huge T_interval beside it.
    refused_fast(
        &format!("{BASE}\n[nred]\nt_ncn_s = 1e-12\nt_interval_s = 1e300\n"),
        "nred.t_interval_s",
        &["1e300", "above the longest allowed"],
    );
    for v in ["1e-7", "1e-9"] {
        refused_fast(
            &format!("{BASE}\n[routing.aodv]\nhello_enabled = true\nhello_interval_ms = {v}\n"),
            "routing.aodv.hello_interval_ms",
            &[v, "rounds to 0 ns"],
        );
    }
    refused_fast(
        &format!("{BASE}\n[tcp]\ninitial_rto_s = 1e-10\nmax_rto_s = 1e-10\nmin_rto_s = 0.0\n"),
        "tcp.initial_rto_s",
        &["1e-10", "rounds to 0 ns"],
    );
    // A CBR gap must be at least 1 µs: 1000 B at 1e12 kbit/s is 8 ps.
    refused_fast(
        &flow("").replace("rate_kbps = 100.0", "rate_kbps = 1e12"),
        "flow[0].rate_kbps",
        &["1e12", "1 µs", "8e6 kbit/s"],
    );
    assert!(load(
        &flow("").replace("rate_kbps = 100.0", "rate_kbps = 8e6"),
        Format::Toml,
        None,
        None
    )
    .is_ok());
}

#[test]
fn check_refuses_runs_larger_than_the_memory_budget_without_building_them() {
    // Random waypoint at 1e9 m/s in a 1 m field: a leg per nanosecond. Faster
    // than light is refused as such; at light speed the legs are too many.
    let rw = "duration_s = 10.0\n[topology]\nkind = \"random\"\nnodes = 2\nwidth_m = 1.0\nheight_m = 1.0\n\
              [mobility.random_waypoint]\nspeed_max_mps = 1e9\n";
    refused_fast(rw, "mobility.random_waypoint.speed_max_mps", &["1e9", "3e8 m/s"]);
    refused_fast(
        &rw.replace("1e9", "3e8"),
        "mobility",
        &["trajectory points", "memory limit of 2.0 GiB"],
    );
    // 20,000 nodes in 1 m²: 4e8 pairs within carrier-sense range.
    let heap = "duration_s = 1.0\n[topology]\nkind = \"random\"\nnodes = 20000\nwidth_m = 1.0\nheight_m = 1.0\n";
    refused_fast(heap, "topology", &["pairs of nodes", "--max-memory"]);
    // A long run with every per-node series of a 100-node grid.
    let long = "duration_s = 1e7\n[topology]\nkind = \"grid\"\nrows = 10\ncols = 10\nspacing_m = 200.0\n";
    refused_fast(long, "duration_s", &["per-second series"]);
    // A larger budget lets the same file through.
    let opts = Options {
        max_memory_bytes: 1 << 42,
        ..Options::default()
    };
    assert!(load_with(heap.replace("20000", "3000").as_str(), Format::Toml, &opts).is_ok());
}

#[test]
fn mac_integers_are_bounded_without_overflow() {
    // `cw_min + 1` overflowed in debug builds.
    assert_err(
        &format!("{BASE}\n[mac]\ncw_min = 4294967295\n"),
        "mac.cw_min",
        &["4294967295", "2^k - 1"],
    );
    assert_err(
        &format!("{BASE}\n[mac]\ncw_max = 4294967295\n"),
        "mac.cw_max",
        &["4294967295"],
    );
    assert_err(
        &format!("{BASE}\n[mac]\nslot_us = 4294967295\n"),
        "mac.slot_us",
        &["1 to 1000000"],
    );
}

#[test]
fn aodv_table_is_checked_under_static_routing_too() {
    assert_err(
        &format!("{BASE}\n[routing.aodv]\nttl_start = 0\n"),
        "routing.aodv.ttl_start",
        &["0", "1..=35"],
    );
}

#[test]
fn nan_gets_the_key_the_value_and_the_range() {
    assert_err(
        &format!("{BASE}\n[nred]\nt_ncn_s = nan\n"),
        "nred.t_ncn_s",
        &["NaN", "allowed: 1e-6 to 1e7 s"],
    );
    assert_err(
        &format!("{BASE}\n[radio]\ntx_range_m = nan\n"),
        "radio.tx_range_m",
        &["NaN", "positive"],
    );
    assert_err(
        &flow("start_s = nan"),
        "flow[0].start_s",
        &["NaN", "0 or 1e-6 to 1e7 s"],
    );
}

#[test]
fn explicit_topologies_are_checked_in_linear_time_and_bounded() {
    // 200,000 nodes with the duplicate last: a quadratic scan took minutes.
    let mut file: ScenarioFile = parse_file(BASE, Format::Toml).unwrap();
    file.topology = file::TopologyFile {
        kind: TopologyKind::Explicit,
        ..Default::default()
    };
    file.nodes = (0..200_000)
        .map(|i| file::NodeFile {
            id: i,
            x_m: i as f64,
            y_m: 0.0,
        })
        .collect();
    file.nodes.last_mut().unwrap().id = 7;
    let started = std::time::Instant::now();
    let e = topology::build(&file).unwrap_err();
    assert_eq!(e.key, "node[199999].id", "{e}");
    assert!(started.elapsed().as_secs_f64() < 5.0);
    // The node limit of generated topologies holds for explicit ones.
    file.nodes = (0..topology::MAX_NODES as i64 + 1)
        .map(|i| file::NodeFile {
            id: i,
            x_m: 0.0,
            y_m: 0.0,
        })
        .collect();
    let e = topology::build(&file).unwrap_err();
    assert!(e.message.contains("2 to 1000000 [[node]] tables"), "{e}");
}

#[test]
fn ns2_movements_are_read_through_the_loader() {
    let text = format!("{BASE}\n[mobility]\nns2_file = \"moves.ns2\"\n");
    // Without a reader the path cannot be resolved.
    assert_err(&text, "mobility.ns2_file", &["moves.ns2", "not read"]);
    let read = |path: &str| -> std::result::Result<String, String> {
        assert_eq!(path, "moves.ns2");
        Ok("$node_(1) set X_ 200.0\n$ns_ at 1.0 \"$node_(1) setdest 200.0 100.0 10.0\"\n".into())
    };
    let opts = Options {
        read_file: Some(&read),
        ..Options::default()
    };
    let sc = load_with(&text, Format::Toml, &opts).unwrap();
    let t = sc.trajectories[1].as_ref().unwrap();
    assert_eq!(t.position_at(SimTime::from_secs_f64(6.0)).y, 50.0);
    let fail = |_: &str| -> std::result::Result<String, String> { Err("cannot read moves.ns2: no such file".into()) };
    let opts = Options {
        read_file: Some(&fail),
        ..Options::default()
    };
    let e = load_with(&text, Format::Toml, &opts).unwrap_err();
    assert_eq!(e.key, "mobility.ns2_file");
}

#[test]
fn per_rate_ranges_and_interference_range() {
    let text = format!(
        "{BASE}\n[radio]\ndata_rate_mbps = 11.0\ninterference_range_m = 700.0\n[radio.tx_range_by_rate_m]\n\"11\" = 30.0\n"
    );
    let sc = load(&text, Format::Toml, None, None).unwrap();
    assert_eq!(sc.radio.rate_range_m, [250.0, 250.0, 250.0, 30.0]);
    assert_eq!(sc.radio.interference_range_m, 700.0);
    assert_eq!(load(&sc.canonical_json(), Format::Json, None, None).unwrap(), sc);
    // A 200 m route hop at 11 Mbit/s cannot exist with an 11 Mbit/s range of 30 m.
    let route = format!("{text}\n[[flow]]\nsrc = 0\ndst = 2\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 1.0\n");
    assert_err(&route, "flow[0].dst", &["unreachable"]);
    assert_err(
        &format!("{BASE}\n[radio.tx_range_by_rate_m]\n\"54\" = 30.0\n"),
        "radio.tx_range_by_rate_m.\"54\"",
        &["54", "5.5"],
    );
    assert_err(
        &format!("{BASE}\n[radio.tx_range_by_rate_m]\n\"1\" = 600.0\n"),
        "radio.tx_range_by_rate_m.\"1\"",
        &["600", "cs_range_m = 550"],
    );
    assert_err(
        &format!("{BASE}\n[radio]\ninterference_range_m = 500.0\n"),
        "radio.interference_range_m",
        &["500", "cs_range_m = 550"],
    );
}

#[test]
fn deeply_nested_toml_is_refused_fast_with_a_short_message() {
    // A 100,000-level table header took 38 s in the Python parser.
    for text in [
        format!("[{}]\n", vec!["a"; 100_000].join(".")),
        format!("a = {}{}\n", "[".repeat(100_000), "]".repeat(100_000)),
        format!("a = {}1{}\n", "{b = ".repeat(10_000), "}".repeat(10_000)),
    ] {
        let started = std::time::Instant::now();
        let e = err(&text);
        assert!(started.elapsed().as_secs_f64() < 2.0);
        assert!(e.message.starts_with("not valid TOML"), "{e}");
        assert!(e.message.len() < 400, "{} characters", e.message.len());
    }
}

#[test]
fn waypoint_speeds_beyond_light_are_refused_not_a_panic() {
    // Found by the fuzz campaign: a range of speeds from 1e-300 to f64::MAX
    // panicked in the uniform draw ("range overflow").
    let text = "duration_s = 2.0\n[topology]\nkind = \"random\"\nnodes = 8\nwidth_m = 600.0\nheight_m = 600.0\n\
                [mobility.random_waypoint]\nspeed_max_mps = 1.7976931348623157e308\nspeed_min_mps = 1e-300\n";
    assert_err(
        text,
        "mobility.random_waypoint.speed_max_mps",
        &["1.7976931348623157e308", "3e8 m/s"],
    );
    assert!(load(&text.replace("1.7976931348623157e308", "1e3"), Format::Toml, None, None).is_ok());
}

#[test]
fn reception_model_keys() {
    let sinr = format!("{BASE}\n[radio]\nreception = \"sinr\"\n");
    let sc = load(&sinr, Format::Toml, None, None).unwrap();
    let canon = sc.canonical_json();
    assert!(canon.contains("\"reception\":\"sinr\""), "{canon}");
    assert!(canon.contains("\"preamble_detection_db\":4.0"), "{canon}");
    assert!(matches!(
        sc.radio.reception,
        crate::phy::reception::ReceptionModel::Sinr(_)
    ));
    assert_eq!(load(&canon, Format::Json, None, None).unwrap(), sc);
    // The default leaves the canonical form as it was.
    let plain = load(BASE, Format::Toml, None, None).unwrap();
    assert!(!plain.canonical_json().contains("reception"));
    assert_err(
        &format!("{BASE}\n[radio]\nreception = \"ber\"\n"),
        "radio.reception",
        &["ber", "threshold", "sinr"],
    );
    assert_err(
        &format!("{sinr}\n[radio.sinr]\nnoise_figure_db = -3.0\n"),
        "radio.sinr.noise_figure_db",
        &["-3"],
    );
    // At 1500 m a lone frame is below the noise floor plus 4 dB.
    assert_err(
        &format!("{BASE}\n[radio]\nreception = \"sinr\"\ntx_range_m = 1500.0\ncs_range_m = 1600.0\n"),
        "radio.tx_range_m",
        &["1500", "SNR", "preamble_detection_db = 4"],
    );
}
