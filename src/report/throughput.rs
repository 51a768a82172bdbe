//! The throughput and efficiency table of one bench point: offered and
//! consumed rates, the regime with its lag drift, CPU and memory
//! efficiency, and when the newest batch of each line ran.

use std::collections::{BTreeMap, BTreeSet};

use super::figures::{figure, metric_cell, metric_column};
use super::lines::LineRuns;
use super::table::{date_time, signed_percent, Cell, Column, Row, Table};
use crate::results::{Regime, RunRecord};

/// Column label and figure name, in column order; the regime column goes
/// after consumed/s.
const FIGURES: [(&str, &str); 8] = [
    ("offered/s", "offered_per_s"),
    ("consumed/s", "consumed_per_s"),
    ("cpu_avg", "cpu_avg_pct"),
    ("rows/s per core", "rows_per_s_per_core"),
    ("rows/s per GB", "rows_per_s_per_gb"),
    ("CPU / record", "us_cpu_per_record"),
    ("output/s", "output_per_s"),
    ("extra rec/rec", "extra_records_per_record"),
];

const REGIME: &str = "regime (lag drift)";

/// The read capacity of a drain run, shown at drain points only.
const DRAIN_CAPACITY: (&str, &str) = ("read capacity", "drain_capacity_per_s");

pub(super) fn throughput_table(
    title: &str,
    records: &[&RunRecord],
    lines: &[LineRuns<'_>],
) -> Table {
    // A drain point quotes the capacity its runs measured: records
    // consumed per second from a pre-filled input, nothing else on the CPU.
    let drain = records
        .iter()
        .any(|r| r.metrics.contains_key(DRAIN_CAPACITY.1));
    let mut columns = vec![Column::plain("line")];
    for (i, (label, name)) in FIGURES.iter().enumerate() {
        columns.push(metric_column(records, label, name));
        if i == 1 {
            if drain {
                columns.push(metric_column(records, DRAIN_CAPACITY.0, DRAIN_CAPACITY.1));
            }
            // The drift is shown as a percentage: the record's unit would mislead.
            columns.push(Column::plain(REGIME));
        }
    }
    columns.push(Column::utc("run"));
    let mut table = Table::new(title, columns);
    for line in lines.iter().filter(|l| !l.batch.is_empty()) {
        let flags = flags(&line.batch);
        let name = if flags.is_empty() {
            Cell::text(line.label())
        } else {
            table
                .notes
                .push(format!("{} flagged: {}.", line.name, flags.join(", ")));
            Cell::text(format!("{} ⚑", line.label())).with_title(flags.join(", "))
        };
        let mut row = Row::new()
            .set("line", name)
            .set(REGIME, regime_cell(line))
            .set("run", run_cell(line));
        for (label, name) in FIGURES {
            row = row.set(label, metric_cell(&line.batch, name));
        }
        if drain {
            row = row.set(DRAIN_CAPACITY.0, metric_cell(&line.batch, DRAIN_CAPACITY.1));
        }
        table.push(row);
    }
    table
}

/// The regime of the batch with its lag drift: `keep-up (+0.0 %)`.
fn regime_cell(line: &LineRuns<'_>) -> Cell {
    let drift = figure(&line.batch, "lag_drift");
    let regime = match line.regime() {
        Some(r) => r.as_str().to_string(),
        None => {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &line.batch {
                *counts
                    .entry(r.regime.map_or("unmeasured", Regime::as_str))
                    .or_default() += 1;
            }
            let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n}× {k}")).collect();
            format!("mixed: {}", parts.join(", "))
        }
    };
    let mut cell = match drift {
        Some(f) => {
            let mut c = Cell::figure(f, signed_percent);
            c.text = format!("{regime} ({})", c.text);
            c
        }
        None => Cell::text(regime),
    };
    cell.class = match line.regime() {
        Some(Regime::KeepUp) => "ok",
        Some(_) => "warn",
        None => "",
    }
    .to_string();
    cell
}

/// When the newest batch ran: its date, and the number of runs.
fn run_cell(line: &LineRuns<'_>) -> Cell {
    let Some(last) = line.batch.last() else {
        return Cell::missing();
    };
    let date = date_time(&last.started_at);
    if line.batch.len() > 1 {
        Cell::text(format!("{date} · {} runs", line.batch.len())).with_title(format!(
            "batch {}: {}",
            last.batch_id,
            line.batch
                .iter()
                .map(|r| r.run_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    } else {
        Cell::text(date).with_title(last.run_id.clone())
    }
}

/// The flags of `runs`, every one kept, known or not.
fn flags(runs: &[&RunRecord]) -> Vec<String> {
    let flags: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.flags.iter().map(String::as_str))
        .collect();
    flags.into_iter().map(str::to_string).collect()
}
