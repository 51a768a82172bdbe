//! What each subcommand does, on top of the modules that do the work.

use std::path::Path;

use anyhow::{Context, Result};

use crate::broker::{BrokerSession, LocalBroker};
use crate::cache::Cache;
use crate::cli::{
    BrokerAction, Cli, Command, ExportArgs, GendataArgs, InstallArgs, ProbeArgs, ReportArgs,
    RunArgs,
};
use crate::clock::now_us;
use crate::config::{Delivery, Suite, MIN_WINDOW_SAMPLES};
use crate::gendata::GendataPlan;
use crate::host::HostInfo;
use crate::interrupt::{Interrupt, Interrupted};
use crate::lock::{RunLock, WhenHeld};
use crate::probe::ProbePlan;
use crate::products::{self, Availability};
use crate::report::{self, BadLines};
use crate::results::{self, RunConfig, Status};
use crate::runner::{self, RunContext};

/// Runs `cli`'s command; returns the process exit code.
pub fn execute(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Gendata(args) => crate::gendata::run(&gendata_plan(args)).map(|()| 0),
        Command::Probe(args) => crate::probe::run(&probe_plan(args)).map(|()| 0),
        Command::List => list(&load(&cli.config)?),
        Command::Install(args) => install(&load(&cli.config)?, &args),
        Command::Broker { action } => broker(&load(&cli.config)?, action),
        Command::Run(args) => run(&load(&cli.config)?, args),
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
        max_records: args.max_records,
        summary: args.summary,
    }
}

/// `suite probe`'s plan, as the command gives it.
fn probe_plan(args: ProbeArgs) -> ProbePlan {
    ProbePlan {
        bootstrap: args.bootstrap,
        topic: args.topic,
        floor_topic: args.floor_topic,
        window_start_us: args.window_start_us,
        window_end_us: args.window_end_us,
        summary: args.summary,
    }
}

fn load(config: &Path) -> Result<Suite> {
    Ok(Suite::load(config)?)
}

fn cache(suite: &Suite) -> Result<Cache> {
    Cache::from_settings(suite.bench.cache_dir.as_deref())
}

/// `suite list`: products, lines and workloads, and what is runnable here.
fn list(suite: &Suite) -> Result<i32> {
    let cache = cache(suite)?;
    println!(
        "{:<18} {:<14} {:<15} {:<20} status",
        "line", "product", "delivery", "workloads"
    );
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
            "{:<18} {:<14} {:<15} {:<20} {status}",
            line.line.name,
            line.product.name,
            line.line.delivery.as_str(),
            line.product.workloads.join(",")
        );
    }
    println!();
    println!("{:<18} description", "workload");
    for workload in suite.workloads.values() {
        println!("{:<18} {}", workload.name, workload.description);
    }
    Ok(0)
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
fn broker(suite: &Suite, action: BrokerAction) -> Result<i32> {
    let cache = cache(suite)?;
    let local = LocalBroker::from_config(&suite.bench.broker, &cache)
        .context("`suite broker` manages the local broker only")?;
    match action {
        BrokerAction::Start => {
            if local.is_running() {
                println!("local broker already running at {}", local.bootstrap());
            } else {
                local.start(&Interrupt::install()?)?;
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

/// `suite run`: `--repeat` runs of one line, one after another, one batch,
/// holding the host's run lock throughout.
fn run(suite: &Suite, args: RunArgs) -> Result<i32> {
    let mode = args.mode.as_deref().and_then(Delivery::parse);
    let line = suite.line(&args.product, mode)?;
    let workload = suite.workload(&args.workload)?;
    if !line.product.workloads.contains(&workload.name) {
        anyhow::bail!(
            "{} does not implement workload `{}` (it implements: {})",
            line.product.name,
            workload.name,
            line.product.workloads.join(", ")
        );
    }
    let defaults = &suite.bench.run;
    if args.drain == Some(0) {
        anyhow::bail!(
            "--drain 0 leaves nothing to consume; give the number of records to pre-fill"
        );
    }
    // A drain run has no schedule: no rate, no warm-up, no window.
    let drain = args.drain.is_some();
    let window_s = if drain {
        0
    } else {
        args.window.unwrap_or(defaults.window_s)
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
    let config = RunConfig {
        rate: if drain {
            0
        } else {
            args.rate.unwrap_or(defaults.rate)
        },
        warmup_s: if drain {
            0
        } else {
            args.warmup.unwrap_or(defaults.warmup_s)
        },
        window_s,
        seed: defaults.seed,
        commit_interval_ms: defaults.commit_interval_ms,
        parallelism: defaults.parallelism,
        sample_interval_ms: defaults.sample_interval_ms,
        input_partitions: workload.input.partitions,
        drain_records: args.drain,
    };
    if let Some(plan) = args.chaos {
        if plan.kill_at_s >= config.window_s {
            anyhow::bail!(
                "--chaos kill-at={}s falls outside the {} s window; choose a time inside it",
                plan.kill_at_s,
                config.window_s
            );
        }
    }
    // Before anything starts: a record that cannot be written would cost
    // the whole measurement.
    let results_dir = runner::results_dir(&suite.root, &suite.bench, args.results);
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
    let holder = format!("{} {}", line.line.name, workload.name);
    let when_held = WhenHeld::from_no_wait(args.no_wait);
    let _lock = RunLock::acquire(&cache, &holder, when_held, &interrupt)?;
    let installation = products::ensure_installed(
        line.product,
        args.product_version.as_deref(),
        &cache,
        &interrupt,
    )?;
    let session = BrokerSession::open(&suite.bench.broker, &cache, &interrupt)?;
    let host = HostInfo::current();
    let ctx = RunContext {
        bench: &suite.bench,
        cache: &cache,
        broker: &session.info,
        broker_pid: session.pid,
        host: &host,
        interrupt: &interrupt,
        batch_id: runner::new_run_id("batch"),
        chaos: args.chaos,
    };
    let mut failed = 0;
    for round in 1..=args.repeat.max(1) {
        if args.repeat > 1 {
            eprintln!("run {round} of {}", args.repeat);
        }
        let record = match runner::run_once(&ctx, line, &installation, workload, &config) {
            Ok(record) => record,
            Err(err) if err.is::<Interrupted>() => {
                session.close()?;
                return Err(err);
            }
            Err(err) => return Err(err),
        };
        let path = results::append_record(&results_dir, &record)?;
        runner::print_summary(&record);
        eprintln!("  appended to {}", path.display());
        if record.status == Status::Failed || record.has_flag(results::flag::VERIFICATION_FAILED) {
            failed += 1;
        }
        // The pages always show the newest result; a page that fails to
        // render never costs a measurement.
        match report::write_site(suite, &results_dir, &pages_dir, BadLines::Warn) {
            Ok(index) => eprintln!("  report: {}", index.display()),
            Err(err) => eprintln!("warning: the report was not updated: {err:#}"),
        }
    }
    session.close()?;
    Ok(if failed > 0 { 1 } else { 0 })
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
