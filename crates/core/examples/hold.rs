//! The event queue under the "hold" model, for instruction counting
//! (`valgrind --tool=callgrind`), which is repeatable on a busy machine.

use manetfair_core::engine::EventQueue;
use manetfair_core::SimTime;

fn main() {
    let population: u32 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let ops: u64 = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut q: EventQueue<[u64; 3]> = EventQueue::new();
    let mut x: u64 = 88172645463325252;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for i in 0..population {
        q.schedule(SimTime(next() % 1_000_000), [i as u64; 3]);
    }
    let mut sum = 0u64;
    for _ in 0..ops {
        let (t, e) = q.pop().expect("population stays constant");
        sum = sum.wrapping_add(e[0]);
        q.schedule(SimTime(t.0 + next() % 1_000_000), e);
    }
    println!("{sum} {}", q.now().0);
}
