//! Counters, fairness indices and the run summary of CONTRACT.md §3.
//!
//! Two indices: Jain's index (1 is fair, 1/n is one flow taking all) and the
//! unfairness index u of Osipov and Tschudin (2007), eq. (4) (0 is fair and
//! efficient; it grows with the distance from each flow's optimum).

pub mod flowstats;
pub mod maxmin;
pub mod summary;

pub use summary::{Summary, Traces};

/// Width of every time-series bin (CONTRACT.md §3: 1 s bins).
pub const BIN: crate::time::Duration = crate::time::Duration::from_millis(1000);

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

/// The unfairness index u of Osipov and Tschudin (2007), §5.1.1, eq. (4):
///
/// ```text
/// u = sqrt( Σ_i (opt_i − act_i)² ) / sqrt( Σ_i opt_i² )
/// ```
///
/// the distance of the actual per-flow throughputs from their optima,
/// normalised by the optima's length. 0 is perfect; a flow above its optimum
/// raises u as much as one below it. The paper defines u for two or more
/// flows; `None` for fewer, for vectors of different lengths, or when every
/// optimum is 0.
pub fn unfairness_index(optimal: &[f64], actual: &[f64]) -> Option<f64> {
    if optimal.len() < 2 || optimal.len() != actual.len() {
        return None;
    }
    let norm: f64 = optimal.iter().map(|o| o * o).sum();
    if norm <= 0.0 {
        return None;
    }
    let dist: f64 = optimal.iter().zip(actual).map(|(o, a)| (o - a) * (o - a)).sum();
    Some((dist / norm).sqrt())
}

/// u (eq. 4) with every flow's optimum an equal share of the delivered total,
/// Σ act / n: what one run can compute without runs of each flow alone. It
/// measures the spread only (it equals the coefficient of variation, and
/// Jain = 1 / (1 + u²)); the paper's optimum φ_i · Thr_alone,i also charges a
/// total below the flows' fair shares, and needs those isolated runs.
pub fn equal_share_unfairness(actual: &[f64]) -> Option<f64> {
    let share = actual.iter().sum::<f64>() / actual.len().max(1) as f64;
    unfairness_index(&vec![share; actual.len()], actual)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) -> bool {
        a.is_some_and(|a| (a - b).abs() < 1e-12)
    }

    #[test]
    fn unfairness_eq4_on_hand_made_numbers() {
        // Optima 100 and 100, actual 100 and 100: u = 0.
        assert!(close(unfairness_index(&[100.0, 100.0], &[100.0, 100.0]), 0.0));
        // Optima (3, 4) (length 5), actual (0, 0): distance 5, u = 1.
        assert!(close(unfairness_index(&[3.0, 4.0], &[0.0, 0.0]), 1.0));
        // Optima (3, 4), actual (6, 0): distance sqrt(9 + 16) = 5, u = 1,
        // though the total is near: u charges the split, not only the sum.
        assert!(close(unfairness_index(&[3.0, 4.0], &[6.0, 0.0]), 1.0));
        // Optima 196.6 x 4 (Table 1's fair share), actual 200, 190, 196.6, 196.6:
        // sqrt(3.4² + 6.6²) / (2 · 196.6).
        let u = (3.4f64 * 3.4 + 6.6 * 6.6).sqrt() / (2.0 * 196.6);
        assert!(close(unfairness_index(&[196.6; 4], &[200.0, 190.0, 196.6, 196.6]), u));
        // A flow above its optimum counts as much as one below.
        assert_eq!(
            unfairness_index(&[1.0, 1.0], &[1.5, 1.0]),
            unfairness_index(&[1.0, 1.0], &[0.5, 1.0])
        );
    }

    #[test]
    fn unfairness_undefined_cases() {
        assert_eq!(unfairness_index(&[1.0], &[1.0]), None);
        assert_eq!(unfairness_index(&[1.0, 2.0], &[1.0]), None);
        assert_eq!(unfairness_index(&[0.0, 0.0], &[1.0, 2.0]), None);
        assert_eq!(equal_share_unfairness(&[5.0]), None);
        assert_eq!(equal_share_unfairness(&[0.0, 0.0]), None);
    }

    #[test]
    fn equal_share_unfairness_is_the_spread() {
        // 700 and 100: share 400, distance sqrt(2) · 300, norm sqrt(2) · 400: u = 0.75,
        // and Jain = 1 / (1 + u²) = 0.64 (the NRED paper's F(700, 100)).
        let u = equal_share_unfairness(&[700.0, 100.0]).unwrap();
        assert!((u - 0.75).abs() < 1e-12);
        assert!((jain_index(&[700.0, 100.0]) - 1.0 / (1.0 + u * u)).abs() < 1e-12);
        assert!(close(equal_share_unfairness(&[5.0, 5.0, 5.0]), 0.0));
        // One flow takes all of n = 4: share t/4, u = sqrt(3).
        assert!(close(equal_share_unfairness(&[8.0, 0.0, 0.0, 0.0]), 3f64.sqrt()));
    }

    #[test]
    fn jain_bounds() {
        assert_eq!(jain_index(&[5.0, 5.0, 5.0]), 1.0);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
        assert_eq!(jain_index(&[3.0]), 1.0);
        assert_eq!(jain_index(&[0.0, 0.0]), 0.0);
        assert!((jain_index(&[1.0, 2.0]) - 0.9).abs() < 1e-12);
    }
}
