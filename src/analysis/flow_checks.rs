//! Flow figures that check one another. offered/s, the input's growth,
//! consumed/s, the backlog's change and output/s are read by different
//! instruments (gendata's count, the input's high watermark, the product's
//! committed offset, the probe); on a sound run they agree. Where they do
//! not, one of them measured something else than the run's flow (a commit
//! cadence too coarse for the window, a generator whose count is not what
//! reached the input), and no capacity or latency is quoted from it.

use crate::results::Regime;

use super::window::Flow;

/// Everything the checks read, all over one window.
#[derive(Debug, Clone, Copy)]
pub struct FlowFigures<'a> {
    pub flow: &'a Flow,
    pub window_s: f64,
    pub regime: Regime,
    /// gendata's records in the window / window seconds.
    pub offered_per_s: f64,
    /// The probe's output records in the window / window seconds; None
    /// where the output is not a topic.
    pub output_per_s: Option<f64>,
    /// What the workload owes per consumed record; None where unknown.
    pub expected_selectivity: Option<f64>,
    /// bench.yaml's `tolerances`: offered/s against the input's growth.
    pub offered_vs_input: f64,
    /// output/s against consumed/s x the expected selectivity.
    pub output_vs_consumed: f64,
    /// The lag drift's keep-up band.
    pub lag_drift: f64,
}

/// |a - b| over the larger of the two; 0 when both are 0.
fn apart(a: f64, b: f64) -> f64 {
    let larger = a.abs().max(b.abs());
    if larger > 0.0 {
        (a - b).abs() / larger
    } else {
        0.0
    }
}

/// Each way the flow figures disagree, as a sentence; empty when they agree.
pub fn flow_disagreements(f: &FlowFigures<'_>) -> Vec<String> {
    let flow = f.flow;
    let mut found = Vec::new();
    // A committed offset that moved once in the window is a step: a line
    // fitted through a step has any slope from 0 to twice the true rate,
    // depending on where in the window the step fell.
    if flow.coarse_commits && flow.commit_moves < 2 {
        found.push(format!(
            "the committed offset moved {} time(s) in the {:.0} s window, too few to measure \
             consumption; a window of at least {:.0} s would span several commits",
            flow.commit_moves,
            f.window_s,
            (f.window_s * 3.0).ceil()
        ));
    }
    let input = apart(f.offered_per_s, flow.input_per_s);
    if input > f.offered_vs_input {
        found.push(format!(
            "gendata offered {:.1}/s but the input grew {:.1}/s ({:.1} % apart, tolerance {:.1} %)",
            f.offered_per_s,
            flow.input_per_s,
            input * 100.0,
            f.offered_vs_input * 100.0
        ));
    }
    if let (Some(output), Some(selectivity)) = (f.output_per_s, f.expected_selectivity) {
        let owed = flow.consumed_per_s * selectivity;
        let off = apart(output, owed);
        if off > f.output_vs_consumed {
            found.push(format!(
                "output/s {output:.1} against consumed/s {:.1} x the expected selectivity \
                 {selectivity:.4} = {owed:.1} ({:.1} % apart, tolerance {:.0} %)",
                flow.consumed_per_s,
                off * 100.0,
                f.output_vs_consumed * 100.0
            ));
        }
    }
    // The backlog's change between the window's bounds against the change
    // the fitted slopes imply. A sawtooth moves either bound by up to one
    // commit's step; a backlog that empties mid-window (draining) bends the
    // line, so only keep-up and saturated runs are held to it.
    let observed = (flow.backlog_last - flow.backlog_first) as f64;
    let implied = flow.backlog_slope_per_s * f.window_s;
    let step = flow.largest_commit_step as f64;
    let band = 2.0 * f.lag_drift * flow.consumed.max(1.0);
    let backlog_off = match f.regime {
        Regime::KeepUp => (observed - implied).abs() > step + band,
        Regime::Saturated => observed < implied / 2.0 - step,
        Regime::Draining => false,
    };
    if backlog_off {
        found.push(format!(
            "the backlog changed by {observed:.0} records between the window's bounds, where \
             the fitted slopes imply {implied:.0} ({} run)",
            f.regime.as_str()
        ));
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::window::{flow, OffsetRead};

    /// Offset reads every 100 ms over `window_s`: the input at `offered`/s,
    /// the committed offset as `committed_at(t)`.
    fn reads(window_s: f64, offered: f64, committed_at: impl Fn(f64) -> f64) -> Vec<OffsetRead> {
        (0..=(window_s * 10.0) as i64)
            .map(|i| {
                let t = i as f64 / 10.0;
                OffsetRead {
                    at_us: (t * 1e6) as i64,
                    committed: committed_at(t) as i64,
                    input_high: (100_000.0 + offered * t) as i64,
                }
            })
            .collect()
    }

    fn figures(flow: &Flow, window_s: f64, offered: f64, output: f64) -> FlowFigures<'_> {
        FlowFigures {
            flow,
            window_s,
            regime: crate::analysis::classify(flow.drift, 0.02),
            offered_per_s: offered,
            output_per_s: Some(output),
            expected_selectivity: Some(0.29),
            offered_vs_input: 0.02,
            output_vs_consumed: 0.25,
            lag_drift: 0.02,
        }
    }

    #[test]
    fn a_steady_run_with_fine_commits_agrees() {
        let f = flow(&reads(30.0, 10_000.0, |t| 99_000.0 + 10_000.0 * t), 30.0).unwrap();
        assert!(flow_disagreements(&figures(&f, 30.0, 10_000.0, 2_900.0)).is_empty());
    }

    #[test]
    fn one_second_commits_that_keep_up_agree() {
        let committed = |t: f64| 100_000.0 + 10_000.0 * (t.floor() - 0.5);
        let f = flow(&reads(30.0, 10_000.0, committed), 30.0).unwrap();
        assert!(f.coarse_commits);
        let found = flow_disagreements(&figures(&f, 30.0, 10_000.0, 2_900.0));
        assert!(found.is_empty(), "{found:?}");
    }

    /// The saturated run that recorded a capacity 30x too low: a product at
    /// about 485 records/s that stores its offsets a 2048-record chunk at a
    /// time, seen to commit once, late in an 8 s window, while 2000/s were
    /// offered. The step reads as a slope near zero; its output at the
    /// workload's selectivity says otherwise.
    #[test]
    fn a_single_late_commit_in_a_saturated_window_is_inconsistent() {
        let committed = |t: f64| if t < 7.7 { 4096.0 } else { 6144.0 };
        let f = flow(&reads(8.0, 2000.0, committed), 8.0).unwrap();
        assert!(f.consumed_per_s < 100.0, "the fit follows the step: {f:?}");
        let found = flow_disagreements(&figures(&f, 8.0, 2000.0, 140.8));
        assert!(
            found.iter().any(|w| w.contains("moved 1 time(s)")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|w| w.contains("output/s 140.8")),
            "{found:?}"
        );
    }

    #[test]
    fn chunked_commits_seen_several_times_measure_the_capacity() {
        // 2048 records every 4.2 s, first seen at 0.5 s: four moves in 16 s
        let committed = |t: f64| 2048.0 * (((t - 0.5) / 4.2).floor() + 1.0).max(0.0);
        let f = flow(&reads(16.0, 2000.0, committed), 16.0).unwrap();
        assert!((f.consumed_per_s - 2048.0 / 4.2).abs() < 10.0, "{f:?}");
        let found = flow_disagreements(&figures(&f, 16.0, 2000.0, 0.29 * 2048.0 / 4.2));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn an_offered_count_the_input_did_not_see_is_inconsistent() {
        let f = flow(&reads(15.0, 88_600.0, |t| 99_000.0 + 87_500.0 * t), 15.0).unwrap();
        let found = flow_disagreements(&figures(&f, 15.0, 92_000.0, 0.29 * 87_500.0));
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].contains("offered 92000.0/s"), "{}", found[0]);
        // within the tolerance, the same figures agree
        let found = flow_disagreements(&figures(&f, 15.0, 89_000.0, 0.29 * 87_500.0));
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn a_saturated_slope_whose_backlog_did_not_grow_is_inconsistent() {
        // The backlog stays flat for 12 s, then grows fast: the slope says
        // saturated with far more growth than the bounds show.
        let committed = |t: f64| {
            if t < 12.0 {
                99_900.0 + 92_000.0 * t
            } else {
                99_900.0 + 92_000.0 * 12.0 + 40_000.0 * (t - 12.0)
            }
        };
        let f = flow(&reads(15.0, 92_000.0, committed), 15.0).unwrap();
        let mut fig = figures(&f, 15.0, 92_000.0, 0.0);
        fig.output_per_s = None;
        fig.regime = Regime::Saturated;
        let observed = (f.backlog_last - f.backlog_first) as f64;
        let implied = f.backlog_slope_per_s * 15.0;
        assert!(observed > implied / 2.0, "{observed} {implied}");
        assert!(flow_disagreements(&fig).is_empty());
        // the same slope over bounds that show almost no growth
        let mut bent = f;
        bent.backlog_last = bent.backlog_first + 16_000;
        bent.backlog_slope_per_s = 67_000.0 / 15.0;
        fig.flow = &bent;
        let found = flow_disagreements(&fig);
        assert!(
            found.iter().any(|w| w.contains("changed by 16000")),
            "{found:?}"
        );
    }

    #[test]
    fn a_draining_backlog_is_not_held_to_a_straight_line() {
        let committed = |t: f64| 100_000.0 - 50_000.0 + (20_000.0 * t).min(50_000.0 + 10_000.0 * t);
        let f = flow(&reads(30.0, 10_000.0, committed), 30.0).unwrap();
        let mut fig = figures(&f, 30.0, 10_000.0, 0.29 * f.consumed_per_s);
        fig.regime = Regime::Draining;
        assert!(flow_disagreements(&fig).is_empty());
    }
}
