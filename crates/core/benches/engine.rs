//! Criterion benchmark of the event queue: schedule-and-pop throughput.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use manetfair_core::engine::EventQueue;
use manetfair_core::SimTime;

fn schedule_and_pop(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    const N: u64 = 100_000;
    g.throughput(Throughput::Elements(N));
    g.bench_function("hold_10k_schedule_pop", |b| {
        // The classic "hold" model: a steady population of pending events,
        // each pop followed by one schedule a pseudo-random delay later.
        let mut q: EventQueue<u32> = EventQueue::new();
        let mut x: u64 = 88172645463325252;
        for i in 0..10_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            q.schedule(SimTime(x % 1_000_000), i);
        }
        b.iter(|| {
            for _ in 0..N {
                let (t, e) = q.pop().unwrap();
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                q.schedule(SimTime(t.0 + x % 1_000_000), e);
            }
        });
    });
    g.finish();
}

criterion_group!(benches, schedule_and_pop);
criterion_main!(benches);
