//! The JSONL store run records are appended to, one line per run, and read
//! back from, a cut or broken line set aside rather than failing the file.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub use crate::model::figure::{self, Figure, Format};
pub use crate::model::isolation::{CgroupAccount, CpuLayout, Isolation};
pub use crate::model::latency_series::LatencySeries;
pub use crate::model::record::*;
pub use crate::model::resources::{HostLoad, ResourceSummary, Resources, Series};

/// The CPU rig's results file in a results folder: its records are
/// [`RigRecord`]s, not run records.
pub const RIG_FILE: &str = "cpu-rig.jsonl";

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

/// Appends rig records to `dir`'s [`RIG_FILE`], each a line of its own.
pub fn append_rig_records(dir: &Path, records: &[RigRecord]) -> Result<PathBuf> {
    let path = dir.join(RIG_FILE);
    let mut lines = String::new();
    for record in records {
        lines.push_str(&serde_json::to_string(record)?);
        lines.push('\n');
    }
    append_lines(dir, &path, lines)?;
    Ok(path)
}

/// The rig records of `dir` (none without a [`RIG_FILE`]), and the lines
/// that are not rig records.
pub fn read_rig_records(dir: &Path) -> Result<ResultsFile<RigRecord>> {
    let path = dir.join(RIG_FILE);
    if !path.exists() {
        return Ok(ResultsFile {
            records: Vec::new(),
            lines: Vec::new(),
            skipped: Vec::new(),
        });
    }
    read_lines_of(&path)
}

/// The JSONL file of `workload` in `dir`.
pub fn results_file(dir: &Path, workload: &str) -> PathBuf {
    dir.join(format!("{workload}.jsonl"))
}

/// Creates `dir` if missing and proves it can be written (a probe file is
/// created and removed), so a folder that cannot take a record is found
/// before a run starts, not after it.
pub fn ensure_writable(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let probe = dir.join(format!(".write-check-{}", std::process::id()));
    std::fs::File::create(&probe)?;
    std::fs::remove_file(&probe)
}

/// Appends `record` as one line to its workload's file. The line goes out in a
/// single write on a file opened for appending, so a reader or an interrupted
/// run never leaves half a line behind.
pub fn append_record(dir: &Path, record: &RunRecord) -> Result<PathBuf> {
    let path = results_file(dir, &record.workload);
    let mut line = serde_json::to_string(record)?;
    line.push('\n');
    append_lines(dir, &path, line)?;
    Ok(path)
}

/// Appends whole `lines` to `path` in `dir` (created if missing) in one
/// write, synced.
fn append_lines(dir: &Path, path: &Path, mut lines: String) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut file = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    // A file whose last line was cut short (a hand edit, a full disk) would
    // swallow these lines into that broken one: start a line of our own.
    if ends_mid_line(&file).with_context(|| format!("reading {}", path.display()))? {
        lines.insert(0, '\n');
    }
    file.write_all(lines.as_bytes())
        .and_then(|()| file.sync_data())
        .with_context(|| format!("appending to {}", path.display()))
}

/// A line of a results file that is not a run record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}: not a run record: {reason}", path.display())]
pub struct SkippedLine {
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
    /// What the JSON parser said.
    pub reason: String,
}

/// The records of one results file (run records, or the rig's), and the
/// lines that are not records.
#[derive(Debug)]
pub struct ResultsFile<R = RunRecord> {
    pub records: Vec<R>,
    /// Each record's line as the file holds it, in the order of `records`:
    /// what the report copies beside its pages.
    pub lines: Vec<String>,
    pub skipped: Vec<SkippedLine>,
}

fn ends_mid_line(file: &std::fs::File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    let mut last = [0u8];
    file.read_exact_at(&mut last, len - 1)?;
    Ok(last[0] != b'\n')
}

/// Reads every record of a JSONL file. A line that does not parse is set
/// aside with its reason, so one broken line never hides the others; only a
/// file that cannot be read is an error.
pub fn read_results_file(path: &Path) -> Result<ResultsFile> {
    read_lines_of(path)
}

/// Reads every line of a JSONL file as an `R`, setting aside those that
/// are not.
fn read_lines_of<R: serde::de::DeserializeOwned>(path: &Path) -> Result<ResultsFile<R>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut file = ResultsFile {
        records: Vec::new(),
        lines: Vec::new(),
        skipped: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(line) {
            Ok(record) => {
                file.records.push(record);
                file.lines.push(line.to_string());
            }
            Err(err) => file.skipped.push(SkippedLine {
                path: path.to_path_buf(),
                line: i + 1,
                reason: err.to_string(),
            }),
        }
    }
    Ok(file)
}

/// Reads every record of a JSONL file; a line that does not parse is an error
/// naming the file and line.
pub fn read_records(path: &Path) -> Result<Vec<RunRecord>> {
    let file = read_results_file(path)?;
    match file.skipped.into_iter().next() {
        Some(bad) => Err(bad.into()),
        None => Ok(file.records),
    }
}

#[cfg(test)]
mod tests {
    use crate::results::figure::LATENCY_P50_MS;
    use std::collections::BTreeMap;

    use super::*;
    use crate::config::Delivery;
    use crate::model::broker::BrokerInfo;
    use crate::model::host::HostInfo;

    fn record(run_id: &str) -> RunRecord {
        RunRecord {
            schema: SCHEMA_VERSION,
            run_id: run_id.into(),
            batch_id: "b".into(),
            round: None,
            position: None,
            entry: None,
            sweep: None,
            started_at: "2026-11-30T05:00:00Z".into(),
            bench_version: 1,
            host: HostInfo {
                hostname: "h".into(),
                cpu_model: "c".into(),
                cores: 2,
                threads: Some(2),
                cpu_mhz: Some(2000),
                memory_mb: 1,
                kernel: "k".into(),
                machine_id_hash: None,
            },
            product_hosts: Vec::new(),
            broker: BrokerInfo {
                kind: "local".into(),
                version: Some("apache-kafka 4.1.1".into()),
                bootstrap: "127.0.0.1:1".into(),
                started_for_batch: false,
                warmed_s: Some(30.0),
                uptime_s: Some(600.0),
                nodes: 1,
                replication: 1,
                min_insync_replicas: 1,
                abandoned_transaction_check_ms: None,
            },
            product: "rustpipe".into(),
            line: "rustpipe-eos".into(),
            version: "0.1.0".into(),
            workload: "stateless".into(),
            variant: None,
            delivery: Delivery::ExactlyOnce,
            config: RunConfig {
                rate: 1,
                warmup_s: 1,
                window_s: 1,
                seed: 1,
                ..RunConfig::example()
            },
            status: Status::Ok,
            failure: None,
            regime: None,
            flags: Vec::new(),
            not_applicable: BTreeMap::new(),
            resources: None,
            series: None,
            metrics: BTreeMap::from([(
                LATENCY_P50_MS.name.to_string(),
                Metric::new(1.5, "ms", Better::Lower),
            )]),
            gendata: None,
            sanity: None,
            verification: None,
            chaos: None,
            latency_histogram: None,
            latency_series: None,
            logs: PathBuf::from("/tmp"),
            suite_commit: Some("0faffc1".into()),
        }
    }

    #[test]
    fn an_older_sanity_block_reads_with_its_figures_moved() {
        let stored = r#"{"selectivity":0.29,"expected_selectivity":0.29,"tolerance":0.25,
            "selectivity_ok":true,"breach_rate":0.2,"enrichment_checked":900,
            "enrichment_mismatched":1,"verdict":"ok","message":"m"}"#;
        let sanity: Sanity = serde_json::from_str(stored).unwrap();
        assert_eq!(sanity.figures["breach_rate"], 0.2);
        assert_eq!(
            (sanity.content_checked, sanity.content_mismatched),
            (900, 1)
        );
        let written = serde_json::to_value(&sanity).unwrap();
        assert_eq!(written["figures"]["breach_rate"], 0.2);
        assert!(written.get("breach_rate").is_none());
        let again: Sanity = serde_json::from_value(written).unwrap();
        assert_eq!(again, sanity);
    }

    #[test]
    fn a_one_kill_chaos_block_reads_as_a_campaign_of_one() {
        let stored = r#"{"kill_at_s":15,"restart":true,"killed_processes":2,"recovery_ms":812.5}"#;
        let chaos: Chaos = serde_json::from_str(stored).unwrap();
        assert_eq!(
            chaos.kills,
            [Kill {
                at_s: 15.0,
                killed_processes: 2,
                member: None,
                recovery_ms: Some(812.5)
            }]
        );
        assert_eq!(chaos.kills_survived, 1);
        assert_eq!(chaos.recovery_max_ms, Some(812.5));
        let again: Chaos = serde_json::from_value(serde_json::to_value(&chaos).unwrap()).unwrap();
        assert_eq!(again, chaos);
    }

    #[test]
    fn a_campaign_counts_its_recoveries_and_their_median_and_max() {
        let kill = |at_s: f64, recovery_ms: Option<f64>| Kill {
            at_s,
            killed_processes: 1,
            member: None,
            recovery_ms,
        };
        let chaos = Chaos::new(
            true,
            vec![
                kill(10.0, Some(300.0)),
                kill(20.0, None),
                kill(30.0, Some(100.0)),
                kill(40.0, Some(900.0)),
                kill(50.0, Some(200.0)),
            ],
            None,
        );
        assert_eq!(chaos.kills_survived, 4);
        assert_eq!(chaos.recovery_p50_ms, Some(250.0));
        assert_eq!(chaos.recovery_max_ms, Some(900.0));
        let none = Chaos::new(true, vec![kill(10.0, None)], None);
        assert_eq!((none.kills_survived, none.recovery_p50_ms), (0, None));
    }

    #[test]
    fn records_append_as_lines_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        append_record(dir.path(), &record("a")).unwrap();
        let path = append_record(dir.path(), &record("b")).unwrap();
        assert_eq!(path, dir.path().join("stateless.jsonl"));
        let back = read_records(&path).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(back[1].run_id, "b");
        assert_eq!(
            back[0].metrics[LATENCY_P50_MS.name],
            Metric::new(1.5, "ms", Better::Lower)
        );
        let line: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&path)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(line["delivery"], "exactly-once");
        assert_eq!(line["status"], "ok");
        assert_eq!(line["metrics"][LATENCY_P50_MS.name]["better"], "lower");
        assert!(line.get("failure").is_none());
        assert!(line.get("round").is_none(), "no round, no key");
        assert!(line.get("position").is_none(), "no position, no key");
    }

    #[test]
    fn a_round_is_written_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = record("a");
        r.round = Some(2);
        r.position = Some(1);
        let path = append_record(dir.path(), &r).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"round\":2,\"position\":1"), "{text}");
        let read = &read_records(&path).unwrap()[0];
        assert_eq!((read.round, read.position), (Some(2), Some(1)));
    }

    #[test]
    fn a_sweep_tag_is_written_and_read_back_and_absent_outside_a_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = record("a");
        r.sweep = Some(SweepTag {
            id: "20261201T000000Z-sweep-ab12".into(),
            kind: SweepKind::Rate,
            p99_bound_ms: Some(500.0),
            bisect_step: Some(2),
        });
        let path = append_record(dir.path(), &r).unwrap();
        append_record(dir.path(), &record("b")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.contains(r#""sweep":{"id":"20261201T000000Z-sweep-ab12","kind":"rate","p99_bound_ms":500.0,"bisect_step":2}"#),
            "{text}"
        );
        assert_eq!(text.matches("\"sweep\"").count(), 1, "{text}");
        let read = read_records(&path).unwrap();
        assert_eq!(read[0].sweep, r.sweep);
        assert_eq!(read[1].sweep, None);
    }

    #[test]
    fn a_broken_line_names_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = append_record(dir.path(), &record("a")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"half\":\n")
            .unwrap();
        let err = format!("{:#}", read_records(&path).unwrap_err());
        assert!(err.contains("stateless.jsonl:2: not a run record"), "{err}");
    }

    #[test]
    fn a_broken_line_is_set_aside_and_the_others_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = append_record(dir.path(), &record("a")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"half\":\n")
            .unwrap();
        append_record(dir.path(), &record("b")).unwrap();
        let file = read_results_file(&path).unwrap();
        let ids: Vec<&str> = file.records.iter().map(|r| r.run_id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(file.skipped.len(), 1);
        assert_eq!(file.skipped[0].line, 2);
        let warning = file.skipped[0].to_string();
        assert!(
            warning.starts_with(&format!("{}:2: not a run record: ", path.display())),
            "{warning}"
        );
        // Strict reading still fails on it, naming file and line.
        let err = format!("{:#}", read_records(&path).unwrap_err());
        assert!(err.contains("stateless.jsonl:2: not a run record"), "{err}");
    }

    #[test]
    fn a_record_appended_after_a_cut_line_starts_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = append_record(dir.path(), &record("a")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"cut")
            .unwrap();
        append_record(dir.path(), &record("b")).unwrap();
        let file = read_results_file(&path).unwrap();
        assert_eq!(file.records.len(), 2);
        assert_eq!(file.records[1].run_id, "b");
        assert_eq!(file.skipped.len(), 1);
        assert_eq!(file.skipped[0].line, 2);
    }

    #[test]
    fn a_folder_is_writable_or_says_why_not() {
        let dir = tempfile::tempdir().unwrap();
        let results = dir.path().join("new/results");
        ensure_writable(&results).unwrap();
        assert!(results.is_dir());
        assert_eq!(std::fs::read_dir(&results).unwrap().count(), 0);
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        assert!(ensure_writable(&file.join("results")).is_err());
    }
}
