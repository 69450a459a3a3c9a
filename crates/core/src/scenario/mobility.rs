//! Resolves `[mobility]` into one trajectory per moving node.

use super::file::{ScenarioFile, ScriptedFile};
use super::{NodeIndex, ScenarioError};
use crate::engine::{stream, Purpose};
use crate::mobility::random_waypoint::RandomWaypoint;
use crate::mobility::{ns2, Trajectory};
use crate::phy::channel::Position;
use crate::time::{Num, SimTime, Span, Unit};

type Result<T> = std::result::Result<T, ScenarioError>;

pub use crate::mobility::MAX_SPEED_MPS;

fn finite(key: &str, v: f64) -> Result<f64> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(ScenarioError::new(key, format!("{} must be a finite number", Num(v))))
    }
}

/// A point in time of a script: 0 or 1 µs to 1e7 s (the one time validator).
fn secs(key: &str, t: f64) -> Result<SimTime> {
    Span::NON_NEGATIVE
        .check("time", t, Unit::Seconds)
        .map(|d| SimTime(d.as_nanos()))
        .map_err(|e| ScenarioError::new(key, e))
}

/// The random waypoint model of `[mobility.random_waypoint]`, checked, and
/// how many nodes follow it; None without the table.
pub(super) fn waypoint(file: &ScenarioFile, positions: &[Position]) -> Result<Option<(RandomWaypoint, usize)>> {
    let Some(rw) = &file.mobility.random_waypoint else {
        return Ok(None);
    };
    let k = |s: &str| format!("mobility.random_waypoint.{s}");
    if !(rw.speed_max_mps.is_finite() && rw.speed_max_mps > 0.0 && rw.speed_max_mps <= MAX_SPEED_MPS) {
        return Err(ScenarioError::new(
            k("speed_max_mps"),
            format!(
                "{} must be a speed above 0 and at most {} m/s (the speed of light)",
                Num(rw.speed_max_mps),
                Num(MAX_SPEED_MPS)
            ),
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
                    format!("{} must be in (0, 1]", Num(f)),
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
                "{} must be positive and at most speed_max_mps = {}",
                Num(min),
                Num(rw.speed_max_mps)
            ),
        ));
    }
    let pause = Span::NON_NEGATIVE
        .check(&k("pause_s"), rw.pause_s, Unit::Seconds)
        .map_err(|e| ScenarioError::keyed("", &e))?;
    let t = &file.topology;
    let max_x = positions.iter().map(|p| p.x).fold(0.0, f64::max);
    let max_y = positions.iter().map(|p| p.y).fold(0.0, f64::max);
    let width = rw.width_m.or(t.width_m).unwrap_or(max_x);
    let height = rw.height_m.or(t.height_m).unwrap_or(max_y);
    for (key, v) in [("width_m", width), ("height_m", height)] {
        if !(v.is_finite() && v > 0.0 && v <= super::topology::MAX_METRES) {
            return Err(ScenarioError::new(
                k(key),
                format!(
                    "{} must be a number of metres above 0 and at most {}",
                    Num(v),
                    Num(super::topology::MAX_METRES)
                ),
            ));
        }
    }
    let movers = rw.nodes.as_ref().map_or(positions.len(), Vec::len);
    Ok(Some((
        RandomWaypoint {
            width_m: width,
            height_m: height,
            speed_min_mps: min,
            speed_max_mps: rw.speed_max_mps,
            pause,
        },
        movers,
    )))
}

/// Trajectories by node index (None: the node stands still).
pub(crate) fn resolve(
    file: &ScenarioFile,
    index: &NodeIndex<'_>,
    positions: &[Position],
) -> Result<Vec<Option<Trajectory>>> {
    let m = &file.mobility;
    let mut out: Vec<Option<Trajectory>> = vec![None; positions.len()];
    let at = |key: &str, id: i64| index.get(key, id).map(|i| i as usize);

    if let Some((model, _)) = waypoint(file, positions)? {
        let k = "mobility.random_waypoint.nodes";
        let movers: Vec<usize> = match &m.random_waypoint.as_ref().and_then(|rw| rw.nodes.as_ref()) {
            None => (0..positions.len()).collect(),
            Some(list) => list.iter().map(|&id| at(k, id)).collect::<Result<_>>()?,
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
            let i = at(key, id)?;
            let start = Position {
                x: n.x.unwrap_or(positions[i].x),
                y: n.y.unwrap_or(positions[i].y),
            };
            out[i] = Some(Trajectory::moves(start, &n.moves));
        }
    }

    let mut scripted_by = std::collections::HashMap::new();
    for (j, s) in m.nodes.iter().enumerate() {
        let key = format!("mobility.node[{j}].id");
        let i = at(&key, s.id)?;
        // One script per node: a second one used to replace the first silently.
        if let Some(first) = scripted_by.insert(i, j) {
            return Err(ScenarioError::new(
                key,
                format!(
                    "node {} is scripted already by mobility.node[{first}]; give one [[mobility.node]] per node",
                    s.id
                ),
            ));
        }
        out[i] = Some(scripted(j, s, positions[i])?);
    }
    Ok(out)
}

/// One `[[mobility.node]]`: a path of (t, x, y) or moves of (t, x, y, speed).
fn scripted(j: usize, s: &ScriptedFile, here: Position) -> Result<Trajectory> {
    let k = |f: &str| format!("mobility.node[{j}].{f}");
    match (&s.path, &s.moves) {
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
            Ok(Trajectory::path(pts))
        }
        (None, Some(moves)) => {
            let mut mv = Vec::with_capacity(moves.len());
            for [t, x, y, v] in moves {
                if !(v.is_finite() && *v > 0.0 && *v <= MAX_SPEED_MPS) {
                    return Err(ScenarioError::new(
                        k("moves"),
                        format!(
                            "speed {} must be above 0 and at most {} m/s",
                            Num(*v),
                            Num(MAX_SPEED_MPS)
                        ),
                    ));
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
            Ok(Trajectory::moves(here, &mv))
        }
        _ => Err(ScenarioError::new(
            k("path"),
            "give exactly one of path = [[t, x, y], ...] or moves = [[t, x, y, speed], ...]",
        )),
    }
}
