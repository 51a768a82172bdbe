//! The throughput and efficiency table of one bench point: offered and
//! consumed rates, the regime with its lag drift, CPU and memory
//! efficiency, and when the newest batch of each line ran. Only runs that
//! kept up are in it (a point fed beyond capacity by design, a drain or an
//! unpaced run, keeps all): a saturated or draining line is listed under
//! the table with its regime.

use std::collections::{BTreeMap, BTreeSet};

use super::figures::{
    format_of, metric_cell, metric_column, n_cell, n_column, older_batches_note, repeats_cell,
    values,
};
use super::lines::{efficiency_runs, LineRuns};
use super::table::{date_time, Cell, Column, Row, Table};
use crate::results::figure::{
    CONSUMED_PER_S, CPU_AVG_PCT, DRAIN_CAPACITY_PER_S, EXTRA_RECORDS_PER_RECORD, LAG_DRIFT,
    OFFERED_PER_S, OUTPUT_PER_S, ROWS_PER_S_PER_CORE, ROWS_PER_S_PER_GB, US_CPU_PER_RECORD,
};
use crate::results::{Figure, Regime, RunRecord};

/// The figures in column order, each headed by its label; the regime
/// column goes after consumed/s. A headline figure shows its interval
/// under it, the others on hover.
const FIGURES: [(&Figure, bool); 8] = [
    (&OFFERED_PER_S, false),
    (&CONSUMED_PER_S, true),
    (&CPU_AVG_PCT, true),
    (&ROWS_PER_S_PER_CORE, true),
    (&ROWS_PER_S_PER_GB, false),
    (&US_CPU_PER_RECORD, true),
    (&OUTPUT_PER_S, false),
    (&EXTRA_RECORDS_PER_RECORD, false),
];

const REGIME: &str = "regime (lag drift)";

/// The headline figures whose spread over older batches is noted.
const HEADLINE: [(&str, &Figure); 3] = [
    (CONSUMED_PER_S.label, &CONSUMED_PER_S),
    (ROWS_PER_S_PER_CORE.label, &ROWS_PER_S_PER_CORE),
    (US_CPU_PER_RECORD.label, &US_CPU_PER_RECORD),
];

/// The table of one point; `by_design` when its runs are fed beyond their
/// capacity by design (a drain, an unpaced run).
pub(super) fn throughput_table(
    title: &str,
    records: &[&RunRecord],
    lines: &[LineRuns<'_>],
    by_design: bool,
) -> Table {
    // A drain point quotes the capacity its runs measured: records
    // consumed per second from a pre-filled input, nothing else on the CPU.
    let drain = records
        .iter()
        .any(|r| r.metrics.contains_key(DRAIN_CAPACITY_PER_S.name));
    let mut table = Table::new(title, throughput_columns(records, drain));
    table.empty = "no line kept up here".to_string();
    let mut left_out = Vec::new();
    let mut older = Vec::new();
    for line in lines.iter().filter(|l| !l.batch.is_empty()) {
        let runs = efficiency_runs(&line.batch, by_design);
        if runs.is_empty() {
            let flags = flags(&line.batch);
            let flagged = if flags.is_empty() {
                String::new()
            } else {
                format!("; flagged {}", flags.join(", "))
            };
            left_out.push(format!(
                "{} ({}{flagged})",
                line.label(),
                regime_words(&line.batch)
            ));
            continue;
        }
        note_runs_left_out(&mut table, line, &runs);
        older.extend(older_batches_note(
            line,
            &|batch| efficiency_runs(batch, by_design),
            &HEADLINE,
        ));
        let row = throughput_row(&mut table, line, &runs, drain);
        table.push(row);
    }
    if !left_out.is_empty() {
        table.notes.insert(
            0,
            format!(
                "Not in this table (efficiency only where a line kept up): {}.",
                left_out.join(", ")
            ),
        );
    }
    table.notes.extend(older);
    table
}

/// The columns: each figure, the drain's capacity on a drain point and the
/// regime after the second.
fn throughput_columns(records: &[&RunRecord], drain: bool) -> Vec<Column> {
    let mut columns = vec![Column::plain("line"), n_column()];
    for (i, (figure, _)) in FIGURES.iter().enumerate() {
        columns.push(metric_column(records, figure.label, figure));
        if i == 1 {
            if drain {
                let capacity = &DRAIN_CAPACITY_PER_S;
                columns.push(metric_column(records, capacity.label, capacity));
            }
            // The drift is shown as a percentage: the record's unit would mislead.
            columns.push(Column::plain(REGIME));
        }
    }
    columns.push(Column::utc("run"));
    columns
}

/// A note on the runs of `line` its figures leave out, and why.
fn note_runs_left_out(table: &mut Table, line: &LineRuns<'_>, runs: &[&RunRecord]) {
    if runs.len() >= line.batch.len() {
        return;
    }
    let others: Vec<&RunRecord> = line
        .batch
        .iter()
        .filter(|r| !runs.iter().any(|k| std::ptr::eq(*k, **r)))
        .copied()
        .collect();
    table.notes.push(format!(
        "{}: {} of {} runs left out ({}); its figures are the median of the other {}.",
        line.name,
        others.len(),
        line.batch.len(),
        regime_words(&others),
        runs.len()
    ));
}

/// A line's row: its figures over `runs`, its flags noted.
fn throughput_row(table: &mut Table, line: &LineRuns<'_>, runs: &[&RunRecord], drain: bool) -> Row {
    let flags = flags(runs);
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
        .set("n", n_cell(runs))
        .set(REGIME, regime_cell(runs))
        .set("run", run_cell(runs));
    for (figure, headline) in FIGURES {
        let cell = metric_cell(runs, figure);
        row = row.set(
            figure.label,
            if headline {
                cell
            } else {
                cell.without_interval()
            },
        );
    }
    if drain {
        let capacity = &DRAIN_CAPACITY_PER_S;
        row = row.set(capacity.label, metric_cell(runs, capacity));
    }
    row
}

/// The one regime of `runs`, if they share one.
fn regime_of(runs: &[&RunRecord]) -> Option<Regime> {
    let first = runs.first()?.regime;
    runs.iter().all(|r| r.regime == first).then_some(first)?
}

/// The regime of `runs` in words, for a line left out: `saturated,
/// consumed 12,000/s: its capacity here`, `draining`, `2× draining, 1×
/// saturated`.
fn regime_words(runs: &[&RunRecord]) -> String {
    match regime_of(runs) {
        Some(Regime::Saturated) => {
            let consumed = values(runs, &CONSUMED_PER_S);
            match repeats_cell(&consumed, format_of(&CONSUMED_PER_S)) {
                Some(c) => format!("saturated, consumed {}/s: its capacity here", c.text),
                None => "saturated".to_string(),
            }
        }
        Some(r) => r.as_str().to_string(),
        None => mixed(runs),
    }
}

/// `2× keep-up, 1× draining`.
fn mixed(runs: &[&RunRecord]) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in runs {
        *counts
            .entry(r.regime.map_or("unmeasured", Regime::as_str))
            .or_default() += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n}× {k}")).collect();
    parts.join(", ")
}

/// The regime of the runs with their lag drift: `keep-up (+0.0 %)`.
fn regime_cell(runs: &[&RunRecord]) -> Cell {
    let regime = regime_of(runs);
    let text = match regime {
        Some(r) => r.as_str().to_string(),
        None => format!("mixed: {}", mixed(runs)),
    };
    let mut cell = match repeats_cell(&values(runs, &LAG_DRIFT), format_of(&LAG_DRIFT)) {
        Some(mut c) => {
            c.text = format!("{text} ({})", c.text);
            // The drift is the regime's evidence, not a figure to quote.
            c.interval.clear();
            c
        }
        None => Cell::text(text),
    };
    cell.class = match regime {
        Some(Regime::KeepUp) => "ok",
        Some(_) => "warn",
        None => "",
    }
    .to_string();
    cell
}

/// When the newest batch ran (the date of its newest run shown), with the
/// batch and its runs on hover.
fn run_cell(runs: &[&RunRecord]) -> Cell {
    let Some(last) = runs.last() else {
        return Cell::missing();
    };
    Cell::text(date_time(&last.started_at)).with_title(format!(
        "batch {}: {}",
        last.batch_id,
        runs.iter()
            .map(|r| r.run_id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

/// The flags of `runs`, every one kept, known or not.
fn flags(runs: &[&RunRecord]) -> Vec<String> {
    let flags: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.flags.iter().map(String::as_str))
        .collect();
    flags.into_iter().map(str::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::lines::group_lines;

    fn run(line: &str, batch: &str, regime: Regime) -> RunRecord {
        let mut r = crate::report::fixture_record();
        r.line = line.into();
        r.batch_id = batch.into();
        r.regime = Some(regime);
        r
    }

    fn table_of(records: &[RunRecord], by_design: bool) -> Table {
        let all: Vec<&RunRecord> = records.iter().collect();
        let order: Vec<String> = ["kept", "full", "catching"].map(String::from).to_vec();
        let suite = crate::report::repo_suite();
        throughput_table("t", &all, &group_lines(&suite, &order, &all), by_design)
    }

    fn lines_of(table: &Table) -> Vec<String> {
        table.rows.iter().map(|r| r[0].text.clone()).collect()
    }

    #[test]
    fn saturated_and_draining_runs_leave_the_efficiency_table() {
        let records = [
            run("kept", "a", Regime::KeepUp),
            run("full", "b", Regime::Saturated),
            run("catching", "c", Regime::Draining),
        ];
        let table = table_of(&records, false);
        assert_eq!(lines_of(&table), ["kept 0.0.9"]);
        let listed = &table.notes[0];
        assert!(listed.starts_with("Not in this table"), "{listed}");
        assert!(
            listed.contains("full 0.0.9 (saturated, consumed 19,989/s: its capacity here)"),
            "{listed}"
        );
        assert!(listed.contains("catching 0.0.9 (draining)"), "{listed}");
        // a drain or an unpaced point: every run is at its capacity by design
        let table = table_of(&records, true);
        assert_eq!(lines_of(&table).len(), 3);
        assert!(table.notes.is_empty(), "{:?}", table.notes);
    }

    #[test]
    fn a_batch_with_a_draining_run_is_the_median_of_the_others() {
        let records = [
            run("kept", "a", Regime::KeepUp),
            run("kept", "a", Regime::Draining),
            run("kept", "a", Regime::KeepUp),
        ];
        let table = table_of(&records, false);
        let n = table.column_index("n").unwrap();
        assert_eq!(table.rows[0][n].text, "2");
        assert_eq!(
            table.notes,
            ["kept: 1 of 3 runs left out (draining); its figures are the median of the other 2."]
        );
    }

    #[test]
    fn a_line_that_did_not_keep_up_anywhere_leaves_an_empty_table_that_says_why() {
        let table = table_of(&[run("full", "b", Regime::Saturated)], false);
        assert!(table.rows.is_empty());
        assert_eq!(table.empty, "no line kept up here");
        assert_eq!(table.notes.len(), 1);
    }
}
