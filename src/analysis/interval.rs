//! The median of repeated measurements and its 95 % confidence interval,
//! distribution-free: the interval runs between two order statistics chosen
//! from the binomial distribution, so it assumes nothing of the noise's shape
//! (a shared host's noise is anything but normal).

use serde::{Deserialize, Serialize};

/// Repetitions summarised.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MedianInterval {
    pub median: f64,
    /// At least 95 % coverage; `None` with fewer than 6 values, where no
    /// pair of order statistics reaches it.
    pub ci95: Option<[f64; 2]>,
    pub n: usize,
}

/// The median and interval of `values` (NaNs are ignored); `None` when empty.
pub fn median_interval(values: &[f64]) -> Option<MedianInterval> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    let ci95 = lower_rank(n).map(|k| [sorted[k - 1], sorted[n - k]]);
    Some(MedianInterval { median, ci95, n })
}

/// The largest 1-based rank k with P(Binomial(n, 1/2) < k) <= 2.5 %: the
/// interval [x(k), x(n+1-k)] then covers the median with at least 95 %.
fn lower_rank(n: usize) -> Option<usize> {
    let total = 2f64.powi(n as i32);
    let mut below = 0.0; // P(X < k) * 2^n
    let mut choose = 1.0; // C(n, k-1)
    let mut rank = None;
    for k in 1..=n / 2 {
        below += choose;
        if below / total > 0.025 {
            break;
        }
        rank = Some(k);
        choose = choose * (n - (k - 1)) as f64 / k as f64;
    }
    rank
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nine_values_give_the_second_and_eighth() {
        // P(X <= 1) = 10/512 = 1.95 %, P(X <= 2) = 46/512 = 9 %.
        let values = [9.0, 1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0];
        let summary = median_interval(&values).unwrap();
        assert_eq!(summary.median, 5.0);
        assert_eq!(summary.ci95, Some([2.0, 8.0]));
        assert_eq!(summary.n, 9);
    }

    #[test]
    fn the_ranks_follow_the_binomial_table() {
        assert_eq!(lower_rank(5), None);
        assert_eq!(lower_rank(6), Some(1));
        assert_eq!(lower_rank(8), Some(1));
        assert_eq!(lower_rank(9), Some(2));
        assert_eq!(lower_rank(11), Some(2));
        assert_eq!(lower_rank(12), Some(3));
        assert_eq!(lower_rank(20), Some(6));
    }

    #[test]
    fn few_values_have_a_median_but_no_interval() {
        let summary = median_interval(&[3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!(summary.median, 2.5);
        assert_eq!(summary.ci95, None);
        assert_eq!(median_interval(&[]), None);
        assert_eq!(median_interval(&[f64::NAN]), None);
    }
}
