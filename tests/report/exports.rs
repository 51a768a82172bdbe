//! The exports of the report: the workload's tables as Markdown, every
//! figure as tidy CSV and JSON Lines, a run's histogram as `.hgrm`, and the
//! `report` and `export` commands that write them.

use streamsuite::report::{self, export};

use crate::support::{fixture, fixture_results, suite};

#[test]
fn tables_export_as_markdown() {
    let results = fixture_results();
    let page = report::workload_page(&suite(), "stateless", &results["stateless"]);
    crate::assert_snapshot(
        "stateless_markdown",
        &export::markdown(&page),
        "export::markdown(&page)",
    );
}

/// The tidy CSV export read back gives every record's figures: one row per
/// run and figure, the value exact, with its unit, direction and run.
#[test]
fn the_tidy_csv_export_reads_back_as_the_records_figures() {
    let results = fixture_results();
    let records = &results["stateless"];
    let text = export::csv(&export::figure_rows(records)).unwrap();
    let rows: Vec<export::FigureRow> = csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .collect::<Result<_, _>>()
        .unwrap();
    let figures: usize = records.iter().map(|r| r.metrics.len()).sum();
    assert!(
        figures > 100,
        "the fixture has figures to export: {figures}"
    );
    assert_eq!(rows.len(), figures);
    for record in records {
        let of_run: Vec<&export::FigureRow> =
            rows.iter().filter(|r| r.run_id == record.run_id).collect();
        assert_eq!(of_run.len(), record.metrics.len(), "{}", record.run_id);
        for row in of_run {
            let metric = &record.metrics[&row.figure];
            assert_eq!(
                (row.value, row.unit.as_str(), row.direction),
                (metric.value, metric.unit.as_str(), metric.better),
                "{} {}",
                record.run_id,
                row.figure
            );
            assert_eq!(
                (&row.line, &row.version, row.status, row.regime),
                (&record.line, &record.version, record.status, record.regime)
            );
            assert_eq!(
                (row.rate, row.window_s, row.parallelism),
                (
                    record.config.rate,
                    record.config.window_s,
                    record.config.parallelism
                )
            );
        }
    }
    // The JSON Lines export holds the same rows.
    let jsonl = export::jsonl(&export::figure_rows(records)).unwrap();
    let from_json: Vec<export::FigureRow> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(from_json, rows);
    // Runs at different points never share a bench point's name.
    let point_of = |run_id: &str| {
        rows.iter()
            .find(|r| r.run_id == run_id)
            .map(|r| r.bench_point.clone())
            .unwrap()
    };
    let fast = records.iter().find(|r| r.config.rate == 20_000).unwrap();
    let slow = records.iter().find(|r| r.config.rate == 1_000).unwrap();
    assert_ne!(point_of(&fast.run_id), point_of(&slow.run_id));
}

#[test]
fn a_runs_histogram_exports_as_hgrm() {
    let results = fixture_results();
    let run = results["stateless"]
        .iter()
        .find(|r| r.run_id == "20261130T053600Z-rustpipe-eos-b001")
        .unwrap();
    let text = export::hgrm(run).unwrap();
    assert!(text.starts_with("       Value     Percentile TotalCount 1/(1-Percentile)\n\n"));
    assert!(text.contains("Total count    =       173902]"), "{text}");
    crate::assert_snapshot("rustpipe_eos_hgrm", &text, "text");
    let failed = results["stateless"]
        .iter()
        .find(|r| r.latency_histogram.is_none())
        .unwrap();
    let err = format!("{:#}", export::hgrm(failed).unwrap_err());
    assert!(err.contains("stored no latency histogram"), "{err}");
}

#[test]
fn the_report_and_export_commands_write_pages_and_tables() {
    let out = tempfile::tempdir().unwrap();
    let suite = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_suite"))
            .arg("--config")
            .arg(fixture().join("config/bench.yaml"))
            .args(args)
            .output()
            .unwrap()
    };
    let report = suite(&["report", "--out", out.path().to_str().unwrap()]);
    assert!(report.status.success(), "{report:?}");
    assert!(String::from_utf8_lossy(&report.stdout).contains("index.html"));
    assert!(out.path().join("stateless.html").is_file());
    let markdown = suite(&["export", "stateless", "--format", "markdown"]);
    assert!(String::from_utf8_lossy(&markdown.stdout).contains("## Cost of exactly-once"));
    let tidy = suite(&["export", "stateless", "--format", "csv"]);
    assert!(tidy.status.success(), "{tidy:?}");
    assert!(String::from_utf8_lossy(&tidy.stdout).starts_with("run_id,batch_id,round,"));
    let unknown = suite(&["export", "no-such-run", "--format", "hgrm"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no run `no-such-run`"),
        "{unknown:?}"
    );
}
