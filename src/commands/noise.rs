//! `suite noise`: a line's noise floor on this host. The same line twice per
//! round (entries 1 and 2 of one batch), its order rotating, read as
//! `suite regress` reads a release: per figure, the spread of the per-round
//! ratios and the smallest regression the gate would catch over as many
//! rounds. Its exit code: 0 when the A/A passes the gate, [`exit::REGRESSION`]
//! when the A/A itself reads as a regression (the gate's false alarm), 1 on
//! an error.

use anyhow::Result;
use serde::Serialize;

use crate::analysis::noise::{figure_noise, FigureNoise};
use crate::analysis::paired::{self, PairedFigure, RoundPair};
use crate::cli::NoiseArgs;
use crate::exit;
use crate::report::{self, BadLines};
use crate::results::Better;

use super::compare::paired_label;
use super::lines::{run_lines, LineEntry, LinesRequest};
use super::regress::{sides, MIN_REGRESS_ROUNDS};
use super::run::check_implements;

/// `suite noise LINE WORKLOAD`.
pub(super) fn noise(suite: &crate::config::Suite, args: NoiseArgs) -> Result<i32> {
    if !(args.threshold.is_finite() && args.threshold >= 0.0) {
        anyhow::bail!(
            "--threshold {} is not a percentage; give one of 0 or more, such as 5",
            args.threshold
        );
    }
    let line = suite.line(&args.line, None)?;
    let workload = suite.workload(&args.workload)?;
    check_implements(line, workload)?;
    let outcome = run_lines(
        suite,
        LinesRequest {
            lines: vec![LineEntry::of(line), LineEntry::of(line)],
            workload,
            options: args.options.clone(),
            rounds: args.repeat,
            chaos: None,
            drain: None,
            settings: args.settings.clone(),
            sweep: None,
        },
    )?;
    let results = report::load_results(&outcome.results_dir, BadLines::Warn)?;
    let (first, second) = sides(&results, &workload.name, &outcome.batch_id);
    let pairing = paired::pair_by_round(&first, &second);
    let tie_band = suite.bench.tolerances.tie_band;
    let threshold = args.threshold / 100.0;
    let figures: Vec<FigureNoise> = paired::compare_figures(&pairing.pairs, tie_band)
        .iter()
        .map(|f| figure_noise(f, direction(f, &pairing.pairs), threshold, tie_band))
        .collect();
    let heading = format!(
        "A/A of {} {} on {} · batch {} · {} round(s) paired · gate: worse by more than {} % \
         at the median, every round past the ±{} % tie band",
        line.line.name,
        outcome.versions[0],
        workload.name,
        outcome.batch_id,
        pairing.pairs.len(),
        args.threshold,
        tie_band * 100.0
    );
    let false_alarms = figures.iter().filter(|f| f.false_alarm).count();
    let code = if pairing.pairs.len() < MIN_REGRESS_ROUNDS as usize || outcome.failed > 0 {
        exit::ERROR
    } else if false_alarms > 0 {
        exit::REGRESSION
    } else {
        exit::OK
    };
    if args.json {
        eprintln!("{heading}");
        let report = NoiseReport {
            line: &args.line,
            workload: &args.workload,
            batch_id: &outcome.batch_id,
            version: &outcome.versions[0],
            rounds_paired: pairing.pairs.len(),
            rounds_unpaired: &pairing.unpaired,
            threshold_pct: args.threshold,
            tie_band,
            figures: figures.iter().map(FigureNoiseReport::new).collect(),
            failed_runs: outcome.failed,
            exit_code: code,
        };
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        crate::outln!("{heading}");
        crate::outln!();
        print_noise(&figures);
    }
    explain(code, pairing.pairs.len(), outcome.failed, false_alarms);
    Ok(code)
}

/// The direction of `figure`, as its runs record it.
fn direction(figure: &PairedFigure, pairs: &[RoundPair<'_>]) -> Option<Better> {
    pairs
        .iter()
        .find_map(|p| p.a.metrics.get(figure.metric))
        .map(|m| m.better)
}

/// The noise table on standard output.
fn print_noise(figures: &[FigureNoise]) {
    crate::outln!(
        "{:<14} {:>2}  {:<20}  {:<22}  false alarm",
        "figure",
        "n",
        "A/A spread",
        "smallest caught"
    );
    for figure in figures {
        let spread = figure.spread.map_or_else(
            || "—".to_string(),
            |(low, high)| format!("{:+.1} % … {:+.1} %", low * 100.0, high * 100.0),
        );
        let caught = match (figure.detectable, &figure.not_comparable) {
            (Some(change), _) => format!("{:.1} % worse", change * 100.0),
            (None, Some(why)) => format!("— ({why})"),
            (None, None) => "none up to 100 %".to_string(),
        };
        crate::outln!(
            "{:<14} {:>2}  {spread:<20}  {caught:<22}  {}",
            paired_label(figure.metric),
            figure.rounds,
            if figure.false_alarm { "YES" } else { "no" }
        );
    }
}

/// The verdict in one line on standard error.
fn explain(code: i32, paired: usize, failed: usize, false_alarms: usize) {
    match code {
        exit::OK => eprintln!("the A/A passes the gate: no figure reads as a regression"),
        exit::REGRESSION => eprintln!(
            "NOISY: the A/A itself reads as a regression on {false_alarms} figure(s); \
             the gate would raise false alarms on this host"
        ),
        _ if paired < MIN_REGRESS_ROUNDS as usize => eprintln!(
            "NOISE CHECK INCONCLUSIVE: only {paired} round(s) had a usable run of both \
             entries; at least {MIN_REGRESS_ROUNDS} are needed"
        ),
        _ => {
            eprintln!("{failed} run(s) failed or failed their verification; their records say why")
        }
    }
}

/// `suite noise --json`.
#[derive(Debug, Serialize)]
struct NoiseReport<'a> {
    line: &'a str,
    workload: &'a str,
    batch_id: &'a str,
    version: &'a str,
    rounds_paired: usize,
    rounds_unpaired: &'a [u32],
    threshold_pct: f64,
    tie_band: f64,
    figures: Vec<FigureNoiseReport>,
    failed_runs: usize,
    exit_code: i32,
}

/// One figure of [`NoiseReport`]; shares as percentages.
#[derive(Debug, Serialize)]
struct FigureNoiseReport {
    figure: &'static str,
    n: usize,
    spread_low_pct: Option<f64>,
    spread_high_pct: Option<f64>,
    /// The smallest regression the gate catches over these rounds; null
    /// when none up to 100 % would be caught.
    detectable_pct: Option<f64>,
    false_alarm: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

impl FigureNoiseReport {
    fn new(noise: &FigureNoise) -> FigureNoiseReport {
        let pct = |share: f64| (share * 1000.0).round() / 10.0;
        FigureNoiseReport {
            figure: noise.metric,
            n: noise.rounds,
            spread_low_pct: noise.spread.map(|s| pct(s.0)),
            spread_high_pct: noise.spread.map(|s| pct(s.1)),
            detectable_pct: noise.detectable.map(pct),
            false_alarm: noise.false_alarm,
            reason: noise.not_comparable.clone(),
        }
    }
}
