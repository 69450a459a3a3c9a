//! Counters, fairness indices and the run summary of CONTRACT.md §3.

pub mod maxmin;
pub mod summary;

pub use summary::{Summary, Traces};

/// Jain's fairness index (Σx)² / (n Σx²): 1 when all equal, 1/n when one
/// flow takes everything. Defined as 1 for a single flow and 0 when no flow
/// delivered anything.
pub fn jain_index(xs: &[f64]) -> f64 {
    if xs.len() == 1 {
        return 1.0;
    }
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq == 0.0 {
        0.0
    } else {
        sum * sum / (xs.len() as f64 * sq)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[3.0]), 1.0);
        assert_eq!(jain_index(&[0.0, 0.0]), 0.0);
        assert!((jain_index(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
    }
}
