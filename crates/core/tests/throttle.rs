//! Ingress throttling end to end: the spacing gives the rate it is set to,
//! the shares come out of the scenario, and the queue without shapers is
//! DropTail with local packets first.

use manetfair_core::scenario::{load, Format};
use manetfair_core::sim::run;

fn scenario(text: &str) -> manetfair_core::scenario::Scenario {
    load(text, Format::Toml, None, None).unwrap_or_else(|e| panic!("{e}"))
}

/// One TCP flow over one uncontended 2 Mbit/s hop, alone (φ = 1), with
/// Thr_max(1) = `thr` kbit/s: the source releases a 600-byte segment every
/// Δ = 4800 bit / r, so the payload rate is r.
fn one_hop(thr: f64, queue: &str) -> String {
    format!(
        r#"
duration_s = 60.0
[radio]
cs_range_m = 500.0
[mac]
rts_threshold_bytes = 3000
queue = "{queue}"
[tcp]
delayed_ack = false
[throttle]
thr_max_kbps = {{ 1 = {thr} }}
[topology]
kind = "chain"
nodes = 2
spacing_m = 126.0
[[flow]]
src = 0
dst = 1
packet_bytes = 600
"#
    )
}

#[test]
fn spacing_gives_the_rate_limit_within_one_percent() {
    for r in [150.0, 400.0, 800.0] {
        let (s, _) = run(scenario(&one_hop(r, "throttle")));
        let f = &s.flows[0];
        assert!(
            (f.throughput_kbps - r).abs() <= 0.01 * r,
            "rate {r}: measured {} kbit/s",
            f.throughput_kbps
        );
        assert!(s.ledger.balanced);
        let t = s.schemes.get("throttle").expect("throttle section");
        assert_eq!(t["flows"][0]["phi_exact"], "1");
        assert_eq!(t["shaping"], true);
        let delta = t["flows"][0]["delta_s"].as_f64().unwrap();
        assert!((delta - 4800.0 / (r * 1000.0)).abs() < 1e-9);
    }
}

#[test]
fn without_shaping_the_flow_runs_at_its_own_pace() {
    // The same flow unshaped (droptail, and throttle with enforce = false)
    // is far above the 150 kbit/s limit, and identical under both queues:
    // with one flow there is nothing local to put first.
    let (plain, _) = run(scenario(&one_hop(150.0, "droptail")));
    let open = one_hop(150.0, "throttle").replace("[throttle]\n", "[throttle]\nenforce = false\n");
    let (unshaped, _) = run(scenario(&open));
    assert!(
        plain.flows[0].throughput_kbps > 900.0,
        "{}",
        plain.flows[0].throughput_kbps
    );
    assert_eq!(plain.flows[0].throughput_kbps, unshaped.flows[0].throughput_kbps);
    assert_eq!(plain.events, unshaped.events);
    assert_eq!(plain.schemes.get("throttle").unwrap()["shaping"], false);
}

#[test]
fn a_flow_without_a_thr_max_entry_runs_unshaped_and_is_listed() {
    let text = one_hop(150.0, "throttle").replace("thr_max_kbps = { 1 = 150 }", "thr_max_kbps = { 2 = 150 }");
    let (s, _) = run(scenario(&text));
    let t = s.schemes.get("throttle").unwrap();
    assert_eq!(t["thr_max_missing"], serde_json::json!([1]));
    assert!(t["flows"][0]["rate_kbps"].is_null());
    assert!(s.flows[0].throughput_kbps > 900.0, "{}", s.flows[0].throughput_kbps);
}

/// Table 2's three flows from N1 (1, 2 and 3 hops on a 126 m chain): φ = 1/3
/// each, each shaped to Thr_max(h)/3 on its own logical queue at N1.
#[test]
fn three_flows_from_one_source_each_get_a_third() {
    let text = r#"
duration_s = 60.0
[radio]
cs_range_m = 500.0
[mac]
rts_threshold_bytes = 3000
queue = "throttle"
[tcp]
delayed_ack = false
[throttle]
thr_max_kbps = { 1 = 1044.0, 2 = 533.0, 3 = 360.0 }
[topology]
kind = "chain"
nodes = 4
spacing_m = 126.0
[[flow]]
src = 0
dst = 1
packet_bytes = 600
[[flow]]
src = 0
dst = 2
packet_bytes = 600
[[flow]]
src = 0
dst = 3
packet_bytes = 600
"#;
    let (s, _) = run(scenario(text));
    let t = s.schemes.get("throttle").unwrap();
    for (i, thr) in [1044.0, 533.0, 360.0].iter().enumerate() {
        assert_eq!(t["flows"][i]["phi_exact"], "1/3");
        let got = s.flows[i].throughput_kbps;
        // A cap, not a promise: at or below r, and not far below it here.
        assert!(got <= thr / 3.0 * 1.01 && got >= thr / 3.0 * 0.85, "flow {i}: {got}");
    }
    assert!(s.ledger.balanced);
}

fn mobile_radio(radio: &str, dist: f64) -> String {
    format!(
        r#"
duration_s = 5.0
[radio]
data_rate_mbps = 11.0
cs_range_m = 500.0
{radio}
[mac]
rts_threshold_bytes = 3000
[throttle]
[topology]
kind = "chain"
nodes = 2
spacing_m = {dist}
[[flow]]
src = 0
dst = 1
"#
    )
}

#[test]
fn the_osipov_profile_decodes_11_mbps_to_30_m_and_keeps_250_m_l_regions() {
    // 11 Mbit/s data decodes to 30 m only: a 40 m hop has no route.
    let err = load(
        &mobile_radio(r#"profile = "osipov-ranges""#, 40.0),
        Format::Toml,
        None,
        None,
    )
    .unwrap_err();
    assert_eq!(err.key, "flow[0].dst", "{err}");
    let sc = scenario(&mobile_radio(r#"profile = "osipov-ranges""#, 30.0));
    let r = sc.radio.rate_range_m;
    assert_eq!((r[0], r[3]), (250.0, 30.0));
    // The L-region is the 1 Mbit/s range the PHY gives, not the 30 m of data.
    let report = manetfair_core::net::throttle::static_report(&sc.throttle_input());
    assert_eq!(report.l_region_range_m, 250.0);
    // One range for every rate (ns-2.27's single RXThresh_): the L-region
    // shrinks with it unless set.
    let single = scenario(&mobile_radio("tx_range_m = 30.0", 30.0));
    assert_eq!(
        manetfair_core::net::throttle::static_report(&single.throttle_input()).l_region_range_m,
        30.0
    );
    let set = scenario(
        &mobile_radio("tx_range_m = 30.0", 30.0).replace("[throttle]", "[throttle]\nl_region_range_m = 250.0"),
    );
    assert_eq!(
        manetfair_core::net::throttle::static_report(&set.throttle_input()).l_region_range_m,
        250.0
    );
}

#[test]
fn the_sensitivity_profile_follows_the_card() {
    let sc = scenario(&mobile_radio(r#"profile = "sensitivity""#, 100.0));
    let r = sc.radio.rate_range_m;
    // ORiNOCO: 12 dB between 1 and 11 Mbit/s, power ~ d^-4 beyond 86 m.
    assert!((r[0] - 250.0).abs() < 1e-3 && (r[3] - 125.3).abs() < 0.1, "{r:?}");
    let bad = load(
        &mobile_radio("profile = \"sensitivity\"\ncard = \"wavelan\"", 100.0),
        Format::Toml,
        None,
        None,
    )
    .unwrap_err();
    assert_eq!(bad.key, "radio.card");
    assert!(bad.message.contains("orinoco"), "{}", bad.message);
    let both = load(
        &mobile_radio(
            "profile = \"osipov-ranges\"\n[radio.tx_range_by_rate_m]\n\"11\" = 30.0",
            30.0,
        ),
        Format::Toml,
        None,
        None,
    )
    .unwrap_err();
    assert_eq!(both.key, "radio.profile");
}
