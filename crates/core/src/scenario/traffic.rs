//! `[traffic.random_pairs]`: source-destination pairs and start times drawn
//! from the seed. Placement happens here from the seed, so only the core can
//! draw pairs that are connected in the field it placed; the random-field
//! experiments of Berger et al. §4.2 draw their connections this way (the
//! paper names neither its pairs nor their start times).
//!
//! The draw, from the scenario's own traffic stream, pair by pair: the
//! source uniformly among the free nodes that have another free node in
//! their connected component (every free node without `connected`), the
//! destination uniformly among the other free nodes of that component, then
//! the start uniformly in `start_s`. Nodes are taken in id order, so the
//! same seed and field give the same pairs whatever the internal order.

use super::file::{FlowFile, RandomPairsFile, ScenarioFile};
use super::{NodeIndex, Result, ScenarioError};
use crate::engine::{stream, Purpose};
use crate::time::Num;
use rand::Rng;
use std::collections::HashMap;

const KEY: &str = "traffic.random_pairs";

/// The generated flows, as `[[flow]]` tables with the file's node ids;
/// `component` labels each node (by internal index) with its connected
/// component of the transmission-range graph at time 0.
pub(super) fn random_pairs(file: &ScenarioFile, index: &NodeIndex<'_>, component: &[u32]) -> Result<Vec<FlowFile>> {
    let Some(rp) = file.traffic.as_ref().and_then(|t| t.random_pairs.as_ref()) else {
        return Ok(Vec::new());
    };
    let k = |s: &str| format!("{KEY}.{s}");
    let [lo, hi] = rp.start_s;
    if !(lo.is_finite() && hi.is_finite() && 0.0 <= lo && lo <= hi && hi < file.duration_s) {
        return Err(ScenarioError::new(
            k("start_s"),
            format!(
                "[{}, {}] must be [earliest, latest] with 0 <= earliest <= latest < duration_s = {}",
                Num(lo),
                Num(hi),
                Num(file.duration_s)
            ),
        ));
    }
    // The flow keys, once, before any draw.
    template(rp, hi).check(KEY, file.duration_s)?;
    let n = index.ids.len();
    let most = if rp.distinct_nodes { n / 2 } else { n * (n - 1) };
    if rp.count == 0 || rp.count as usize > most {
        let why = if rp.distinct_nodes {
            format!("{n} nodes make at most {most} pairs with distinct_nodes = true")
        } else {
            format!("{n} nodes make at most {most} ordered pairs")
        };
        return Err(ScenarioError::new(
            k("count"),
            format!("{} must be at least 1; {why}", rp.count),
        ));
    }
    let mut ids: Vec<i64> = index.ids.to_vec();
    ids.sort_unstable();
    let label = |id: i64| component[index.by_id[&id] as usize];
    let mut free = ids;
    // Free nodes per component, so that a draw costs O(nodes).
    let mut in_component: HashMap<u32, usize> = HashMap::new();
    for &id in &free {
        *in_component.entry(label(id)).or_default() += 1;
    }
    let mut rng = stream(file.seed, u64::MAX, Purpose::Traffic);
    let mut flows = Vec::with_capacity(rp.count as usize);
    for drawn in 0..rp.count {
        let sources: Vec<i64> = free
            .iter()
            .copied()
            .filter(|&id| !rp.connected || in_component[&label(id)] >= 2)
            .collect();
        if sources.is_empty() {
            return Err(ScenarioError::new(
                k("count"),
                format!(
                    "{} connected pairs of distinct nodes cannot be drawn from this field: after {drawn}, no free node has a free node in reach (radio.tx_range_m = {} m); lower count, or set distinct_nodes = false",
                    rp.count,
                    Num(file.radio.tx_range_m)
                ),
            ));
        }
        let src = sources[rng.gen_range(0..sources.len())];
        let dsts: Vec<i64> = free
            .iter()
            .copied()
            .filter(|&o| o != src && (!rp.connected || label(o) == label(src)))
            .collect();
        let dst = dsts[rng.gen_range(0..dsts.len())];
        let start = lo + rng.gen::<f64>() * (hi - lo);
        if rp.distinct_nodes {
            free.retain(|&id| id != src && id != dst);
            for id in [src, dst] {
                *in_component.get_mut(&label(id)).expect("counted") -= 1;
            }
        }
        flows.push(FlowFile {
            src,
            dst,
            start_s: start,
            ..template(rp, start)
        });
    }
    Ok(flows)
}

fn template(rp: &RandomPairsFile, start_s: f64) -> FlowFile {
    FlowFile {
        src: 0,
        dst: 0,
        transport: rp.transport.clone(),
        app: rp.app.clone(),
        packet_bytes: rp.packet_bytes,
        start_s,
        stop_s: rp.stop_s,
        rate_kbps: rp.rate_kbps,
        route: None,
        route_changes: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{load, Format, Scenario, ScenarioError};
    use crate::phy::channel::Channel;
    use proptest::prelude::*;

    /// The paper's random static field (§4.2): 100 nodes in 2500 m × 1000 m.
    fn field(pairs: &str) -> String {
        format!(
            "duration_s = 50.0\n[topology]\nkind = \"random\"\nnodes = 100\nwidth_m = 2500.0\nheight_m = 1000.0\n\
             [traffic.random_pairs]\n{pairs}\n"
        )
    }

    fn load_seed(text: &str, seed: u64) -> Result<Scenario, ScenarioError> {
        load(text, Format::Toml, Some(seed), None)
    }

    fn pairs(sc: &Scenario) -> Vec<(u32, u32, u64)> {
        sc.flows.iter().map(|f| (f.src, f.dst, f.start.0)).collect()
    }

    fn assert_err(text: &str, key: &str, words: &[&str]) {
        let e = load_seed(text, 1).expect_err("should be refused");
        assert_eq!(e.key, key, "{e}");
        for w in words {
            assert!(e.to_string().contains(w), "{e} lacks {w:?}");
        }
    }

    #[test]
    fn pairs_follow_the_flow_tables_with_the_template_keys() {
        let flow = "[[flow]]\nsrc = 0\ndst = 1\ntransport = \"udp\"\napp = \"cbr\"\nrate_kbps = 10.0\n";
        let text = format!(
            "{}{flow}",
            field("count = 4\nstart_s = [1.0, 11.0]\nstop_s = 40.0\npacket_bytes = 512")
        );
        let sc = load_seed(&text, 3).unwrap();
        assert_eq!(sc.flows.len(), 5);
        // The [[flow]] table keeps number 0.
        assert_eq!(
            (
                sc.node_ids[sc.flows[0].src as usize],
                sc.node_ids[sc.flows[0].dst as usize]
            ),
            (0, 1)
        );
        for f in &sc.flows[1..] {
            assert_eq!(f.packet_bytes, 512);
            assert_eq!(f.stop.as_secs_f64(), 40.0);
            assert!(matches!(f.transport, super::super::Transport::Tcp(_)));
            assert!((1.0..=11.0).contains(&f.start.as_secs_f64()), "{:?}", f.start);
        }
        // The canonical form keeps the table and loads back to the same pairs.
        let again = load(&sc.canonical_json(), Format::Json, None, None).unwrap();
        assert_eq!(again, sc);
    }

    #[test]
    fn same_seed_same_pairs_other_seed_other_pairs() {
        let text = field("count = 12\nstart_s = [1.0, 11.0]");
        let a = pairs(&load_seed(&text, 7).unwrap());
        assert_eq!(a, pairs(&load_seed(&text, 7).unwrap()));
        assert_ne!(a, pairs(&load_seed(&text, 8).unwrap()));
        // Start times are spread over the window, not all at one end.
        let starts: Vec<u64> = a.iter().map(|p| p.2).collect();
        assert!(starts.iter().min() != starts.iter().max(), "{starts:?}");
    }

    #[test]
    fn a_lone_start_time_is_the_given_one() {
        let sc = load_seed(&field("count = 3\nstart_s = [2.5, 2.5]"), 1).unwrap();
        assert!(sc.flows.iter().all(|f| f.start.as_secs_f64() == 2.5));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]

        /// Every pair is joined by hops within the transmission range at
        /// time 0, no node ends two pairs, and src differs from dst.
        #[test]
        fn pairs_are_connected_and_distinct(seed in 1u64..10_000, count in 1u32..=25) {
            let sc = load_seed(&field(&format!("count = {count}\nstart_s = [1.0, 11.0]")), seed).unwrap();
            let channel = Channel::new(sc.positions.clone(), &sc.radio);
            let label = super::super::flow::components(&channel.rx_adjacency());
            let mut ends = Vec::new();
            for f in &sc.flows {
                prop_assert_ne!(f.src, f.dst);
                prop_assert_eq!(label[f.src as usize], label[f.dst as usize]);
                ends.extend([f.src, f.dst]);
            }
            prop_assert_eq!(ends.len(), 2 * count as usize);
            ends.sort_unstable();
            ends.dedup();
            prop_assert_eq!(ends.len(), 2 * count as usize);
        }
    }

    #[test]
    fn without_the_connectivity_rule_a_static_field_refuses_an_unreachable_pair() {
        // 40 nodes in 5 km × 5 km are mostly isolated: some seed draws a pair
        // without a path, and the message names the key that would fix it.
        let text =
            "duration_s = 10.0\n[topology]\nkind = \"random\"\nnodes = 40\nwidth_m = 5000.0\nheight_m = 5000.0\n\
                    [traffic.random_pairs]\ncount = 5\nconnected = false\n";
        let e = (1..20)
            .find_map(|s| load_seed(text, s).err())
            .expect("some seed draws an unreachable pair");
        assert_eq!(e.key, "traffic.random_pairs.connected", "{e}");
        assert!(e.to_string().contains("unreachable"), "{e}");
    }

    #[test]
    fn moving_nodes_take_pairs_without_the_check() {
        let text =
            "duration_s = 10.0\n[topology]\nkind = \"random\"\nnodes = 40\nwidth_m = 5000.0\nheight_m = 5000.0\n\
                    [mobility.random_waypoint]\nspeed_max_mps = 10.0\n\
                    [traffic.random_pairs]\ncount = 20\nconnected = false\n";
        assert!((1..10).all(|s| load_seed(text, s).is_ok()));
    }

    #[test]
    fn bad_tables_name_their_key() {
        assert_err(&field("count = 0"), "traffic.random_pairs.count", &["at least 1"]);
        assert_err(
            &field("count = 51"),
            "traffic.random_pairs.count",
            &["51", "at most 50"],
        );
        assert_err(
            &field("count = 2\nstart_s = [5.0, 1.0]"),
            "traffic.random_pairs.start_s",
            &["earliest <= latest"],
        );
        assert_err(
            &field("count = 2\nstart_s = [1.0, 50.0]"),
            "traffic.random_pairs.start_s",
            &["duration_s = 50"],
        );
        assert_err(
            &field("count = 2\ntransport = \"tcp-foo\""),
            "traffic.random_pairs.transport",
            &["tcp-foo", "udp"],
        );
        assert_err(
            &field("count = 2\ntransport = \"udp\""),
            "traffic.random_pairs.app",
            &["\"ftp\""],
        );
        assert_err(
            &field("count = 2\ncolour = 1"),
            "traffic.random_pairs.colour",
            &["connected"],
        );
        assert_err(&field("count = 2\nstart_s = 1.0"), "traffic.random_pairs.start_s", &[]);
        // A field too sparse for the pairs asked for.
        let sparse = "duration_s = 10.0\n[topology]\nkind = \"chain\"\nnodes = 6\nspacing_m = 300.0\n\
                      [traffic.random_pairs]\ncount = 1\n";
        assert_err(sparse, "traffic.random_pairs.count", &["cannot be drawn"]);
    }
}
