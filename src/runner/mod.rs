//! One run's phases, and batches of runs.
//!
//! A run: fresh per-run topics -> product started and ready -> probe ready ->
//! gendata on its schedule -> warm-up -> measurement window -> everything
//! stopped -> one record appended. A failed run is recorded, not fatal to the
//! batch; an interrupted run tears everything down and records nothing.

mod progress;
mod summary;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use crate::broker::admin::{self, OffsetReader, TopicRequest};
use crate::broker::BrokerInfo;
use crate::cache::Cache;
use crate::clock::{now_us, sleep_until_us};
use crate::config::{Bench, LineRef, Workload};
use crate::gendata::GendataSummary;
use crate::host::HostInfo;
use crate::interrupt::{Interrupt, Interrupted};
use crate::probe::{ProbeSummary, READY_LINE as PROBE_READY};
use crate::process::Supervised;
use crate::products::{self, Availability, LaunchSettings};
use crate::results::{Better, Metric, RunConfig, RunRecord, Status, SCHEMA_VERSION};
use progress::Progress;

/// How long gendata and the probe may take to finish after the window.
const HELPER_EXIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Time between gendata's start command and its first slot.
const SCHEDULE_LEAD: Duration = Duration::from_millis(500);

/// Everything a batch of runs shares.
pub struct RunContext<'a> {
    pub bench: &'a Bench,
    pub cache: &'a Cache,
    pub broker: &'a BrokerInfo,
    pub host: &'a HostInfo,
    pub interrupt: &'a Interrupt,
    pub batch_id: String,
}

/// The topics and group of one run; named after the run so nothing is shared.
struct RunNames {
    input: String,
    output: String,
    group: String,
}

impl RunNames {
    fn for_run(run_id: &str) -> RunNames {
        RunNames {
            input: format!("ss-{run_id}-in"),
            output: format!("ss-{run_id}-out"),
            group: format!("ss-{run_id}"),
        }
    }
}

/// Offsets read at one instant.
#[derive(Debug, Clone, Copy)]
struct OffsetSample {
    at_us: i64,
    committed: i64,
}

/// What the measuring phases produced, before it becomes figures.
struct Measured {
    start: OffsetSample,
    end: OffsetSample,
    gendata: GendataSummary,
    probe: ProbeSummary,
}

/// A new run id: UTC time, line and a few random bits, safe in topic names.
pub fn new_run_id(line: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!(
        "{}-{line}-{:04x}",
        chrono::Utc::now().format("%Y%m%dT%H%M%SZ"),
        (nanos ^ std::process::id()) & 0xffff
    )
}

/// Runs `line` on `workload` once and returns its record, ok or failed.
/// Only an interruption (or a failure before anything started) is an error.
pub fn run_once(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    workload: &Workload,
    config: &RunConfig,
) -> Result<RunRecord> {
    if let Availability::NotInstalled { hint } = products::availability(line.product) {
        return Err(anyhow!(
            "{} is not installed here: {hint}",
            line.product.name
        ));
    }
    let run_id = new_run_id(&line.line.name);
    let log_dir = ctx.cache.run_dir(&run_id);
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let mut record = RunRecord {
        schema: SCHEMA_VERSION,
        run_id: run_id.clone(),
        batch_id: ctx.batch_id.clone(),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        bench_version: ctx.bench.bench_version,
        host: ctx.host.clone(),
        broker: ctx.broker.clone(),
        product: line.product.name.clone(),
        line: line.line.name.clone(),
        version: line.product.resolved_version(),
        workload: workload.name.clone(),
        delivery: line.line.delivery,
        config: config.clone(),
        status: Status::Ok,
        failure: None,
        metrics: BTreeMap::new(),
        gendata: None,
        latency_histogram: None,
        logs: log_dir.clone(),
    };
    let names = RunNames::for_run(&run_id);
    let outcome = measure(ctx, line, workload, config, &names, &log_dir);
    // teardown: the run's topics go whatever happened
    if let Err(err) = admin::delete_topics(&ctx.broker.bootstrap, &[&names.input, &names.output]) {
        eprintln!("warning: {err:#}");
    }
    match outcome {
        Ok(measured) => {
            record.metrics = figures(&measured, config);
            if measured.gendata.delivery_errors > 0 {
                record.status = Status::Failed;
                record.failure = Some(format!(
                    "gendata: {} records were not delivered to the input topic",
                    measured.gendata.delivery_errors
                ));
            }
            record.latency_histogram = Some(measured.probe.histogram.clone());
            record.gendata = Some(measured.gendata);
        }
        Err(err) if err.is::<Interrupted>() => return Err(err),
        Err(err) => {
            record.status = Status::Failed;
            record.failure = Some(format!("{err:#}"));
        }
    }
    Ok(record)
}

fn measure(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    workload: &Workload,
    config: &RunConfig,
    names: &RunNames,
    log_dir: &std::path::Path,
) -> Result<Measured> {
    let bootstrap = &ctx.broker.bootstrap;
    let interrupt = ctx.interrupt;
    let run = &ctx.bench.run;
    let mut progress = Progress::new(&line.line.name, &workload.name, config);

    // setup
    progress.phase("creating topics");
    admin::create_topics(
        bootstrap,
        &[
            TopicRequest {
                name: names.input.clone(),
                partitions: workload.input.partitions,
                compression: workload.input.compression.clone(),
            },
            TopicRequest {
                name: names.output.clone(),
                partitions: workload.output.partitions,
                compression: workload.output.compression.clone(),
            },
        ],
    )?;
    progress.phase("starting the product");
    let settings = LaunchSettings {
        bootstrap: bootstrap.clone(),
        input_topic: names.input.clone(),
        output_topic: names.output.clone(),
        group_id: names.group.clone(),
        transactional_id: format!("{}-txn", names.group),
        delivery: line.line.delivery,
        commit_interval_ms: config.commit_interval_ms,
        parallelism: config.parallelism,
        workload: workload.name.clone(),
    };
    let mut product = products::start(line.product, &settings, log_dir)?;
    product.wait_ready(Duration::from_secs(run.ready_timeout_s), interrupt)?;

    let start_us = now_us() + SCHEDULE_LEAD.as_micros() as i64;
    let window_start_us = start_us + config.warmup_s as i64 * 1_000_000;
    let window_end_us = window_start_us + config.window_s as i64 * 1_000_000;
    let probe_file = log_dir.join("probe.json");
    let mut probe = spawn_helper(
        "probe",
        &[
            "probe",
            "--bootstrap",
            bootstrap,
            "--topic",
            &names.output,
            "--window-start-us",
            &window_start_us.to_string(),
            "--window-end-us",
            &window_end_us.to_string(),
            "--summary",
            &probe_file.to_string_lossy(),
        ],
        log_dir,
        PROBE_READY,
    )?;
    probe.wait_ready(Duration::from_secs(30), interrupt)?;
    if now_us() > start_us - 100_000 {
        // The probe took the lead time: the schedule would start in the past.
        return Err(anyhow!(
            "the probe took too long to start; the schedule would start late"
        ));
    }
    let gendata_file = log_dir.join("gendata.json");
    let mut gendata = spawn_helper(
        "gendata",
        &[
            "gendata",
            "--bootstrap",
            bootstrap,
            "--topic",
            &names.input,
            "--rate",
            &config.rate.to_string(),
            "--seed",
            &config.seed.to_string(),
            "--start-us",
            &start_us.to_string(),
            "--window-start-us",
            &window_start_us.to_string(),
            "--end-us",
            &window_end_us.to_string(),
            "--summary",
            &gendata_file.to_string_lossy(),
        ],
        log_dir,
        "",
    )?;
    let offsets = OffsetReader::for_group(bootstrap, &names.group)?;
    let read_offsets = || -> Result<OffsetSample> {
        let at_us = now_us();
        let committed = offsets.committed(&names.input)?;
        Ok(OffsetSample { at_us, committed })
    };

    // warm-up
    progress.phase("warm-up");
    watch_until(
        window_start_us,
        &mut product,
        &mut [&mut gendata, &mut probe],
        interrupt,
        &mut progress,
    )?;
    let start = read_offsets()?;

    // measure
    progress.phase("measuring");
    watch_until(
        window_end_us,
        &mut product,
        &mut [&mut gendata, &mut probe],
        interrupt,
        &mut progress,
    )?;
    let end = read_offsets()?;

    // stop
    progress.phase("stopping");
    gendata.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
    probe.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
    product.check_alive()?;
    product.stop(Duration::from_secs(run.stop_grace_s));
    progress.finish();
    Ok(Measured {
        start,
        end,
        gendata: crate::handoff::read(&gendata_file)?,
        probe: crate::handoff::read(&probe_file)?,
    })
}

/// Starts one of the suite's own helper processes (`suite probe`, `suite gendata`).
fn spawn_helper(
    name: &str,
    args: &[&str],
    log_dir: &std::path::Path,
    ready: &str,
) -> Result<Supervised> {
    let suite = std::env::current_exe().context("finding the suite's own executable")?;
    let mut command = Command::new(suite);
    command.args(args);
    Supervised::spawn(name, command, log_dir, name, ready)
}

/// Waits until `until_us`, failing as soon as the product exits, a helper
/// fails, or Ctrl-C arrives. (Helpers end by themselves at the window's end.)
fn watch_until(
    until_us: i64,
    product: &mut Supervised,
    helpers: &mut [&mut Supervised],
    interrupt: &Interrupt,
    progress: &mut Progress,
) -> Result<()> {
    loop {
        let now = now_us();
        if now >= until_us {
            return Ok(());
        }
        product.check_alive()?;
        for helper in helpers.iter_mut() {
            helper.check_not_failed()?;
        }
        if interrupt.is_set() {
            return Err(Interrupted.into());
        }
        progress.tick(now);
        sleep_until_us((now + 100_000).min(until_us));
    }
}

/// The run's figures, each with its unit and direction.
fn figures(m: &Measured, config: &RunConfig) -> BTreeMap<String, Metric> {
    let window_s = config.window_s as f64;
    let measured_s = ((m.end.at_us - m.start.at_us).max(1)) as f64 / 1e6;
    let rate = |v: f64| Metric::new(v, "records/s", Better::Higher);
    let ms = |v: f64| Metric::new(v, "ms", Better::Lower);
    BTreeMap::from([
        (
            "offered_per_s".into(),
            rate(m.gendata.window_records as f64 / window_s),
        ),
        (
            "consumed_per_s".into(),
            rate((m.end.committed - m.start.committed) as f64 / measured_s),
        ),
        ("output_per_s".into(), rate(m.probe.count as f64 / window_s)),
        ("latency_p50_ms".into(), ms(m.probe.p50_ms)),
        ("latency_p90_ms".into(), ms(m.probe.p90_ms)),
        ("latency_p99_ms".into(), ms(m.probe.p99_ms)),
        ("latency_p999_ms".into(), ms(m.probe.p999_ms)),
        ("latency_max_ms".into(), ms(m.probe.max_ms)),
        (
            "latency_count".into(),
            Metric::new(m.probe.count as f64, "records", Better::Higher),
        ),
    ])
}

pub use summary::print_summary;

/// The results folder, from the command line or bench.yaml.
pub fn results_dir(root: &std::path::Path, bench: &Bench, flag: Option<PathBuf>) -> PathBuf {
    flag.unwrap_or_else(|| root.join(&bench.results_dir))
}
