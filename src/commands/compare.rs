//! `suite compare`: paired figures of two lines of one batch, round by
//! round, and the table `suite regress` prints too.

use std::collections::BTreeSet;

use anyhow::Result;

use crate::analysis::paired::{self, BenchPoint, PairedFigure, RunFigures, Side, Verdict};
use crate::cli::CompareArgs;
use crate::config::{LineBench, LineSpec, Setting, Suite, Workload};
use crate::model::host::HostInfo;
use crate::report::{self, BadLines};
use crate::results::{RunRecord, Status};
use crate::runner::{self};

/// `suite compare`: the paired ratios B / A of two lines of one batch.
pub(super) fn compare(suite: &Suite, args: CompareArgs) -> Result<i32> {
    let workload = suite.workload(&args.workload)?;
    for spec in [&args.a, &args.b] {
        suite.line(&spec.name, None)?;
    }
    if args.a == args.b {
        anyhow::bail!(
            "`suite compare` sets two different lines side by side; {} was given twice",
            args.a
        );
    }
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
    fn figures<'r>(runs: &[&'r RunRecord]) -> Vec<RunFigures<'r>> {
        runs.iter()
            .filter_map(|r| RunFigures::from_record(r))
            .collect()
    }
    let (runs_a, runs_b) = (figures(&shared.a), figures(&shared.b));
    let pairing = paired::pair_by_round(&runs_a, &runs_b);
    let tie_band = suite.bench.tolerances.tie_band;
    println!("B = {b} against A = {a} · {}", point_label(point));
    print_pairing(&shared.batch_id, &pairing);
    println!();
    print_paired(&paired::compare_figures(&pairing.pairs, tie_band), tie_band);
    Ok(0)
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
        .chain(spec.settings.iter().cloned())
        .collect();
    let LineBench {
        bench,
        product_settings,
    } = suite.bench.for_line(product, args.profile, &settings)?;
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
    })
}

/// The batch compared and how many of its rounds paired.
fn print_pairing(batch_id: &str, pairing: &paired::Pairing<'_>) {
    println!(
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
    println!(
        "{:<14} {:>2}  {:>10}  {:<24}  {:>6}  {:<16}  verdict",
        "figure", "n", "B/A median", "interval (coverage)", "p", "worse/better/tie"
    );
    for figure in figures {
        let label = paired_label(figure.metric);
        let Some(ratios) = figure.verdict.ratios() else {
            if let Verdict::NotComparable { reason } = &figure.verdict {
                println!(
                    "{label:<14} {:>2}  {:>10}  {:<24}  {:>6}  {:<16}  not comparable: {reason}",
                    "—", "—", "—", "—", "—"
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
        println!(
            "{label:<14} {:>2}  {:>10.3}  {interval:<24}  {p:>6}  {sign:<16}  {verdict}",
            ratios.n, ratios.median
        );
    }
    println!();
    println!(
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
    match metric {
        "us_cpu_per_record" => "µs CPU/record",
        "added_p50_ms" => "added p50",
        "added_p99_ms" => "added p99",
        "consumed_per_s" => "consumed/s",
        other => other,
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
