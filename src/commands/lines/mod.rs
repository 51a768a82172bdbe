//! The one path that runs lines: their settings checked before anything
//! starts, the host's lock, the installs, the broker, the rounds, each
//! record as it ends, and the report.

mod batch_lines;
mod outcome;
mod recording;
mod request;
mod run_configs;

use anyhow::Result;

use super::cache;
use crate::broker::BrokerSession;
use crate::cache::Cache;
use crate::clickhouse::SinkSession;
use crate::config::{Bench, Suite, Workload};
use crate::interrupt::{Interrupt, Interrupted};
use crate::isolation::{self, Role};
use crate::lock::{RunLock, WhenHeld};
use crate::model::host::HostInfo;
use crate::remote::Placements;
use crate::results::{self, RunRecord};
use crate::runner::batch::{run_batch, BatchLine, BatchOutcome};
use crate::runner::{self, RunContext};
use batch_lines::{install_lines, later_lines};
use recording::{writable_folders, Recorder};
use run_configs::{batch_isolation, checked_configs};

pub(super) use outcome::LinesOutcome;
pub(super) use request::{LineEntry, LinesRequest, NextBatch};
pub(crate) use run_configs::placed_on;

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
    let sink = open_sink(workload, &bench, &cache, &interrupt)?;
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
    let mut recorder = Recorder::new(suite, &folders);
    let mut outcome = run_batch(
        &ctx,
        &lines,
        workload,
        request.rounds,
        |record: &RunRecord| recorder.record(record),
    );
    while let Ok(done) = &outcome {
        let Some(batch) = next(recorder.records())? else {
            break;
        };
        outcome = run_later_batch(&ctx, &batch, &request, &lines, done.failed, &mut recorder);
    }
    close_sessions(&outcome, session, sink)?;
    let records = recorder.into_records();
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

/// A later batch `next` asked for, in a batch of its own: its runs'
/// failures added to the `failed` of the batches before it.
fn run_later_batch<'s>(
    ctx: &RunContext<'_>,
    batch: &NextBatch,
    request: &LinesRequest<'s>,
    lines: &[BatchLine<'s>],
    failed: usize,
    recorder: &mut Recorder<'_>,
) -> Result<BatchOutcome> {
    let later = later_lines(batch, request, lines);
    let ctx = RunContext {
        batch_id: results::new_run_id("batch"),
        sweep: batch.sweep.clone(),
        ..ctx.clone()
    };
    let recorded = |record: &RunRecord| recorder.record(record);
    run_batch(&ctx, &later, request.workload, request.rounds, recorded).map(|o| BatchOutcome {
        runs: o.runs,
        failed: failed + o.failed,
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

/// One ClickHouse for the batch, when its output lands there, on the
/// broker's CPUs.
fn open_sink(
    workload: &Workload,
    bench: &Bench,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<Option<SinkSession>> {
    let sink = workload
        .is_etl()
        .then(|| SinkSession::open(&bench.sink, cache, interrupt))
        .transpose()?;
    if let Some(pid) = sink.as_ref().and_then(SinkSession::pid) {
        isolation::pin_trees(&[pid as i32], Role::Broker)?;
    }
    Ok(sink)
}
