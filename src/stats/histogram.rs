//! Latency histograms merged: repeats of a run, or a run's intervals, added
//! into one exactly.

use hdrhistogram::Histogram;

/// An empty latency histogram in microseconds at 3 significant digits that
/// resizes itself: a merge keeps the range of every histogram added to it,
/// where one of fixed bounds would fail on a larger maximum.
pub fn empty() -> Histogram<u64> {
    let mut histogram = Histogram::new(3).expect("3 significant digits is valid");
    histogram.auto(true);
    histogram
}

/// `histograms` added into one; None when there is none, or nothing in any.
pub fn merge(histograms: impl IntoIterator<Item = Histogram<u64>>) -> Option<Histogram<u64>> {
    let mut merged = empty();
    for histogram in histograms {
        merged.add(&histogram).ok()?;
    }
    Some(merged).filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_of_any_range_merge_exactly() {
        let of = |max_us: u64| {
            let mut h = Histogram::<u64>::new_with_bounds(1, max_us, 3).unwrap();
            for us in 1..=max_us / 1000 {
                h.record(us * 1000).unwrap();
            }
            h
        };
        let merged = merge([of(20_000), of(50_000_000)]).unwrap();
        assert_eq!(merged.len(), 20 + 50_000);
        assert!(merged.max() >= 49_900_000, "{}", merged.max());
        assert_eq!(merge([]), None);
        assert_eq!(merge([empty()]), None);
    }
}
