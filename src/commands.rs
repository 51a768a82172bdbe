//! What each subcommand does, on top of the modules that do the work.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::analysis::paired::{self, BenchPoint, PairedFigure, RunFigures, Side, Verdict};
use crate::broker::{BrokerSession, LocalBroker};
use crate::cache::Cache;
use crate::cli::{
    BatchArgs, BrokerAction, ChaosArgs, Cli, ClickHouseAction, Command, CompareArgs, CpuRigArgs,
    ExportArgs, GendataArgs, InstallArgs, ProbeArgs, RegressArgs, ReportArgs, RigCommand, RunArgs,
    RunOptions,
};
use crate::clickhouse::{ClickHouseClient, LocalClickHouse, SinkSession};
use crate::clock::now_us;
use crate::config::{
    BrokerConfig, ChaosPlan, Delivery, LineBench, LineRef, LineSpec, Setting, Spacing, Suite,
    Workload, MIN_WINDOW_SAMPLES,
};
use crate::gendata::GendataPlan;
use crate::handoff::{WindowAnnouncement, WindowSource};
use crate::host::HostInfo;
use crate::interrupt::{Interrupt, Interrupted};
use crate::lock::{RunLock, WhenHeld};
use crate::probe::ProbePlan;
use crate::products::{self, Availability};
use crate::report::{self, BadLines};
use crate::results::{self, RunConfig, RunRecord, Status};
use crate::runner::batch::{plan_runs, run_batch, BatchLine};
use crate::runner::{self, RunContext};

/// Runs `cli`'s command; returns the process exit code.
pub fn execute(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Gendata(args) => crate::gendata::run(&gendata_plan(args)).map(|()| 0),
        Command::Probe(args) => crate::probe::run(&probe_plan(args)?).map(|()| 0),
        Command::List => list(&load(&cli.config)?),
        Command::Install(args) => install(&load(&cli.config)?, &args),
        Command::Broker { action } => broker(&load(&cli.config)?, action),
        Command::Clickhouse { action } => clickhouse(&load(&cli.config)?, action),
        Command::Rig {
            rig: RigCommand::Cpu(args),
        } => rig_cpu(&load(&cli.config)?, args),
        Command::Run(args) => run(&load(&cli.config)?, args),
        Command::Batch(args) => batch(&load(&cli.config)?, args),
        Command::Chaos(args) => chaos(&load(&cli.config)?, args),
        Command::Compare(args) => compare(&load(&cli.config)?, args),
        Command::Regress(args) => regress(&load(&cli.config)?, args),
        Command::Report(args) => report(&load(&cli.config)?, args),
        Command::Export(args) => export(&load(&cli.config)?, args),
    }
}

/// `suite gendata`'s plan: the schedule starts now and the window with it
/// unless the command says otherwise.
fn gendata_plan(args: GendataArgs) -> GendataPlan {
    let start_us = args.start_us.unwrap_or_else(now_us);
    GendataPlan {
        bootstrap: args.bootstrap,
        topic: args.topic,
        rate: args.rate,
        seed: args.seed,
        start_us,
        window_start_us: args.window_start_us.unwrap_or(start_us),
        end_us: args.end_us,
        window_file: args.window_file,
        max_records: args.max_records,
        summary: args.summary,
        avro_events: args.avro_events,
    }
}

/// `suite probe`'s plan, as the command gives it.
fn probe_plan(args: ProbeArgs) -> Result<ProbePlan> {
    let window = match (args.window_file, args.window_start_us, args.window_end_us) {
        (Some(file), _, _) => WindowSource::Announced(file),
        (None, Some(start_us), Some(end_us)) if end_us > start_us => {
            WindowSource::Fixed(WindowAnnouncement { start_us, end_us })
        }
        (None, start, end) => anyhow::bail!(
            "probe: give --window-file, or --window-start-us before --window-end-us \
             (got {start:?} and {end:?})"
        ),
    };
    Ok(ProbePlan {
        bootstrap: args.bootstrap,
        topic: args.topic,
        floor_topic: args.floor_topic,
        window,
        interval_us: args.interval_ms as i64 * 1000,
        stamp_field: args.stamp_field,
        summary: args.summary,
    })
}

fn load(config: &Path) -> Result<Suite> {
    Ok(Suite::load(config)?)
}

fn cache(suite: &Suite) -> Result<Cache> {
    Cache::from_settings(suite.bench.cache_dir.as_deref())
}

/// `suite list`: products, lines and workloads, what is runnable here, and
/// which line implements which workload.
fn list(suite: &Suite) -> Result<i32> {
    let cache = cache(suite)?;
    println!("{:<18} {:<14} {:<15} status", "line", "product", "delivery");
    for line in suite.lines() {
        let version = line.product.resolved_version();
        let status = match products::availability(line.product, None, &cache) {
            Availability::Runnable => "runnable here".to_string(),
            Availability::Installed => format!("runnable here (installed {version})"),
            Availability::Installable => {
                format!("runnable here (installs {version} on first run)")
            }
            Availability::Buildable => "runnable here (cargo builds it as a run starts)".into(),
            Availability::NotInstalled { hint } => format!("not installed here: {hint}"),
        };
        println!(
            "{:<18} {:<14} {:<15} {status}",
            line.line.name,
            line.product.name,
            line.line.delivery.as_str(),
        );
    }
    println!();
    print!("{}", workload_matrix(suite));
    println!();
    println!("{:<18} description", "workload");
    for workload in suite.workloads.values() {
        println!("{:<18} {}", workload.name, workload.description);
    }
    Ok(0)
}

/// Lines against workloads: `yes` where the line's product implements the
/// workload, `not supported` where it does not.
fn workload_matrix(suite: &Suite) -> String {
    let names: Vec<&String> = suite.workloads.keys().collect();
    let width = |name: &str| name.len().max("not supported".len()) + 2;
    let mut out = format!("{:<19}", "line");
    for name in &names {
        out.push_str(&format!("{:<w$}", name, w = width(name)));
    }
    out = out.trim_end().to_string() + "\n";
    for line in suite.lines() {
        let mut row = format!("{:<19}", line.line.name);
        for name in &names {
            let cell = if line.product.workloads.contains(name) {
                "yes"
            } else {
                "not supported"
            };
            row.push_str(&format!("{:<w$}", cell, w = width(name)));
        }
        out.push_str(row.trim_end());
        out.push('\n');
    }
    out
}

/// `suite install`: one version of a product into the cache, once.
fn install(suite: &Suite, args: &InstallArgs) -> Result<i32> {
    let product = match suite.products.get(&args.product) {
        Some(product) => product,
        None => suite.line(&args.product, None)?.product,
    };
    let version = args.product_version.as_deref();
    let cache = cache(suite)?;
    let before = products::availability(product, version, &cache);
    let installation =
        products::ensure_installed(product, version, &cache, &Interrupt::install()?)?;
    let name = &product.name;
    let v = &installation.version;
    match (&installation.dir, &installation.bin) {
        (None, Some(bin)) if before == Availability::Buildable => {
            println!("{name} {v} built: {}", bin.display())
        }
        (Some(dir), _) if before == Availability::Installed => {
            println!("{name} {v} is already installed in {}", dir.display())
        }
        (Some(dir), _) => println!("{name} {v} installed in {}", dir.display()),
        (None, Some(bin)) => println!("{name} runs {}; the suite installs nothing", bin.display()),
        (None, None) => println!("{name} is part of the suite; nothing to install"),
    }
    Ok(0)
}

/// `suite broker start|stop|status`.
/// `suite rig cpu`: every arm of the Avro CPU rig, one record each.
fn rig_cpu(suite: &Suite, args: CpuRigArgs) -> Result<i32> {
    let results_dir = runner::results_dir(&suite.root, &suite.bench, args.results.clone());
    results::ensure_writable(&results_dir).map_err(|err| {
        anyhow::anyhow!(
            "the results folder {} cannot be written: {err}",
            results_dir.display()
        )
    })?;
    let interrupt = Interrupt::install()?;
    let cache = cache(suite)?;
    // The rig measures CPU: it never shares the host with a run.
    let _lock = RunLock::acquire(&cache, "cpu-rig", WhenHeld::Wait, &interrupt)?;
    let plan = crate::rig::CpuRigPlan {
        events: args.events,
        distinct_datums: args.distinct as usize,
        warmup_datums: args.warmup,
        timed_datums: args.timed,
        counted_datums: args.counted,
        repetitions: args.repetitions as usize,
        block_rows: args.block_rows as usize,
        shards: args.shards as usize,
    };
    let (records, path) = crate::rig::run_cpu(suite, &plan, &cache, &results_dir, &interrupt)?;
    print!("{}", crate::rig::summary(&records));
    eprintln!("appended {} records to {}", records.len(), path.display());
    match report::write_site(
        suite,
        &results_dir,
        &report::default_out_dir(&results_dir),
        BadLines::Warn,
    ) {
        Ok(index) => eprintln!("report: {}", index.display()),
        Err(err) => eprintln!("warning: the report was not updated: {err:#}"),
    }
    Ok(0)
}

fn broker(suite: &Suite, action: BrokerAction) -> Result<i32> {
    let cache = cache(suite)?;
    let local = LocalBroker::from_config(&suite.bench.broker, &cache)
        .context("`suite broker` manages the local broker only")?;
    match action {
        BrokerAction::Start => {
            if local.is_running() {
                println!("local broker already running at {}", local.bootstrap());
            } else {
                let interrupt = Interrupt::install()?;
                local.start(&interrupt)?;
                runner::warm_if_cold(
                    &local,
                    suite.bench.broker.warmup_s(),
                    suite.bench.iso_rate,
                    &cache,
                    &interrupt,
                )?;
                println!(
                    "local broker (Apache Kafka {}) running at {}; log: {}",
                    local.version(),
                    local.bootstrap(),
                    local.log_file().display()
                );
            }
            Ok(0)
        }
        BrokerAction::Stop => {
            if local.running_pid().is_some() {
                local.stop()?;
                println!("local broker stopped");
            } else {
                println!("no broker started by the suite is running");
            }
            Ok(0)
        }
        BrokerAction::Status => match local.running_pid() {
            Some(pid) => {
                println!("running: pid {pid}, {}", local.bootstrap());
                Ok(0)
            }
            None if local.is_running() => {
                println!(
                    "a broker not started by the suite answers at {}",
                    local.bootstrap()
                );
                Ok(0)
            }
            None => {
                println!("not running");
                Ok(3)
            }
        },
    }
}

/// `suite clickhouse start|stop|status`: the local ClickHouse by hand.
fn clickhouse(suite: &Suite, action: ClickHouseAction) -> Result<i32> {
    let cache = cache(suite)?;
    let local = LocalClickHouse::from_config(&suite.bench.sink, &cache)
        .context("`suite clickhouse` manages the local ClickHouse only")?;
    match action {
        ClickHouseAction::Start => {
            if local.is_running() {
                println!("local ClickHouse already running at {}", local.url());
            } else {
                local.start(&Interrupt::install()?)?;
                let version = ClickHouseClient::from_config(&suite.bench.sink)?.version()?;
                println!(
                    "local ClickHouse {version} running at {}; log: {}",
                    local.url(),
                    local.log_file().display()
                );
            }
            Ok(0)
        }
        ClickHouseAction::Stop => {
            if local.running_pid().is_some() {
                local.stop()?;
                println!("local ClickHouse stopped");
            } else {
                println!("no ClickHouse started by the suite is running");
            }
            Ok(0)
        }
        ClickHouseAction::Status => match local.running_pid() {
            Some(pid) => {
                println!("running: pid {pid}, {}", local.url());
                Ok(0)
            }
            None if local.is_running() => {
                println!(
                    "a ClickHouse not started by the suite answers at {}",
                    local.url()
                );
                Ok(0)
            }
            None => {
                println!("not running");
                Ok(3)
            }
        },
    }
}

/// `suite run`: `--repeat` runs of one line, one after another, one batch,
/// holding the host's run lock throughout.
fn run(suite: &Suite, args: RunArgs) -> Result<i32> {
    let mode = args.mode.as_deref().and_then(Delivery::parse);
    let line = suite.line(&args.product, mode)?;
    let workload = suite.workload(&args.workload)?;
    check_implements(line, workload)?;
    run_lines(
        suite,
        LinesRequest {
            lines: vec![LineEntry {
                line,
                version: args.product_version.as_deref(),
                settings: Vec::new(),
            }],
            workload,
            options: args.options,
            rounds: args.repeat,
            chaos: args.chaos,
            drain: args.drain,
            settings: args.settings,
        },
    )
    .map(|outcome| outcome.exit_code())
}

/// Seconds between a campaign's kills when `suite chaos` is not told: the
/// spacing every exactly-once line's published campaign uses, longer than
/// the slowest recovery here (a JVM's start and restore, about 12 s).
const DEFAULT_KILL_EVERY_S: u64 = 20;

/// `suite chaos`: one run of one line with a campaign of kills and
/// restarts, verified over the whole run like any other.
fn chaos(suite: &Suite, args: ChaosArgs) -> Result<i32> {
    let line = suite.line(&args.line, None)?;
    let workload = suite.workload(&args.workload)?;
    check_implements(line, workload)?;
    let spacing = match (args.seed, args.options.window) {
        (Some(seed), Some(window_s)) => Spacing::Seeded { seed, window_s },
        _ => Spacing::Every {
            seconds: args.every.unwrap_or(DEFAULT_KILL_EVERY_S),
        },
    };
    let (plan, window_s) =
        ChaosPlan::campaign(args.kills, spacing).map_err(|why| anyhow::anyhow!("chaos: {why}"))?;
    let mut options = args.options;
    options.window = Some(window_s);
    run_lines(
        suite,
        LinesRequest {
            lines: vec![LineEntry {
                line,
                version: None,
                settings: Vec::new(),
            }],
            workload,
            options,
            rounds: 1,
            chaos: Some(plan),
            drain: None,
            settings: args.settings,
        },
    )
    .map(|outcome| outcome.exit_code())
}

/// `suite batch`: several lines interleaved round by round, one batch.
fn batch(suite: &Suite, args: BatchArgs) -> Result<i32> {
    let workload = suite.workload(&args.workload)?;
    let lines: Vec<(LineRef<'_>, Vec<Setting>)> = if args.all {
        runnable_lines(suite, workload)?
            .into_iter()
            .filter(|line| {
                let has_profile =
                    args.options.profile.is_uniform() || line.product.expert.is_some();
                if !has_profile {
                    eprintln!(
                        "note: skipping {}: {} has no expert profile",
                        line.line.name, line.product.name
                    );
                }
                has_profile
            })
            .map(|line| (line, Vec::new()))
            .collect()
    } else {
        let mut lines = Vec::new();
        for (i, spec) in args.lines.iter().enumerate() {
            if args.lines[..i].contains(spec) {
                anyhow::bail!("line `{spec}` is given twice; name each line once");
            }
            let line = suite.line(&spec.name, None)?;
            check_implements(line, workload)?;
            lines.push((line, spec.settings.clone()));
        }
        lines
    };
    run_lines(
        suite,
        LinesRequest {
            lines: lines
                .into_iter()
                .map(|(line, settings)| LineEntry {
                    line,
                    version: None,
                    settings,
                })
                .collect(),
            workload,
            options: args.options,
            rounds: args.repeat,
            chaos: None,
            drain: None,
            settings: args.settings,
        },
    )
    .map(|outcome| outcome.exit_code())
}

/// `--all`: every line runnable here whose product implements `workload`;
/// the others are skipped with a note.
fn runnable_lines<'s>(suite: &'s Suite, workload: &Workload) -> Result<Vec<LineRef<'s>>> {
    let cache = cache(suite)?;
    let mut lines = Vec::new();
    for line in suite.lines() {
        let name = &line.line.name;
        if !line.product.workloads.contains(&workload.name) {
            eprintln!(
                "note: skipping {name}: {} does not implement `{}`",
                line.product.name, workload.name
            );
            continue;
        }
        match products::availability(line.product, None, &cache) {
            Availability::NotInstalled { hint } => {
                eprintln!("note: skipping {name}: not installed here: {hint}")
            }
            _ => lines.push(line),
        }
    }
    if lines.is_empty() {
        anyhow::bail!(
            "no line runnable here implements `{}`; see `suite list`",
            workload.name
        );
    }
    Ok(lines)
}

fn check_implements(line: LineRef<'_>, workload: &Workload) -> Result<()> {
    if !line.product.workloads.contains(&workload.name) {
        anyhow::bail!(
            "{} does not implement workload `{}` (it implements: {})",
            line.product.name,
            workload.name,
            line.product.workloads.join(", ")
        );
    }
    Ok(())
}

/// One line of a batch, at a version (none: the product's default).
struct LineEntry<'s> {
    line: LineRef<'s>,
    version: Option<&'s str>,
    /// Settings of this line alone (`LINE@KEY=VALUE`), over the batch's.
    settings: Vec<Setting>,
}

/// What `suite run`, `suite batch` and `suite regress` ask for: lines to run
/// round by round.
struct LinesRequest<'s> {
    lines: Vec<LineEntry<'s>>,
    workload: &'s Workload,
    /// Load, results folder, and waiting for the host.
    options: RunOptions,
    rounds: u32,
    chaos: Option<ChaosPlan>,
    /// Records to pre-fill for a drain run.
    drain: Option<u64>,
    /// bench.yaml settings changed for these runs.
    settings: Vec<Setting>,
}

/// How a batch went: its id, where it was recorded, the version each entry
/// ran, and how many runs failed.
struct LinesOutcome {
    batch_id: String,
    results_dir: PathBuf,
    versions: Vec<String>,
    failed: usize,
}

impl LinesOutcome {
    /// 1 when a run failed or failed its verification.
    fn exit_code(&self) -> i32 {
        if self.failed > 0 {
            1
        } else {
            0
        }
    }
}

/// The one path of `suite run`, `suite batch` and `suite regress`: validate,
/// take the run lock, install every line, open the broker once, run the
/// rounds, record each run as it ends and re-render the report.
fn run_lines(suite: &Suite, request: LinesRequest<'_>) -> Result<LinesOutcome> {
    let workload = request.workload;
    let bench = suite.bench.with_settings(&request.settings)?;
    let defaults = &bench.run;
    if request.drain == Some(0) {
        anyhow::bail!(
            "--drain 0 leaves nothing to consume; give the number of records to pre-fill"
        );
    }
    // A drain run has no schedule: no rate, no warm-up, no window.
    let drain = request.drain.is_some();
    let window_s = if drain {
        0
    } else {
        request.options.window.unwrap_or(defaults.window_s)
    };
    let too_short = if drain {
        Ok(())
    } else {
        defaults.check_window(window_s)
    };
    if let Err(min) = too_short {
        anyhow::bail!(
            "--window {window_s} is too short: a window must span at least {MIN_WINDOW_SAMPLES} \
             samples, {min} s at bench.yaml's run.sample_interval_ms {}; use --window {min} or more",
            defaults.sample_interval_ms
        );
    }
    // Each line's configuration: its product's expert profile when asked
    // for, then the batch's settings, then the line's own.
    let profile = request.options.profile;
    let config_for = |entry: &LineEntry<'_>| -> Result<RunConfig> {
        let given: Vec<Setting> = request
            .settings
            .iter()
            .chain(&entry.settings)
            .cloned()
            .collect();
        let LineBench {
            bench: own,
            product_settings,
        } = suite.bench.for_line(entry.line.product, profile, &given)?;
        let delivery = entry.line.line.delivery;
        // A JVM line waits out its JIT however short the bench's warm-up.
        let least_warmup_s = defaults.warmup_s.max(entry.line.product.min_warmup_s);
        Ok(RunConfig {
            rate: if drain {
                0
            } else {
                request.options.rate.unwrap_or(bench.default_rate())
            },
            warmup_s: if drain {
                0
            } else {
                request.options.warmup.unwrap_or(least_warmup_s)
            },
            // The warm-up lasts until the product is steady unless
            // `--warmup` fixed it; a drain, an unpaced run (never steady
            // against no schedule) and an ETL run keep a fixed one.
            warmup_cap_s: (!drain
                && request.options.warmup.is_none()
                && request.options.rate.unwrap_or(bench.default_rate()) > 0
                && !workload.is_etl())
            .then_some(defaults.warmup_cap_s.max(least_warmup_s)),
            window_s,
            seed: defaults.seed,
            commit_interval_ms: own.run.commit_interval_ms.for_delivery(delivery),
            commit_intervals: Some(own.run.commit_interval_ms),
            client: own.client.clone(),
            settings: request
                .settings
                .iter()
                .chain(&entry.settings)
                .map(Setting::to_string)
                .collect(),
            profile,
            product_settings,
            parallelism: defaults.parallelism,
            sample_interval_ms: defaults.sample_interval_ms,
            input_partitions: workload.input.partitions,
            drain_records: request.drain,
            etl: workload.is_etl().then(|| own.etl.clone()),
        })
    };
    // Every line's settings are checked before anything starts.
    let configs: Vec<RunConfig> = request
        .lines
        .iter()
        .map(config_for)
        .collect::<Result<_>>()?;
    if let Some(config) = configs.iter().find(|c| c.rate == 0) {
        if workload.topic_output().is_some_and(|o| o.needs_schedule()) {
            anyhow::bail!(
                "workload `{}` needs a paced run: its records fall in windows by gendata's schedule, \
                 which {} has none of; give a rate above 0",
                workload.name,
                if config.drain_records.is_some() { "a drain run" } else { "rate 0" }
            );
        }
    }
    if let Some(plan) = &request.chaos {
        if workload.topic_output().is_none() {
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
        if plan.broker_restart_at_s.is_some() {
            if let BrokerConfig::External { bootstrap, .. } = &bench.broker {
                anyhow::bail!(
                    "chaos: a broker restart needs the suite's local broker; this bench's broker \
                     is external ({bootstrap}), which the suite cannot kill or start"
                );
            }
        }
    }
    // Before anything starts: a record that cannot be written would cost
    // the whole measurement.
    let results_dir =
        runner::results_dir(&suite.root, &suite.bench, request.options.results.clone());
    let pages_dir = report::default_out_dir(&results_dir);
    results::ensure_writable(&results_dir).map_err(|err| {
        anyhow::anyhow!(
            "results folder {} cannot be written ({err}); choose another with --results",
            results_dir.display()
        )
    })?;
    results::ensure_writable(&pages_dir).map_err(|err| {
        anyhow::anyhow!(
            "report folder {} cannot be written ({err}); make it writable or choose another --results",
            pages_dir.display()
        )
    })?;
    let interrupt = Interrupt::install()?;
    let cache = cache(suite)?;
    let names: Vec<&str> = request
        .lines
        .iter()
        .map(|l| l.line.line.name.as_str())
        .collect();
    let holder = format!("{} {}", names.join(","), workload.name);
    let when_held = WhenHeld::from_no_wait(request.options.no_wait);
    let _lock = RunLock::acquire(&cache, &holder, when_held, &interrupt)?;
    // install every line first: a missing product fails before any run
    let mut lines = Vec::new();
    for (entry, config) in request.lines.iter().zip(configs) {
        let installation =
            products::ensure_installed(entry.line.product, entry.version, &cache, &interrupt)?;
        lines.push(BatchLine {
            line: entry.line,
            label: std::iter::once(entry.line.line.name.clone())
                .chain(entry.settings.iter().map(Setting::to_string))
                .collect::<Vec<_>>()
                .join("@"),
            installation,
            config,
        });
    }
    let mut session = BrokerSession::open(&bench.broker, &cache, &interrupt)?;
    if let Some(local) = session.local() {
        let warmed = runner::warm_if_cold(
            local,
            bench.broker.warmup_s(),
            bench.iso_rate,
            &cache,
            &interrupt,
        )?;
        if warmed.is_some() {
            session.info.warmed_s = warmed;
        }
    }
    // One ClickHouse for the batch, when its output lands there.
    let sink = if workload.is_etl() {
        Some(SinkSession::open(&bench.sink, &cache, &interrupt)?)
    } else {
        None
    };
    let host = HostInfo::current();
    let batch_id = runner::new_run_id("batch");
    let ctx = RunContext {
        bench: &bench,
        cache: &cache,
        broker: &session.info,
        broker_pid: session.pid,
        local_broker: session.local(),
        sink: sink.as_ref(),
        host: &host,
        interrupt: &interrupt,
        batch_id: batch_id.clone(),
        chaos: request.chaos.clone(),
        suite_commit: crate::provenance::suite_commit(&suite.root),
    };
    let recorded = |record: &RunRecord| -> Result<()> {
        let path = results::append_record(&results_dir, record)?;
        runner::print_summary(record);
        eprintln!("  appended to {}", path.display());
        // The pages always show the newest result; a page that fails to
        // render never costs a measurement.
        match report::write_site(suite, &results_dir, &pages_dir, BadLines::Warn) {
            Ok(index) => eprintln!("  report: {}", index.display()),
            Err(err) => eprintln!("warning: the report was not updated: {err:#}"),
        }
        Ok(())
    };
    let outcome = match run_batch(&ctx, &lines, workload, request.rounds, recorded) {
        Ok(outcome) => outcome,
        Err(err) if err.is::<Interrupted>() => {
            if let Some(sink) = sink {
                sink.close()?;
            }
            session.close()?;
            return Err(err);
        }
        Err(err) => return Err(err),
    };
    if let Some(sink) = sink {
        sink.close()?;
    }
    session.close()?;
    Ok(LinesOutcome {
        batch_id,
        results_dir,
        versions: lines
            .iter()
            .map(|l| l.installation.version.clone())
            .collect(),
        failed: outcome.failed,
    })
}

/// `suite compare`: the paired ratios B / A of two lines of one batch.
fn compare(suite: &Suite, args: CompareArgs) -> Result<i32> {
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
    // Each side's point: bench.yaml with that side's own settings.
    let point_of = |spec: &LineSpec| -> Result<BenchPoint<'_>> {
        let product = suite.line(&spec.name, None)?.product;
        let LineBench {
            bench,
            product_settings,
        } = suite
            .bench
            .for_line(product, args.profile, &spec.settings)?;
        Ok(BenchPoint {
            profile: args.profile,
            product_settings,
            workload: &workload.name,
            rate: args.rate.unwrap_or(bench.default_rate()),
            window_s: args.window.unwrap_or(bench.run.window_s),
            commit_policy: bench.run.commit_interval_ms,
            client: bench.client,
            parallelism: bench.run.parallelism,
            input_partitions: workload.input.partitions,
            etl: workload.is_etl().then(|| bench.etl.clone()),
            bench_version: suite.bench.bench_version,
            host: &host,
        })
    };
    let side_a = Side {
        line: &args.a.name,
        point: point_of(&args.a)?,
    };
    let side_b = Side {
        line: &args.b.name,
        point: point_of(&args.b)?,
    };
    let point = &side_a.point;
    let results_dir = runner::results_dir(&suite.root, &suite.bench, args.results);
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
    println!(
        "batch {} · {} round(s) paired{}",
        shared.batch_id,
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
    println!();
    print_paired(&paired::compare_figures(&pairing.pairs, tie_band), tie_band);
    Ok(0)
}

/// The paired figures as an aligned table on standard output: for each,
/// the paired rounds, the median ratio, its interval with the interval's
/// coverage, the sign test's p and counts, and the verdict.
fn print_paired(figures: &[PairedFigure], tie_band: f64) {
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

/// `suite regress`: the line at `--baseline` and as it is now, interleaved
/// round by round in one batch, their order rotating; exit 1 when the
/// current version is separably worse than the baseline on a paired figure
/// (the interval on the worse side, sign-test p <= 0.05) and by more than
/// the threshold at the median. The command a release check calls.
fn regress(suite: &Suite, args: RegressArgs) -> Result<i32> {
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
    let outcome = run_lines(
        suite,
        LinesRequest {
            lines: vec![
                LineEntry {
                    line,
                    version: Some(&args.baseline),
                    settings: Vec::new(),
                },
                LineEntry {
                    line,
                    version: None,
                    settings: Vec::new(),
                },
            ],
            workload,
            options: args.options,
            rounds: args.repeat,
            chaos: None,
            drain: None,
            settings: Vec::new(),
        },
    )?;
    let results = report::load_results(&outcome.results_dir, BadLines::Warn)?;
    let batch: Vec<&RunRecord> = results
        .get(&workload.name)
        .into_iter()
        .flatten()
        .filter(|r| r.batch_id == outcome.batch_id)
        .collect();
    // The batch's plan says which entry ran at each round's position: it
    // tells the two apart even when both report the same version.
    let plan = plan_runs(2, args.repeat);
    let (mut baseline, mut current) = (Vec::new(), Vec::new());
    for record in &batch {
        let entry = plan
            .iter()
            .find(|p| Some(p.round) == record.round && Some(p.position) == record.position)
            .map(|p| p.line);
        let side = match entry {
            Some(0) => &mut baseline,
            Some(_) => &mut current,
            None => continue,
        };
        if let Some(figures) = RunFigures::from_record(record) {
            side.push(figures);
        }
    }
    let pairing = paired::pair_by_round(&baseline, &current);
    println!(
        "B = {} {} (current) against A = {} (baseline) · batch {} · {} round(s) paired",
        line.line.name,
        outcome.versions[1],
        outcome.versions[0],
        outcome.batch_id,
        pairing.pairs.len()
    );
    println!();
    let tie_band = suite.bench.tolerances.tie_band;
    let figures = paired::compare_figures(&pairing.pairs, tie_band);
    print_paired(&figures, tie_band);
    println!();
    if pairing.pairs.len() < MIN_REGRESS_ROUNDS as usize {
        eprintln!(
            "REGRESSION CHECK INCONCLUSIVE: only {} round(s) had a usable run of both versions; \
             at least {MIN_REGRESS_ROUNDS} are needed",
            pairing.pairs.len()
        );
        return Ok(1);
    }
    let threshold = args.threshold / 100.0;
    let regressions: Vec<String> = figures
        .iter()
        .filter_map(|f| {
            let p = f.verdict.ratios().map_or(1.0, |r| r.sign.p);
            paired::regression(f, threshold).map(|change| {
                format!(
                    "{} {:+.1} % (p {p:.3})",
                    paired_label(f.metric),
                    change * 100.0
                )
            })
        })
        .collect();
    if regressions.is_empty() {
        println!(
            "no regression: no paired figure is worse by more than {} % at the median with \
             its interval on the worse side and p <= {}",
            args.threshold,
            paired::SIGNIFICANCE
        );
        Ok(outcome.exit_code())
    } else {
        eprintln!(
            "REGRESSION: worse by more than {} % at the median, interval on the worse side, \
             p <= {}: {}",
            args.threshold,
            paired::SIGNIFICANCE,
            regressions.join(", ")
        );
        Ok(1)
    }
}

/// The fewest rounds a regression check judges from: an exact one-sided
/// sign test reaches p <= 0.05 only from 5 rounds on (1/32 when all agree).
const MIN_REGRESS_ROUNDS: u32 = 5;

/// The label of a figure of [`paired::PAIRED_METRICS`].
fn paired_label(metric: &str) -> &str {
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
        "{} · rate {}/s · window {} s · commit {}/{} ms (eos/alos) · parallelism {} · {} input partition(s) · bench_version {} · this host",
        point.workload,
        point.rate,
        point.window_s,
        point.commit_policy.exactly_once,
        point.commit_policy.at_least_once,
        point.parallelism,
        point.input_partitions,
        point.bench_version
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
                    format!("rate {rate} window {window} s with another configuration, bench_version or host")
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

/// `suite report`: the HTML pages from the results files.
fn report(suite: &Suite, args: ReportArgs) -> Result<i32> {
    let results_dir = runner::results_dir(&suite.root, &suite.bench, args.results);
    let out = args
        .out
        .unwrap_or_else(|| report::default_out_dir(&results_dir));
    let bad_lines = if args.strict {
        BadLines::Fail
    } else {
        BadLines::Warn
    };
    let index = report::write_site(suite, &results_dir, &out, bad_lines)?;
    println!("{}", index.display());
    Ok(0)
}

/// `suite export`: a run's histogram, or a workload's tables, as text.
fn export(suite: &Suite, args: ExportArgs) -> Result<i32> {
    let results_dir = runner::results_dir(&suite.root, &suite.bench, args.results);
    let results = report::load_results(&results_dir, BadLines::Warn)?;
    let text = if args.hgrm {
        let record = results
            .values()
            .flatten()
            .find(|r| r.run_id == args.target)
            .with_context(|| {
                format!(
                    "no run `{}` in {}; run ids are in each record's run_id",
                    args.target,
                    results_dir.display()
                )
            })?;
        report::export::hgrm(record)?
    } else {
        let known =
            suite.workloads.contains_key(&args.target) || results.contains_key(&args.target);
        if !known {
            anyhow::bail!(
                "unknown workload `{}`; known: {}",
                args.target,
                suite
                    .workloads
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let records = results.get(&args.target).map(Vec::as_slice).unwrap_or(&[]);
        let page = report::workload_page(suite, &args.target, records);
        if args.csv {
            report::export::csv(&page)
        } else {
            report::export::markdown(&page)
        }
    };
    match args.out {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => print!("{text}"),
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::{Cli, Command};

    /// The orchestrator starts gendata with a plan's arguments: parsed back
    /// by `suite gendata`, they give the same plan, drain or paced.
    #[test]
    fn a_gendata_plan_survives_its_command_line() {
        let paced = GendataPlan {
            bootstrap: "127.0.0.1:19092".into(),
            topic: "ss-in".into(),
            rate: 10_000,
            seed: 42,
            start_us: 1_000_000,
            window_start_us: 11_000_000,
            end_us: 41_000_000,
            window_file: None,
            max_records: None,
            summary: Some(PathBuf::from("/tmp/run/gendata.json")),
            avro_events: None,
        };
        let drain = GendataPlan {
            rate: 0,
            window_start_us: paced.start_us,
            max_records: Some(2_000_000),
            summary: None,
            ..paced.clone()
        };
        let avro = GendataPlan {
            avro_events: Some(20),
            ..paced.clone()
        };
        // The window announced at run time: the plan's window start is then
        // the schedule's, as the command fills it in.
        let announced = GendataPlan {
            window_start_us: paced.start_us,
            window_file: Some(PathBuf::from("/tmp/run/window.json")),
            ..paced.clone()
        };
        for plan in [paced, drain, avro, announced] {
            let argv = std::iter::once("suite".to_string()).chain(plan.command_args());
            let Command::Gendata(args) = Cli::parse_from(argv).command else {
                panic!("not a gendata command: {:?}", plan.command_args());
            };
            assert_eq!(gendata_plan(args), plan);
        }
    }

    /// The probe takes its window from the command line or from a window
    /// file, never both.
    #[test]
    fn the_probe_takes_fixed_bounds_or_a_window_file() {
        let base = [
            "suite",
            "probe",
            "--bootstrap",
            "b:1",
            "--topic",
            "out",
            "--floor-topic",
            "floor",
        ];
        let plan = |extra: &[&str]| {
            let argv = base.iter().chain(extra).copied();
            let Command::Probe(args) = Cli::try_parse_from(argv)?.command else {
                panic!("not a probe command");
            };
            probe_plan(args)
        };
        let fixed = plan(&["--window-start-us", "5", "--window-end-us", "9"]).unwrap();
        assert_eq!(
            fixed.window,
            WindowSource::Fixed(WindowAnnouncement {
                start_us: 5,
                end_us: 9
            })
        );
        assert_eq!(fixed.interval_us, 1_000_000);
        let announced = plan(&["--window-file", "/tmp/w.json", "--interval-ms", "500"]).unwrap();
        assert_eq!(
            announced.window,
            WindowSource::Announced(PathBuf::from("/tmp/w.json"))
        );
        assert_eq!(announced.interval_us, 500_000);
        assert!(plan(&[]).is_err());
        assert!(plan(&["--window-start-us", "5"]).is_err());
        assert!(plan(&["--window-start-us", "9", "--window-end-us", "5"]).is_err());
        assert!(plan(&[
            "--window-file",
            "/tmp/w.json",
            "--window-start-us",
            "5",
            "--window-end-us",
            "9"
        ])
        .is_err());
    }
}
