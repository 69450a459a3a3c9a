//! The hand-driven harness of the DCF's timing tests (`tests*.rs`): times
//! in literal microseconds, stations with their own backoff stream, the
//! timers a step armed and the frame it put on the air.

use super::*;
use crate::engine::{stream, Purpose};

/// `x` µs after the start of the timeline.
pub(super) fn us(x: u64) -> SimTime {
    SimTime(x * 1000)
}

/// Station `me` with `cfg`, its backoff drawn from the stream of (`seed`, `me`).
pub(super) fn station_with(me: u32, cfg: DcfConfig, seed: u64) -> Dcf {
    Dcf::new(me, cfg, stream(seed, me as u64, Purpose::Backoff))
}

/// The last time `t` was armed in `out`, with its generation.
pub(super) fn timer(out: &[MacAction], t: MacTimer) -> Option<(SimTime, u32)> {
    out.iter().rev().find_map(|a| match a {
        MacAction::SetTimer { timer, at, gen } if *timer == t => Some((*at, *gen)),
        _ => None,
    })
}

/// The frame put on the air in `out`, if any.
pub(super) fn on_air(out: &[MacAction]) -> Option<Frame> {
    out.iter().find_map(|a| match a {
        MacAction::Transmit(f) => Some(*f),
        _ => None,
    })
}

/// The frame put on the air in `out`; panics if there is none.
pub(super) fn transmitted(out: &[MacAction]) -> Frame {
    on_air(out).unwrap_or_else(|| panic!("nothing transmitted in {out:?}"))
}

/// Fires `t` at the time it was armed for; returns that time and what the
/// MAC did.
pub(super) fn fire(m: &mut Dcf, out: &[MacAction], t: MacTimer) -> (SimTime, Vec<MacAction>) {
    let (at, gen) = timer(out, t).unwrap_or_else(|| panic!("{t:?} not armed in {out:?}"));
    let mut o = Vec::new();
    m.handle_timer(at, t, gen, &mut o);
    (at, o)
}
