//! Random waypoint (Johnson and Maltz): pause, pick a destination uniformly
//! in the area and a speed uniformly in [speed_min, speed_max], travel there
//! in a straight line, pause again. The legs are drawn from the node's own
//! stream up to the end of the run, so a trajectory is a pure function of
//! (seed, node).

use super::Trajectory;
use crate::phy::channel::Position;
use crate::time::{Duration, SimTime};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

/// The model's parameters, those of ns-2's `setdest`.
#[derive(Clone, Debug, PartialEq)]
pub struct RandomWaypoint {
    /// Area width (x), metres; destinations are uniform in the area.
    pub width_m: f64,
    /// Area height (y), metres.
    pub height_m: f64,
    /// Slowest leg speed, m/s; positive (the scenario refuses 0), since at 0
    /// the average speed decays over the run (Yoon, Liu and Noble, INFOCOM
    /// 2003).
    pub speed_min_mps: f64,
    /// Fastest leg speed, m/s.
    pub speed_max_mps: f64,
    /// Pause before every leg, the first included.
    pub pause: Duration,
}

impl RandomWaypoint {
    /// The legs from `start` until the first arrival at or after `until`,
    /// drawn from `rng` (the node's `Purpose::Mobility` stream).
    pub fn trajectory(&self, start: Position, until: SimTime, rng: &mut Pcg64Mcg) -> Trajectory {
        let mut pts = vec![(SimTime::ZERO, start)];
        let (mut t, mut here) = (SimTime::ZERO, start);
        while t < until {
            // Pause where the node stands, then one leg.
            t += self.pause;
            pts.push((t, here));
            let dest = Position {
                x: rng.gen::<f64>() * self.width_m,
                y: rng.gen::<f64>() * self.height_m,
            };
            let speed = if self.speed_max_mps > self.speed_min_mps {
                rng.gen_range(self.speed_min_mps..=self.speed_max_mps)
            } else {
                self.speed_max_mps
            };
            let travel = Duration::from_secs_f64(here.distance(&dest) / speed).max(Duration(1));
            t += travel;
            pts.push((t, dest));
            here = dest;
        }
        Trajectory::path(pts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{stream, Purpose};

    #[test]
    fn stays_inside_and_respects_speeds_and_pauses() {
        let rw = RandomWaypoint {
            width_m: 1000.0,
            height_m: 500.0,
            speed_min_mps: 1.0,
            speed_max_mps: 10.0,
            pause: Duration::from_secs_f64(5.0),
        };
        let mut rng = stream(7, 3, Purpose::Mobility);
        let tr = rw.trajectory(Position { x: 10.0, y: 10.0 }, SimTime::from_secs_f64(3600.0), &mut rng);
        let pts = tr.points();
        assert!(pts.len() > 20);
        for (i, w) in pts.windows(2).enumerate() {
            let (t0, p0) = w[0];
            let (t1, p1) = w[1];
            assert!((0.0..=1000.0).contains(&p1.x) && (0.0..=500.0).contains(&p1.y));
            let dt = (t1 - t0).as_secs_f64();
            if i % 2 == 0 {
                // A pause: the node stands still for exactly the pause time.
                assert_eq!(p0, p1);
                assert!((dt - 5.0).abs() < 1e-9);
            } else if p0 != p1 {
                let v = p0.distance(&p1) / dt;
                assert!((1.0 - 1e-6..=10.0 + 1e-6).contains(&v), "speed {v}");
            }
        }
        // Positions in between stay inside too.
        for k in 0..3600 {
            let q = tr.position_at(SimTime::from_secs_f64(k as f64 + 0.5));
            assert!((0.0..=1000.0).contains(&q.x) && (0.0..=500.0).contains(&q.y));
        }
    }
}
