//! Topology generators (CONTRACT.md §2). Generated topologies number nodes
//! from 0: a chain eastward from x = 0; a grid row by row, with
//! id = row × cols + col at (col × spacing, row × spacing); a random field
//! in draw order, positions drawn uniformly from the seed's topology stream.

use super::file::{ScenarioFile, TopologyKind};
use super::{Named, ScenarioError};
use crate::engine::{stream, Purpose};
use crate::phy::channel::Position;
use crate::time::Num;
use rand::Rng;

type Built = (Vec<i64>, Vec<Position>);

/// A bound that keeps a typo from allocating the machine away; explicit
/// topologies have the same.
pub const MAX_NODES: u64 = 1_000_000;
pub use crate::mobility::{check_length, MAX_METRES};

/// Node positions and ids of the file's topology (generated, or its `[[node]]` tables), or the offending key.
pub fn build(file: &ScenarioFile) -> Result<Built, ScenarioError> {
    let t = &file.topology;
    let given: [(&str, bool); 6] = [
        ("nodes", t.nodes.is_some()),
        ("spacing_m", t.spacing_m.is_some()),
        ("rows", t.rows.is_some()),
        ("cols", t.cols.is_some()),
        ("width_m", t.width_m.is_some()),
        ("height_m", t.height_m.is_some()),
    ];
    let kind = t.kind.name();
    let takes: &[&str] = match t.kind {
        TopologyKind::Chain => &["nodes", "spacing_m"],
        TopologyKind::Grid => &["rows", "cols", "spacing_m"],
        TopologyKind::Random => &["nodes", "width_m", "height_m"],
        TopologyKind::Explicit => &[],
    };
    for (key, present) in given {
        if present && !takes.contains(&key) {
            let allowed = if takes.is_empty() {
                "no other keys (nodes come from [[node]] tables)".to_string()
            } else {
                takes.join(", ")
            };
            return Err(ScenarioError::new(
                format!("topology.{key}"),
                format!("not used by kind = \"{kind}\", which takes {allowed}"),
            ));
        }
    }
    for key in takes {
        if !given.iter().any(|(k, p)| k == key && *p) {
            return Err(ScenarioError::new(
                format!("topology.{key}"),
                format!("missing: kind = \"{kind}\" needs {}", takes.join(", ")),
            ));
        }
    }
    if t.kind != TopologyKind::Explicit && !file.nodes.is_empty() {
        return Err(ScenarioError::new(
            "node",
            format!("[[node]] tables go with topology.kind = \"explicit\", not \"{kind}\""),
        ));
    }
    let count = |key: &str, v: u64, min: u64| -> Result<usize, ScenarioError> {
        if v < min || v > MAX_NODES {
            Err(ScenarioError::new(
                format!("topology.{key}"),
                format!("{v} must be between {min} and {MAX_NODES}"),
            ))
        } else {
            Ok(v as usize)
        }
    };
    let length = |key: &str, v: f64| -> Result<f64, ScenarioError> {
        if v.is_finite() && v > 0.0 && v <= MAX_METRES {
            Ok(v)
        } else {
            Err(ScenarioError::new(
                format!("topology.{key}"),
                format!(
                    "{} must be a number of metres above 0 and at most {}",
                    Num(v),
                    Num(MAX_METRES)
                ),
            ))
        }
    };
    match t.kind {
        TopologyKind::Chain => {
            let n = count("nodes", t.nodes.unwrap_or(0) as u64, 2)?;
            let s = length("spacing_m", t.spacing_m.unwrap_or(0.0))?;
            Ok(numbered((0..n).map(|i| Position {
                x: i as f64 * s,
                y: 0.0,
            })))
        }
        TopologyKind::Grid => {
            let rows = count("rows", t.rows.unwrap_or(0) as u64, 1)?;
            let cols = count("cols", t.cols.unwrap_or(0) as u64, 1)?;
            count("rows", (rows * cols) as u64, 2)
                .map_err(|_| ScenarioError::new("topology.rows", "rows × cols must be at least 2 nodes"))?;
            let s = length("spacing_m", t.spacing_m.unwrap_or(0.0))?;
            Ok(numbered((0..rows).flat_map(|r| {
                (0..cols).map(move |c| Position {
                    x: c as f64 * s,
                    y: r as f64 * s,
                })
            })))
        }
        TopologyKind::Random => {
            let n = count("nodes", t.nodes.unwrap_or(0) as u64, 2)?;
            let w = length("width_m", t.width_m.unwrap_or(0.0))?;
            let h = length("height_m", t.height_m.unwrap_or(0.0))?;
            let mut rng = stream(file.seed, u64::MAX, Purpose::Topology);
            let (ids, pos) = numbered((0..n).map(|_| Position {
                x: rng.gen::<f64>() * w,
                y: rng.gen::<f64>() * h,
            }));
            Ok((ids, pos))
        }
        TopologyKind::Explicit => {
            if file.nodes.len() < 2 || file.nodes.len() as u64 > MAX_NODES {
                return Err(ScenarioError::new(
                    "node",
                    format!(
                        "kind = \"explicit\" needs 2 to {MAX_NODES} [[node]] tables, found {}",
                        file.nodes.len()
                    ),
                ));
            }
            let mut ids = Vec::with_capacity(file.nodes.len());
            let mut pos = Vec::with_capacity(file.nodes.len());
            let mut seen = std::collections::HashSet::with_capacity(file.nodes.len());
            for (i, nd) in file.nodes.iter().enumerate() {
                if !seen.insert(nd.id) {
                    return Err(ScenarioError::new(
                        format!("node[{i}].id"),
                        format!("{} is used by an earlier [[node]]; ids must be unique", nd.id),
                    ));
                }
                for (k, v) in [("x_m", nd.x_m), ("y_m", nd.y_m)] {
                    if !(v.is_finite() && v.abs() <= MAX_METRES) {
                        return Err(ScenarioError::new(
                            format!("node[{i}].{k}"),
                            format!(
                                "{} must be a number of metres from -{1} to {1}",
                                Num(v),
                                Num(MAX_METRES)
                            ),
                        ));
                    }
                }
                ids.push(nd.id);
                pos.push(Position { x: nd.x_m, y: nd.y_m });
            }
            Ok((ids, pos))
        }
    }
}

/// Large random and explicit fields are stored in Z-order (Morton order of
/// the position): nodes near each other in space sit near each other in
/// memory, which keeps a transmission's neighbourhood in cache. Ids and the
/// file's order are kept; only the internal index changes. (Chains and
/// grids are in spatial order already.)
pub const SPATIAL_ORDER_MIN_NODES: usize = 512;

/// Internal indices in Z-order of position, for a field of `n` nodes at
/// least `SPATIAL_ORDER_MIN_NODES` large; None to keep the given order.
pub fn spatial_order(pos: &[Position]) -> Option<Vec<usize>> {
    if pos.len() < SPATIAL_ORDER_MIN_NODES {
        return None;
    }
    fn spread(v: u32) -> u64 {
        let mut x = v as u64 & 0xffff;
        x = (x | (x << 8)) & 0x00ff_00ff;
        x = (x | (x << 4)) & 0x0f0f_0f0f;
        x = (x | (x << 2)) & 0x3333_3333;
        (x | (x << 1)) & 0x5555_5555
    }
    let (x0, x1) = pos
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.x), b.max(p.x)));
    let (y0, y1) = pos
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.y), b.max(p.y)));
    let q = |v: f64, lo: f64, hi: f64| (((v - lo) / (hi - lo).max(1e-9)).clamp(0.0, 1.0) * 65535.0) as u32;
    let mut order: Vec<usize> = (0..pos.len()).collect();
    order.sort_by_key(|&i| (spread(q(pos[i].x, x0, x1)) | (spread(q(pos[i].y, y0, y1)) << 1), i));
    Some(order)
}

fn numbered(it: impl Iterator<Item = Position>) -> Built {
    let pos: Vec<Position> = it.collect();
    ((0..pos.len() as i64).collect(), pos)
}
