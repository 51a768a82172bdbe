//! One run's phases, and batches of runs.
//!
//! A run: fresh per-run topics -> product started and ready -> probe ready ->
//! gendata on its schedule -> warm-up -> measurement window -> gendata and
//! the probe stop -> the product settles (commits the rest of its input) and
//! stops -> verify -> judge (`analysis::judge`) -> one record appended. A
//! failed run is recorded, not fatal to the batch; an interrupted run tears
//! everything down and records nothing.

pub mod batch;
mod broker_warmup;
pub mod chaos;
mod drain;
mod etl;
pub mod monitor;
mod progress;
mod summary;
mod verify;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use crate::analysis;
use crate::analysis::judge::{judge, JudgeInputs, Judgement, Settle, Verified};
use crate::analysis::window::{OffsetRead, Sample};
use crate::broker::admin::{self, OffsetReader, TopicRequest};
use crate::broker::{BrokerInfo, LocalBroker};
use crate::cache::Cache;
use crate::clickhouse::SinkSession;
use crate::clock::{now_us, sleep_until_us};
use crate::config::{Bench, ChaosPlan, LineRef, Workload};
use crate::gendata::schedule::Schedule;
use crate::gendata::{GendataPlan, GendataSummary};
use crate::host::HostInfo;
use crate::interrupt::{Interrupt, Interrupted};
use crate::probe::{ProbeSummary, READY_LINE as PROBE_READY};
use crate::process::Supervised;
use crate::products::{self, Installation, LaunchSettings};
use crate::results::{Chaos, LatencySeries, RunConfig, RunRecord, Status, SCHEMA_VERSION};
use crate::workloads::{Expectation, TopicOutput};
use chaos::{Fault, InjectedBrokerRestart, InjectedKill, ResumeWatch};
use monitor::{Grid, Monitor, Watched};
use progress::Progress;

/// How long gendata and the probe may take to finish after the window.
const HELPER_EXIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Time from the product being ready to gendata's first slot: room for the
/// probe to start and assign its partitions.
const SCHEDULE_LEAD: Duration = Duration::from_secs(2);
/// Pause between an injected kill and the restart: produce requests the dead
/// process had already sent land first, so they do not pass for resumed output.
const SETTLE_AFTER_KILL: Duration = Duration::from_millis(100);

/// Everything a batch of runs shares.
pub struct RunContext<'a> {
    pub bench: &'a Bench,
    pub cache: &'a Cache,
    pub broker: &'a BrokerInfo,
    /// The local broker's pid, sampled as part of the harness.
    pub broker_pid: Option<u32>,
    /// The local broker, which a chaos run may restart; None for an
    /// external one.
    pub local_broker: Option<&'a LocalBroker>,
    /// The ClickHouse of an ETL workload's batch.
    pub sink: Option<&'a SinkSession>,
    pub host: &'a HostInfo,
    pub interrupt: &'a Interrupt,
    pub batch_id: String,
    /// The faults to inject into every run of the batch.
    pub chaos: Option<ChaosPlan>,
    /// The suite's git commit, recorded with each run.
    pub suite_commit: Option<String>,
}

/// The topics and group of one run; named after the run so nothing is shared.
struct RunNames {
    input: String,
    output: String,
    floor: String,
    group: String,
}

impl RunNames {
    fn for_run(run_id: &str) -> RunNames {
        RunNames {
            input: format!("ss-{run_id}-in"),
            output: format!("ss-{run_id}-out"),
            floor: format!("ss-{run_id}-floor"),
            group: format!("ss-{run_id}"),
        }
    }
}

/// What the measuring phases produced, before it becomes figures.
struct Measured {
    /// The workload's output, which the sanity checks judge.
    workload: &'static dyn TopicOutput,
    /// gendata's schedule; `None` when unpaced.
    schedule: Option<Schedule>,
    /// Samples from the first after start-up to the window's end.
    rows: Vec<Sample>,
    /// Index of the row taken at the window's start.
    window_start: usize,
    /// The offsets read between rows.
    offset_polls: Vec<OffsetRead>,
    window_start_us: i64,
    ticks_per_s: f64,
    gendata: GendataSummary,
    probe: ProbeSummary,
    verified: Verified,
    settle: Option<Settle>,
    chaos: Option<Chaos>,
    /// Seconds from gendata's first slot to the window's start.
    warmup_used_s: f64,
    /// Why the product was not steady when a steady-state warm-up hit its cap.
    not_steady: Option<String>,
}

impl Measured {
    /// The judgement of what the phases measured.
    fn judged(self, ctx: &RunContext<'_>, config: &RunConfig) -> Judged {
        let judgement = judge(&JudgeInputs {
            samples: &self.rows,
            window_start: self.window_start,
            offset_polls: &self.offset_polls,
            window_start_us: self.window_start_us,
            ticks_per_s: self.ticks_per_s,
            config,
            workload: self.workload,
            schedule: self.schedule,
            gendata: &self.gendata,
            probe: &self.probe,
            verified: &self.verified,
            settle: self.settle,
            chaos: self.chaos.is_some(),
            tolerances: &ctx.bench.tolerances,
        });
        let mut judgement = judgement;
        record_warmup(&mut judgement, self.warmup_used_s, self.not_steady);
        Judged {
            judgement,
            latency_histogram: Some(self.probe.output.histogram.clone()),
            latency_series: self.probe.intervals.clone(),
            gendata: self.gendata,
            chaos: self.chaos,
        }
    }
}

/// The warm-up a run used, and `not-steady` when it hit its cap first.
fn record_warmup(judgement: &mut Judgement, used_s: f64, not_steady: Option<String>) {
    judgement.metrics.insert(
        "warmup_used_s".into(),
        crate::results::Metric::new(used_s, "s", crate::results::Better::Lower),
    );
    if let Some(why) = not_steady {
        if !judgement.flags.contains(&crate::results::flag::NOT_STEADY) {
            judgement.flags.push(crate::results::flag::NOT_STEADY);
        }
        judgement.not_applicable.insert(
            "steady".into(),
            format!("the warm-up hit its cap before the product was steady: {why}"),
        );
    }
}

/// A run judged: what goes into its record.
struct Judged {
    judgement: Judgement,
    gendata: GendataSummary,
    chaos: Option<Chaos>,
    latency_histogram: Option<String>,
    latency_series: Option<LatencySeries>,
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

/// Runs `line`, as installed in `installation`, on `workload` once, as
/// `round` (1-based) of the batch at `position` (1-based) within the round,
/// and returns its record, ok or failed. Only an interruption (or a failure
/// before anything started) is an error.
pub fn run_once(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    installation: &Installation,
    workload: &Workload,
    config: &RunConfig,
    round: u32,
    position: u32,
) -> Result<RunRecord> {
    let run_id = new_run_id(&line.line.name);
    let log_dir = ctx.cache.run_dir(&run_id);
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let mut record = RunRecord {
        schema: SCHEMA_VERSION,
        run_id: run_id.clone(),
        batch_id: ctx.batch_id.clone(),
        round: Some(round),
        position: Some(position),
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        bench_version: ctx.bench.bench_version,
        host: ctx.host.clone(),
        broker: ctx.broker.clone(),
        product: line.product.name.clone(),
        line: line.line.name.clone(),
        version: installation.version.clone(),
        workload: workload.name.clone(),
        variant: None,
        delivery: line.line.delivery,
        config: config.clone(),
        status: Status::Ok,
        failure: None,
        regime: None,
        flags: Vec::new(),
        metrics: BTreeMap::new(),
        not_applicable: BTreeMap::new(),
        resources: None,
        series: None,
        gendata: None,
        sanity: None,
        verification: None,
        chaos: None,
        latency_histogram: None,
        latency_series: None,
        logs: log_dir.clone(),
        suite_commit: ctx.suite_commit.clone(),
    };
    let names = RunNames::for_run(&run_id);
    if let Some(etl) = &config.etl {
        record.variant = Some(etl::variant(etl));
    }
    let outcome = match config.drain_records {
        Some(records) => drain::measure(
            ctx,
            line,
            installation,
            workload,
            config,
            records,
            &names,
            &log_dir,
        )
        .map(|drained| drained.judged(ctx, config)),
        None if workload.is_etl() => {
            etl::measure(ctx, line, installation, workload, config, &names, &log_dir)
        }
        None => measure(ctx, line, installation, workload, config, &names, &log_dir)
            .map(|measured| measured.judged(ctx, config)),
    };
    // teardown: the run's topics, and any its product made, go whatever
    // happened
    if let Err(err) = admin::delete_run_topics(&ctx.broker.bootstrap, &names.group) {
        eprintln!("warning: {err:#}");
    }
    match outcome {
        Ok(Judged {
            judgement,
            gendata,
            chaos,
            latency_histogram,
            latency_series,
        }) => {
            if let Some(failure) = judgement.failure {
                record.status = Status::Failed;
                record.failure = Some(failure);
            }
            record.regime = judgement.regime;
            record.flags = judgement.flags.iter().map(|f| f.to_string()).collect();
            record.metrics = judgement.metrics;
            record.not_applicable = judgement.not_applicable;
            record.sanity = judgement.sanity;
            record.verification = judgement.verification;
            record.resources = judgement.resources;
            record.series = judgement.series;
            record.chaos = chaos;
            record.latency_histogram = latency_histogram;
            record.latency_series = latency_series;
            record.gendata = Some(gendata);
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
    installation: &Installation,
    workload: &Workload,
    config: &RunConfig,
    names: &RunNames,
    log_dir: &std::path::Path,
) -> Result<Measured> {
    let bootstrap = &ctx.broker.bootstrap;
    let interrupt = ctx.interrupt;
    let run = &ctx.bench.run;
    let output = workload
        .topic_output()
        .ok_or_else(|| anyhow!("workload {} writes no topic", workload.name))?;
    let mut progress = Progress::new(&line.line.name, &workload.name, config);

    // setup
    progress.phase("creating topics");
    create_topics(bootstrap, workload, names)?;
    progress.phase("starting the product");
    let settings = launch_settings(bootstrap, line, config, workload, names)?;
    let mut product = products::start(line.product, installation, &settings, log_dir, "product")?;
    product.wait_ready(Duration::from_secs(run.ready_timeout_s), interrupt)?;

    let start_us = now_us() + SCHEDULE_LEAD.as_micros() as i64;
    let window_us = config.window_s as i64 * 1_000_000;
    // The earliest window: after the least warm-up. A steady-state warm-up
    // (warmup_cap_s) announces the window to gendata and the probe in a
    // file once the product is steady; a fixed one gives it them now.
    let earliest_start_us = start_us + config.warmup_s as i64 * 1_000_000;
    let window_file = config.warmup_cap_s.map(|_| log_dir.join("window.json"));
    // When gendata stops: at a fixed window's end, or (announced) at the
    // latest window's end, the cap's, plus the announcement's lead and a
    // sample interval, the most by which a window may start past the cap.
    let latest_end_us = match config.warmup_cap_s {
        Some(cap_s) => {
            start_us
                + cap_s as i64 * 1_000_000
                + window_us
                + ANNOUNCE_LEAD.as_micros() as i64
                + config.sample_interval_ms as i64 * 1000
        }
        None => earliest_start_us + window_us,
    };
    let window_args = match &window_file {
        Some(file) => vec![
            "--window-file".to_string(),
            file.to_string_lossy().into_owned(),
        ],
        None => vec![
            "--window-start-us".to_string(),
            earliest_start_us.to_string(),
            "--window-end-us".to_string(),
            (earliest_start_us + window_us).to_string(),
        ],
    };
    let probe_file = log_dir.join("probe.json");
    let mut probe_args: Vec<String> = [
        "probe",
        "--bootstrap",
        bootstrap,
        "--topic",
        &names.output,
        "--floor-topic",
        &names.floor,
        "--interval-ms",
        &config.sample_interval_ms.to_string(),
        "--stamp-field",
        output.stamp_field(),
        "--summary",
        &probe_file.to_string_lossy(),
    ]
    .map(str::to_string)
    .to_vec();
    probe_args.extend(window_args);
    let mut probe = spawn_helper("probe", &probe_args, log_dir, PROBE_READY)?;
    probe.wait_ready(Duration::from_secs(30), interrupt)?;
    if now_us() > start_us - 100_000 {
        // The probe took the lead time: the schedule would start in the past.
        return Err(anyhow!(
            "the probe took too long to start; the schedule would start late"
        ));
    }
    let gendata_file = log_dir.join("gendata.json");
    let plan = GendataPlan {
        bootstrap: bootstrap.to_string(),
        topic: names.input.clone(),
        rate: config.rate,
        seed: config.seed,
        start_us,
        window_start_us: earliest_start_us,
        end_us: latest_end_us,
        window_file: window_file.clone(),
        max_records: None,
        summary: Some(gendata_file.clone()),
        avro_events: None,
    };
    let mut gendata = spawn_helper("gendata", &plan.command_args(), log_dir, "")?;
    let offsets = OffsetReader::for_group(bootstrap, &names.group)?;
    // Samples fall on start + k * interval: whichever grid time the window
    // starts at, both its bounds are samples.
    let grid = Grid {
        anchor_us: start_us,
        interval_us: config.sample_interval_ms as i64 * 1000,
    };
    let mut monitor = Monitor::new(
        &offsets,
        names,
        Watched {
            product: product.pgid() as i32,
            broker: ctx.broker_pid.map(|p| p as i32),
            gendata: Some(gendata.pgid() as i32),
            probe: Some(probe.pgid() as i32),
            sink: None,
        },
        grid,
    );

    // warm-up
    progress.phase("warm-up");
    let mut processes = Processes {
        product: &mut product,
        product_down: false,
        helpers: vec![&mut gendata, &mut probe],
    };
    let warmup = match (&window_file, config.warmup_cap_s) {
        (Some(file), Some(cap_s)) => {
            let warmup = processes.warm_up_until_steady(
                SteadyWarmUp {
                    earliest_start_us,
                    latest_start_us: start_us + cap_s as i64 * 1_000_000,
                    offered_per_s: config.rate as f64,
                    rule: steady_rule(&ctx.bench.tolerances, config),
                },
                grid,
                interrupt,
                &mut progress,
                &mut monitor,
            )?;
            crate::handoff::announce(
                file,
                &crate::handoff::WindowAnnouncement {
                    start_us: warmup.window_start_us,
                    end_us: warmup.window_start_us + window_us,
                },
            )?;
            progress.set_total(
                ((warmup.window_start_us - start_us + window_us) / 1_000_000).max(0) as u64,
            );
            warmup
        }
        _ => WarmUp {
            window_start_us: earliest_start_us,
            not_steady: None,
        },
    };
    let window_start_us = warmup.window_start_us;
    let window_end_us = window_start_us + window_us;
    processes.watch_until(window_start_us, interrupt, &mut progress, &mut monitor)?;
    monitor.sample(true)?;
    let window_start = monitor.rows.len() - 1;

    // measure
    progress.phase("measuring");
    let faults = ctx
        .chaos
        .as_ref()
        .map(|plan| chaos::schedule(plan, window_start_us))
        .unwrap_or_default();
    let restart_product = ctx.chaos.as_ref().is_some_and(|plan| plan.restart);
    let mut kills = Vec::new();
    let mut broker_restart = None;
    for (i, &(at_us, fault)) in faults.iter().enumerate() {
        processes.watch_until(at_us, interrupt, &mut progress, &mut monitor)?;
        // Each fault's output is watched until the next one.
        let watch_until_us = faults.get(i + 1).map_or(window_end_us, |&(next, _)| next);
        match fault {
            Fault::Kill => {
                progress.phase(if restart_product {
                    "product killed; restarting"
                } else {
                    "product killed"
                });
                let restarts = kills.len() + 1;
                let restart = || {
                    products::start(
                        line.product,
                        installation,
                        &settings,
                        log_dir,
                        &format!("product-restart-{restarts}"),
                    )
                };
                let kill = processes.crash(
                    restart_product.then_some(restart),
                    bootstrap,
                    &names.output,
                    watch_until_us,
                )?;
                monitor.watch_product(processes.product.pgid() as i32);
                kills.push(kill);
            }
            Fault::BrokerRestart => {
                progress.phase("broker killed; restarting");
                let broker = ctx.local_broker.ok_or_else(|| {
                    anyhow!("chaos: a broker restart needs the suite's local broker")
                })?;
                broker_restart = Some(InjectedBrokerRestart::inject(
                    broker,
                    &offsets,
                    &names.input,
                    &names.output,
                    watch_until_us,
                    interrupt,
                )?);
                monitor.watch_broker(broker.running_pid().map(|pid| pid as i32));
            }
        }
        progress.phase("measuring");
    }
    processes.watch_until(window_end_us, interrupt, &mut progress, &mut monitor)?;
    monitor.sample(true)?;
    let ticks_per_s = monitor.ticks_per_s();
    let rows = std::mem::take(&mut monitor.rows);
    let offset_polls = std::mem::take(&mut monitor.offset_polls);

    // stop the load: gendata and the probe end with the window
    progress.phase("stopping the load");
    let product_down = processes.product_down;
    gendata.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
    probe.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
    let gendata_summary: GendataSummary = crate::handoff::read(&gendata_file)?;

    // settle: the product finishes the input before it is stopped, so the
    // verify phase covers every record sent
    let schedule = (config.rate > 0).then(|| Schedule::new(start_us, config.rate));
    let settle = if product_down {
        None
    } else {
        progress.phase("settling");
        let bound = Duration::from_secs(run.settle_s);
        let settle = if line.product.commits_offsets {
            settle_committed_and_quiet(
                &offsets,
                names,
                output.owed_until(schedule, gendata_summary.records_sent),
                bound,
                &mut product,
                interrupt,
            )?
        } else {
            settle_quiet_output(&offsets, &names.output, bound, &mut product, interrupt)?
        };
        product.stop(Duration::from_secs(run.stop_grace_s));
        Some(settle)
    };
    let chaos = match &ctx.chaos {
        Some(plan) => Some(Chaos::new(
            plan.restart,
            kills
                .into_iter()
                .map(|kill| kill.outcome(window_start_us))
                .collect::<Result<_>>()?,
            broker_restart
                .map(|restart| restart.outcome(window_start_us))
                .transpose()?,
        )),
        None => None,
    };

    // verify
    progress.phase("verifying");
    let committed = if line.product.commits_offsets {
        offsets.committed(&names.input)?.max(0) as u64
    } else {
        gendata_summary.records_sent
    };
    let expectation = Expectation {
        seed: config.seed,
        input_records: gendata_summary.records_sent,
        committed,
        schedule,
        delivery: line.line.delivery,
    };
    let verified = verify_output(bootstrap, workload, names, &offsets, expectation, interrupt)?;
    progress.finish();
    Ok(Measured {
        workload: output,
        schedule,
        rows,
        window_start,
        offset_polls,
        window_start_us,
        ticks_per_s,
        gendata: gendata_summary,
        probe: crate::handoff::read(&probe_file)?,
        verified,
        settle,
        chaos,
        warmup_used_s: (window_start_us - start_us) as f64 / 1e6,
        not_steady: warmup.not_steady,
    })
}

/// Creates the run's input, output and floor topics (a sink workload has
/// only its input).
fn create_topics(bootstrap: &str, workload: &Workload, names: &RunNames) -> Result<()> {
    let mut topics = vec![TopicRequest {
        name: names.input.clone(),
        partitions: workload.input.partitions,
        compression: workload.input.compression.clone(),
    }];
    if let Some(output) = workload.output_topic() {
        topics.extend([
            TopicRequest {
                name: names.output.clone(),
                partitions: output.partitions,
                compression: output.compression.clone(),
            },
            TopicRequest {
                name: names.floor.clone(),
                partitions: 1,
                compression: "producer".into(),
            },
        ]);
    }
    admin::create_topics(bootstrap, &topics)
}

/// The settings the product is started with.
fn launch_settings(
    bootstrap: &str,
    line: LineRef<'_>,
    config: &RunConfig,
    workload: &Workload,
    names: &RunNames,
) -> Result<LaunchSettings> {
    Ok(LaunchSettings {
        bootstrap: bootstrap.to_string(),
        input_topic: names.input.clone(),
        output_topic: names.output.clone(),
        group_id: names.group.clone(),
        transactional_id: format!("{}-txn", names.group),
        delivery: line.line.delivery,
        commit_interval_ms: config.commit_interval_ms,
        parallelism: config.parallelism,
        workload: workload.name.clone(),
        client: config.client.clone(),
        product_settings: products::product_settings(line.product, &config.product_settings)?,
        etl: None,
    })
}

/// Reads the run's whole output against `expectation`, or says why it
/// cannot be checked.
fn verify_output(
    bootstrap: &str,
    workload: &Workload,
    names: &RunNames,
    offsets: &OffsetReader,
    expectation: Expectation,
    interrupt: &Interrupt,
) -> Result<Verified> {
    let input_written = offsets.high_watermark(&names.input)?;
    Ok(if workload.input.partitions != 1 {
        Verified::Skipped(format!(
            "the input has {} partitions; offsets are sequence numbers on one partition only",
            workload.input.partitions
        ))
    } else if input_written != expectation.input_records as i64 {
        Verified::Skipped(format!(
            "the input holds {input_written} records but gendata sent {}",
            expectation.input_records
        ))
    } else {
        let output = workload
            .topic_output()
            .ok_or_else(|| anyhow!("workload {} writes no topic", workload.name))?;
        match output.verifier(expectation) {
            Ok(mut verifier) => {
                verify::read_output(bootstrap, &names.output, verifier.as_mut(), interrupt)?;
                Verified::Checked(verifier.finish())
            }
            Err(why) => Verified::Skipped(format!("{}: {why}", workload.name)),
        }
    })
}

/// How often the settle phase looks at the product's progress.
const SETTLE_POLL: Duration = Duration::from_millis(100);
/// Output unchanged for this long counts as finished: for a product that
/// commits no offsets, and for every other once its commit covers the input.
const QUIET_OUTPUT: Duration = Duration::from_secs(3);

/// Polls `finished` every [`SETTLE_POLL`] until it says the product is done
/// or `bound` passes; fails if the product dies or Ctrl-C arrives.
fn settle_until(
    bound: Duration,
    product: &mut Supervised,
    interrupt: &Interrupt,
    mut finished: impl FnMut() -> Result<bool>,
) -> Result<Settle> {
    let started = std::time::Instant::now();
    loop {
        let reached_end = finished()?;
        if reached_end || started.elapsed() >= bound {
            return Ok(Settle {
                seconds: started.elapsed().as_secs_f64(),
                reached_end,
            });
        }
        product.check_alive()?;
        if interrupt.is_set() {
            return Err(Interrupted.into());
        }
        std::thread::sleep(SETTLE_POLL);
    }
}

/// Waits until the product's committed offset on `input` reaches
/// `owed_until`, or `bound` passes: the end of work for a product whose
/// sink is not a topic (a table).
fn settle_committed(
    offsets: &OffsetReader,
    input: &str,
    owed_until: u64,
    bound: Duration,
    product: &mut Supervised,
    interrupt: &Interrupt,
) -> Result<Settle> {
    settle_until(bound, product, interrupt, || {
        Ok(offsets.committed(input)?.max(0) as u64 >= owed_until)
    })
}

/// Waits until the product's committed offset on the input reaches
/// `owed_until` and its output topic has not grown for [`QUIET_OUTPUT`], or
/// `bound` passes. The commit alone does not end the output: a product that
/// passes records through a topic of its own (Kafka Streams' repartition
/// topic) commits its input before it writes what those records lead to, and
/// while it drains a backlog there the output is still growing.
fn settle_committed_and_quiet(
    offsets: &OffsetReader,
    names: &RunNames,
    owed_until: u64,
    bound: Duration,
    product: &mut Supervised,
    interrupt: &Interrupt,
) -> Result<Settle> {
    let mut output = OutputGrowth::watch(offsets, &names.output)?;
    settle_until(bound, product, interrupt, || {
        let quiet = output.quiet_for(offsets, QUIET_OUTPUT)?;
        Ok(quiet && offsets.committed(&names.input)?.max(0) as u64 >= owed_until)
    })
}

/// Waits until the output topic has not grown for [`QUIET_OUTPUT`], or
/// `bound` passes: the end of work for a product that commits no offsets.
fn settle_quiet_output(
    offsets: &OffsetReader,
    output: &str,
    bound: Duration,
    product: &mut Supervised,
    interrupt: &Interrupt,
) -> Result<Settle> {
    let mut growth = OutputGrowth::watch(offsets, output)?;
    settle_until(bound, product, interrupt, || {
        growth.quiet_for(offsets, QUIET_OUTPUT)
    })
}

/// When an output topic last grew, as seen by polling its high watermark.
struct OutputGrowth<'t> {
    topic: &'t str,
    last: i64,
    last_change: std::time::Instant,
}

impl<'t> OutputGrowth<'t> {
    fn watch(offsets: &OffsetReader, topic: &'t str) -> Result<OutputGrowth<'t>> {
        Ok(OutputGrowth {
            topic,
            last: offsets.high_watermark(topic)?,
            last_change: std::time::Instant::now(),
        })
    }

    /// Polls the topic once; true when it has not grown for `quiet`.
    fn quiet_for(&mut self, offsets: &OffsetReader, quiet: Duration) -> Result<bool> {
        let now = offsets.high_watermark(self.topic)?;
        if now != self.last {
            self.last = now;
            self.last_change = std::time::Instant::now();
        }
        Ok(self.last_change.elapsed() >= quiet)
    }
}

/// Starts one of the suite's own helper processes (`suite probe`, `suite gendata`).
fn spawn_helper<S: AsRef<std::ffi::OsStr>>(
    name: &str,
    args: &[S],
    log_dir: &std::path::Path,
    ready: &str,
) -> Result<Supervised> {
    let suite = std::env::current_exe().context("finding the suite's own executable")?;
    let mut command = Command::new(suite);
    command.args(args);
    Supervised::spawn(name, command, log_dir, name, ready)
}

/// How long before the window opens it is announced to gendata and the
/// probe, which look for it every 25 ms.
const ANNOUNCE_LEAD: Duration = Duration::from_secs(1);
/// How far back a warm-up's evidence of steady state is read.
const STEADY_LOOK_BACK: Duration = Duration::from_secs(10);

/// What a steady-state warm-up waits for, and its bounds.
struct SteadyWarmUp {
    earliest_start_us: i64,
    latest_start_us: i64,
    offered_per_s: f64,
    rule: analysis::steady::SteadyRule,
}

/// How a warm-up ended.
struct WarmUp {
    window_start_us: i64,
    /// Why the product was still not steady when the warm-up hit its cap.
    not_steady: Option<String>,
}

/// The steady-state rule from bench.yaml's tolerances: a backlog of up to
/// one commit interval and a second (the sample's own staleness) is none.
fn steady_rule(
    tolerances: &crate::config::Tolerances,
    config: &RunConfig,
) -> analysis::steady::SteadyRule {
    analysis::steady::SteadyRule {
        span_us: STEADY_LOOK_BACK.as_micros() as i64,
        rate_tolerance: tolerances.steady_rate,
        cpu_tolerance: tolerances.steady_cpu,
        backlog_s: config.commit_interval_ms as f64 / 1000.0 + 1.0,
    }
}

/// The processes of a run, watched while it goes.
struct Processes<'p> {
    product: &'p mut Supervised,
    /// Killed on purpose and not restarted: its absence is no failure.
    product_down: bool,
    /// gendata and the probe (an ETL run has no probe): they end by
    /// themselves at the window's end.
    helpers: Vec<&'p mut Supervised>,
}

impl Processes<'_> {
    /// Waits until `until_us`, sampling on schedule, and fails as soon as the
    /// product exits, a helper fails, or Ctrl-C arrives.
    fn watch_until(
        &mut self,
        until_us: i64,
        interrupt: &Interrupt,
        progress: &mut Progress,
        monitor: &mut Monitor<'_>,
    ) -> Result<()> {
        loop {
            let now = now_us();
            if now >= until_us {
                return Ok(());
            }
            if !self.product_down {
                self.product.check_alive()?;
            }
            for helper in self.helpers.iter_mut() {
                helper.check_not_failed()?;
            }
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            monitor.sample_if_due(now)?;
            monitor.poll_offsets_if_due(now)?;
            progress.tick(now);
            sleep_until_us((now + 100_000).min(until_us).min(monitor.next_due_us()));
        }
    }

    /// Watches the warm-up until the product is steady, or until the cap:
    /// from the earliest window start on, after each sample the evidence of
    /// the last [`STEADY_LOOK_BACK`] is read, and the window starts on the
    /// first grid time at least [`ANNOUNCE_LEAD`] after the verdict, so the
    /// helpers learn of it before it opens.
    fn warm_up_until_steady(
        &mut self,
        plan: SteadyWarmUp,
        grid: Grid,
        interrupt: &Interrupt,
        progress: &mut Progress,
        monitor: &mut Monitor<'_>,
    ) -> Result<WarmUp> {
        let lead_us = ANNOUNCE_LEAD.as_micros() as i64;
        self.watch_until(
            plan.earliest_start_us - lead_us,
            interrupt,
            progress,
            monitor,
        )?;
        loop {
            let now = now_us();
            let why = analysis::steady::not_steady_yet(
                &monitor.rows,
                &monitor.offset_polls,
                plan.offered_per_s,
                monitor.ticks_per_s(),
                &plan.rule,
            );
            let at_cap = now + lead_us >= plan.latest_start_us;
            if why.is_none() || at_cap {
                let window_start_us = grid.next_after(now + lead_us);
                return Ok(WarmUp {
                    window_start_us,
                    not_steady: why,
                });
            }
            if let Some(why) = &why {
                progress.detail("warm-up until steady", why);
            }
            // Until the next sample is due, then take it: the verdict is
            // read again on new evidence only.
            self.watch_until(monitor.next_due_us(), interrupt, progress, monitor)?;
            monitor.sample_if_due(now_us())?;
        }
    }

    /// Kills the product's whole tree and, with `restart`, starts it again;
    /// its output is watched for until `watch_until_us`.
    fn crash(
        &mut self,
        restart: Option<impl FnOnce() -> Result<Supervised>>,
        bootstrap: &str,
        output_topic: &str,
        watch_until_us: i64,
    ) -> Result<InjectedKill> {
        let killed_at_us = now_us();
        let killed_processes = self.product.kill();
        std::thread::sleep(SETTLE_AFTER_KILL);
        let watch = ResumeWatch::start(bootstrap, output_topic, watch_until_us)?;
        match restart {
            Some(restart) => *self.product = restart()?,
            None => self.product_down = true,
        }
        Ok(InjectedKill {
            killed_at_us,
            killed_processes,
            watch,
        })
    }
}

pub use broker_warmup::warm_if_cold;
pub use summary::print_summary;

/// The results folder, from the command line or bench.yaml.
pub fn results_dir(root: &std::path::Path, bench: &Bench, flag: Option<PathBuf>) -> PathBuf {
    flag.unwrap_or_else(|| root.join(&bench.results_dir))
}
