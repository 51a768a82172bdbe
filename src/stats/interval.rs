//! The median of repeated measurements and its confidence interval,
//! distribution-free: the interval runs between two order statistics chosen
//! from the binomial distribution, so it assumes nothing of the noise's shape
//! (a shared host's noise is anything but normal).

use super::order::{measured, middle};
use crate::model::interval::MedianInterval;

/// The median and interval of `values`; `None` without a value.
pub fn median_interval(values: &[f64]) -> Option<MedianInterval> {
    let sorted = measured(values);
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    let median = middle(&sorted);
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

/// An interval of the median, with the confidence it is quoted at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuotedInterval {
    pub low: f64,
    pub high: f64,
    /// 0.95 from 6 values (the interval of [`median_interval`] covers at
    /// least that); for 3 to 5 values the exact coverage of [min, max].
    pub coverage: f64,
    pub n: usize,
}

/// The interval of the median of `values` for any count from 3 (a NaN is
/// no value): from 6 values the 95 % interval of [`median_interval`]; for 3
/// to 5 values [min, max], quoted at its exact coverage 1 - 2/2^n (75 %,
/// 87.5 %, 93.75 %), never at 95 %. None below 3 values, where [min, max]
/// covers the median with 50 % or less.
pub fn median_interval_any_n(values: &[f64]) -> Option<QuotedInterval> {
    let summary = median_interval(values)?;
    let n = summary.n;
    if let Some([low, high]) = summary.ci95 {
        return Some(QuotedInterval {
            low,
            high,
            coverage: 0.95,
            n,
        });
    }
    if n < 3 {
        return None;
    }
    let sorted = measured(values);
    let (low, high) = (sorted[0], sorted[n - 1]);
    Some(QuotedInterval {
        low,
        high,
        coverage: 1.0 - 2.0 / 2f64.powi(n as i32),
        n,
    })
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

    #[test]
    fn three_to_five_values_quote_min_and_max_at_their_exact_coverage() {
        let quoted = |values: &[f64]| median_interval_any_n(values).unwrap();
        let three = quoted(&[3.0, 1.0, 2.0]);
        assert_eq!((three.low, three.high, three.n), (1.0, 3.0, 3));
        assert_eq!(three.coverage, 0.75);
        assert_eq!(quoted(&[4.0, 1.0, 2.0, 3.0]).coverage, 0.875);
        let five = quoted(&[5.0, 1.0, f64::NAN, 4.0, 2.0, 3.0]);
        assert_eq!((five.low, five.high, five.n), (1.0, 5.0, 5));
        assert_eq!(five.coverage, 0.9375);
    }

    #[test]
    fn six_values_and_more_quote_the_95_percent_interval() {
        let six = median_interval_any_n(&[6.0, 1.0, 5.0, 2.0, 4.0, 3.0]).unwrap();
        assert_eq!((six.low, six.high, six.coverage), (1.0, 6.0, 0.95));
        let nine = [9.0, 1.0, 8.0, 2.0, 7.0, 3.0, 6.0, 4.0, 5.0];
        let nine = median_interval_any_n(&nine).unwrap();
        assert_eq!(
            (nine.low, nine.high, nine.coverage, nine.n),
            (2.0, 8.0, 0.95, 9)
        );
    }

    #[test]
    fn fewer_than_three_values_have_no_interval() {
        assert_eq!(median_interval_any_n(&[1.0, 2.0]), None);
        assert_eq!(median_interval_any_n(&[1.0, 2.0, f64::NAN]), None);
        assert_eq!(median_interval_any_n(&[]), None);
    }
}
