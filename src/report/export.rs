//! `suite export`: a run's latency histogram in HdrHistogram's
//! percentile-distribution text (what its plotters read), a workload's
//! figures as tidy rows (CSV or JSON Lines: one row per run and figure, raw
//! numbers, for dataframes and spreadsheets), and its page's tables as
//! Markdown for pasting elsewhere.

use std::fmt::Write;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;
use messages::histogram::decode as decode_histogram;
use serde::{Deserialize, Serialize};

use super::points::BenchPoint;
use super::table::{Cell, Table};
use super::WorkloadPage;
use crate::config::{Delivery, Profile};
use crate::results::{Better, Regime, RunRecord, Status};

/// HdrHistogram's percentile-distribution text of `record`'s latency, values
/// in milliseconds, 5 steps per halving of the remaining distance to 100 %.
pub fn hgrm(record: &RunRecord) -> Result<String> {
    let encoded = record
        .latency_histogram
        .as_deref()
        .with_context(|| format!("run {} stored no latency histogram", record.run_id))?;
    let histogram = decode_histogram(encoded).with_context(|| {
        format!(
            "run {}: the stored histogram does not decode",
            record.run_id
        )
    })?;
    Ok(percentile_distribution(&histogram, 1000.0))
}

/// The text HdrHistogram's `outputPercentileDistribution` writes, values
/// divided by `scale`.
fn percentile_distribution(h: &Histogram<u64>, scale: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0u64;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let value = v.value_iterated_to() as f64 / scale;
        let q = v.quantile_iterated_to();
        if q < 1.0 {
            let _ = writeln!(
                out,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(out, "{value:12.3} {q:2.12} {total:10}");
        }
    }
    // HdrHistogram's sub-bucket count for its significant digits.
    let sub_buckets = (2.0 * 10f64.powi(i32::from(h.sigfig())))
        .log2()
        .ceil()
        .exp2();
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        h.mean() / scale,
        h.stdev() / scale
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        h.max() as f64 / scale,
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        sub_buckets
    );
    out
}

/// The page's tables in page order, each bench point's after the latency.
fn tables(page: &WorkloadPage) -> Vec<&Table> {
    let mut tables = vec![&page.latency.exactly_once, &page.latency.at_least_once];
    for point in &page.points {
        tables.push(&point.throughput);
        tables.push(&point.resources);
    }
    tables.extend([
        &page.eos_cost,
        &page.sanity,
        &page.characteristics,
        &page.failed,
    ]);
    tables
}

/// A cell's text, with its interval in brackets where it has one:
/// `25.9 (75 %: 24.6 – 28.0)`.
fn cell_text(cell: &Cell) -> String {
    if cell.interval.is_empty() {
        cell.text.clone()
    } else {
        format!("{} ({})", cell.text, cell.interval)
    }
}

fn header(table: &Table) -> Vec<String> {
    table
        .columns
        .iter()
        .map(|c| {
            if c.unit.is_empty() {
                c.label.clone()
            } else {
                format!("{} [{}]", c.label, c.unit)
            }
        })
        .collect()
}

/// One figure of one run: a tidy export's row. Every column is a raw
/// value; `bench_point` names the point the report compares the run at, and
/// the columns after it spell out its main settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureRow {
    pub run_id: String,
    pub batch_id: String,
    /// The run's round within its batch.
    pub round: Option<u32>,
    /// RFC 3339, UTC.
    pub started_at: String,
    pub workload: String,
    pub line: String,
    pub product: String,
    pub version: String,
    pub delivery: Delivery,
    /// The Avro pipeline's arm (decoder/format), for an ETL run.
    pub variant: Option<String>,
    /// The bench point in words, as the page's section heading and detail
    /// give it: runs compare only within one.
    pub bench_point: String,
    pub rate: u64,
    pub window_s: u64,
    pub profile: Profile,
    pub deployment: String,
    pub parallelism: u32,
    pub input_partitions: i32,
    pub bench_version: u32,
    pub hostname: String,
    pub status: Status,
    pub regime: Option<Regime>,
    /// The run's flags, space-separated.
    pub flags: String,
    /// The figure's name in the record's `metrics`.
    pub figure: String,
    pub value: f64,
    pub unit: String,
    /// Which way the figure is better: lower or higher.
    pub direction: Better,
}

/// Every figure of every record, a row each, in the records' order and each
/// record's figures by name.
pub fn figure_rows(records: &[RunRecord]) -> Vec<FigureRow> {
    let mut rows = Vec::new();
    for record in records {
        let point = BenchPoint::from_record(record);
        let mut bench_point = format!("{} · {}", point.settings.label(), point.settings.detail());
        if !point.settings.profile.is_uniform() {
            bench_point.push_str(" · expert profile");
        }
        if !point.settings.product_settings.is_empty() {
            bench_point.push_str(&format!(" · {}", point.settings.product_settings));
        }
        let variant = record.variant.as_ref().map(|v| match &v.format {
            Some(format) => format!("{}/{format}", v.decoder),
            None => v.decoder.clone(),
        });
        for (figure, metric) in &record.metrics {
            rows.push(FigureRow {
                run_id: record.run_id.clone(),
                batch_id: record.batch_id.clone(),
                round: record.round,
                started_at: record.started_at.clone(),
                workload: record.workload.clone(),
                line: record.line.clone(),
                product: record.product.clone(),
                version: record.version.clone(),
                delivery: record.delivery,
                variant: variant.clone(),
                bench_point: bench_point.clone(),
                rate: record.config.rate,
                window_s: record.config.window_s,
                profile: record.config.profile,
                deployment: record.config.deployment.clone(),
                parallelism: record.config.parallelism,
                input_partitions: record.config.input_partitions,
                bench_version: record.bench_version,
                hostname: record.host.hostname.clone(),
                status: record.status,
                regime: record.regime,
                flags: record.flags.join(" "),
                figure: figure.clone(),
                value: metric.value,
                unit: metric.unit.clone(),
                direction: metric.better,
            });
        }
    }
    rows
}

/// `rows` as CSV with a header line.
pub fn csv(rows: &[FigureRow]) -> Result<String> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    for row in rows {
        writer.serialize(row)?;
    }
    let bytes = writer.into_inner().context("writing the CSV")?;
    Ok(String::from_utf8(bytes)?)
}

/// `rows` as JSON Lines: one object per row.
pub fn jsonl(rows: &[FigureRow]) -> Result<String> {
    let mut out = String::new();
    for row in rows {
        out.push_str(&serde_json::to_string(row)?);
        out.push('\n');
    }
    Ok(out)
}

/// Every table of a workload as Markdown; an empty table says so.
pub fn markdown(page: &WorkloadPage) -> String {
    let cell = |text: &str| text.replace('|', "\\|").replace('\n', " ");
    let mut out = format!("# {}\n\n", page.name);
    for table in tables(page) {
        let _ = writeln!(out, "## {}\n", table.title);
        if table.rows.is_empty() {
            let _ = writeln!(out, "{}\n", table.empty);
            for note in &table.notes {
                let _ = writeln!(out, "{note}\n");
            }
            continue;
        }
        let head: Vec<String> = header(table).iter().map(|h| cell(h)).collect();
        let _ = writeln!(out, "| {} |", head.join(" | "));
        let _ = writeln!(out, "|{}", "---|".repeat(head.len()));
        for row in &table.rows {
            let cells: Vec<String> = row.iter().map(|c| cell(&cell_text(c))).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        for note in &table.notes {
            let _ = writeln!(out, "\n{note}");
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::figures::{format_of, metric_cell, metric_column};
    use crate::report::table::display_unit;
    use crate::results::figure;

    #[test]
    fn a_defined_figure_on_a_record_is_a_csv_row_and_a_page_cell() {
        let mut record = crate::report::fixture_record();
        record.metrics.clear();
        record.not_applicable.clear();
        let value = |i: usize| i as f64 + 0.5;
        for (i, figure) in figure::ALL.iter().enumerate() {
            record
                .metrics
                .insert(figure.name.into(), figure.metric(value(i)));
        }
        let csv = csv(&figure_rows(std::slice::from_ref(&record))).unwrap();
        let runs = [&record];
        for (i, figure) in figure::ALL.iter().enumerate() {
            let better = serde_json::to_value(figure.better).unwrap();
            let row = format!(
                ",{},{},{},{}",
                figure.name,
                value(i),
                figure.unit,
                better.as_str().unwrap()
            );
            assert!(
                csv.lines().any(|line| line.ends_with(&row)),
                "no CSV row ends with {row}"
            );
            let cell = metric_cell(&runs, figure);
            assert_eq!(cell.text, format_of(figure)(value(i)), "{}", figure.name);
            let column = metric_column(&runs, figure.label, figure);
            assert_eq!(column.label, figure.label);
            assert_eq!(column.unit, display_unit(figure.unit), "{}", figure.name);
        }
    }

    #[test]
    fn percentile_distribution_has_hdrhistograms_shape() {
        let mut h = crate::stats::histogram::empty();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let text = percentile_distribution(&h, 1000.0);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "       Value     Percentile TotalCount 1/(1-Percentile)"
        );
        assert_eq!(lines[1], "");
        assert_eq!(
            lines[2],
            "       1.000 0.000000000000          1           1.00"
        );
        let last_data = lines[lines.len() - 4];
        assert!(
            last_data.starts_with("    1000.447 1.000000000000       1000"),
            "{last_data}"
        );
        assert!(lines[lines.len() - 1].ends_with("SubBuckets     =         2048]"));
    }
}
