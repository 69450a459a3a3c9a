//! Resolves `[mobility]` into one trajectory per moving node.

use super::file::ScenarioFile;
use super::ScenarioError;
use crate::engine::{stream, Purpose};
use crate::mobility::random_waypoint::RandomWaypoint;
use crate::mobility::{ns2, Trajectory};
use crate::phy::channel::Position;
use crate::time::{Duration, SimTime};

type Result<T> = std::result::Result<T, ScenarioError>;

fn finite(key: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ScenarioError::new(key, format!("{v} must be a finite number")))
    }
}

fn secs(key: &str, t: f64) -> Result<SimTime> {
    if t.is_finite() && t >= 0.0 {
        Ok(SimTime::from_secs_f64(t))
    } else {
        Err(ScenarioError::new(
            key,
            format!("time {t} must be a number of seconds >= 0"),
        ))
    }
}

/// Trajectories by node index (None: the node stands still).
pub fn resolve(file: &ScenarioFile, ids: &[i64], positions: &[Position]) -> Result<Vec<Option<Trajectory>>> {
    let m = &file.mobility;
    let mut out: Vec<Option<Trajectory>> = vec![None; ids.len()];
    let index = |key: &str, id: i64| -> Result<usize> {
        ids.iter()
            .position(|&x| x == id)
            .ok_or_else(|| ScenarioError::new(key, format!("{id} is not a node of this topology")))
    };
    if !(m.update_interval_s.is_finite() && m.update_interval_s > 0.0) {
        return Err(ScenarioError::new(
            "mobility.update_interval_s",
            format!("{} must be a positive number of seconds", m.update_interval_s),
        ));
    }

    if let Some(rw) = &m.random_waypoint {
        let k = |s: &str| format!("mobility.random_waypoint.{s}");
        if !(rw.speed_max_mps.is_finite() && rw.speed_max_mps > 0.0) {
            return Err(ScenarioError::new(
                k("speed_max_mps"),
                format!("{} must be a positive speed", rw.speed_max_mps),
            ));
        }
        let min = match (rw.speed_min_mps, rw.speed_min_fraction) {
            (Some(_), Some(_)) => {
                return Err(ScenarioError::new(
                    k("speed_min_fraction"),
                    "give speed_min_mps or speed_min_fraction, not both",
                ));
            }
            (Some(v), None) => v,
            (None, Some(f)) => {
                if !(f.is_finite() && f > 0.0 && f <= 1.0) {
                    return Err(ScenarioError::new(
                        k("speed_min_fraction"),
                        format!("{f} must be in (0, 1]"),
                    ));
                }
                f * rw.speed_max_mps
            }
            (None, None) => 0.1 * rw.speed_max_mps,
        };
        if !(min.is_finite() && min > 0.0 && min <= rw.speed_max_mps) {
            return Err(ScenarioError::new(
                k("speed_min_mps"),
                format!(
                    "{min} must be positive and at most speed_max_mps = {}",
                    rw.speed_max_mps
                ),
            ));
        }
        if !(rw.pause_s.is_finite() && rw.pause_s >= 0.0) {
            return Err(ScenarioError::new(
                k("pause_s"),
                format!("{} must be a number of seconds >= 0", rw.pause_s),
            ));
        }
        let t = &file.topology;
        let max_x = positions.iter().map(|p| p.x).fold(0.0, f64::max);
        let max_y = positions.iter().map(|p| p.y).fold(0.0, f64::max);
        let width = rw.width_m.or(t.width_m).unwrap_or(max_x);
        let height = rw.height_m.or(t.height_m).unwrap_or(max_y);
        for (key, v) in [("width_m", width), ("height_m", height)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(ScenarioError::new(
                    k(key),
                    format!("{v} must be a positive number of metres"),
                ));
            }
        }
        let model = RandomWaypoint {
            width_m: width,
            height_m: height,
            speed_min_mps: min,
            speed_max_mps: rw.speed_max_mps,
            pause: Duration::from_secs_f64(rw.pause_s),
        };
        let movers: Vec<usize> = match &rw.nodes {
            None => (0..ids.len()).collect(),
            Some(list) => list.iter().map(|&id| index(&k("nodes"), id)).collect::<Result<_>>()?,
        };
        let until = SimTime::from_secs_f64(file.duration_s);
        for i in movers {
            let mut rng = stream(file.seed, i as u64, Purpose::Mobility);
            out[i] = Some(model.trajectory(positions[i], until, &mut rng));
        }
    }

    let ns2_text = match (&m.ns2_file, &m.ns2_movements) {
        (_, Some(text)) => Some(text.as_str()),
        (Some(path), None) => {
            return Err(ScenarioError::new(
                "mobility.ns2_file",
                format!("{path:?} was not read; load the scenario from a file so the path can be resolved"),
            ));
        }
        (None, None) => None,
    };
    if let Some(text) = ns2_text {
        let key = if m.ns2_file.is_some() {
            "mobility.ns2_file"
        } else {
            "mobility.ns2_movements"
        };
        let nodes = ns2::parse(text).map_err(|e| ScenarioError::new(key, e))?;
        for (id, n) in nodes {
            let i = index(key, id)?;
            let start = Position {
                x: n.x.unwrap_or(positions[i].x),
                y: n.y.unwrap_or(positions[i].y),
            };
            out[i] = Some(Trajectory::moves(start, &n.moves));
        }
    }

    for (j, s) in m.nodes.iter().enumerate() {
        let k = |f: &str| format!("mobility.node[{j}].{f}");
        let i = index(&k("id"), s.id)?;
        out[i] = Some(match (&s.path, &s.moves) {
            (Some(path), None) => {
                if path.is_empty() {
                    return Err(ScenarioError::new(k("path"), "needs at least one [t, x, y] point"));
                }
                let mut pts = Vec::with_capacity(path.len());
                for (n, [t, x, y]) in path.iter().enumerate() {
                    let t = secs(&k("path"), *t)?;
                    if pts.last().is_some_and(|&(pt, _)| pt >= t) {
                        return Err(ScenarioError::new(k("path"), format!("point {n}: times must increase")));
                    }
                    pts.push((
                        t,
                        Position {
                            x: finite(&k("path"), *x)?,
                            y: finite(&k("path"), *y)?,
                        },
                    ));
                }
                Trajectory::path(pts)
            }
            (None, Some(moves)) => {
                let mut mv = Vec::with_capacity(moves.len());
                for [t, x, y, v] in moves {
                    if !(v.is_finite() && *v > 0.0) {
                        return Err(ScenarioError::new(k("moves"), format!("speed {v} must be positive")));
                    }
                    mv.push((
                        secs(&k("moves"), *t)?,
                        Position {
                            x: finite(&k("moves"), *x)?,
                            y: finite(&k("moves"), *y)?,
                        },
                        *v,
                    ));
                }
                Trajectory::moves(positions[i], &mv)
            }
            _ => {
                return Err(ScenarioError::new(
                    k("path"),
                    "give exactly one of path = [[t, x, y], ...] or moves = [[t, x, y, speed], ...]",
                ))
            }
        });
    }
    Ok(out)
}
