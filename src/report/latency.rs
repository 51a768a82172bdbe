//! The latency section: the lines at the iso point (bench.yaml's `iso_rate`
//! with the other run defaults), exactly-once lines in one table (the
//! headline) and at-least-once lines in another, each percentile coloured
//! against the best of its column and each row linked to its runs'
//! histograms, and the latency-by-percentile chart beside the CDF.

use serde::Serialize;

use super::cdf::cdf_chart;
use super::charts::{chart_data, Chart};
use super::data::{histogram_links, DataLink};
use super::figures::{
    better_of, figure, metric_cell, metric_column, n_cell, n_column, older_batches_note,
};
use super::histograms::{latency_runs, latency_runs_of, merged_histogram};
use super::lines::{may_lead, LineRuns};
use super::points::PointRuns;
use super::svg::{self, Curve, XAxis};
use super::table::{colour_column, Cell, Column, Row, Table};
use crate::config::Delivery;
use crate::results::figure::{
    ADDED_P50_MS, ADDED_P99_MS, FLOOR_P50_MS, FLOOR_P99_MS, LATENCY_COUNT, LATENCY_MAX_MS,
    LATENCY_P50_MS, LATENCY_P90_MS, LATENCY_P999_MS, LATENCY_P99_MS,
};
use crate::results::{Figure, Regime, RunRecord};

/// The latency section of a page.
#[derive(Debug, Serialize)]
pub struct LatencySection {
    /// The iso point's rate and window, or what the iso point would be.
    pub point: String,
    /// The iso point's full configuration.
    pub point_detail: String,
    pub exactly_once: Table,
    pub at_least_once: Table,
    /// Empty without keep-up latency at the iso point.
    pub chart: Option<Chart>,
    /// The same histograms as a CDF; empty when the chart is.
    pub cdf: Option<Chart>,
    /// The iso point's records; none without a run there.
    pub data: Option<DataLink>,
}

const PERCENTILES: [(&str, &Figure); 5] = [
    ("p50", &LATENCY_P50_MS),
    ("p90", &LATENCY_P90_MS),
    ("p99", &LATENCY_P99_MS),
    ("p99.9", &LATENCY_P999_MS),
    ("max", &LATENCY_MAX_MS),
];

/// The section at `iso` (None: no run at the iso point yet); `iso_label` and
/// `iso_detail` name the iso point either way.
pub(super) fn latency_section(
    iso: Option<&PointRuns<'_>>,
    iso_label: String,
    iso_detail: String,
    data: Option<DataLink>,
) -> LatencySection {
    let (records, lines): (&[&RunRecord], &[LineRuns<'_>]) = match iso {
        Some(p) => (&p.records, &p.lines),
        None => (&[], &[]),
    };
    let table = |title: &str, delivery: Delivery| {
        let chosen: Vec<&LineRuns<'_>> = lines.iter().filter(|l| l.delivery == delivery).collect();
        latency_table(title, records, &chosen)
    };
    LatencySection {
        point: iso_label,
        point_detail: iso_detail,
        exactly_once: table("Latency, exactly-once lines", Delivery::ExactlyOnce),
        at_least_once: table("Latency, at-least-once lines", Delivery::AtLeastOnce),
        chart: latency_chart(records, lines),
        cdf: cdf_chart(lines),
        data,
    }
}

/// One delivery mode's latency table: each line's percentiles, the floor
/// and what the product adds over it, the best of each column coloured.
fn latency_table(title: &str, records: &[&RunRecord], lines: &[&LineRuns<'_>]) -> Table {
    let mut columns = vec![Column::plain("line"), n_column(), Column::plain("regime")];
    columns.extend(
        PERCENTILES
            .iter()
            .map(|(label, name)| metric_column(records, label, name)),
    );
    columns.push(metric_column(records, "records", &LATENCY_COUNT));
    columns.push(metric_column(
        records,
        "setup floor p50 / p99",
        &FLOOR_P50_MS,
    ));
    columns.push(metric_column(records, "added p50 / p99", &ADDED_P50_MS));
    let mut table = Table::new(title, columns);
    let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); PERCENTILES.len()];
    let mut leaders = Vec::new();
    let mut older = Vec::new();
    for line in lines {
        let runs = latency_runs(line);
        if runs.is_empty() {
            note_not_quoted(&mut table, line);
            continue;
        }
        let leads = may_lead(&runs);
        leaders.push(leads);
        older.extend(older_batches_note(
            line,
            &|runs| latency_runs_of(runs),
            &[
                ("p50", &LATENCY_P50_MS),
                ("p99", &LATENCY_P99_MS),
                ("added p50", &ADDED_P50_MS),
            ],
        ));
        for (i, (_, name)) in PERCENTILES.iter().enumerate() {
            values[i].push(figure(&runs, name).map(|f| f.median));
        }
        table.push(latency_row(line, &runs, leads));
    }
    for (i, (label, name)) in PERCENTILES.iter().enumerate() {
        colour_column(
            &mut table,
            label,
            &values[i],
            &leaders,
            better_of(records, name),
        );
    }
    table.notes.extend(older);
    table
}

/// Why a line that ran has no latency quoted: its newest run's reason.
fn note_not_quoted(table: &mut Table, line: &LineRuns<'_>) {
    let Some(newest) = line.batch.last() else {
        return;
    };
    let reason = newest
        .not_applicable
        .get("latency")
        .cloned()
        .unwrap_or_else(|| match line.regime() {
            Some(r) if r != Regime::KeepUp => {
                format!("{}: latency only when it keeps up", r.as_str())
            }
            _ => "no latency recorded".to_string(),
        });
    table
        .notes
        .push(format!("{}: not quoted ({reason}).", line.label()));
}

/// A line's row over `runs`; a line that may not lead is flagged.
fn latency_row(line: &LineRuns<'_>, runs: &[&RunRecord], leads: bool) -> Row {
    let name = if leads {
        Cell::text(line.label())
    } else {
        Cell::text(format!("{} ⚑", line.label())).with_title(
            "flagged: its figures never set the best of a column (see the throughput table)",
        )
    };
    let mut row = Row::new()
        .set("line", name)
        .set("n", n_cell(runs).with_links(histogram_links(runs)))
        .set("regime", Cell::text("keep-up"));
    for (label, name) in PERCENTILES.iter() {
        row = row.set(label, metric_cell(runs, name));
    }
    row.set(
        "records",
        metric_cell(runs, &LATENCY_COUNT).without_interval(),
    )
    .set(
        "setup floor p50 / p99",
        Cell::pair(
            metric_cell(runs, &FLOOR_P50_MS),
            metric_cell(runs, &FLOOR_P99_MS),
        )
        .without_interval(),
    )
    .set(
        "added p50 / p99",
        Cell::pair(
            metric_cell(runs, &ADDED_P50_MS),
            metric_cell(runs, &ADDED_P99_MS),
        ),
    )
}

fn latency_chart(records: &[&RunRecord], lines: &[LineRuns<'_>]) -> Option<Chart> {
    let curves: Vec<Curve> = lines
        .iter()
        .filter_map(|line| {
            Some(Curve {
                name: line.name.clone(),
                style: line.style,
                points: percentile_curve(&latency_runs(line))?,
            })
        })
        .collect();
    if curves.is_empty() {
        return None;
    }
    let unit = records
        .iter()
        .find_map(|r| r.metrics.get(LATENCY_P50_MS.name))
        .map_or("ms".to_string(), |m| m.unit.clone());
    let y_label = format!("latency ({unit})");
    Some(Chart {
        title: "Latency by percentile (newest batch of each line, histograms merged)".to_string(),
        svg: svg::line_chart(&curves, &XAxis::Nines { max: 4.0 }, &y_label, svg::WIDE),
        data: chart_data(&y_label, &curves, "percentile", percentile_text, 1),
    })
}

/// A point of the nines axis as a percentile: `99.9%`.
fn percentile_text(x: f64) -> String {
    let q = 100.0 * (1.0 - 10f64.powf(-x));
    let text = format!("{q:.4}");
    format!("{}%", text.trim_end_matches('0').trim_end_matches('.'))
}

/// Latency (ms) by percentile, from the runs' histograms merged; None when
/// no run kept a readable histogram.
fn percentile_curve(runs: &[&RunRecord]) -> Option<Vec<(f64, f64)>> {
    let merged = merged_histogram(runs)?;
    let steps = 20;
    Some(
        (0..=steps)
            .map(|i| {
                let x = 4.0 * f64::from(i) / f64::from(steps);
                let q = 1.0 - 10f64.powf(-x);
                (x, merged.value_at_quantile(q) as f64 / 1000.0)
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nines_point_reads_as_a_percentile() {
        assert_eq!(percentile_text(0.0), "0%");
        assert_eq!(percentile_text(1.0), "90%");
        assert_eq!(percentile_text(3.0), "99.9%");
        assert_eq!(percentile_text(4.0), "99.99%");
    }

    /// A run whose histogram reaches further than the first run's still
    /// merges: no line drops out of the chart.
    #[test]
    fn repeats_merge_whatever_their_ranges() {
        let record = |max_ms: u64| {
            let mut h = crate::stats::histogram::empty();
            for ms in 1..=max_ms {
                h.record(ms * 1000).unwrap();
            }
            let mut r = crate::report::fixture_record();
            r.latency_histogram = Some(messages::histogram::encode(&h).unwrap());
            r
        };
        let (small, large) = (record(20), record(50_000));
        let curve = percentile_curve(&[&small, &large]).expect("both runs merge");
        let (_, top) = curve.last().copied().unwrap();
        assert!(top > 40_000.0, "{top}");
    }
}
