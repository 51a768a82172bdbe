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
use messages::insert::InsertAck;

use super::monitor::Helpers;
use super::pipeline::{create_topics, launch_settings, spawn_helper, Run, RunKind};
use super::processes::Processes;
use super::settle::settle_committed;
use super::{Judged, HELPER_EXIT_TIMEOUT, SCHEDULE_LEAD};
use crate::analysis::etl::{sink_figures, RawVerifier, TableExpectation, TableVerifier};
use crate::analysis::judge::{judge_etl, EtlInputs, Settle, Verified};
use crate::analysis::window::{OffsetRead, Sample};
use crate::broker::admin::OffsetReader;
use crate::clickhouse::client::EtlTable;
use crate::clickhouse::ClickHouseClient;
use crate::clock::now_us;
use crate::config::{EtlConfig, EtlDecoder, SinkConfig};
use crate::gendata::schedule::Pacing;
use crate::gendata::{GendataPlan, GendataSummary};
use crate::interrupt::Interrupted;
use crate::isolation::Role;
use crate::products::{Deployed, EtlLaunch, LaunchSettings};
use crate::results::{Variant, VerificationVerdict};
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

/// An ETL run into its own database, as its phases go.
pub(super) struct EtlRun {
    etl: EtlConfig,
    table: EtlTable,
    client: ClickHouseClient,
    /// The run's database, named after its group.
    database: String,
    /// The product's log of acknowledged inserts.
    insert_log: std::path::PathBuf,
    /// Whether the database and its table were made: only then is there
    /// anything to keep or drop.
    created: bool,
}

/// What the measuring phases produced, before it becomes figures.
pub(super) struct Measured {
    start_us: i64,
    window_start_us: i64,
    window_end_us: i64,
    rows: Vec<Sample>,
    window_start: usize,
    offset_polls: Vec<OffsetRead>,
    ticks_per_s: f64,
    /// (count time, rows in the table) at the window's start and end.
    table_rows: [(i64, u64); 2],
    gendata: GendataSummary,
    settle: Option<Settle>,
}

impl EtlRun {
    pub(super) fn new(run: &Run<'_>) -> Result<EtlRun> {
        let etl = run
            .config
            .etl
            .clone()
            .ok_or_else(|| anyhow!("an ETL run needs bench.yaml's `etl` settings"))?;
        let table = match etl.decoder {
            EtlDecoder::None => EtlTable::RawMessages,
            _ => EtlTable::Events,
        };
        let sink = run
            .ctx
            .sink
            .ok_or_else(|| anyhow!("an ETL run needs a ClickHouse; none was opened"))?;
        Ok(EtlRun {
            etl,
            table,
            client: sink.client()?,
            database: database_name(&run.names.group),
            insert_log: run.log_dir.join("inserts.jsonl"),
            created: false,
        })
    }

    /// Counts the table's rows now.
    fn count_rows(&self) -> Result<(i64, u64)> {
        Ok((
            now_us(),
            self.client.count_rows(&self.database, self.table)?,
        ))
    }
}

impl RunKind for EtlRun {
    type Measured = Measured;

    fn create(&mut self, run: &mut Run<'_>) -> Result<()> {
        run.progress.phase("creating the topic and the table");
        create_topics(run)?;
        self.client.create_run_database(&self.database)?;
        self.client.create_table(&self.database, self.table)?;
        self.created = true;
        Ok(())
    }

    fn launch_settings(&self, run: &Run<'_>) -> Result<LaunchSettings> {
        let mut settings = launch_settings(run)?;
        let (user, password) = match &run.ctx.bench.sink {
            SinkConfig::External { user, password, .. } => (user.clone(), password.clone()),
            SinkConfig::Local { .. } => (None, None),
        };
        settings.etl = Some(EtlLaunch {
            sink_url: run
                .ctx
                .sink
                .map(|s| s.url().to_string())
                .unwrap_or_default(),
            sink_user: user,
            sink_password: password,
            database: self.database.clone(),
            table: self.table.name().to_string(),
            insert_log: self.insert_log.clone(),
            config: self.etl.clone(),
        });
        Ok(settings)
    }

    /// gendata writes Avro batch datums on its schedule; the table's row
    /// count is taken at both bounds of the window.
    fn measure(
        &mut self,
        run: &mut Run<'_>,
        product: &mut Deployed,
        _settings: &LaunchSettings,
        offsets: &OffsetReader,
    ) -> Result<Measured> {
        let config = run.config;
        let interrupt = run.ctx.interrupt;
        let start_us = now_us() + SCHEDULE_LEAD.as_micros() as i64;
        let window_start_us = start_us + config.warmup_s as i64 * 1_000_000;
        let window_end_us = window_start_us + config.window_s as i64 * 1_000_000;
        let gendata_file = run.log_dir.join("gendata.json");
        let plan = GendataPlan {
            bootstrap: run.bootstrap().to_string(),
            topic: run.names.input.clone(),
            rate: config.rate,
            seed: config.seed,
            start_us,
            window_start_us,
            end_us: window_end_us,
            window_file: None,
            max_records: None,
            summary: Some(gendata_file.clone()),
            avro_events: Some(self.etl.events),
            // Avro messages are keyed by their sequence number and spread
            // by the client's partitioner: the table is checked, not offsets.
            partitions: 1,
        };
        let mut gendata = spawn_helper(
            "gendata",
            Role::Gendata,
            &plan.command_args(),
            run.log_dir,
            "",
        )?;
        let helpers = Helpers {
            gendata: Some(gendata.pgid() as i32),
            probe: None,
            sink: run.ctx.sink.and_then(|s| s.pid()).map(|p| p as i32),
        };
        let (_, mut monitor) = run.monitor(offsets, product, helpers, window_start_us);
        run.progress.phase("warm-up");
        let mut processes = Processes {
            product,
            product_down: false,
            helpers: vec![&mut gendata],
        };
        processes.watch_until(window_start_us, interrupt, &mut run.progress, &mut monitor)?;
        monitor.sample(true)?;
        let window_start = monitor.rows.len() - 1;
        let rows_at_start = self.count_rows()?;
        run.progress.phase("measuring");
        processes.watch_until(window_end_us, interrupt, &mut run.progress, &mut monitor)?;
        monitor.sample(true)?;
        let rows_at_end = self.count_rows()?;
        run.progress.phase("stopping the load");
        gendata.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
        Ok(Measured {
            start_us,
            window_start_us,
            window_end_us,
            ticks_per_s: monitor.ticks_per_s(),
            rows: std::mem::take(&mut monitor.rows),
            window_start,
            offset_polls: std::mem::take(&mut monitor.offset_polls),
            table_rows: [rows_at_start, rows_at_end],
            gendata: crate::handoff::read(&gendata_file)?,
            settle: None,
        })
    }

    /// The product commits its whole input before it is stopped.
    fn settle(
        &mut self,
        run: &mut Run<'_>,
        measured: &mut Measured,
        product: &mut Deployed,
        offsets: &OffsetReader,
    ) -> Result<()> {
        run.progress.phase("settling");
        measured.settle = Some(settle_committed(
            offsets,
            &run.names.input,
            measured.gendata.records_sent,
            Duration::from_secs(run.ctx.bench.run.settle_s),
            product,
            run.ctx.interrupt,
        )?);
        Ok(())
    }

    /// Reads the table back row by row against what the committed input owes.
    fn verify(
        &mut self,
        run: &mut Run<'_>,
        measured: &mut Measured,
        offsets: &OffsetReader,
    ) -> Result<Verified> {
        let config = run.config;
        let expectation = TableExpectation {
            seed: config.seed,
            events: self.etl.events,
            messages: measured.gendata.records_sent,
            committed: offsets.committed(&run.names.input)?.max(0) as u64,
            pacing: Pacing::new(measured.start_us, config.rate),
            delivery: run.line.line.delivery,
        };
        let (client, database, table) = (&self.client, &self.database, self.table);
        let (count, duplicated) = (
            client.count_rows(database, table)?,
            client.duplicated_seqs(database, table)?,
        );
        let verification = match table {
            EtlTable::Events => {
                let mut verifier = TableVerifier::new(expectation);
                client.for_each_row(database, |row| verifier.check(&row))?;
                verifier.finish(count, duplicated)
            }
            EtlTable::RawMessages => {
                let mut verifier = RawVerifier::new(expectation);
                client.for_each_raw_row(database, |row| verifier.check(&row))?;
                verifier.finish(count, duplicated)
            }
        };
        if run.interrupt().is_set() {
            return Err(Interrupted.into());
        }
        Ok(Verified::Checked(Checked {
            verification,
            content: (0, 0),
            figures: BTreeMap::new(),
        }))
    }

    fn judge(&self, run: &Run<'_>, m: Measured, verified: Verified) -> Result<Judged> {
        let acks = read_insert_log(&self.insert_log)?;
        let sink = sink_figures(&acks, m.window_start_us, m.window_end_us);
        let judgement = judge_etl(&EtlInputs {
            samples: &m.rows,
            window_start: m.window_start,
            offset_polls: &m.offset_polls,
            window_start_us: m.window_start_us,
            ticks_per_s: m.ticks_per_s,
            config: run.config,
            gendata: &m.gendata,
            table_rows: m.table_rows,
            events: self.etl.events,
            sink: sink.as_ref(),
            verified: &verified,
            settle: m.settle,
            tolerances: &run.ctx.bench.tolerances,
        });
        Ok(Judged {
            judgement,
            gendata: m.gendata,
            chaos: None,
            latency_histogram: None,
            latency_series: None,
        })
    }

    /// The database is dropped once its rows verified; a table that failed
    /// (or a run that failed) is kept for a look.
    fn finish(&mut self, run: &Run<'_>, outcome: &Result<Judged>) {
        if !self.created {
            return;
        }
        let keep = match outcome {
            Ok(judged) => judged
                .judgement
                .verification
                .as_ref()
                .is_some_and(|v| v.verdict == VerificationVerdict::Failed),
            Err(err) => !err.is::<Interrupted>(),
        };
        if keep {
            eprintln!(
                "  the table is kept for a look: {}.{} at {}",
                self.database,
                self.table.name(),
                run.ctx.sink.map(|s| s.url()).unwrap_or_default()
            );
        } else if let Err(err) = self.client.drop_database(&self.database) {
            eprintln!("warning: {err:#}");
        }
    }
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
