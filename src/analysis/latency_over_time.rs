//! Latency over time: which intervals of the window stalled, judged from the
//! probe's per-interval latency and the input's per-interval flow.
//!
//! An interval stalls when either holds:
//! - **silent**: input reached the input topic in it, no output record
//!   arrived in it, and output has now been missing for at least twice the
//!   run's usual spacing of output, and for at least two intervals. The
//!   usual spacing is the median distance, in intervals, between intervals
//!   that had output: 1 for a product whose output flows all the time, more
//!   for one that writes in bursts (exactly-once commits or micro-batches an
//!   interval or more apart), which is silent between bursts by design. A
//!   single silent interval is never a stall by this rule: a product whose
//!   output comes about once an interval (1 s windows, 1 s commits) leaves
//!   one empty now and then when its bursts straddle an interval's bounds.
//!   A silence of one interval that held records back shows as a spike in
//!   the interval after it.
//! - **spike**: its p99 is above max(10 x M, M + 100 ms), M being the median
//!   of the window's interval p99s (intervals with output only; at least 3
//!   of them, or no spike is judged). The factor keeps the ordinary spread
//!   of per-interval tails on a shared host out; the margin keeps a product
//!   quoting a millisecond from stalling on a 10 ms blip.

use crate::results::{LatencySeries, Series};
use crate::stats::median;

/// A spike's p99 is above this many times the median interval p99...
pub const SPIKE_FACTOR: f64 = 10.0;
/// ... and above the median by at least this much.
pub const SPIKE_MARGIN_MS: f64 = 100.0;
/// Intervals with output needed for a median to judge spikes against.
pub const MIN_INTERVALS_FOR_SPIKES: usize = 3;

/// Why an interval stalled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    /// No output, while input was offered, for longer than the run's usual gap.
    Silent,
    /// Its p99 far above the window's median interval p99.
    Spike,
}

/// The stalls of one window.
#[derive(Debug, Clone, PartialEq)]
pub struct Stalls {
    /// Per interval of the latency series, the stall found in it.
    pub intervals: Vec<Option<Stall>>,
    /// The median of the interval p99s, ms; none without output.
    pub median_p99_ms: Option<f64>,
    /// A p99 above this is a spike, ms; none with too few intervals of output.
    pub spike_above_ms: Option<f64>,
    /// The usual distance between intervals with output, in intervals.
    pub output_spacing: f64,
}

impl Stalls {
    /// How many intervals stalled.
    pub fn count(&self) -> usize {
        self.intervals.iter().flatten().count()
    }
}

/// The stalls of `latency`, `offered` telling per interval whether input
/// was offered in it.
pub fn find_stalls(latency: &LatencySeries, offered: &[bool]) -> Stalls {
    let n = latency.len();
    let with_output: Vec<usize> = (0..n).filter(|&i| latency.count[i] > 0).collect();
    let spacings: Vec<f64> = with_output
        .windows(2)
        .map(|pair| (pair[1] - pair[0]) as f64)
        .collect();
    let output_spacing = median(&spacings).unwrap_or(1.0);
    let p99s: Vec<f64> = with_output
        .iter()
        .filter_map(|&i| latency.p99_ms[i])
        .collect();
    let median_p99_ms = median(&p99s);
    let spike_above_ms = median_p99_ms
        .filter(|_| p99s.len() >= MIN_INTERVALS_FOR_SPIKES)
        .map(|m| (SPIKE_FACTOR * m).max(m + SPIKE_MARGIN_MS));
    let mut last_output: Option<usize> = None;
    let mut intervals = Vec::with_capacity(n);
    for i in 0..n {
        let stall = if latency.count[i] > 0 {
            last_output = Some(i);
            let p99 = latency.p99_ms[i];
            match (p99, spike_above_ms) {
                (Some(p99), Some(limit)) if p99 > limit => Some(Stall::Spike),
                _ => None,
            }
        } else {
            // Intervals since output last arrived, this one included.
            let silent_for = last_output.map_or(i + 1, |last| i - last) as f64;
            let was_offered = offered.get(i).copied().unwrap_or(true);
            (was_offered && silent_for >= (2.0 * output_spacing).max(2.0)).then_some(Stall::Silent)
        };
        intervals.push(stall);
    }
    Stalls {
        intervals,
        median_p99_ms,
        spike_above_ms,
        output_spacing,
    }
}

/// Per interval of `latency`, whether input reached the input topic in it:
/// its high watermark moved in the sample interval of `series` that ends
/// with it (within half an interval). Where the series has no such sample,
/// input counts as offered, as gendata offers it all through a window.
pub fn offered_per_interval(latency: &LatencySeries, series: &Series) -> Vec<bool> {
    let half_s = latency.interval_ms as f64 / 2000.0;
    latency
        .t_s
        .iter()
        .map(|&end_s| {
            series
                .t_s
                .iter()
                .zip(&series.offered_per_s)
                .filter(|(t, _)| (**t - end_s).abs() <= half_s)
                .min_by(|a, b| (a.0 - end_s).abs().total_cmp(&(b.0 - end_s).abs()))
                .is_none_or(|(_, offered)| *offered > 0.0)
        })
        .collect()
}

/// The stalls of a topic run's window: [`find_stalls`] with the input's
/// flow from the run's `series`.
pub fn judge_stalls(latency: &LatencySeries, series: &Series) -> Stalls {
    find_stalls(latency, &offered_per_interval(latency, series))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1 s interval series from (count, p99) pairs; p50 and max follow p99.
    fn crafted(intervals: &[(u64, f64)]) -> LatencySeries {
        let mut s = LatencySeries::new(1000);
        for (i, &(count, p99)) in intervals.iter().enumerate() {
            let seen = (count > 0).then_some(p99);
            s.t_s.push(i as f64 + 1.0);
            s.count.push(count);
            s.p50_ms.push(seen.map(|p| p / 2.0));
            s.p99_ms.push(seen);
            s.max_ms.push(seen.map(|p| p * 1.2));
        }
        s
    }

    fn stalled(stalls: &Stalls) -> Vec<(usize, Stall)> {
        stalls
            .intervals
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.map(|s| (i, s)))
            .collect()
    }

    #[test]
    fn a_steady_window_has_no_stall() {
        let s = crafted(&[
            (600, 20.0),
            (590, 25.0),
            (610, 18.0),
            (600, 60.0),
            (600, 22.0),
        ]);
        let stalls = find_stalls(&s, &[true; 5]);
        assert_eq!(stalls.count(), 0, "{stalls:?}");
        assert_eq!(stalls.median_p99_ms, Some(22.0));
        // max(10 x 22, 22 + 100)
        assert_eq!(stalls.spike_above_ms, Some(220.0));
        assert_eq!(stalls.output_spacing, 1.0);
    }

    #[test]
    fn a_gap_with_input_offered_stalls_from_its_second_interval_on() {
        let s = crafted(&[
            (600, 20.0),
            (600, 20.0),
            (0, 0.0),
            (0, 0.0),
            (0, 0.0),
            (600, 20.0),
            (600, 20.0),
        ]);
        let stalls = find_stalls(&s, &[true; 7]);
        assert_eq!(
            stalled(&stalls),
            vec![(3, Stall::Silent), (4, Stall::Silent)]
        );
    }

    #[test]
    fn output_that_stops_for_good_stalls_every_interval_after() {
        let s = crafted(&[(600, 20.0), (600, 20.0), (0, 0.0), (0, 0.0), (0, 0.0)]);
        assert_eq!(find_stalls(&s, &[true; 5]).count(), 2);
        // nothing at all in the window, with input offered all along
        let s = crafted(&[(0, 0.0), (0, 0.0), (0, 0.0)]);
        assert_eq!(find_stalls(&s, &[true; 3]).count(), 2);
    }

    #[test]
    fn a_spike_far_above_the_median_interval_p99_stalls() {
        let s = crafted(&[
            (600, 20.0),
            (600, 22.0),
            (300, 21.0),
            (900, 990.0),
            (600, 19.0),
        ]);
        let stalls = find_stalls(&s, &[true; 5]);
        assert_eq!(stalled(&stalls), vec![(3, Stall::Spike)]);
        // 10x the median but not 100 ms above it: a 1 ms product's blip
        let s = crafted(&[(600, 1.0), (600, 1.0), (600, 1.0), (600, 50.0)]);
        assert_eq!(find_stalls(&s, &[true; 4]).count(), 0);
        // 100 ms above but not 10x: a slow product's ordinary wobble
        let s = crafted(&[(600, 400.0), (600, 400.0), (600, 400.0), (600, 1500.0)]);
        assert_eq!(find_stalls(&s, &[true; 4]).count(), 0);
    }

    #[test]
    fn intervals_with_no_output_and_no_input_are_no_stall() {
        let s = crafted(&[(600, 20.0), (0, 0.0), (0, 0.0), (0, 0.0), (600, 20.0)]);
        let stalls = find_stalls(&s, &[true, false, false, false, true]);
        assert_eq!(stalls.count(), 0, "{stalls:?}");
    }

    #[test]
    fn a_single_empty_interval_is_no_stall() {
        // output about once an interval, one burst straddling a bound
        let s = crafted(&[(40, 30.0), (40, 30.0), (0, 0.0), (80, 35.0), (40, 30.0)]);
        assert_eq!(find_stalls(&s, &[true; 5]).count(), 0);
    }

    #[test]
    fn output_in_bursts_is_silent_between_them_by_design() {
        // commits every 4 s: output in one interval of four
        let mut pattern = Vec::new();
        for _ in 0..4 {
            pattern.extend([(4000, 4000.0), (0, 0.0), (0, 0.0), (0, 0.0)]);
        }
        let s = crafted(&pattern);
        let stalls = find_stalls(&s, &[true; 16]);
        assert_eq!(stalls.output_spacing, 4.0);
        assert_eq!(stalls.count(), 0, "{stalls:?}");
        // ... but a silence past twice the usual spacing stalls: the last
        // burst at 12, none until 26, stalls from 8 intervals on
        let mut late = pattern.clone();
        late.extend([(0, 0.0); 10]);
        late.push((4000, 4000.0));
        let stalls = find_stalls(&crafted(&late), &[true; 27]);
        assert_eq!(stalls.output_spacing, 4.0);
        assert_eq!(
            stalled(&stalls).iter().map(|(i, _)| *i).collect::<Vec<_>>(),
            (20..=25).collect::<Vec<_>>()
        );
    }

    #[test]
    fn too_few_intervals_with_output_judge_no_spike() {
        let s = crafted(&[(600, 20.0), (600, 2000.0)]);
        let stalls = find_stalls(&s, &[true; 2]);
        assert_eq!(stalls.spike_above_ms, None);
        assert_eq!(stalls.count(), 0);
    }

    #[test]
    fn offered_input_is_read_from_the_sample_interval_ending_with_each() {
        let latency = crafted(&[(1, 1.0), (1, 1.0), (1, 1.0), (1, 1.0)]);
        let series = Series {
            // warm-up samples, then the window's, each read a little late
            t_s: vec![-1.0, 0.0, 1.003, 2.002, 3.004],
            offered_per_s: vec![2000.0, 2000.0, 2000.0, 0.0, 2000.0],
            consumed_per_s: vec![0.0; 5],
            backlog: vec![0; 5],
            product_cpu_pct: vec![0.0; 5],
            product_mem_mb: vec![0.0; 5],
        };
        // the last interval has no sample: offered, as gendata runs on
        assert_eq!(
            offered_per_interval(&latency, &series),
            vec![true, false, true, true]
        );
    }
}
