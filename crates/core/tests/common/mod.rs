//! Scenario builders shared by the whole-stack self-contention tests.

use manetfair_core::scenario::{load, Format, Scenario};

/// A random field with QE and FF on and `pairs` connected flows.
pub fn field(seed: u64, nodes: u32, side_m: u32, pairs: u32, tcp: bool, aodv: bool, duration_s: u32) -> Scenario {
    let traffic = if tcp {
        "transport = \"tcp-newreno\"\napp = \"ftp\"\n".to_string()
    } else {
        "transport = \"udp\"\napp = \"cbr\"\nrate_kbps = 400.0\n".to_string()
    };
    let routing = if aodv { "aodv" } else { "static" };
    let text = format!(
        "duration_s = {duration_s}.0\nseed = {seed}\n\
         [mac]\nrts_threshold_bytes = 0\n\
         [mac.quick_exchange]\nenabled = true\n\
         [mac.fast_forward]\nenabled = true\np = 0.75\n\
         [routing]\nprotocol = \"{routing}\"\n\
         [topology]\nkind = \"random\"\nnodes = {nodes}\nwidth_m = {side_m}.0\nheight_m = {side_m}.0\n\
         [traffic.random_pairs]\ncount = {pairs}\nstart_s = [0.5, 2.0]\n{traffic}"
    );
    load(&text, Format::Toml, None, None).expect("a valid field")
}

/// One TCP connection over a string of `hops` hops at 240 m with
/// quick-exchange.
pub fn chain(hops: u32, seed: u64, duration_s: u32) -> Scenario {
    let text = format!(
        "duration_s = {duration_s}.0\nseed = {seed}\n[mac]\nrts_threshold_bytes = 0\n\
         [mac.quick_exchange]\nenabled = true\n\
         [topology]\nkind = \"chain\"\nnodes = {}\nspacing_m = 240.0\n\
         [[flow]]\nsrc = 0\ndst = {hops}\nstart_s = 1.0\n",
        hops + 1
    );
    load(&text, Format::Toml, None, None).expect("a valid chain")
}
