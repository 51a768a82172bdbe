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
mod pipeline;
mod processes;
mod progress;
mod settle;
mod summary;
mod topic;
mod verify;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};

use crate::analysis::judge::Judgement;
use crate::broker::admin;
use crate::broker::{BrokerInfo, LocalBroker};
use crate::cache::Cache;
use crate::clickhouse::SinkSession;
use crate::config::{Bench, ChaosPlan, LineRef, Workload};
use crate::gendata::GendataSummary;
use crate::interrupt::{Interrupt, Interrupted};
use crate::isolation::cgroup::ProductCgroup;
use crate::model::host::HostInfo;
use crate::products::Installation;
use crate::remote::Placements;
use crate::results::{
    Chaos, LatencySeries, PlacedHost, RunConfig, RunRecord, Status, SweepTag, SCHEMA_VERSION,
};
use batch::PlannedRun;
use drain::DrainRun;
use etl::EtlRun;
use pipeline::{run_phases, Run};
use progress::Progress;
use topic::TopicRun;

/// How long gendata and the probe may take to finish after the window.
pub(super) const HELPER_EXIT_TIMEOUT: Duration = Duration::from_secs(60);
/// Time from planning the load to gendata's first slot: room for gendata's
/// process to start and its producer to reach the broker. A topic run plans
/// once its probe is ready.
pub(super) const SCHEDULE_LEAD: Duration = Duration::from_millis(500);

/// Everything a batch of runs shares.
#[derive(Clone)]
pub struct RunContext<'a> {
    pub bench: &'a Bench,
    pub cache: &'a Cache,
    pub broker: &'a BrokerInfo,
    /// The local broker, which a chaos run may restart; None for an
    /// external one.
    pub local_broker: Option<&'a LocalBroker>,
    /// The ClickHouse of an ETL workload's batch.
    pub sink: Option<&'a SinkSession>,
    pub host: &'a HostInfo,
    /// The hosts of the products bench.yaml places elsewhere, connected.
    pub placements: &'a Placements,
    pub interrupt: &'a Interrupt,
    pub batch_id: String,
    /// The faults to inject into every run of the batch.
    pub chaos: Option<ChaosPlan>,
    /// The suite's git commit, recorded with each run.
    pub suite_commit: Option<String>,
    /// The sweep the batch belongs to, recorded with each run.
    pub sweep: Option<SweepTag>,
}

/// The topics and group of one run; named after the run so nothing is shared.
pub(super) struct RunNames {
    pub input: String,
    pub output: String,
    pub floor: String,
    pub group: String,
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

/// The warm-up a run used, and `not-steady` when it hit its cap first.
pub(super) fn record_warmup(judgement: &mut Judgement, used_s: f64, not_steady: Option<String>) {
    let warmup = &crate::results::figure::WARMUP_USED_S;
    judgement
        .metrics
        .insert(warmup.name.into(), warmup.metric(used_s));
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
pub(super) struct Judged {
    judgement: Judgement,
    gendata: GendataSummary,
    chaos: Option<Chaos>,
    latency_histogram: Option<String>,
    latency_series: Option<LatencySeries>,
}

/// Runs `line`, as installed in `installation`, on `workload` once, at its
/// place in the batch's plan, and returns its record, ok or failed. Only an interruption (or a failure
/// before anything started) is an error.
pub fn run_once(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    installation: &Installation,
    workload: &Workload,
    config: &RunConfig,
    planned: PlannedRun,
) -> Result<RunRecord> {
    let run_id = crate::results::new_run_id(&line.line.name);
    let log_dir = ctx.cache.run_dir(&run_id);
    std::fs::create_dir_all(&log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let mut record = RunRecord {
        round: Some(planned.round),
        position: Some(planned.position),
        entry: Some(planned.line as u32 + 1),
        variant: config.etl.as_ref().map(etl::variant),
        logs: log_dir.clone(),
        ..empty_record(ctx, line, installation, workload, config, &run_id)
    };
    let names = RunNames::for_run(&run_id);
    let (cgroup, no_cgroup) = product_cgroup(config, &run_id);
    let mut run = Run {
        ctx,
        line,
        installation,
        workload,
        config,
        names: &names,
        log_dir: &log_dir,
        progress: Progress::new(&line.line.name, &workload.name, config),
        cgroup,
    };
    let outcome = match config.drain_records {
        Some(records) => {
            DrainRun::new(&run, records).and_then(|mut kind| run_phases(&mut run, &mut kind))
        }
        None if workload.is_etl() => {
            EtlRun::new(&run).and_then(|mut kind| run_phases(&mut run, &mut kind))
        }
        None => TopicRun::new(&run).and_then(|mut kind| run_phases(&mut run, &mut kind)),
    };
    // teardown: the run's topics, and any its product made, go whatever
    // happened
    if let Err(err) = admin::delete_run_topics(&ctx.broker.bootstrap, &names.group) {
        eprintln!("warning: {err:#}");
    }
    // The cgroup goes once the product has stopped.
    drop(run);
    match outcome {
        Ok(judged) => {
            judged.fill(&mut record);
            if let Some(why) = no_cgroup {
                record.not_applicable.insert("cgroup_cpu".into(), why);
            }
        }
        Err(err) if err.is::<Interrupted>() => return Err(err),
        Err(err) => {
            record.status = Status::Failed;
            record.failure = Some(format!("{err:#}"));
        }
    }
    Ok(record)
}

/// The product's cgroup for run `run_id`, or why it has none: the CPU of
/// a product on other hosts is read there, from /proc.
fn product_cgroup(
    config: &RunConfig,
    run_id: &str,
) -> (Option<Arc<ProductCgroup>>, Option<String>) {
    if !config.hosts.is_empty() {
        let why = "the product ran on other hosts, where the suite makes no cgroup; its CPU is the /proc samples'";
        return (None, Some(why.into()));
    }
    match ProductCgroup::create(run_id) {
        Ok(cgroup) => (Some(Arc::new(cgroup)), None),
        Err(why) => (
            None,
            Some(format!("{why}; the product's CPU is the /proc samples'")),
        ),
    }
}

/// The record of a run that has not started: who ran what, how, where.
fn empty_record(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    installation: &Installation,
    workload: &Workload,
    config: &RunConfig,
    run_id: &str,
) -> RunRecord {
    RunRecord {
        schema: SCHEMA_VERSION,
        run_id: run_id.to_string(),
        batch_id: ctx.batch_id.clone(),
        round: None,
        position: None,
        entry: None,
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        bench_version: ctx.bench.bench_version,
        host: ctx.host.clone(),
        product_hosts: ctx
            .placements
            .of(&line.product.name)
            .iter()
            .map(|h| PlacedHost {
                address: h.address.to_string(),
                identity: h.identity.clone(),
            })
            .collect(),
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
        logs: PathBuf::new(),
        suite_commit: ctx.suite_commit.clone(),
        sweep: ctx.sweep.clone(),
    }
}

impl Judged {
    /// Writes the judgement into the run's record.
    fn fill(self, record: &mut RunRecord) {
        let judgement = self.judgement;
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
        record.chaos = self.chaos;
        record.latency_histogram = self.latency_histogram;
        record.latency_series = self.latency_series;
        record.gendata = Some(self.gendata);
    }
}

pub use broker_warmup::warm_if_cold;
pub use settle::QUIET_AFTER_COMMIT;
pub use summary::print_summary;

/// The results folder, from the command line or bench.yaml.
pub fn results_dir(root: &std::path::Path, bench: &Bench, flag: Option<PathBuf>) -> PathBuf {
    flag.unwrap_or_else(|| root.join(&bench.results_dir))
}
