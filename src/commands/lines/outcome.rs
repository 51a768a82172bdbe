//! How a batch went, and the document `--json` prints of it: every run's
//! verdicts and figures, and where the whole records are.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Result;
use serde::Serialize;

use crate::exit;
use crate::results::{self, Metric, Regime, RunRecord, Status, Verification};

/// How a batch went: its id, where it was recorded, the version each entry
/// ran, and how many runs failed.
pub(in crate::commands) struct LinesOutcome {
    pub(in crate::commands) batch_id: String,
    pub(in crate::commands) results_dir: PathBuf,
    pub(in crate::commands) versions: Vec<String>,
    pub(in crate::commands) failed: usize,
    /// Every record the batches wrote, in the order the runs ended.
    pub(in crate::commands) records: Vec<RunRecord>,
}

impl LinesOutcome {
    /// 1 when a run failed or failed its verification.
    pub(in crate::commands) fn exit_code(&self) -> i32 {
        if self.failed > 0 {
            exit::ERROR
        } else {
            exit::OK
        }
    }

    /// The batch as `--json` prints it: every run's figures, and where the
    /// whole records are.
    fn report<'o>(&'o self, workload: &'o str) -> BatchReport<'o> {
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
    pub(in crate::commands) fn finish(&self, workload: &str, json: bool) -> Result<i32> {
        if json {
            crate::outln!("{}", serde_json::to_string_pretty(&self.report(workload))?);
        }
        Ok(self.exit_code())
    }
}

/// `suite run`, `suite batch` and `suite chaos` with `--json`.
#[derive(Debug, Serialize)]
struct BatchReport<'o> {
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
struct RunReport<'o> {
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
