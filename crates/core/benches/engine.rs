//! Criterion benchmarks: the event queue's schedule-and-pop throughput, and
//! whole scenarios (events per second, simulated seconds per wall second).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use manetfair_core::engine::EventQueue;
use manetfair_core::scenario::{load, Format};
use manetfair_core::sim::Simulator;
use manetfair_core::SimTime;

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn schedule_and_pop(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    const N: u64 = 100_000;
    g.throughput(Throughput::Elements(N));
    // The classic "hold" model: a steady population of pending events, each
    // pop followed by one schedule a pseudo-random delay later.
    for population in [1_000u32, 10_000, 100_000] {
        g.bench_function(format!("hold_{population}"), |b| {
            let mut q: EventQueue<u32> = EventQueue::new();
            let mut x: u64 = 88172645463325252;
            for i in 0..population {
                q.schedule(SimTime(xorshift(&mut x) % 1_000_000), i);
            }
            b.iter(|| {
                for _ in 0..N {
                    let (t, e) = q.pop().unwrap();
                    q.schedule(SimTime(t.0 + xorshift(&mut x) % 1_000_000), e);
                }
            });
        });
    }
    g.finish();
}

const CHAIN: &str = r#"
duration_s = 20.0
[topology]
kind = "chain"
nodes = 5
spacing_m = 200.0
[[flow]]
src = 0
dst = 4
transport = "tcp-newreno"
app = "ftp"
"#;

const GRID: &str = r#"
duration_s = 10.0
[topology]
kind = "grid"
rows = 10
cols = 10
spacing_m = 200.0
[[flow]]
src = 10
dst = 19
[[flow]]
src = 30
dst = 39
[[flow]]
src = 1
dst = 91
[[flow]]
src = 3
dst = 93
"#;

fn scenarios(c: &mut Criterion) {
    let mut g = c.benchmark_group("scenario");
    g.sample_size(10);
    for (name, text) in [("tcp_chain_4_hops_20s", CHAIN), ("tcp_grid_10x10_4_flows_10s", GRID)] {
        let sc = load(text, Format::Toml, None, None).expect("valid scenario");
        let mut probe = Simulator::new(sc.clone());
        probe.run();
        let events = probe.events();
        // Throughput is in events: criterion prints events per second.
        g.throughput(Throughput::Elements(events));
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut sim = Simulator::new(sc.clone());
                sim.run();
                sim.events()
            })
        });
    }
    g.finish();
}

criterion_group!(benches, schedule_and_pop, scenarios);
criterion_main!(benches);
