//! The latency CDF of a point: for each line, the share of its records
//! that arrived within each latency, from the histograms of its newest
//! batch's keep-up runs merged, as the percentile chart reads them. The
//! latency axis is logarithmic, so the body and the tail both read.

use hdrhistogram::Histogram;

use super::charts::{chart_data, Chart};
use super::histograms::{latency_runs, merged_histogram};
use super::lines::LineRuns;
use super::svg::{self, Curve, XAxis};
use super::table::fixed;

/// Points per curve: enough for a smooth curve, few enough for the table
/// under the chart.
const STEPS: usize = 40;

/// The CDF of the lines that kept up with a readable histogram; None when
/// no line did.
pub(super) fn cdf_chart(lines: &[LineRuns<'_>]) -> Option<Chart> {
    let merged: Vec<(&LineRuns<'_>, Histogram<u64>)> = lines
        .iter()
        .filter_map(|line| Some((line, merged_histogram(&latency_runs(line))?)))
        .collect();
    // One grid for every line, so the table under the chart has a row per
    // latency and a column per line.
    let low = merged.iter().map(|(_, h)| h.min()).min()?;
    let high = merged.iter().map(|(_, h)| h.max()).max()?;
    let grid = log_grid(low, high, STEPS);
    let curves: Vec<Curve> = merged
        .iter()
        .map(|(line, h)| Curve {
            name: line.name.clone(),
            style: line.style,
            points: cdf_points(h, &grid),
        })
        .collect();
    let x_label = "latency (ms, log)";
    let y_label = "share of records within";
    Some(Chart {
        title: "Latency CDF (newest batch of each line, histograms merged)".to_string(),
        svg: svg::line_chart(
            &curves,
            &XAxis::Log {
                label: x_label.to_string(),
            },
            y_label,
            svg::SMALL,
        ),
        data: chart_data(y_label, &curves, "latency (ms)", |x| fixed(x, 3), 4),
    })
}

/// `steps + 1` latencies (µs) from `low` to `high`, both included, each a
/// constant ratio above the one before; whole microseconds, so repeats at
/// the low end are dropped. A `low` of 0 starts at 1 µs.
fn log_grid(low: u64, high: u64, steps: usize) -> Vec<u64> {
    let low = low.max(1);
    let high = high.max(low);
    let ratio = (high as f64 / low as f64).powf(1.0 / steps as f64);
    let mut grid: Vec<u64> = (0..steps)
        .map(|i| (low as f64 * ratio.powi(i as i32)).round() as u64)
        .collect();
    grid.push(high);
    grid.dedup();
    grid
}

/// (latency in ms, share of the histogram's records at or under it) at
/// each latency of `grid` (µs), to the histogram's precision: a value
/// counts with the records its bucket holds. At the histogram's maximum
/// the share is 1.
fn cdf_points(h: &Histogram<u64>, grid: &[u64]) -> Vec<(f64, f64)> {
    let total = h.len() as f64;
    grid.iter()
        .map(|&v| (v as f64 / 1000.0, h.count_between(0, v) as f64 / total))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 1 to 1000 ms, one record each.
    fn uniform() -> Histogram<u64> {
        let mut h = crate::stats::histogram::empty();
        for ms in 1..=1000u64 {
            h.record(ms * 1000).unwrap();
        }
        h
    }

    #[test]
    fn the_grid_runs_from_low_to_high_at_a_constant_ratio() {
        let grid = log_grid(1000, 1_000_000, 3);
        assert_eq!(grid, [1000, 10_000, 100_000, 1_000_000]);
        assert_eq!(log_grid(0, 3, 10), [1, 2, 3]);
        assert_eq!(log_grid(5, 5, 4), [5]);
    }

    #[test]
    fn the_cdf_rises_to_one_at_the_maximum() {
        let h = uniform();
        let points = cdf_points(&h, &log_grid(h.min(), h.max(), STEPS));
        assert_eq!(points.first().unwrap().0, 1.0);
        assert!((points.first().unwrap().1 - 0.001).abs() < 1e-9);
        assert_eq!(points.last().unwrap().1, 1.0);
        assert!(points
            .windows(2)
            .all(|w| w[0].0 < w[1].0 && w[0].1 <= w[1].1));
    }

    #[test]
    fn the_share_at_a_latency_is_the_records_within_it() {
        let h = uniform();
        let points = cdf_points(&h, &[10_000, 500_000]);
        assert_eq!(points[0], (10.0, 0.01));
        // 500 ms falls in a bucket of 500.0 to 500.2 ms: 500 records.
        assert!((points[1].1 - 0.5).abs() < 1e-9, "{points:?}");
        // Below the minimum, no record.
        assert_eq!(cdf_points(&h, &[500])[0].1, 0.0);
    }
}
