//! An ETL run: the product writes into a ClickHouse table, not a topic.
//!
//! Fresh input topic and a fresh database with its table -> product started
//! and ready -> gendata writes Avro batch datums on its schedule -> warm-up
//! -> window, the table's row count taken at both bounds -> gendata stops ->
//! the product settles (commits its whole input) and stops -> the table is
//! read back row by row and checked -> judged. The database is dropped once
//! its rows verified; a table that failed is kept for a look.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, Context, Result};

use super::monitor::{Grid, Monitor, Watched};
use super::progress::Progress;
use super::{
    create_topics, launch_settings, settle_committed, spawn_helper, Judged, Processes, RunContext,
    RunNames, HELPER_EXIT_TIMEOUT, SCHEDULE_LEAD,
};
use crate::analysis::etl::{sink_figures, InsertAck, RawVerifier, TableExpectation, TableVerifier};
use crate::analysis::judge::{judge_etl, EtlInputs, Verified};
use crate::broker::admin::OffsetReader;
use crate::clickhouse::client::EtlTable;
use crate::clickhouse::ClickHouseClient;
use crate::clock::now_us;
use crate::config::{EtlConfig, EtlDecoder, LineRef, SinkConfig, Workload};
use crate::gendata::schedule::Schedule;
use crate::gendata::{GendataPlan, GendataSummary};
use crate::interrupt::Interrupted;
use crate::products::{self, EtlLaunch, Installation};
use crate::results::{RunConfig, Variant, VerificationVerdict};
use crate::workloads::Checked;

/// The record's arm, from the run's ETL settings.
pub(super) fn variant(etl: &EtlConfig) -> Variant {
    let raw = etl.decoder == EtlDecoder::None;
    Variant {
        decoder: etl.decoder.as_str().to_string(),
        format: Some(etl.format.as_str().to_string()),
        events: (!raw).then_some(etl.events),
        payload: raw.then(|| "raw".to_string()),
        stage: None,
    }
}

/// The run's own database: its id, in the characters a name may hold.
fn database_name(run_id: &str) -> String {
    let safe: String = run_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("ss_{safe}")
}

pub(super) fn measure(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    installation: &Installation,
    workload: &Workload,
    config: &RunConfig,
    names: &RunNames,
    log_dir: &Path,
) -> Result<Judged> {
    let bootstrap = &ctx.broker.bootstrap;
    let etl = config
        .etl
        .clone()
        .ok_or_else(|| anyhow!("an ETL run needs bench.yaml's `etl` settings"))?;
    let table = match etl.decoder {
        EtlDecoder::None => EtlTable::RawMessages,
        _ => EtlTable::Events,
    };
    let sink = ctx
        .sink
        .ok_or_else(|| anyhow!("an ETL run needs a ClickHouse; none was opened"))?;
    let client = sink.client()?;
    let mut progress = Progress::new(&line.line.name, &workload.name, config);

    // setup
    progress.phase("creating the topic and the table");
    create_topics(bootstrap, workload, names)?;
    let database = database_name(&names.group);
    client.create_run_database(&database)?;
    client.create_table(&database, table)?;
    let measured = measure_into(
        ctx,
        line,
        installation,
        config,
        names,
        log_dir,
        &client,
        EtlLaunch {
            sink_url: sink.url().to_string(),
            sink_user: match &ctx.bench.sink {
                SinkConfig::External { user, .. } => user.clone(),
                SinkConfig::Local { .. } => None,
            },
            sink_password: match &ctx.bench.sink {
                SinkConfig::External { password, .. } => password.clone(),
                SinkConfig::Local { .. } => None,
            },
            database: database.clone(),
            table: table.name().to_string(),
            insert_log: log_dir.join("inserts.jsonl"),
            config: etl,
        },
        table,
        workload,
        &mut progress,
    );
    let keep = match &measured {
        Ok(judged) => judged
            .judgement
            .verification
            .as_ref()
            .is_some_and(|v| v.verdict == VerificationVerdict::Failed),
        Err(err) => !err.is::<Interrupted>(),
    };
    if keep {
        eprintln!(
            "  the table is kept for a look: {database}.{} at {}",
            table.name(),
            sink.url()
        );
    } else if let Err(err) = client.drop_database(&database) {
        eprintln!("warning: {err:#}");
    }
    progress.finish();
    measured
}

#[allow(clippy::too_many_arguments)]
fn measure_into(
    ctx: &RunContext<'_>,
    line: LineRef<'_>,
    installation: &Installation,
    config: &RunConfig,
    names: &RunNames,
    log_dir: &Path,
    client: &ClickHouseClient,
    etl: EtlLaunch,
    table: EtlTable,
    workload: &Workload,
    progress: &mut Progress,
) -> Result<Judged> {
    let bootstrap = &ctx.broker.bootstrap;
    let interrupt = ctx.interrupt;
    let run = &ctx.bench.run;
    let (database, insert_log, events) = (
        etl.database.clone(),
        etl.insert_log.clone(),
        etl.config.events,
    );
    progress.phase("starting the product");
    let mut settings = launch_settings(bootstrap, line, config, workload, names)?;
    settings.etl = Some(etl);
    let mut product = products::start(line.product, installation, &settings, log_dir, "product")?;
    product.wait_ready(Duration::from_secs(run.ready_timeout_s), interrupt)?;

    let start_us = now_us() + SCHEDULE_LEAD.as_micros() as i64;
    let window_start_us = start_us + config.warmup_s as i64 * 1_000_000;
    let window_end_us = window_start_us + config.window_s as i64 * 1_000_000;
    let gendata_file = log_dir.join("gendata.json");
    let plan = GendataPlan {
        bootstrap: bootstrap.to_string(),
        topic: names.input.clone(),
        rate: config.rate,
        seed: config.seed,
        start_us,
        window_start_us,
        end_us: window_end_us,
        window_file: None,
        max_records: None,
        summary: Some(gendata_file.clone()),
        avro_events: Some(events),
    };
    let mut gendata = spawn_helper("gendata", &plan.command_args(), log_dir, "")?;
    let offsets = OffsetReader::for_group(bootstrap, &names.group)?;
    let grid = Grid {
        anchor_us: window_start_us,
        interval_us: config.sample_interval_ms as i64 * 1000,
    };
    let mut monitor = Monitor::new(
        &offsets,
        names,
        Watched {
            product: product.pgid() as i32,
            broker: ctx.broker_pid.map(|p| p as i32),
            gendata: Some(gendata.pgid() as i32),
            probe: None,
            sink: ctx.sink.and_then(|s| s.pid()).map(|p| p as i32),
        },
        grid,
    );

    progress.phase("warm-up");
    let mut processes = Processes {
        product: &mut product,
        product_down: false,
        helpers: vec![&mut gendata],
    };
    processes.watch_until(window_start_us, interrupt, progress, &mut monitor)?;
    monitor.sample(true)?;
    let window_start = monitor.rows.len() - 1;
    let rows_at_start = (now_us(), client.count_rows(&database, table)?);

    progress.phase("measuring");
    processes.watch_until(window_end_us, interrupt, progress, &mut monitor)?;
    monitor.sample(true)?;
    let rows_at_end = (now_us(), client.count_rows(&database, table)?);
    let ticks_per_s = monitor.ticks_per_s();
    let rows = std::mem::take(&mut monitor.rows);
    let offset_polls = std::mem::take(&mut monitor.offset_polls);

    progress.phase("stopping the load");
    gendata.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
    let gendata_summary: GendataSummary = crate::handoff::read(&gendata_file)?;

    progress.phase("settling");
    let settle = settle_committed(
        &offsets,
        &names.input,
        gendata_summary.records_sent,
        Duration::from_secs(run.settle_s),
        &mut product,
        interrupt,
    )?;
    product.stop(Duration::from_secs(run.stop_grace_s));

    progress.phase("verifying");
    let committed = offsets.committed(&names.input)?.max(0) as u64;
    let expectation = TableExpectation {
        seed: config.seed,
        events,
        messages: gendata_summary.records_sent,
        committed,
        schedule: (config.rate > 0).then(|| Schedule::new(start_us, config.rate)),
        delivery: line.line.delivery,
    };
    let (count, duplicated) = (
        client.count_rows(&database, table)?,
        client.duplicated_seqs(&database, table)?,
    );
    let verification = match table {
        EtlTable::Events => {
            let mut verifier = TableVerifier::new(expectation);
            client.for_each_row(&database, |row| verifier.check(&row))?;
            verifier.finish(count, duplicated)
        }
        EtlTable::RawMessages => {
            let mut verifier = RawVerifier::new(expectation);
            client.for_each_raw_row(&database, |row| verifier.check(&row))?;
            verifier.finish(count, duplicated)
        }
    };
    if interrupt.is_set() {
        return Err(Interrupted.into());
    }
    let verified = Verified::Checked(Checked {
        verification,
        content: (0, 0),
        figures: BTreeMap::new(),
    });
    let acks = read_insert_log(&insert_log)?;
    let sink = sink_figures(&acks, window_start_us, window_end_us);
    let judgement = judge_etl(&EtlInputs {
        samples: &rows,
        window_start,
        offset_polls: &offset_polls,
        window_start_us,
        ticks_per_s,
        config,
        gendata: &gendata_summary,
        table_rows: [rows_at_start, rows_at_end],
        events,
        sink: sink.as_ref(),
        verified: &verified,
        settle: Some(settle),
        tolerances: &ctx.bench.tolerances,
    });
    Ok(Judged {
        judgement,
        gendata: gendata_summary,
        chaos: None,
        latency_histogram: None,
        latency_series: None,
    })
}

/// The product's insert log: one acknowledged insert a line.
fn read_insert_log(path: &Path) -> Result<Vec<InsertAck>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the product's insert log {}", path.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            serde_json::from_str(l)
                .with_context(|| format!("{}: not an insert acknowledgement: {l}", path.display()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_becomes_a_database_name() {
        assert_eq!(
            database_name("ss-20261130T201500Z-rustpipe-0a1b"),
            "ss_ss_20261130T201500Z_rustpipe_0a1b"
        );
    }
}
