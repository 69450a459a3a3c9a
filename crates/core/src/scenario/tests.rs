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
    assert_err(&BASE.replace("10.0", "-1.0"), "duration_s", &["-1", "positive"]);
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
