//! `suite export`: a run's latency histogram in HdrHistogram's
//! percentile-distribution text (what its plotters read), and a workload's
//! tables as CSV or Markdown for pasting figures elsewhere.

use std::fmt::Write;

use anyhow::{Context, Result};
use hdrhistogram::Histogram;

use super::latency::decode_histogram;
use super::table::{Cell, Table};
use super::WorkloadPage;
use crate::results::RunRecord;

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

/// Every table of a workload as CSV: a `# title` line, the header, the rows,
/// a blank line between tables.
pub fn csv(page: &WorkloadPage) -> String {
    let field = |text: &str| {
        if text.contains([',', '"', '\n']) {
            format!("\"{}\"", text.replace('"', "\"\""))
        } else {
            text.to_string()
        }
    };
    let mut out = String::new();
    for table in tables(page) {
        let _ = writeln!(out, "# {}", table.title);
        let head: Vec<String> = header(table).iter().map(|h| field(h)).collect();
        let _ = writeln!(out, "{}", head.join(","));
        for row in &table.rows {
            let cells: Vec<String> = row.iter().map(|c| field(&cell_text(c))).collect();
            let _ = writeln!(out, "{}", cells.join(","));
        }
        out.push('\n');
    }
    out
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

    #[test]
    fn percentile_distribution_has_hdrhistograms_shape() {
        let mut h = crate::probe::new_histogram();
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
