//! Import of ns-2 movement files, as written by `setdest`:
//!
//! ```text
//! $node_(3) set X_ 150.0
//! $node_(3) set Y_ 93.98
//! $ns_ at 2.0 "$node_(3) setdest 369.4 170.8 3.37"
//! ```
//!
//! Z coordinates and `$god_` lines are ignored; anything else is an error
//! naming the line.

use crate::phy::channel::Position;
use crate::time::{SimTime, Span, Unit};
use std::collections::BTreeMap;

/// Per ns-2 node index: initial X/Y (if set) and its setdest moves.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ns2Node {
    /// `set X_`, metres.
    pub x: Option<f64>,
    /// `set Y_`, metres.
    pub y: Option<f64>,
    /// `setdest` lines in file order: (time, destination, speed in m/s).
    pub moves: Vec<(SimTime, Position, f64)>,
}

fn node_index(tok: &str) -> Option<i64> {
    tok.trim_start_matches('$')
        .strip_prefix("node_(")?
        .strip_suffix(')')?
        .parse()
        .ok()
}

fn num(s: &str) -> Option<f64> {
    s.trim_matches('"').parse::<f64>().ok().filter(|v| v.is_finite())
}

/// A coordinate within the one length bound of every scenario
/// (`MAX_METRES`): positions, their differences and
/// squares stay finite.
fn coordinate(v: f64, i: usize, line: &str) -> Result<(), String> {
    let max = super::MAX_METRES;
    if v.abs() <= max {
        Ok(())
    } else {
        Err(format!(
            "line {}: coordinate {} must be a number of metres from -{} to {} in {:?}",
            i + 1,
            crate::time::Num(v),
            crate::time::Num(max),
            crate::time::Num(max),
            line
        ))
    }
}

/// Parses a movement file; errors carry the 1-based line number.
pub fn parse(text: &str) -> Result<BTreeMap<i64, Ns2Node>, String> {
    let mut nodes: BTreeMap<i64, Ns2Node> = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let bad = || format!("line {}: cannot read {:?}", i + 1, line);
        if line.is_empty() || line.starts_with('#') || line.contains("$god_") {
            continue;
        }
        let toks: Vec<&str> = line.split_whitespace().collect();
        match toks.as_slice() {
            [n, "set", axis, v] => {
                let id = node_index(n).ok_or_else(bad)?;
                let v = num(v).ok_or_else(bad)?;
                coordinate(v, i, line)?;
                let e = nodes.entry(id).or_default();
                match *axis {
                    "X_" => e.x = Some(v),
                    "Y_" => e.y = Some(v),
                    "Z_" => {}
                    _ => return Err(bad()),
                }
            }
            ["$ns_", "at", t, n, "setdest", x, y, v] => {
                let id = node_index(n.trim_start_matches('"')).ok_or_else(bad)?;
                let (t, x, y, v) = (
                    num(t).ok_or_else(bad)?,
                    num(x).ok_or_else(bad)?,
                    num(y).ok_or_else(bad)?,
                    num(v).ok_or_else(bad)?,
                );
                coordinate(x, i, line)?;
                coordinate(y, i, line)?;
                if !(0.0..=super::MAX_SPEED_MPS).contains(&v) {
                    return Err(format!("line {}: speed {v} must be 0 to 3e8 m/s in {:?}", i + 1, line));
                }
                let t = Span::NON_NEGATIVE
                    .check("time", t, Unit::Seconds)
                    .map_err(|e| format!("line {}: {e} in {:?}", i + 1, line))?;
                nodes
                    .entry(id)
                    .or_default()
                    .moves
                    .push((SimTime(t.as_nanos()), Position { x, y }, v));
            }
            _ => return Err(bad()),
        }
    }
    Ok(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_setdest_output() {
        let text = r#"
#
# nodes: 2, pause: 0.00, max speed: 20.00
#
$node_(0) set X_ 150.000000000000
$node_(0) set Y_ 93.980000000000
$node_(0) set Z_ 0.000000000000
$node_(1) set X_ 10.0
$node_(1) set Y_ 20.0
$god_ set-dist 0 1 16777215
$ns_ at 2.000000000000 "$node_(0) setdest 369.4 170.8 3.37"
$ns_ at 30.000000000000 "$god_ set-dist 0 1 1"
"#;
        let n = parse(text).unwrap();
        assert_eq!(n[&0].x, Some(150.0));
        assert_eq!(
            n[&0].moves,
            vec![(SimTime::from_secs_f64(2.0), Position { x: 369.4, y: 170.8 }, 3.37)]
        );
        assert!(n[&1].moves.is_empty());
        assert!(parse("$node_(0) fly 3").unwrap_err().starts_with("line 1"));
    }

    #[test]
    fn reads_a_file_written_by_setdest() {
        // ns-2.35's setdest (version 1): `setdest -v 1 -n 8 -p 2.0 -M 10.0 -t 60
        // -x 500 -y 500`, with its header, GOD distances and closing statistics.
        let text = include_str!("../../../../tests/data/setdest-8-nodes.ns2");
        let n = parse(text).unwrap();
        assert_eq!(n.len(), 8);
        assert_eq!(n[&0].x, Some(255.753726627858));
        let first = n[&0].moves[0];
        assert_eq!(first.0, SimTime::from_secs_f64(2.0));
        assert_eq!(
            first.1,
            Position {
                x: 366.412436755790,
                y: 352.807902238342
            }
        );
        assert_eq!(first.2, 5.495196036762);
        // Every node's pause is a setdest to where it stands at speed 0.
        assert!(n.values().flat_map(|m| &m.moves).any(|m| m.2 == 0.0));
        // One second into its first leg, node 0 is 5.495 m along it.
        let start = Position {
            x: n[&0].x.unwrap(),
            y: n[&0].y.unwrap(),
        };
        let tr = crate::mobility::Trajectory::moves(start, &n[&0].moves);
        let p = tr.position_at(SimTime::from_secs_f64(3.0));
        assert!((p.distance(&start) - 5.495196036762).abs() < 1e-6, "{p:?}");
    }
}
