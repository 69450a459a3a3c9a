//! Node mobility. Every model reduces to a trajectory: a piecewise-linear
//! list of (time, position) points, exact at every point and linear in
//! between. Scripted paths are given that way; scripted moves and ns-2
//! `setdest` files ("at t, head for (x, y) at v m/s") are turned into one;
//! random waypoint draws its legs from the seed up to the end of the run.

pub mod ns2;
pub mod random_waypoint;

use crate::phy::channel::Position;
use crate::time::SimTime;

/// Where a node is over the whole run, as ns-2's `setdest` moves it:
/// piecewise linear, so a position is one binary search and one
/// interpolation.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// (time, position), times strictly increasing; at least one point.
    points: Vec<(SimTime, Position)>,
}

impl Trajectory {
    /// A node that stands at `p` for the whole run.
    pub fn fixed(p: Position) -> Self {
        Trajectory {
            points: vec![(SimTime::ZERO, p)],
        }
    }

    /// A path through `points` (time-sorted). Before the first point the
    /// node stands at it; after the last it stays at the last.
    pub fn path(mut points: Vec<(SimTime, Position)>) -> Self {
        debug_assert!(!points.is_empty());
        points.dedup_by(|b, a| a.0 == b.0);
        Trajectory { points }
    }

    /// From `start`, at `t` head for `dest` at `speed` m/s; a later move
    /// replaces an unfinished one (ns-2 `setdest` semantics). Each leg ends
    /// by the next move's time at the latest, so a move only ever cuts the
    /// tail of the points built so far: n moves take O(n log n).
    pub fn moves(start: Position, moves: &[(SimTime, Position, f64)]) -> Self {
        let mut pts = vec![(SimTime::ZERO, start)];
        let mut sorted = moves.to_vec();
        sorted.sort_by_key(|m| m.0);
        for (i, &(t, dest, speed)) in sorted.iter().enumerate() {
            let here = position_in(&pts, t);
            // Cut the previous leg where this move begins.
            while pts.last().is_some_and(|(pt, _)| *pt >= t) {
                pts.pop();
            }
            pts.push((t, here));
            let d = here.distance(&dest);
            if d == 0.0 || speed <= 0.0 {
                continue;
            }
            let mut arrive = t + crate::time::Duration::from_secs_f64(d / speed);
            let mut to = dest;
            if let Some(&(next_t, _, _)) = sorted.get(i + 1) {
                if next_t < arrive {
                    let f = (next_t - t).as_secs_f64() / (arrive - t).as_secs_f64();
                    to = lerp(here, dest, f);
                    arrive = next_t;
                }
            }
            if arrive > t {
                pts.push((arrive, to));
            }
        }
        Trajectory::path(pts)
    }

    /// The (time, position) corners, times strictly increasing.
    pub fn points(&self) -> &[(SimTime, Position)] {
        &self.points
    }

    /// Whether the node moves at all.
    pub fn is_static(&self) -> bool {
        self.points.windows(2).all(|w| w[0].1 == w[1].1)
    }

    /// The last instant at which the node is in motion.
    pub fn last_motion(&self) -> SimTime {
        self.points.last().map(|p| p.0).unwrap_or(SimTime::ZERO)
    }

    /// The position at `t`, interpolated linearly between corners.
    pub fn position_at(&self, t: SimTime) -> Position {
        position_in(&self.points, t)
    }
}

/// Fastest speed of any mobility model: nothing moves faster than light, and
/// the bound keeps every range of speeds drawable.
pub const MAX_SPEED_MPS: f64 = 3e8;
/// Largest length or coordinate, metres: sums and squares of positions stay
/// finite, and no real field comes near it.
pub const MAX_METRES: f64 = 1e9;

/// The one bound of every length key (a range, a spacing, a radius): a
/// positive number of metres up to `MAX_METRES`, or `key = value: why` naming
/// the range.
pub fn check_length(key: &str, v: f64) -> Result<(), String> {
    if v.is_finite() && v > 0.0 && v <= MAX_METRES {
        Ok(())
    } else {
        Err(format!(
            "{key} = {}: must be a positive number of metres, at most {}",
            crate::time::Num(v),
            crate::time::Num(MAX_METRES)
        ))
    }
}

/// Where a node following the time-sorted `pts` is at `t`.
fn position_in(pts: &[(SimTime, Position)], t: SimTime) -> Position {
    let i = pts.partition_point(|(pt, _)| *pt <= t);
    if i == 0 {
        return pts[0].1;
    }
    if i == pts.len() {
        return pts[i - 1].1;
    }
    let (t0, p0) = pts[i - 1];
    let (t1, p1) = pts[i];
    let f = (t - t0).as_secs_f64() / (t1 - t0).as_secs_f64();
    lerp(p0, p1, f)
}

fn lerp(a: Position, b: Position, f: f64) -> Position {
    Position {
        x: a.x + (b.x - a.x) * f,
        y: a.y + (b.y - a.y) * f,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Position {
        Position { x, y }
    }
    fn s(x: f64) -> SimTime {
        SimTime::from_secs_f64(x)
    }

    #[test]
    fn path_is_exact_at_its_points_and_linear_between() {
        let tr = Trajectory::path(vec![
            (s(0.0), p(200.0, 600.0)),
            (s(20.0), p(200.0, 400.0)),
            (s(40.0), p(200.0, 600.0)),
        ]);
        assert_eq!(tr.position_at(s(0.0)), p(200.0, 600.0));
        assert_eq!(tr.position_at(s(20.0)), p(200.0, 400.0));
        assert_eq!(tr.position_at(s(10.0)), p(200.0, 500.0));
        assert_eq!(tr.position_at(s(30.0)), p(200.0, 500.0));
        assert_eq!(tr.position_at(s(99.0)), p(200.0, 600.0));
        assert!(!tr.is_static());
    }

    #[test]
    fn moves_follow_setdest_semantics() {
        // At 1 s head east at 10 m/s for 100 m; at 6 s (halfway) turn north.
        let tr = Trajectory::moves(
            p(0.0, 0.0),
            &[(s(1.0), p(100.0, 0.0), 10.0), (s(6.0), p(50.0, 100.0), 20.0)],
        );
        assert_eq!(tr.position_at(s(1.0)), p(0.0, 0.0));
        assert_eq!(tr.position_at(s(3.5)), p(25.0, 0.0));
        assert_eq!(tr.position_at(s(6.0)), p(50.0, 0.0));
        // 100 m north at 20 m/s: arrives at 11 s and stays.
        assert_eq!(tr.position_at(s(8.5)), p(50.0, 50.0));
        assert_eq!(tr.position_at(s(11.0)), p(50.0, 100.0));
        assert_eq!(tr.position_at(s(50.0)), p(50.0, 100.0));
    }

    #[test]
    fn many_moves_take_linear_time() {
        // 200,000 moves, each replaced by the next before it ends (east at
        // 1 m/s, one move per ms): a quadratic cut would take minutes.
        let moves: Vec<_> = (0..200_000u64)
            .map(|k| (SimTime(k * 1_000_000), p(1e6 + k as f64, 0.0), 1.0))
            .collect();
        let started = std::time::Instant::now();
        let tr = Trajectory::moves(p(0.0, 0.0), &moves);
        assert!(started.elapsed().as_secs_f64() < 5.0);
        assert!(tr.points().len() <= 200_002, "{}", tr.points().len());
        assert!((tr.position_at(s(100.0)).x - 100.0).abs() < 1e-6);
    }
}
