//! The raw resources table of one bench point: CPU and memory of each
//! line's processes over its newest batch, the instrument used, and how
//! many processes that was.

use std::collections::BTreeSet;

use super::figures::{metric_cell, metric_column, n_cell, n_column};
use super::lines::LineRuns;
use super::table::{Cell, Column, Row, Table};
use crate::results::figure::{CPU_AVG_PCT, CPU_P95_PCT, MEM_AVG_MB, MEM_MAX_MB, SAMPLES};
use crate::results::{Figure, RunRecord};

/// The figures in column order, each headed by its label.
const FIGURES: [&Figure; 5] = [
    &CPU_AVG_PCT,
    &CPU_P95_PCT,
    &MEM_AVG_MB,
    &MEM_MAX_MB,
    &SAMPLES,
];

pub(super) fn resources_table(
    title: &str,
    records: &[&RunRecord],
    lines: &[LineRuns<'_>],
) -> Table {
    let mut columns = vec![Column::plain("line"), n_column()];
    columns.extend(
        FIGURES
            .iter()
            .map(|figure| metric_column(records, figure.label, figure)),
    );
    columns.push(Column::plain("instrument"));
    // Records from before the count was kept have none: no column of blanks.
    let counted = records.iter().any(|r| processes(r).is_some());
    if counted {
        columns.push(Column::plain("processes"));
    }
    let mut table = Table::new(title, columns);
    for line in lines.iter().filter(|l| !l.batch.is_empty()) {
        let mut row = Row::new()
            .set("line", Cell::text(line.label()))
            .set("n", n_cell(&line.batch));
        for figure in FIGURES {
            // Raw figures: their intervals on hover.
            let cell = metric_cell(&line.batch, figure).without_interval();
            row = row.set(figure.label, cell);
        }
        let instruments: BTreeSet<String> = line
            .batch
            .iter()
            .filter_map(|r| r.resources.as_ref()?.product.as_ref())
            .map(|p| {
                serde_json::to_value(p.instrument)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            })
            .collect();
        let instrument = if instruments.is_empty() {
            Cell::missing()
        } else {
            Cell::text(format!(
                "/proc Δ, {}",
                instruments.into_iter().collect::<Vec<_>>().join(" + ")
            ))
        };
        row = row.set("instrument", instrument);
        if counted {
            row = row.set("processes", processes_cell(&line.batch));
        }
        table.push(row);
    }
    table
}

/// The most processes a run's product had at a sample.
fn processes(record: &RunRecord) -> Option<usize> {
    record.resources.as_ref()?.product.as_ref()?.processes_max
}

/// The runs' process counts: one figure, or their range.
fn processes_cell(batch: &[&RunRecord]) -> Cell {
    let counts: BTreeSet<usize> = batch.iter().filter_map(|r| processes(r)).collect();
    match (counts.first(), counts.last()) {
        (Some(low), Some(high)) if low == high => Cell::text(low.to_string()),
        (Some(low), Some(high)) => Cell::text(format!("{low}–{high}")),
        _ => Cell::missing(),
    }
}
