//! The noise floor of a line: an A/A check (the same line twice per round)
//! read as the release gate would read it. Per figure, the spread of its
//! per-round ratios, and the smallest change the gate would catch over as
//! many rounds with that spread: each A/A ratio moved by the change, in the
//! figure's worse direction, until `paired::regression` calls it one.

use super::paired::{self, PairedFigure, RatioSummary, RoundRatio, Verdict};
use crate::results::Better;
use crate::stats;

/// The largest change searched for, as a share: beyond it a figure's gate
/// is called blind.
const SEARCH_UP_TO: f64 = 1.0;
/// The search's step, as a share (0.1 %).
const SEARCH_STEP: f64 = 0.001;

/// One figure's A/A noise.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureNoise {
    pub metric: &'static str,
    /// Paired rounds.
    pub rounds: usize,
    /// The lowest and highest per-round ratio, less 1 (shares).
    pub spread: Option<(f64, f64)>,
    /// The smallest change in the worse direction that the gate at
    /// `threshold` would call a regression over these rounds; None when
    /// none up to [`SEARCH_UP_TO`] would be (too few rounds, or too wide a
    /// spread).
    pub detectable: Option<f64>,
    /// The A/A itself called a regression: the gate's false alarm.
    pub false_alarm: bool,
    /// Why the figure has no ratios, when it has none.
    pub not_comparable: Option<String>,
}

/// The noise of `figure`, an A/A comparison of a figure `better` in one
/// direction (None when no run had it), at the gate's `threshold` and
/// `tie_band` (shares).
pub fn figure_noise(
    figure: &PairedFigure,
    better: Option<Better>,
    threshold: f64,
    tie_band: f64,
) -> FigureNoise {
    let ratios: Vec<f64> = figure.rounds.iter().map(|r| r.ratio).collect();
    let reason = match &figure.verdict {
        Verdict::NotComparable { reason } => Some(reason.clone()),
        _ => None,
    };
    FigureNoise {
        metric: figure.metric,
        rounds: ratios.len(),
        spread: spread(&ratios),
        detectable: better.and_then(|b| detectable_change(figure, b, threshold, tie_band)),
        false_alarm: paired::regression(figure, threshold).is_some(),
        not_comparable: reason,
    }
}

/// The lowest and highest of `ratios`, less 1.
fn spread(ratios: &[f64]) -> Option<(f64, f64)> {
    let spread = stats::spread(ratios)?;
    Some((spread.min - 1.0, spread.max - 1.0))
}

/// The smallest change (a share) that, applied to every round of `figure`
/// in its worse direction, makes the gate call a regression.
pub fn detectable_change(
    figure: &PairedFigure,
    better: Better,
    threshold: f64,
    tie_band: f64,
) -> Option<f64> {
    let steps = (SEARCH_UP_TO / SEARCH_STEP).round() as usize;
    (1..=steps)
        .map(|step| step as f64 * SEARCH_STEP)
        .find(|&change| {
            let moved = moved_by(figure, better, change, tie_band);
            moved.is_some_and(|f| paired::regression(&f, threshold).is_some())
        })
}

/// `figure` with every ratio made worse by `change`: higher for a figure
/// better lower, lower for one better higher.
fn moved_by(
    figure: &PairedFigure,
    better: Better,
    change: f64,
    tie_band: f64,
) -> Option<PairedFigure> {
    let factor = match better {
        Better::Lower => 1.0 + change,
        Better::Higher => 1.0 / (1.0 + change),
    };
    let rounds: Vec<RoundRatio> = figure
        .rounds
        .iter()
        .map(|r| RoundRatio {
            round: r.round,
            ratio: r.ratio * factor,
        })
        .collect();
    let ratios: Vec<f64> = rounds.iter().map(|r| r.ratio).collect();
    let summary = RatioSummary::of_ratios(&ratios, better, tie_band)?;
    let verdict = match summary.separable(better) {
        Some(standing) => Verdict::Separable {
            standing,
            ratios: summary,
        },
        None => Verdict::NotSeparable { ratios: summary },
    };
    Some(PairedFigure {
        metric: figure.metric,
        rounds,
        verdict,
    })
}

impl FigureNoise {
    /// Whether the gate would see a change of `change` (a share) on this
    /// figure over these rounds.
    pub fn catches(&self, change: f64) -> bool {
        self.detectable.is_some_and(|d| d <= change)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::paired::compare_figure;
    use crate::analysis::paired::{RoundPair, RunFigures};
    use crate::results::figure::US_CPU_PER_RECORD;
    use crate::results::Metric;
    use std::collections::BTreeMap;

    const LOWER: Option<Better> = Some(Better::Lower);

    /// An A/A of CPU per record whose B runs stand at `ratios` of A's 10 µs.
    fn aa(ratios: &[f64]) -> PairedFigure {
        let a: Vec<BTreeMap<String, Metric>> = ratios
            .iter()
            .map(|_| {
                BTreeMap::from([(
                    US_CPU_PER_RECORD.name.to_string(),
                    Metric::new(10.0, "us", Better::Lower),
                )])
            })
            .collect();
        let b: Vec<BTreeMap<String, Metric>> = ratios
            .iter()
            .map(|r| {
                BTreeMap::from([(
                    US_CPU_PER_RECORD.name.to_string(),
                    Metric::new(10.0 * r, "us", Better::Lower),
                )])
            })
            .collect();
        let none = BTreeMap::new();
        let pairs: Vec<RoundPair<'_>> = (0..ratios.len())
            .map(|i| RoundPair {
                round: i as u32 + 1,
                a: RunFigures {
                    round: i as u32 + 1,
                    metrics: &a[i],
                    not_applicable: &none,
                },
                b: RunFigures {
                    round: i as u32 + 1,
                    metrics: &b[i],
                    not_applicable: &none,
                },
            })
            .collect();
        compare_figure(&pairs, US_CPU_PER_RECORD.name, 0.01)
    }

    #[test]
    fn a_quiet_aa_lets_the_threshold_decide() {
        // Five rounds within ±0.5 %: the median must pass 5 %, so about
        // 5 % (the median at 1.000) is the smallest change caught.
        let noise = figure_noise(&aa(&[1.0, 0.995, 1.005, 1.002, 0.998]), LOWER, 0.05, 0.01);
        assert_eq!(noise.rounds, 5);
        let (low, high) = noise.spread.unwrap();
        assert!((low + 0.005).abs() < 1e-9 && (high - 0.005).abs() < 1e-9);
        let d = noise.detectable.unwrap();
        assert!((0.050..=0.052).contains(&d), "{d}");
        assert!(!noise.false_alarm);
        assert!(noise.catches(0.06) && !noise.catches(0.04));
    }

    #[test]
    fn the_lowest_round_decides_a_noisy_aa() {
        // One round at 0.96: every round must clear the 1 % tie band, so
        // the change must lift 0.96 past 1.01, some 5.2 %.
        let noise = figure_noise(&aa(&[1.0, 0.96, 1.03, 1.01, 0.99]), LOWER, 0.05, 0.01);
        let d = noise.detectable.unwrap();
        let needed = 1.01 / 0.96 - 1.0;
        assert!(d >= needed && d < needed + 0.002, "{d} against {needed}");
        // The median at 1.0 alone would need 5 %: the spread decides here.
        assert!(d > 0.051);
    }

    #[test]
    fn four_rounds_catch_nothing() {
        // An exact sign test reaches p <= 0.05 from 5 rounds on.
        let noise = figure_noise(&aa(&[1.0, 1.0, 1.0, 1.0]), LOWER, 0.05, 0.01);
        assert_eq!(noise.detectable, None);
        assert!(!noise.catches(0.5));
        // Nor does a figure no run had.
        let none = figure_noise(&aa(&[1.0; 5]), None, 0.05, 0.01);
        assert_eq!(none.detectable, None);
    }

    #[test]
    fn an_aa_that_reads_as_a_regression_is_a_false_alarm() {
        let noise = figure_noise(&aa(&[1.08, 1.09, 1.07, 1.1, 1.06]), LOWER, 0.05, 0.01);
        assert!(noise.false_alarm);
    }

    #[test]
    fn a_figure_better_higher_is_moved_down() {
        let figure = aa(&[1.0, 1.0, 1.0, 1.0, 1.0]);
        let d = detectable_change(&figure, Better::Higher, 0.05, 0.01).unwrap();
        // Lower by 1/(1+d): past 5 % at the median.
        assert!(1.0 - 1.0 / (1.0 + d) > 0.05 - 1e-9, "{d}");
        assert!(d < 0.056, "{d}");
    }
}
