//! The one path that runs lines: their settings checked before anything
//! starts, the host's lock, the installs, the broker, the rounds, each
//! record as it ends, and the report.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use super::cache;
use crate::broker::BrokerSession;
use crate::cache::Cache;
use crate::cli::RunOptions;
use crate::clickhouse::SinkSession;
use crate::config::{
    Bench, BrokerConfig, ChaosPlan, LineBench, LineRef, Product, Setting, Suite, Workload,
    EMBEDDED, MIN_WINDOW_SAMPLES,
};
use crate::exit;
use crate::interrupt::{Interrupt, Interrupted};
use crate::isolation::{self, CpuSet, Role};
use crate::lock::{RunLock, WhenHeld};
use crate::model::host::HostInfo;
use crate::products::{self, Installation};
use crate::remote::Placements;
use crate::report::{self, BadLines};
use crate::results::{
    self, Isolation, Metric, Regime, RunConfig, RunRecord, Status, SweepTag, Verification,
};
use crate::runner::batch::{run_batch, BatchLine, BatchOutcome};
use crate::runner::{self, RunContext};
use crate::workloads;

/// One line of a batch, at a version (none: the product's default).
pub(super) struct LineEntry<'s> {
    pub(super) line: LineRef<'s>,
    pub(super) version: Option<&'s str>,
    /// Settings of this line alone (`LINE@KEY=VALUE`), over the batch's.
    pub(super) settings: Vec<Setting>,
    /// The rate of this entry alone (a sweep's), over `--rate`.
    pub(super) rate: Option<u64>,
    /// `run.parallelism` for this entry alone (a sweep's), set as
    /// `--set run.parallelism=N` would set it.
    pub(super) parallelism: Option<u32>,
}

impl<'s> LineEntry<'s> {
    /// `line` at its product's default version, with no settings of its own.
    pub(super) fn of(line: LineRef<'s>) -> LineEntry<'s> {
        LineEntry {
            line,
            version: None,
            settings: Vec::new(),
            rate: None,
            parallelism: None,
        }
    }

    /// The settings the entry adds over the batch's: its own, then its
    /// parallelism.
    fn own_settings(&self) -> Vec<Setting> {
        let mut settings = self.settings.clone();
        if let Some(n) = self.parallelism {
            settings.push(Setting {
                key: "run.parallelism".to_string(),
                value: n.to_string(),
            });
        }
        settings
    }

    /// The entry as progress lines name it: the line, its own settings,
    /// and a sweep's rate.
    fn label(&self) -> String {
        let mut label = std::iter::once(self.line.line.name.clone())
            .chain(self.own_settings().iter().map(Setting::to_string))
            .collect::<Vec<_>>()
            .join("@");
        if let Some(rate) = self.rate {
            label.push_str(&format!(" at {rate}/s"));
        }
        label
    }
}

/// What `suite run`, `suite batch` and `suite regress` ask for: lines to run
/// round by round.
pub(super) struct LinesRequest<'s> {
    pub(super) lines: Vec<LineEntry<'s>>,
    pub(super) workload: &'s Workload,
    /// Load, results folder, and waiting for the host.
    pub(super) options: RunOptions,
    pub(super) rounds: u32,
    pub(super) chaos: Option<ChaosPlan>,
    /// Records to pre-fill for a drain run.
    pub(super) drain: Option<u64>,
    /// bench.yaml settings changed for these runs.
    pub(super) settings: Vec<Setting>,
    /// The sweep these runs belong to.
    pub(super) sweep: Option<SweepTag>,
}

/// How a batch went: its id, where it was recorded, the version each entry
/// ran, and how many runs failed.
pub(super) struct LinesOutcome {
    pub(super) batch_id: String,
    pub(super) results_dir: PathBuf,
    pub(super) versions: Vec<String>,
    pub(super) failed: usize,
    /// Every record the batches wrote, in the order the runs ended.
    pub(super) records: Vec<RunRecord>,
}

/// A later batch of the same session: entries of the first batch (by
/// index) again, each at a rate of its own.
pub(super) struct NextBatch {
    pub(super) entries: Vec<(usize, u64)>,
    pub(super) sweep: Option<SweepTag>,
}

impl LinesOutcome {
    /// 1 when a run failed or failed its verification.
    pub(super) fn exit_code(&self) -> i32 {
        if self.failed > 0 {
            exit::ERROR
        } else {
            exit::OK
        }
    }

    /// The batch as `--json` prints it: every run's figures, and where the
    /// whole records are.
    pub(super) fn report<'o>(&'o self, workload: &'o str) -> BatchReport<'o> {
        BatchReport {
            batch_id: &self.batch_id,
            workload,
            results_file: results::results_file(&self.results_dir, workload),
            versions: &self.versions,
            runs: self.records.iter().map(RunReport::of).collect(),
            failed: self.failed,
            exit_code: self.exit_code(),
        }
    }

    /// Prints [`LinesOutcome::report`] on standard output when `json`, and
    /// returns the exit code either way.
    pub(super) fn finish(&self, workload: &str, json: bool) -> Result<i32> {
        if json {
            crate::outln!("{}", serde_json::to_string_pretty(&self.report(workload))?);
        }
        Ok(self.exit_code())
    }
}

/// `suite run`, `suite batch` and `suite chaos` with `--json`.
#[derive(Debug, Serialize)]
pub(super) struct BatchReport<'o> {
    /// The first batch's id (a sweep's later batches have their own, in
    /// each run's `batch_id`).
    batch_id: &'o str,
    workload: &'o str,
    /// The JSONL file that holds the runs' whole records.
    results_file: PathBuf,
    /// The version each line of the batch ran, in the order asked.
    versions: &'o [String],
    runs: Vec<RunReport<'o>>,
    /// Runs that failed or failed their verification.
    failed: usize,
    exit_code: i32,
}

/// One run of [`BatchReport`]: the record's verdicts and figures, without
/// its histograms and series.
#[derive(Debug, Serialize)]
pub(super) struct RunReport<'o> {
    run_id: &'o str,
    batch_id: &'o str,
    line: &'o str,
    product: &'o str,
    version: &'o str,
    round: Option<u32>,
    position: Option<u32>,
    status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    failure: Option<&'o str>,
    regime: Option<Regime>,
    flags: &'o [String],
    verification: Option<&'o Verification>,
    /// Every figure with its unit and which way is better.
    metrics: &'o BTreeMap<String, Metric>,
    not_applicable: &'o BTreeMap<String, String>,
}

impl<'o> RunReport<'o> {
    fn of(record: &'o RunRecord) -> RunReport<'o> {
        RunReport {
            run_id: &record.run_id,
            batch_id: &record.batch_id,
            line: &record.line,
            product: &record.product,
            version: &record.version,
            round: record.round,
            position: record.position,
            status: record.status,
            failure: record.failure.as_deref(),
            regime: record.regime,
            flags: &record.flags,
            verification: record.verification.as_ref(),
            metrics: &record.metrics,
            not_applicable: &record.not_applicable,
        }
    }
}

/// The one path of `suite run`, `suite batch` and `suite regress`: validate,
/// take the run lock, install every line, open the broker once, run the
/// rounds, record each run as it ends and re-render the report.
pub(super) fn run_lines(suite: &Suite, request: LinesRequest<'_>) -> Result<LinesOutcome> {
    run_lines_then(suite, request, |_| Ok(None))
}

/// [`run_lines`], then, holding the host and the broker, the batches `next`
/// asks for, each planned from every record written so far (a sweep's
/// bisection), until it asks for none.
pub(super) fn run_lines_then(
    suite: &Suite,
    request: LinesRequest<'_>,
    mut next: impl FnMut(&[RunRecord]) -> Result<Option<NextBatch>>,
) -> Result<LinesOutcome> {
    let workload = request.workload;
    let bench = suite.bench.with_settings(&request.settings)?;
    let configs = checked_configs(suite, &bench, &request)?;
    let folders = writable_folders(suite, &request)?;
    let interrupt = Interrupt::install()?;
    let cache = cache(suite)?;
    let holder = lock_holder(&request);
    let when_held = WhenHeld::from_no_wait(request.options.no_wait);
    let _lock = RunLock::acquire(&cache, &holder, when_held, &interrupt)?;
    let lines = install_lines(&request, configs, &cache, &interrupt)?;
    // Each role on its CPUs from here on: the broker and ClickHouse started
    // (or already running), the helpers and the product as they start.
    isolation::apply(&batch_isolation(&bench)?)?;
    let session = open_broker(&bench, &cache, &interrupt)?;
    // One ClickHouse for the batch, when its output lands there.
    let sink = workload
        .is_etl()
        .then(|| SinkSession::open(&bench.sink, &cache, &interrupt))
        .transpose()?;
    if let Some(pid) = sink.as_ref().and_then(SinkSession::pid) {
        isolation::pin_trees(&[pid as i32], Role::Broker)?;
    }
    let host = HostInfo::current();
    let placements =
        Placements::connect(&bench, lines.iter().map(|l| l.line.product.name.as_str()))?;
    let batch_id = results::new_run_id("batch");
    let ctx = RunContext {
        bench: &bench,
        cache: &cache,
        broker: &session.info,
        local_broker: session.local(),
        sink: sink.as_ref(),
        host: &host,
        placements: &placements,
        interrupt: &interrupt,
        batch_id: batch_id.clone(),
        chaos: request.chaos.clone(),
        suite_commit: crate::provenance::suite_commit(&suite.root),
        sweep: request.sweep.clone(),
    };
    let mut records = Vec::new();
    let mut recorded = |record: &RunRecord| {
        records.push(record.clone());
        record_run(suite, &folders, record)
    };
    let mut outcome = run_batch(&ctx, &lines, workload, request.rounds, &mut recorded);
    while let Ok(done) = &outcome {
        let Some(batch) = next(&records)? else {
            break;
        };
        let later = later_lines(&batch, &request, &lines);
        let ctx = RunContext {
            batch_id: results::new_run_id("batch"),
            sweep: batch.sweep.clone(),
            ..ctx.clone()
        };
        let failed = done.failed;
        let mut recorded = |record: &RunRecord| {
            records.push(record.clone());
            record_run(suite, &folders, record)
        };
        outcome = run_batch(&ctx, &later, workload, request.rounds, &mut recorded).map(|o| {
            BatchOutcome {
                runs: o.runs,
                failed: failed + o.failed,
            }
        });
    }
    close_sessions(&outcome, session, sink)?;
    Ok(LinesOutcome {
        batch_id,
        results_dir: folders.results,
        versions: lines
            .iter()
            .map(|l| l.installation.version.clone())
            .collect(),
        failed: outcome?.failed,
        records,
    })
}

/// Closes the broker's and ClickHouse's sessions after the batches, whatever
/// happened; an error other than an interruption leaves them to their drop.
fn close_sessions(
    outcome: &Result<BatchOutcome>,
    session: BrokerSession,
    sink: Option<SinkSession>,
) -> Result<()> {
    if outcome.is_ok() || outcome.as_ref().is_err_and(|err| err.is::<Interrupted>()) {
        if let Some(sink) = sink {
            sink.close()?;
        }
        session.close()?;
    }
    Ok(())
}

/// Every entry's run configuration, checked with the request before
/// anything starts.
fn checked_configs(
    suite: &Suite,
    bench: &Bench,
    request: &LinesRequest<'_>,
) -> Result<Vec<RunConfig>> {
    let window_s = checked_window(request, bench)?;
    let configs: Vec<RunConfig> = request
        .lines
        .iter()
        .map(|entry| line_config(suite, bench, request, entry, window_s))
        .collect::<Result<_>>()?;
    check_request(request, bench, &configs, window_s)?;
    Ok(configs)
}

/// What the host's run lock names as its holder: the lines, each once, and
/// the workload.
fn lock_holder(request: &LinesRequest<'_>) -> String {
    let mut names: Vec<&str> = Vec::new();
    for entry in &request.lines {
        if !names.contains(&entry.line.line.name.as_str()) {
            names.push(&entry.line.line.name);
        }
    }
    format!("{} {}", names.join(","), request.workload.name)
}

/// A later batch's lines: entries of the first (installed as `lines`), each
/// at the rate `batch` gives it.
fn later_lines<'s>(
    batch: &NextBatch,
    request: &LinesRequest<'s>,
    lines: &[BatchLine<'s>],
) -> Vec<BatchLine<'s>> {
    batch
        .entries
        .iter()
        .map(|&(i, rate)| BatchLine {
            line: lines[i].line,
            label: LineEntry {
                rate: Some(rate),
                settings: request.lines[i].settings.clone(),
                parallelism: request.lines[i].parallelism,
                ..LineEntry::of(lines[i].line)
            }
            .label(),
            installation: lines[i].installation.clone(),
            config: RunConfig {
                rate,
                ..lines[i].config.clone()
            },
        })
        .collect()
}

/// The window the request runs, checked against the samples it must span;
/// a drain run has none.
fn checked_window(request: &LinesRequest<'_>, bench: &Bench) -> Result<u64> {
    let defaults = &bench.run;
    if request.drain == Some(0) {
        anyhow::bail!(
            "--drain 0 leaves nothing to consume; give the number of records to pre-fill"
        );
    }
    // A drain run has no schedule: no rate, no warm-up, no window.
    if request.drain.is_some() {
        return Ok(0);
    }
    let window_s = request.options.window.unwrap_or(defaults.window_s);
    if let Err(min) = defaults.check_window(window_s) {
        anyhow::bail!(
            "--window {window_s} is too short: a window must span at least {MIN_WINDOW_SAMPLES} \
             samples, {min} s at bench.yaml's run.sample_interval_ms {}; use --window {min} or more",
            defaults.sample_interval_ms
        );
    }
    Ok(window_s)
}

/// One line's configuration: its product's expert profile when asked for,
/// then the batch's settings, then the line's own.
fn line_config(
    suite: &Suite,
    bench: &Bench,
    request: &LinesRequest<'_>,
    entry: &LineEntry<'_>,
    window_s: u64,
) -> Result<RunConfig> {
    let (options, workload, defaults) = (&request.options, request.workload, &bench.run);
    let drain = request.drain.is_some();
    let profile = options.profile;
    // `--deploy` first: a line's own `run.deploy` wins over it.
    let deploy = options.deploy.as_deref().map(Setting::deploy);
    let given: Vec<Setting> = deploy
        .into_iter()
        .chain(request.settings.iter().cloned())
        .chain(entry.own_settings())
        .collect();
    let LineBench {
        bench: own,
        product_settings,
    } = suite.bench.for_line(entry.line.product, profile, &given)?;
    check_deployment(entry.line.product, &own.run.deploy, workload)?;
    let delivery = entry.line.line.delivery;
    // A JVM line waits out its JIT however short the bench's warm-up.
    let least_warmup_s = defaults.warmup_s.max(entry.line.product.min_warmup_s);
    let rate = entry.rate.or(options.rate).unwrap_or(bench.default_rate());
    Ok(RunConfig {
        rate: if drain { 0 } else { rate },
        warmup_s: if drain {
            0
        } else {
            options.warmup.unwrap_or(least_warmup_s)
        },
        // The warm-up lasts until the product is steady unless `--warmup`
        // fixed it; a drain, an unpaced run (never steady against no
        // schedule) and an ETL run keep a fixed one.
        warmup_cap_s: (!drain && options.warmup.is_none() && rate > 0 && !workload.is_etl())
            .then_some(defaults.warmup_cap_s.max(least_warmup_s)),
        window_s,
        seed: defaults.seed,
        commit_interval_ms: own.run.commit_interval_ms.for_delivery(delivery),
        commit_intervals: Some(own.run.commit_interval_ms),
        client: own.client.clone(),
        settings: given.iter().map(Setting::to_string).collect(),
        profile,
        product_settings,
        parallelism: own.run.parallelism,
        deployment: own.run.deploy.clone(),
        hosts: placed_on(&own, &entry.line.product.name),
        sample_interval_ms: defaults.sample_interval_ms,
        input_partitions: workload.input.partitions,
        drain_records: request.drain,
        etl: workload.is_etl().then(|| own.etl.clone()),
        isolation: batch_isolation(bench)?,
    })
}

/// The batch's isolation on this host's CPUs: every run of a batch shares it.
fn batch_isolation(bench: &Bench) -> Result<Isolation> {
    isolation::resolve(&bench.isolation, &CpuSet::of_the_suite()?)
}

/// The hosts bench.yaml places `product` on, as the record names them.
pub(crate) fn placed_on(bench: &Bench, product: &str) -> Vec<String> {
    bench
        .hosts
        .get(product)
        .map(|hosts| hosts.iter().map(ToString::to_string).collect())
        .unwrap_or_default()
}

/// The product offers `deploy`, and the input has a partition for each of
/// its processes that read it: one more would wait idle for a share.
fn check_deployment(product: &Product, deploy: &str, workload: &Workload) -> Result<()> {
    let deployment = product.deployment(deploy).map_err(anyhow::Error::msg)?;
    let partitions = workload.input.partition_count();
    if deploy != EMBEDDED && deployment.consumers() > partitions {
        anyhow::bail!(
            "{}: deployment `{deploy}` runs {} processes that read the input, which needs a \
             partition for each; workload `{}` has {partitions} (give --set workload.partitions={})",
            product.name,
            deployment.consumers(),
            workload.name,
            deployment.consumers()
        );
    }
    Ok(())
}

/// What the workload and the broker allow of the request: a paced run
/// where the workload needs a schedule, and faults only where they can land.
fn check_request(
    request: &LinesRequest<'_>,
    bench: &Bench,
    configs: &[RunConfig],
    window_s: u64,
) -> Result<()> {
    let workload = request.workload;
    if let Some(config) = configs.iter().find(|c| c.rate == 0) {
        if workloads::topic_output(workload).is_some_and(|o| o.needs_schedule()) {
            anyhow::bail!(
                "workload `{}` needs a paced run: its records fall in windows by gendata's schedule, \
                 which {} has none of; give a rate above 0",
                workload.name,
                if config.drain_records.is_some() { "a drain run" } else { "rate 0" }
            );
        }
    }
    let Some(plan) = &request.chaos else {
        return Ok(());
    };
    if workloads::topic_output(workload).is_none() {
        anyhow::bail!(
            "chaos: workload `{}` writes to a table, and faults are injected into runs \
             that write a topic only",
            workload.name
        );
    }
    if let Some(fault) = plan.outside(window_s) {
        anyhow::bail!(
            "chaos: {fault} falls outside the {window_s} s window; choose a time inside it"
        );
    }
    if let Some(role) = &plan.member {
        for (entry, config) in request.lines.iter().zip(configs) {
            let product = entry.line.product;
            let deployment = product
                .deployment(&config.deployment)
                .map_err(anyhow::Error::msg)?;
            if !deployment.processes.iter().any(|p| &p.role == role) {
                let roles: Vec<&str> = deployment
                    .processes
                    .iter()
                    .map(|p| p.role.as_str())
                    .collect();
                anyhow::bail!(
                    "chaos: {} deployed `{}` has no member of role `{role}` (its roles: {}); \
                     choose a deployment with --deploy",
                    product.name,
                    config.deployment,
                    roles.join(", ")
                );
            }
        }
    }
    if plan.broker_restart_at_s.is_some() {
        if let BrokerConfig::External { bootstrap, .. } = &bench.broker {
            anyhow::bail!(
                "chaos: a broker restart needs the suite's local broker; this bench's broker \
                 is external ({bootstrap}), which the suite cannot kill or start"
            );
        }
    }
    Ok(())
}

/// Where the batch's records and pages go.
struct Folders {
    results: PathBuf,
    pages: PathBuf,
}

/// The results and report folders, checked writable before anything
/// starts: a record that cannot be written would cost the whole measurement.
fn writable_folders(suite: &Suite, request: &LinesRequest<'_>) -> Result<Folders> {
    let results = runner::results_dir(&suite.root, &suite.bench, request.options.results.clone());
    let pages = report::default_out_dir(&results);
    results::ensure_writable(&results).map_err(|err| {
        anyhow::anyhow!(
            "results folder {} cannot be written ({err}); choose another with --results",
            results.display()
        )
    })?;
    results::ensure_writable(&pages).map_err(|err| {
        anyhow::anyhow!(
            "report folder {} cannot be written ({err}); make it writable or choose another --results",
            pages.display()
        )
    })?;
    Ok(Folders { results, pages })
}

/// Installs every line first: a missing product fails before any run.
/// Entries of one product and version (a sweep's) share one install.
fn install_lines<'s>(
    request: &LinesRequest<'s>,
    configs: Vec<RunConfig>,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<Vec<BatchLine<'s>>> {
    let mut installed: Vec<(&str, Option<&str>, Installation)> = Vec::new();
    let mut lines = Vec::new();
    for (entry, config) in request.lines.iter().zip(configs) {
        let product = entry.line.product;
        let known = installed
            .iter()
            .find(|(name, version, _)| *name == product.name && *version == entry.version);
        let installation = match known {
            Some((_, _, installation)) => installation.clone(),
            None => {
                let installation =
                    products::ensure_installed(product, entry.version, cache, interrupt)?;
                installed.push((&product.name, entry.version, installation.clone()));
                installation
            }
        };
        lines.push(BatchLine {
            line: entry.line,
            label: entry.label(),
            installation,
            config,
        });
    }
    Ok(lines)
}

/// The bench's broker, a local one started and warmed when it was cold.
fn open_broker(bench: &Bench, cache: &Cache, interrupt: &Interrupt) -> Result<BrokerSession> {
    let mut session = BrokerSession::open(&bench.broker, cache, interrupt)?;
    if let Some(local) = session.local() {
        // A broker left running by an earlier batch moves to its CPUs too.
        let pids: Vec<i32> = local.running_pids().into_iter().map(|p| p as i32).collect();
        isolation::pin_trees(&pids, Role::Broker)?;
        let warmed = runner::warm_if_cold(
            local,
            bench.broker.warmup_s(),
            bench.iso_rate,
            cache,
            interrupt,
        )?;
        if warmed.is_some() {
            session.info.warmed_s = warmed;
        }
    }
    Ok(session)
}

/// Appends a run's record as it ends, prints its summary and re-renders
/// the pages: they always show the newest result, and a page that fails to
/// render never costs a measurement.
fn record_run(suite: &Suite, folders: &Folders, record: &RunRecord) -> Result<()> {
    let path = results::append_record(&folders.results, record)?;
    runner::print_summary(record);
    eprintln!("  appended to {}", path.display());
    match report::write_site(suite, &folders.results, &folders.pages, BadLines::Warn) {
        Ok(index) => eprintln!("  report: {}", index.display()),
        Err(err) => eprintln!("warning: the report was not updated: {err:#}"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn fixture_records() -> Vec<RunRecord> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/report/results/stateless.jsonl");
        results::read_records(&path).unwrap()
    }

    /// `--json`'s document holds each run as its record does, every figure
    /// with its unit and direction, and where the whole records are.
    #[test]
    fn the_json_document_holds_each_run_as_recorded() {
        let records: Vec<RunRecord> = fixture_records().into_iter().take(3).collect();
        let outcome = |failed| LinesOutcome {
            batch_id: records[0].batch_id.clone(),
            results_dir: PathBuf::from("/results"),
            versions: vec!["1.0".into()],
            failed,
            records: records.clone(),
        };
        let ok = outcome(0);
        let doc = serde_json::to_value(ok.report("stateless")).unwrap();
        assert_eq!(doc["results_file"], "/results/stateless.jsonl");
        assert_eq!(
            (doc["failed"].as_u64(), doc["exit_code"].as_i64()),
            (Some(0), Some(0))
        );
        let runs = doc["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 3);
        for (run, record) in runs.iter().zip(&records) {
            assert_eq!(run["run_id"], record.run_id.as_str());
            assert_eq!(run["status"], serde_json::to_value(record.status).unwrap());
            assert!(!record.metrics.is_empty());
            for (name, metric) in &record.metrics {
                let figure = &run["metrics"][name];
                assert_eq!(figure["value"].as_f64(), Some(metric.value), "{name}");
                assert_eq!(figure["unit"], metric.unit.as_str(), "{name}");
                assert_eq!(
                    figure["better"],
                    serde_json::to_value(metric.better).unwrap()
                );
            }
            // The histogram and series stay in the results file.
            assert!(run.get("latency_histogram").is_none() && run.get("series").is_none());
        }
        let failed = serde_json::to_value(outcome(2).report("stateless")).unwrap();
        assert_eq!(failed["exit_code"].as_i64(), Some(i64::from(exit::ERROR)));
    }
}
