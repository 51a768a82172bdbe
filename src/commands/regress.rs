//! `suite regress`: one line at a baseline version and as it is now,
//! interleaved round by round in one batch, judged on the paired figures;
//! the command a release check or a CI job calls. Its exit code is its
//! verdict: 0 no regression, [`exit::REGRESSION`] a regression, 1 an error
//! (a run failed, too few rounds paired), 2 a usage error.

use std::collections::BTreeMap;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::paired::{self, PairedFigure, Pairing, RunFigures};
use crate::cli::RegressArgs;
use crate::exit;
use crate::report::{self, BadLines};
use crate::results::RunRecord;

use super::compare::{paired_label, print_paired, FigureReport};
use super::lines::{run_lines, LineEntry, LinesOutcome, LinesRequest};
use super::run::check_implements;

/// The fewest rounds a regression check judges from: an exact one-sided
/// sign test reaches p <= 0.05 only from 5 rounds on (1/32 when all agree).
pub(super) const MIN_REGRESS_ROUNDS: u32 = 5;

/// `suite regress`: the line at `--baseline` (entry 1 of the batch) and as
/// it is now (entry 2), their order rotating round by round; a regression
/// is a paired figure separably worse (the interval on the worse side,
/// sign-test p <= 0.05) and by more than the threshold at the median.
pub(super) fn regress(suite: &crate::config::Suite, args: RegressArgs) -> Result<i32> {
    if !(args.threshold.is_finite() && args.threshold >= 0.0) {
        anyhow::bail!(
            "--threshold {} is not a percentage; give one of 0 or more, such as 5",
            args.threshold
        );
    }
    if args.repeat < MIN_REGRESS_ROUNDS {
        anyhow::bail!(
            "--repeat {} is too few: a sign test over fewer than {MIN_REGRESS_ROUNDS} rounds \
             never reaches p <= 0.05, so no regression could be found; give --repeat \
             {MIN_REGRESS_ROUNDS} or more",
            args.repeat
        );
    }
    let line = suite.line(&args.line, None)?;
    let workload = suite.workload(&args.workload)?;
    check_implements(line, workload)?;
    let entry = |version| LineEntry {
        version,
        ..LineEntry::of(line)
    };
    let outcome = run_lines(
        suite,
        LinesRequest {
            lines: vec![entry(Some(&args.baseline)), entry(args.current.as_deref())],
            workload,
            options: args.options.clone(),
            rounds: args.repeat,
            chaos: None,
            drain: None,
            settings: Vec::new(),
            sweep: None,
        },
    )?;
    let results = report::load_results(&outcome.results_dir, BadLines::Warn)?;
    let (baseline, current) = sides(&results, &workload.name, &outcome.batch_id);
    let pairing = paired::pair_by_round(&baseline, &current);
    let tie_band = suite.bench.tolerances.tie_band;
    let figures = paired::compare_figures(&pairing.pairs, tie_band);
    let threshold = args.threshold / 100.0;
    let verdict = judge(&figures, &pairing, threshold, &outcome);
    let heading = format!(
        "B = {} {} (current) against A = {} (baseline) · batch {} · {} round(s) paired",
        line.line.name,
        outcome.versions[1],
        outcome.versions[0],
        outcome.batch_id,
        pairing.pairs.len()
    );
    if args.json {
        eprintln!("{heading}");
        let report = RegressReport::new(&args, &outcome, &pairing, &figures, &verdict, tie_band);
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        crate::outln!("{heading}");
        crate::outln!();
        print_paired(&figures, tie_band);
        crate::outln!();
    }
    verdict.explain(args.threshold, args.json);
    Ok(verdict.exit_code())
}

/// The runs of a regression batch, baseline (entry 1) and current (entry 2);
/// of an A/A batch, the line's first entry and its second.
pub(super) fn sides<'r>(
    results: &'r BTreeMap<String, Vec<RunRecord>>,
    workload: &str,
    batch_id: &str,
) -> (Vec<RunFigures<'r>>, Vec<RunFigures<'r>>) {
    let (mut baseline, mut current) = (Vec::new(), Vec::new());
    for record in results
        .get(workload)
        .into_iter()
        .flatten()
        .filter(|r| r.batch_id == batch_id)
    {
        let side = match record.entry {
            Some(1) => &mut baseline,
            Some(2) => &mut current,
            _ => continue,
        };
        side.extend(RunFigures::from_record(record));
    }
    (baseline, current)
}

/// What a regression check found.
#[derive(Debug, Clone, PartialEq)]
enum RegressVerdict {
    /// Fewer rounds than [`MIN_REGRESS_ROUNDS`] had a usable run of both.
    Inconclusive {
        paired: usize,
    },
    /// Figures worse beyond the threshold: each with its median change and p.
    Regression(Vec<(&'static str, f64, f64)>),
    /// No regression, but a run failed or failed its verification.
    RunsFailed {
        failed: usize,
    },
    NoRegression,
}

/// The verdict of `figures` over `pairing` at `threshold` (a share).
fn judge(
    figures: &[PairedFigure],
    pairing: &Pairing<'_>,
    threshold: f64,
    outcome: &LinesOutcome,
) -> RegressVerdict {
    if pairing.pairs.len() < MIN_REGRESS_ROUNDS as usize {
        return RegressVerdict::Inconclusive {
            paired: pairing.pairs.len(),
        };
    }
    let regressions: Vec<(&'static str, f64, f64)> = figures
        .iter()
        .filter_map(|f| {
            let p = f.verdict.ratios().map_or(1.0, |r| r.sign.p);
            paired::regression(f, threshold).map(|change| (f.metric, change, p))
        })
        .collect();
    if !regressions.is_empty() {
        RegressVerdict::Regression(regressions)
    } else if outcome.failed > 0 {
        RegressVerdict::RunsFailed {
            failed: outcome.failed,
        }
    } else {
        RegressVerdict::NoRegression
    }
}

impl RegressVerdict {
    fn exit_code(&self) -> i32 {
        match self {
            RegressVerdict::NoRegression => exit::OK,
            RegressVerdict::Regression(_) => exit::REGRESSION,
            RegressVerdict::Inconclusive { .. } | RegressVerdict::RunsFailed { .. } => exit::ERROR,
        }
    }

    /// The verdict's name in the JSON output.
    fn name(&self) -> &'static str {
        match self {
            RegressVerdict::NoRegression => "no-regression",
            RegressVerdict::Regression(_) => "regression",
            RegressVerdict::Inconclusive { .. } => "inconclusive",
            RegressVerdict::RunsFailed { .. } => "runs-failed",
        }
    }

    /// The verdict in one line: standard output when all is well, standard
    /// error otherwise, and always when standard output holds the JSON.
    fn explain(&self, threshold_pct: f64, json: bool) {
        let rule = format!(
            "worse by more than {threshold_pct} % at the median, interval on the worse side, \
             p <= {}",
            paired::SIGNIFICANCE
        );
        match self {
            RegressVerdict::NoRegression if json => {
                eprintln!("no regression: no paired figure is {rule}")
            }
            RegressVerdict::NoRegression => {
                crate::outln!("no regression: no paired figure is {rule}")
            }
            RegressVerdict::Regression(figures) => {
                let list: Vec<String> = figures
                    .iter()
                    .map(|(metric, change, p)| {
                        format!(
                            "{} {:+.1} % (p {p:.3})",
                            paired_label(metric),
                            change * 100.0
                        )
                    })
                    .collect();
                eprintln!("REGRESSION: {rule}: {}", list.join(", "));
            }
            RegressVerdict::Inconclusive { paired } => eprintln!(
                "REGRESSION CHECK INCONCLUSIVE: only {paired} round(s) had a usable run of both \
                 versions; at least {MIN_REGRESS_ROUNDS} are needed"
            ),
            RegressVerdict::RunsFailed { failed } => eprintln!(
                "no regression found, but {failed} run(s) failed or failed their verification; \
                 their records say why"
            ),
        }
    }
}

/// `suite regress --json`: the check, its table and its verdict.
#[derive(Debug, Serialize)]
struct RegressReport<'a> {
    line: &'a str,
    workload: &'a str,
    batch_id: &'a str,
    baseline: &'a str,
    current: &'a str,
    rounds_paired: usize,
    /// Rounds where only one version has a usable run.
    rounds_unpaired: &'a [u32],
    threshold_pct: f64,
    significance: f64,
    tie_band: f64,
    figures: Vec<FigureReport>,
    /// no-regression, regression, inconclusive or runs-failed.
    verdict: &'static str,
    exit_code: i32,
}

impl<'a> RegressReport<'a> {
    fn new(
        args: &'a RegressArgs,
        outcome: &'a LinesOutcome,
        pairing: &'a Pairing<'_>,
        figures: &[PairedFigure],
        verdict: &RegressVerdict,
        tie_band: f64,
    ) -> RegressReport<'a> {
        let regressed: Vec<&str> = match verdict {
            RegressVerdict::Regression(list) => list.iter().map(|(m, ..)| *m).collect(),
            _ => Vec::new(),
        };
        RegressReport {
            line: &args.line,
            workload: &args.workload,
            batch_id: &outcome.batch_id,
            baseline: &outcome.versions[0],
            current: &outcome.versions[1],
            rounds_paired: pairing.pairs.len(),
            rounds_unpaired: &pairing.unpaired,
            threshold_pct: args.threshold,
            significance: paired::SIGNIFICANCE,
            tie_band,
            figures: figures
                .iter()
                .map(|f| FigureReport::new(f, Some(regressed.contains(&f.metric))))
                .collect(),
            verdict: verdict.name(),
            exit_code: verdict.exit_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::results::figure::US_CPU_PER_RECORD;
    use std::path::PathBuf;

    use super::*;
    use crate::results::{Better, Metric};

    fn outcome(failed: usize) -> LinesOutcome {
        LinesOutcome {
            batch_id: "b".into(),
            results_dir: PathBuf::from("/r"),
            versions: vec!["1".into(), "2".into()],
            failed,
            records: Vec::new(),
        }
    }

    /// The verdict over five rounds of CPU per record, the baseline's 10 µs
    /// against `current`, with `failed` runs in the batch.
    fn verdict_of(current: f64, rounds: u32, failed: usize) -> RegressVerdict {
        let cpu = |v: f64| {
            BTreeMap::from([(
                US_CPU_PER_RECORD.name.to_string(),
                Metric::new(v, "µs", Better::Lower),
            )])
        };
        let (a, b, none) = (cpu(10.0), cpu(current), BTreeMap::new());
        let runs = |metrics| -> Vec<RunFigures<'_>> {
            (1..=rounds)
                .map(|round| RunFigures {
                    round,
                    metrics,
                    not_applicable: &none,
                })
                .collect()
        };
        let (baseline, now) = (runs(&a), runs(&b));
        let pairing = paired::pair_by_round(&baseline, &now);
        let figures = paired::compare_figures(&pairing.pairs, 0.01);
        judge(&figures, &pairing, 0.05, &outcome(failed))
    }

    #[test]
    fn the_exit_code_tells_a_regression_from_an_error() {
        let regressed = verdict_of(12.0, 5, 0);
        assert!(
            matches!(&regressed, RegressVerdict::Regression(f) if f[0].0 == US_CPU_PER_RECORD.name)
        );
        assert_eq!(regressed.exit_code(), exit::REGRESSION);
        assert_eq!(regressed.name(), "regression");
        // A regression found outranks a failed run: both would fail a gate,
        // and the regression is what the check was for.
        assert_eq!(verdict_of(12.0, 5, 1).exit_code(), exit::REGRESSION);
        let same = verdict_of(10.0, 5, 0);
        assert_eq!((same.exit_code(), same.name()), (0, "no-regression"));
        let failed = verdict_of(10.0, 5, 2);
        assert_eq!(failed, RegressVerdict::RunsFailed { failed: 2 });
        assert_eq!(failed.exit_code(), 1);
        let short = verdict_of(12.0, 4, 0);
        assert_eq!(short, RegressVerdict::Inconclusive { paired: 4 });
        assert_eq!(short.exit_code(), 1);
    }
}
