//! `suite compare`: paired figures of two lines of one batch, round by
//! round, and the table `suite regress` prints too.

use std::collections::BTreeSet;

use anyhow::Result;
use serde::Serialize;

use crate::analysis::paired::{self, BenchPoint, PairedFigure, RunFigures, Side, Verdict};
use crate::cli::CompareArgs;
use crate::config::{LineBench, LineSpec, Setting, Suite, Workload};
use crate::exit;
use crate::model::host::HostInfo;
use crate::report::{self, BadLines};
use crate::results::figure::US_CPU_PER_RECORD;
use crate::results::{Figure, RunRecord, Status};
use crate::runner::{self};

/// `suite compare`: the paired ratios B / A of two lines of one batch;
/// exits [`exit::NOT_SEPARABLE`] when no figure separates them.
pub(super) fn compare(suite: &Suite, args: CompareArgs) -> Result<i32> {
    let workload = suite.workload(&args.workload)?;
    two_known_lines(suite, &args)?;
    let (a, b) = (args.a.to_string(), args.b.to_string());
    let host = HostInfo::current();
    let point_of = |spec: &LineSpec| bench_point(suite, &args, workload, &host, spec);
    let side_a = Side {
        line: &args.a.name,
        point: point_of(&args.a)?,
    };
    let side_b = Side {
        line: &args.b.name,
        point: point_of(&args.b)?,
    };
    let point = &side_a.point;
    let results_dir = runner::results_dir(&suite.root, &suite.bench, args.results.clone());
    let results = report::load_results(&results_dir, BadLines::Warn)?;
    let records = results
        .get(&workload.name)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let Some(shared) = paired::newest_shared_batch(records, &side_a, &side_b) else {
        anyhow::bail!(
            "no batch in {} has both {a} and {b} at {}; {}; run `suite batch {a} {b} --workload {} --rate {} --window {}`",
            results_dir.display(),
            point_label(point),
            what_exists(records, &args.a.name, &args.b.name, point),
            workload.name,
            point.rate,
            point.window_s
        );
    };
    let (runs_a, runs_b) = (run_figures(&shared.a), run_figures(&shared.b));
    let pairing = paired::pair_by_round(&runs_a, &runs_b);
    let tie_band = suite.bench.tolerances.tie_band;
    let figures = paired::compare_figures(&pairing.pairs, tie_band);
    let separable = figures
        .iter()
        .any(|f| matches!(f.verdict, Verdict::Separable { .. }));
    let code = if separable {
        exit::OK
    } else {
        exit::NOT_SEPARABLE
    };
    if args.json {
        let report = CompareReport {
            a: &a,
            b: &b,
            workload: &workload.name,
            point: point_label(point),
            batch_id: &shared.batch_id,
            rounds_paired: pairing.pairs.len(),
            rounds_unpaired: &pairing.unpaired,
            significance: paired::SIGNIFICANCE,
            tie_band,
            figures: figures.iter().map(|f| FigureReport::new(f, None)).collect(),
            separable,
            exit_code: code,
        };
        crate::outln!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        crate::outln!("B = {b} against A = {a} · {}", point_label(point));
        print_pairing(&shared.batch_id, &pairing);
        crate::outln!();
        print_paired(&figures, tie_band);
    }
    if !separable {
        eprintln!(
            "not separable: no figure tells {b} from {a} in batch {} (exit {code}); more rounds may",
            shared.batch_id
        );
    }
    Ok(code)
}

/// Both lines are known, and they differ.
fn two_known_lines(suite: &Suite, args: &CompareArgs) -> Result<()> {
    for spec in [&args.a, &args.b] {
        suite.line(&spec.name, None)?;
    }
    if args.a == args.b {
        anyhow::bail!(
            "`suite compare` sets two different lines side by side; {} was given twice",
            args.a
        );
    }
    Ok(())
}

/// The figures of the runs that have them.
fn run_figures<'r>(runs: &[&'r RunRecord]) -> Vec<RunFigures<'r>> {
    runs.iter()
        .filter_map(|r| RunFigures::from_record(r))
        .collect()
}

/// `suite compare --json`: the batch compared and its paired figures.
#[derive(Debug, Serialize)]
struct CompareReport<'a> {
    a: &'a str,
    b: &'a str,
    workload: &'a str,
    /// The bench point in words, as the table's heading gives it.
    point: String,
    batch_id: &'a str,
    rounds_paired: usize,
    /// Rounds where only one line has a usable run.
    rounds_unpaired: &'a [u32],
    significance: f64,
    tie_band: f64,
    figures: Vec<FigureReport>,
    /// Whether any figure separates B from A.
    separable: bool,
    exit_code: i32,
}

/// One paired figure as `--json` gives it: ratios are B / A (current /
/// baseline for `suite regress`).
#[derive(Debug, Serialize)]
pub(super) struct FigureReport {
    figure: &'static str,
    /// Paired rounds with the figure; 0 when not comparable.
    n: usize,
    median_ratio: Option<f64>,
    interval_low: Option<f64>,
    interval_high: Option<f64>,
    /// The share of the time such an interval holds the median.
    interval_coverage: Option<f64>,
    sign_p: Option<f64>,
    rounds_worse: usize,
    rounds_better: usize,
    rounds_tied: usize,
    /// better, worse, not-separable or not-comparable.
    standing: &'static str,
    /// Why it is not comparable, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// `suite regress` alone: whether the figure regressed.
    #[serde(skip_serializing_if = "Option::is_none")]
    regression: Option<bool>,
}

impl FigureReport {
    pub(super) fn new(figure: &PairedFigure, regression: Option<bool>) -> FigureReport {
        let ratios = figure.verdict.ratios();
        let interval = ratios.and_then(|r| r.interval);
        let (standing, reason) = match &figure.verdict {
            Verdict::Separable { standing, .. } => (standing.as_str(), None),
            Verdict::NotSeparable { .. } => ("not-separable", None),
            Verdict::NotComparable { reason } => ("not-comparable", Some(reason.clone())),
        };
        FigureReport {
            figure: figure.metric,
            n: ratios.map_or(0, |r| r.n),
            median_ratio: ratios.map(|r| r.median),
            interval_low: interval.map(|i| i.low),
            interval_high: interval.map(|i| i.high),
            interval_coverage: interval.map(|i| i.coverage),
            sign_p: ratios.map(|r| r.sign.p),
            rounds_worse: ratios.map_or(0, |r| r.sign.worse),
            rounds_better: ratios.map_or(0, |r| r.sign.better),
            rounds_tied: ratios.map_or(0, |r| r.sign.ties),
            standing,
            reason,
            regression,
        }
    }
}

/// One side's point of a comparison: bench.yaml with that side's own
/// settings.
fn bench_point<'a>(
    suite: &'a Suite,
    args: &'a CompareArgs,
    workload: &'a Workload,
    host: &'a HostInfo,
    spec: &LineSpec,
) -> Result<BenchPoint<'a>> {
    let product = suite.line(&spec.name, None)?.product;
    let deploy = args.deploy.as_deref().map(Setting::deploy);
    let settings: Vec<Setting> = deploy
        .into_iter()
        .chain(args.settings.iter().cloned())
        .chain(spec.settings.iter().cloned())
        .collect();
    let LineBench {
        bench,
        product_settings,
    } = suite.bench.for_line(product, args.profile, &settings)?;
    let isolation =
        crate::isolation::resolve(&bench.isolation, &crate::isolation::CpuSet::of_the_suite()?)?;
    Ok(BenchPoint {
        profile: args.profile,
        product_settings,
        workload: &workload.name,
        rate: args.rate.unwrap_or(bench.default_rate()),
        window_s: args.window.unwrap_or(bench.run.window_s),
        commit_policy: bench.run.commit_interval_ms,
        client: bench.client,
        parallelism: bench.run.parallelism,
        deployment: bench.run.deploy.clone(),
        hosts: super::lines::placed_on(&suite.bench, &product.name),
        input_partitions: workload.input.partitions,
        etl: workload.is_etl().then(|| bench.etl.clone()),
        bench_version: suite.bench.bench_version,
        host,
        broker: suite.bench.broker.recorded_version(),
        replicas: suite.bench.broker.replicas(),
        nodes: suite.bench.broker.local_nodes(),
        isolation,
    })
}

/// The batch compared and how many of its rounds paired.
fn print_pairing(batch_id: &str, pairing: &paired::Pairing<'_>) {
    crate::outln!(
        "batch {batch_id} · {} round(s) paired{}",
        pairing.pairs.len(),
        if pairing.unpaired.is_empty() {
            String::new()
        } else {
            format!(
                " · without a pair (a run failed or is missing): round {}",
                pairing
                    .unpaired
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    );
}

/// The paired figures as an aligned table on standard output: for each,
/// the paired rounds, the median ratio, its interval with the interval's
/// coverage, the sign test's p and counts, and the verdict.
pub(super) fn print_paired(figures: &[PairedFigure], tie_band: f64) {
    crate::outln!(
        "{:<14} {:>2}  {:>10}  {:<24}  {:>6}  {:<16}  verdict",
        "figure",
        "n",
        "B/A median",
        "interval (coverage)",
        "p",
        "worse/better/tie"
    );
    for figure in figures {
        let label = paired_label(figure.metric);
        let Some(ratios) = figure.verdict.ratios() else {
            if let Verdict::NotComparable { reason } = &figure.verdict {
                crate::outln!(
                    "{label:<14} {:>2}  {:>10}  {:<24}  {:>6}  {:<16}  not comparable: {reason}",
                    "—",
                    "—",
                    "—",
                    "—",
                    "—"
                );
            }
            continue;
        };
        let interval = match &ratios.interval {
            Some(i) => format!("{:.3} – {:.3} ({} %)", i.low, i.high, percent(i.coverage)),
            None => "— (under 3 rounds)".to_string(),
        };
        let p = if ratios.sign.p < 0.001 {
            "<0.001".to_string()
        } else {
            format!("{:.3}", ratios.sign.p)
        };
        let sign = format!(
            "{}/{}/{}",
            ratios.sign.worse, ratios.sign.better, ratios.sign.ties
        );
        let verdict = match &figure.verdict {
            Verdict::Separable { standing, .. } => format!("B {}", standing.as_str()),
            _ => format!("not separable: {}", ratios.not_separable_because()),
        };
        crate::outln!(
            "{label:<14} {:>2}  {:>10.3}  {interval:<24}  {p:>6}  {sign:<16}  {verdict}",
            ratios.n,
            ratios.median
        );
    }
    crate::outln!();
    crate::outln!(
        "interval: order statistics of the per-round ratios, with the share of the time \
         such an interval holds the median; p: exact one-sided sign test, a round within \
         1 ± {tie_band} counting as a tie and left out; B is worse or better only when \
         the interval is clear of 1 and p <= {}",
        paired::SIGNIFICANCE
    );
}

/// A share as a percentage with no trailing zeros: 0.9375 -> 93.75.
fn percent(share: f64) -> String {
    let text = format!("{:.2}", share * 100.0);
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The label of a figure of [`paired::PAIRED_METRICS`].
pub(super) fn paired_label(metric: &str) -> &str {
    match Figure::named(metric) {
        // The console has no unit column: the label carries the unit.
        Some(figure) if figure.name == US_CPU_PER_RECORD.name => "µs CPU/record",
        Some(figure) => figure.label,
        None => metric,
    }
}

/// A bench point in words.
fn point_label(point: &BenchPoint<'_>) -> String {
    format!(
        "{} · rate {}/s · window {} s · commit {}/{} ms (eos/alos) · parallelism {} · deployment {} · {} input partition(s) · bench_version {} · broker {} · this host",
        point.workload,
        point.rate,
        point.window_s,
        point.commit_policy.exactly_once,
        point.commit_policy.at_least_once,
        point.parallelism,
        point.deployment,
        point.input_partitions,
        point.bench_version,
        point.broker.as_deref().unwrap_or("of no recorded version")
    )
}

/// What the results hold for lines `a` and `b`, for the error when no batch
/// has both at the point.
fn what_exists(records: &[RunRecord], a: &str, b: &str, point: &BenchPoint<'_>) -> String {
    let describe = |line: &str| {
        let at_point: BTreeSet<&str> = records
            .iter()
            .filter(|r| r.line == line && r.status == Status::Ok && point.holds(r))
            .map(|r| r.batch_id.as_str())
            .collect();
        let elsewhere: BTreeSet<String> = records
            .iter()
            .filter(|r| r.line == line && !point.holds(r))
            .map(|r| {
                let (rate, window) = (r.config.rate, r.config.window_s);
                if (rate, window) == (point.rate, point.window_s) {
                    format!("rate {rate} window {window} s with another configuration, bench_version, broker or host")
                } else {
                    format!("rate {rate} window {window} s")
                }
            })
            .collect();
        let mut text = format!("{line}: {} batch(es) at this point", at_point.len());
        if !elsewhere.is_empty() {
            text.push_str(&format!(
                ", runs elsewhere ({})",
                elsewhere.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        text
    };
    format!("{}; {}", describe(a), describe(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::paired::{RatioSummary, SignTest, Standing};
    use crate::results::figure::{ADDED_P50_MS, US_CPU_PER_RECORD};
    use crate::stats::QuotedInterval;

    /// A paired figure's JSON: its ratios and interval as numbers, its
    /// standing in the documented words, `regression` only from regress.
    #[test]
    fn a_paired_figure_serializes_its_ratios_and_standing() {
        let ratios = RatioSummary {
            n: 5,
            median: 1.5,
            interval: Some(QuotedInterval {
                low: 1.39,
                high: 1.7,
                coverage: 0.9375,
                n: 5,
            }),
            sign: SignTest {
                better: 0,
                worse: 5,
                ties: 0,
                p: 0.03125,
            },
        };
        let worse = PairedFigure {
            metric: US_CPU_PER_RECORD.name,
            rounds: Vec::new(),
            verdict: Verdict::Separable {
                standing: Standing::Worse,
                ratios,
            },
        };
        let json = serde_json::to_value(FigureReport::new(&worse, None)).unwrap();
        assert_eq!(json["figure"], US_CPU_PER_RECORD.name);
        assert_eq!(json["standing"], "worse");
        assert_eq!(
            (json["n"].as_u64(), json["median_ratio"].as_f64()),
            (Some(5), Some(1.5))
        );
        assert_eq!(
            (
                json["interval_low"].as_f64(),
                json["interval_high"].as_f64()
            ),
            (Some(1.39), Some(1.7))
        );
        assert_eq!(json["interval_coverage"].as_f64(), Some(0.9375));
        assert_eq!(json["sign_p"].as_f64(), Some(0.03125));
        assert_eq!(
            (
                json["rounds_worse"].as_u64(),
                json["rounds_better"].as_u64()
            ),
            (Some(5), Some(0))
        );
        assert!(json.get("regression").is_none() && json.get("reason").is_none());

        let not_comparable = PairedFigure {
            metric: ADDED_P50_MS.name,
            rounds: Vec::new(),
            verdict: Verdict::NotComparable {
                reason: "round 1, A: saturated".into(),
            },
        };
        let json = serde_json::to_value(FigureReport::new(&not_comparable, Some(false))).unwrap();
        assert_eq!(json["standing"], "not-comparable");
        assert_eq!(json["reason"], "round 1, A: saturated");
        assert_eq!(json["n"], 0);
        assert!(json["median_ratio"].is_null());
        assert_eq!(json["regression"], false);
    }
}
