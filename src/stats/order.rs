//! Order statistics of repeated values: the median with the min and max it
//! hides, nearest-rank percentiles, and the mean.

/// `values` without their NaNs, ascending: what every statistic counts.
pub(super) fn measured(values: &[f64]) -> Vec<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| !v.is_nan()).collect();
    sorted.sort_by(f64::total_cmp);
    sorted
}

/// The middle of non-empty ascending `sorted`: the mean of the two middle
/// values for an even count.
pub(super) fn middle(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The nearest-rank percentile `q` (0..=1) of `values`; None without a value.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    let sorted = measured(values);
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

/// The arithmetic mean; None without a value.
pub fn mean(values: &[f64]) -> Option<f64> {
    let kept = measured(values);
    (!kept.is_empty()).then(|| kept.iter().sum::<f64>() / kept.len() as f64)
}

/// The median of repeated values, with the spread it hides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The middle value (the mean of the two middle ones for an even count).
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

/// The median, min and max of `values`; None without a value.
pub fn spread(values: &[f64]) -> Option<Spread> {
    let sorted = measured(values);
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    Some(Spread {
        median: middle(&sorted),
        min,
        max,
        count: sorted.len(),
    })
}

/// The median of `values`; None without a value.
pub fn median(values: &[f64]) -> Option<f64> {
    let sorted = measured(values);
    (!sorted.is_empty()).then(|| middle(&sorted))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_the_middle_of_repeats() {
        assert_eq!(spread(&[]), None);
        let odd = spread(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (odd.median, odd.min, odd.max, odd.count),
            (2.0, 1.0, 3.0, 3)
        );
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.95), Some(19.0));
        assert_eq!(percentile(&v, 1.0), Some(20.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&[7.0], 0.95), Some(7.0));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
    }

    /// One rule for every statistic: a NaN is no measurement.
    #[test]
    fn a_nan_is_left_out_of_every_statistic() {
        let values = [3.0, f64::NAN, 1.0, 2.0];
        let with_nan = spread(&values).unwrap();
        assert_eq!(
            (with_nan.median, with_nan.min, with_nan.max, with_nan.count),
            (2.0, 1.0, 3.0, 3)
        );
        assert_eq!(median(&values), Some(2.0));
        assert_eq!(mean(&values), Some(2.0));
        assert_eq!(percentile(&values, 1.0), Some(3.0));
        for only_nan in [
            spread(&[f64::NAN]).map(|s| s.median),
            median(&[f64::NAN]),
            mean(&[f64::NAN]),
            percentile(&[f64::NAN], 0.5),
        ] {
            assert_eq!(only_nan, None);
        }
    }
}
