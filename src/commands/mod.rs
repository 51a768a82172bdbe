//! What each subcommand does, on top of the modules that do the work.

use std::path::Path;

use anyhow::{Context, Result};

use crate::broker::LocalBroker;
use crate::cache::Cache;
use crate::cli::{
    BrokerAction, Cli, ClickHouseAction, Command, CpuRigArgs, ExportArgs, ExportFormat,
    GendataArgs, InstallArgs, ProbeArgs, ReportArgs, RigCommand,
};
use crate::clickhouse::{ClickHouseClient, LocalClickHouse};
use crate::clock::now_us;
use crate::config::Suite;
use crate::exit;
use crate::gendata::GendataPlan;
use crate::handoff::{WindowAnnouncement, WindowSource};
use crate::interrupt::Interrupt;
use crate::lock::{RunLock, WhenHeld};
use crate::probe::ProbePlan;
use crate::products::{self, Availability};
use crate::report::{self, BadLines};
use crate::results::{self};
use crate::runner::{self};
use crate::workloads;

mod compare;
mod lines;
mod list;
mod noise;
mod regress;
mod run;
mod sweep;

use compare::compare;
use list::list;
use noise::noise;
use regress::regress;
use run::{batch, chaos, run};
use sweep::sweep;

/// Runs `cli`'s command; returns the process exit code.
pub fn execute(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Gendata(args) => crate::gendata::run(&gendata_plan(args)).map(|()| 0),
        Command::Probe(args) => crate::probe::run(&probe_plan(args)?).map(|()| 0),
        Command::List(args) => list(&load(&cli.config)?, &args),
        Command::Completions { shell } => completions(shell).map(|()| 0),
        Command::Install(args) => install(&load(&cli.config)?, &args),
        Command::Broker { action } => broker(&load(&cli.config)?, action),
        Command::Clickhouse { action } => clickhouse(&load(&cli.config)?, action),
        Command::Rig {
            rig: RigCommand::Cpu(args),
        } => rig_cpu(&load(&cli.config)?, args),
        Command::Run(args) => run(&load(&cli.config)?, args),
        Command::Batch(args) => batch(&load(&cli.config)?, args),
        Command::Chaos(args) => chaos(&load(&cli.config)?, args),
        Command::Sweep(args) => sweep(&load(&cli.config)?, args),
        Command::Compare(args) => compare(&load(&cli.config)?, args),
        Command::Regress(args) => regress(&load(&cli.config)?, args),
        Command::Noise(args) => noise(&load(&cli.config)?, args),
        Command::Report(args) => report(&load(&cli.config)?, args),
        Command::Export(args) => export(&load(&cli.config)?, args),
    }
}

/// Prints `shell`'s completion script.
fn completions(shell: clap_complete::Shell) -> Result<()> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut completed_command(), "suite", &mut script);
    crate::out!("{}", String::from_utf8(script)?);
    Ok(())
}

/// The command line the completion scripts offer: the suite's without the
/// helpers `suite run` starts, which `--help` leaves out too (clap_complete
/// would offer hidden subcommands).
fn completed_command() -> clap::Command {
    use clap::CommandFactory;
    let full = Cli::command();
    let shown: Vec<clap::Command> = full
        .get_subcommands()
        .filter(|command| !command.is_hide_set())
        .cloned()
        .collect();
    clap::Command::new("suite")
        .version(env!("SUITE_VERSION"))
        .args(full.get_arguments().cloned())
        .subcommands(shown)
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
        partitions: args.partitions,
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

/// Loads the suite and checks its workloads against their implementations.
fn load(config: &Path) -> Result<Suite> {
    let suite = Suite::load(config)?;
    workloads::check_suite(&suite)?;
    Ok(suite)
}

fn cache(suite: &Suite) -> Result<Cache> {
    Cache::from_settings(suite.bench.cache_dir.as_deref())
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
            crate::outln!("{name} {v} built: {}", bin.display())
        }
        (Some(dir), _) if before == Availability::Installed => {
            crate::outln!("{name} {v} is already installed in {}", dir.display())
        }
        (Some(dir), _) => crate::outln!("{name} {v} installed in {}", dir.display()),
        (None, Some(bin)) => {
            crate::outln!("{name} runs {}; the suite installs nothing", bin.display())
        }
        (None, None) => crate::outln!("{name} is part of the suite; nothing to install"),
    }
    Ok(exit::OK)
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
    crate::out!("{}", crate::rig::summary(&records));
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
    Ok(exit::OK)
}

fn broker(suite: &Suite, action: BrokerAction) -> Result<i32> {
    let cache = cache(suite)?;
    let local = LocalBroker::from_config(&suite.bench.broker, &cache)
        .context("`suite broker` manages the local broker only")?;
    match action {
        BrokerAction::Start => {
            if local.is_running() {
                crate::outln!("local broker already running at {}", local.bootstrap());
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
                let nodes = match local.nodes() {
                    1 => String::new(),
                    n => format!(", {n} nodes"),
                };
                crate::outln!(
                    "local broker (Apache Kafka {}{nodes}) running at {}; log: {}",
                    local.version(),
                    local.bootstrap(),
                    local.log_file().display()
                );
            }
            Ok(exit::OK)
        }
        BrokerAction::Stop => {
            if !local.running_pids().is_empty() {
                local.stop()?;
                crate::outln!("local broker stopped");
            } else {
                crate::outln!("no broker started by the suite is running");
            }
            Ok(exit::OK)
        }
        BrokerAction::Status => match local.running_pids().as_slice() {
            [pid] if local.nodes() == 1 => {
                crate::outln!("running: pid {pid}, {}", local.bootstrap());
                Ok(exit::OK)
            }
            [] if local.is_running() => {
                crate::outln!(
                    "a broker not started by the suite answers at {}",
                    local.bootstrap()
                );
                Ok(exit::OK)
            }
            [] => {
                crate::outln!("not running");
                Ok(exit::NOT_RUNNING)
            }
            pids => {
                let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
                crate::outln!(
                    "running: {} of {} nodes (pids {}), {}",
                    pids.len(),
                    local.nodes(),
                    pids.join(", "),
                    local.bootstrap()
                );
                Ok(if pids.len() == local.nodes() as usize {
                    0
                } else {
                    3
                })
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
                crate::outln!("local ClickHouse already running at {}", local.url());
            } else {
                local.start(&Interrupt::install()?)?;
                let version = ClickHouseClient::from_config(&suite.bench.sink)?.version()?;
                crate::outln!(
                    "local ClickHouse {version} running at {}; log: {}",
                    local.url(),
                    local.log_file().display()
                );
            }
            Ok(exit::OK)
        }
        ClickHouseAction::Stop => {
            if local.running_pid().is_some() {
                local.stop()?;
                crate::outln!("local ClickHouse stopped");
            } else {
                crate::outln!("no ClickHouse started by the suite is running");
            }
            Ok(exit::OK)
        }
        ClickHouseAction::Status => match local.running_pid() {
            Some(pid) => {
                crate::outln!("running: pid {pid}, {}", local.url());
                Ok(exit::OK)
            }
            None if local.is_running() => {
                crate::outln!(
                    "a ClickHouse not started by the suite answers at {}",
                    local.url()
                );
                Ok(exit::OK)
            }
            None => {
                crate::outln!("not running");
                Ok(exit::NOT_RUNNING)
            }
        },
    }
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
    crate::outln!("{}", index.display());
    Ok(exit::OK)
}

/// `suite export`: a run's histogram, a workload's figures as tidy rows,
/// or its page's tables.
fn export(suite: &Suite, args: ExportArgs) -> Result<i32> {
    use report::export::{csv, figure_rows, hgrm, jsonl, markdown};
    let results_dir = runner::results_dir(&suite.root, &suite.bench, args.results);
    let results = report::load_results(&results_dir, BadLines::Warn)?;
    let records = || workload_records(suite, &results, &args.target);
    let text = match args.format {
        ExportFormat::Hgrm => {
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
            hgrm(record)?
        }
        ExportFormat::Csv => csv(&figure_rows(records()?))?,
        ExportFormat::Jsonl => jsonl(&figure_rows(records()?))?,
        ExportFormat::Markdown => markdown(&report::workload_page(suite, &args.target, records()?)),
    };
    match args.out {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?
        }
        None => crate::out!("{text}"),
    }
    Ok(exit::OK)
}

/// The records of `workload`, none when it has no results yet; an unknown
/// workload is an error naming the known ones.
fn workload_records<'r>(
    suite: &Suite,
    results: &'r std::collections::BTreeMap<String, Vec<crate::results::RunRecord>>,
    workload: &str,
) -> Result<&'r [crate::results::RunRecord]> {
    if !suite.workloads.contains_key(workload) && !results.contains_key(workload) {
        anyhow::bail!(
            "unknown workload `{workload}`; known: {}",
            suite
                .workloads
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(results.get(workload).map(Vec::as_slice).unwrap_or(&[]))
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use std::path::PathBuf;

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
            partitions: 1,
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
        let keyed = GendataPlan {
            partitions: 4,
            ..paced.clone()
        };
        // The window announced at run time: the plan's window start is then
        // the schedule's, as the command fills it in.
        let announced = GendataPlan {
            window_start_us: paced.start_us,
            window_file: Some(PathBuf::from("/tmp/run/window.json")),
            ..paced.clone()
        };
        for plan in [paced, drain, avro, keyed, announced] {
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
