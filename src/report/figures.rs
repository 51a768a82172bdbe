//! Figures of a batch as table cells: the median over the batch's runs with
//! how sure it is (its n, and from three runs an interval quoted at its
//! coverage; a single run marked as such), the reason a figure is absent,
//! and the column of a figure with the unit and direction the records give
//! and a fixed number of decimals.

use super::lines::LineRuns;
use super::table::{display_unit, fixed, signed_percent, Cell, Column};
use crate::results::{Better, Figure, Format, Metric, RunRecord};
use crate::stats::{median_interval_any_n, QuotedInterval};
use crate::stats::{spread, Spread};

/// The CSS class of a figure from one run: drawn lighter.
pub(super) const SINGLE_RUN: &str = "single";

/// `figure` of every run of `runs` that has it.
pub(super) fn values(runs: &[&RunRecord], figure: &Figure) -> Vec<f64> {
    runs.iter()
        .filter_map(|r| r.metrics.get(figure.name).map(|m| m.value))
        .collect()
}

/// `of` over `runs`: the median of the runs that have it, and its spread.
pub(super) fn figure(runs: &[&RunRecord], of: &Figure) -> Option<Spread> {
    spread(&values(runs, of))
}

/// A coverage as the page writes it: `75 %`, `87.5 %`, `93.75 %`, `95 %`.
pub(super) fn coverage_text(coverage: f64) -> String {
    let text = format!("{:.2}", coverage * 100.0);
    format!("{} %", text.trim_end_matches('0').trim_end_matches('.'))
}

/// An interval with its coverage: `75 %: 24.6 – 28.0`.
pub(super) fn interval_text(interval: &QuotedInterval, format: fn(f64) -> String) -> String {
    format!(
        "{}: {} – {}",
        coverage_text(interval.coverage),
        format(interval.low),
        format(interval.high)
    )
}

/// How an interval of `n` values was found, for a hover.
fn interval_origin(n: usize) -> &'static str {
    if n >= 6 {
        "order statistics chosen from the binomial distribution"
    } else {
        "the runs' min and max, which cover the median with 1 − 2/2ⁿ"
    }
}

/// How sure a median of `values` is, in words for a summary or a grid
/// cell: `n = 3 · 75 %: 24.6 – 28.0`, `n = 2`, or `single run`.
pub(super) fn certainty(values: &[f64], format: fn(f64) -> String) -> String {
    match (values.len(), median_interval_any_n(values)) {
        (_, Some(interval)) => format!("n = {} · {}", interval.n, interval_text(&interval, format)),
        (1, None) => "single run".to_string(),
        (n, None) => format!("n = {n}"),
    }
}

/// The coverage the interval of a median of `n` values is quoted at; None
/// below 3.
pub(super) fn coverage_for(n: usize) -> Option<f64> {
    let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    median_interval_any_n(&values).map(|i| i.coverage)
}

/// The coverage of the intervals of a median of `n` runs, for the n of a
/// row: `93.75 % intervals`; empty below 3 runs.
pub(super) fn coverage_of_n(n: usize) -> String {
    coverage_for(n).map_or_else(String::new, |c| format!("{} intervals", coverage_text(c)))
}

/// The cell of a median of repeated `values`: from two runs with a dotted
/// underline and the min and max on hover, from three with its interval
/// under the value (its coverage is the row's n's, given beside n, and on
/// hover); one run's value is marked as a single run, lighter. None for no
/// value.
pub(super) fn repeats_cell(values: &[f64], format: fn(f64) -> String) -> Option<Cell> {
    let spread = spread(values)?;
    let mut cell = Cell::text(format(spread.median));
    if spread.count == 1 {
        return Some(cell.with_class(SINGLE_RUN).with_title("single run"));
    }
    cell.repeat = true;
    cell.title = format!(
        "median of {} runs, min {} – max {}",
        spread.count,
        format(spread.min),
        format(spread.max)
    );
    match median_interval_any_n(values) {
        Some(interval) => {
            cell.interval = format!("{} – {}", format(interval.low), format(interval.high));
            cell.title.push_str(&format!(
                "; {} interval of the median {} – {} ({})",
                coverage_text(interval.coverage),
                format(interval.low),
                format(interval.high),
                interval_origin(interval.n)
            ));
        }
        None => cell.title.push_str("; no interval below 3 runs"),
    }
    Some(cell)
}

/// How `figure` is written: the same decimals for every row of a column.
pub(super) fn format_of(figure: &Figure) -> fn(f64) -> String {
    match figure.format {
        Format::SignedPercent => signed_percent,
        Format::Decimals(0) => |v| fixed(v, 0),
        Format::Decimals(1) => |v| fixed(v, 1),
        Format::Decimals(2) => |v| fixed(v, 2),
        // The definition writes no figure with more than three.
        Format::Decimals(_) => |v| fixed(v, 3),
    }
}

/// The column of a row's n: the runs its figures are the median of.
pub(super) fn n_column() -> Column {
    Column {
        unit: "runs".to_string(),
        ..Column::plain("n")
    }
}

/// The n of a row whose figures are the medians of `runs`: a single run is
/// marked as such.
pub(super) fn n_cell(runs: &[&RunRecord]) -> Cell {
    let batch = runs.last().map_or("", |r| r.batch_id.as_str());
    match runs.len() {
        0 => Cell::missing(),
        1 => Cell::text("single run")
            .with_class(SINGLE_RUN)
            .with_title(format!("one run of batch {batch}: no median, no interval")),
        n => {
            let mut cell = Cell::text(n.to_string()).with_title(format!(
                "each figure of the row is the median of {n} runs of batch {batch}{}",
                if n >= 3 {
                    ", the interval of that median under it"
                } else {
                    "; no interval below 3 runs"
                }
            ));
            cell.interval = coverage_of_n(n);
            cell
        }
    }
}

/// When a line has older batches at a point: a note naming the newest
/// batch (the one shown) and giving the spread of the older batches'
/// medians of `figures` (label, figure), each over the runs `pick` keeps.
/// None for a line with one batch here.
pub(super) fn older_batches_note<'a>(
    line: &LineRuns<'a>,
    pick: &dyn Fn(&[&'a RunRecord]) -> Vec<&'a RunRecord>,
    figures: &[(&str, &Figure)],
) -> Option<String> {
    let older = line.older_batches();
    let newest = line.batch.last()?;
    if older.is_empty() {
        return None;
    }
    let picked: Vec<Vec<&RunRecord>> = older
        .iter()
        .map(|b| pick(b))
        .filter(|b| !b.is_empty())
        .collect();
    let mut parts = Vec::new();
    for (label, of) in figures {
        let medians: Vec<f64> = picked
            .iter()
            .filter_map(|b| figure(b, of).map(|f| f.median))
            .collect();
        let Some(range) = spread(&medians) else {
            continue;
        };
        let format = format_of(of);
        let text = if range.min == range.max {
            format(range.min)
        } else {
            format!("{} – {}", format(range.min), format(range.max))
        };
        // A rate's unit repeats its label: `consumed/s 19,989`.
        let unit = line
            .batch
            .iter()
            .find_map(|r| r.metrics.get(of.name))
            .map(|m| display_unit(&m.unit))
            .filter(|u| !u.contains('/'))
            .map_or_else(String::new, |u| format!(" {u}"));
        parts.push(format!("{label} {text}{unit}"));
    }
    let count = older.len();
    let runs = line.batch.len();
    let mut note = format!(
        "{}: newest batch {} shown ({runs} run{}); {count} older batch{} of {} at this point",
        line.name,
        newest.batch_id,
        if runs == 1 { "" } else { "s" },
        if count == 1 { "" } else { "es" },
        newest.version
    );
    if parts.is_empty() {
        note.push_str(", none with figures for this table.");
    } else {
        note.push_str(&format!(
            ", {} medians: {}",
            if count == 1 { "its" } else { "their" },
            parts.join(", ")
        ));
        if picked.len() < count {
            note.push_str(&format!(
                " ({} without runs for this table)",
                count - picked.len()
            ));
        }
        note.push('.');
    }
    Some(note)
}

/// The cell of `figure` over `runs`: the median, or why it is absent.
pub(super) fn metric_cell(runs: &[&RunRecord], figure: &Figure) -> Cell {
    if let Some(cell) = repeats_cell(&values(runs, figure), format_of(figure)) {
        return cell;
    }
    let name = figure.name;
    let reason = runs.iter().rev().find_map(|r| {
        r.not_applicable.get(name).or_else(|| {
            name.starts_with("latency_")
                .then(|| r.not_applicable.get("latency"))
                .flatten()
        })
    });
    match reason {
        Some(reason) => Cell::not_applicable(reason),
        None => Cell::missing(),
    }
}

/// A column of `figure` labelled `label`, its unit and direction read from
/// the records.
pub(super) fn metric_column(records: &[&RunRecord], label: &str, figure: &Figure) -> Column {
    column_of(
        label,
        records.iter().find_map(|r| r.metrics.get(figure.name)),
    )
}

/// A column labelled `label` with the unit and direction of `metric`.
pub(super) fn column_of(label: &str, metric: Option<&Metric>) -> Column {
    match metric {
        Some(m) => Column {
            label: label.to_string(),
            unit: display_unit(&m.unit),
            direction: match m.better {
                Better::Lower => "lower is better".to_string(),
                Better::Higher => "higher is better".to_string(),
            },
        },
        None => Column::plain(label),
    }
}

/// Which way `figure` is better, from the records (lower when unknown).
pub(super) fn better_of(records: &[&RunRecord], figure: &Figure) -> Better {
    records
        .iter()
        .find_map(|r| r.metrics.get(figure.name))
        .map_or(Better::Lower, |m| m.better)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::figure::{
        self, CONSUMED_PER_S, CPU_AVG_PCT, EXTRA_RECORDS_PER_RECORD, LAG_DRIFT, LATENCY_P50_MS,
        US_CPU_PER_RECORD,
    };

    #[test]
    fn a_column_keeps_its_decimals() {
        assert_eq!(format_of(&LATENCY_P50_MS)(131.94), "131.9");
        assert_eq!(format_of(&LATENCY_P50_MS)(1552.9), "1,552.9");
        assert_eq!(format_of(&LATENCY_P50_MS)(12.0), "12.0");
        assert_eq!(format_of(&US_CPU_PER_RECORD)(5.0), "5.00");
        assert_eq!(format_of(&CONSUMED_PER_S)(19782.4), "19,782");
        assert_eq!(format_of(&LAG_DRIFT)(-0.00001), "+0.0 %");
        assert_eq!(format_of(&EXTRA_RECORDS_PER_RECORD)(0.01234), "0.012");
        assert!(figure::ALL
            .iter()
            .all(|f| matches!(f.format, Format::SignedPercent | Format::Decimals(0..=3))));
    }

    fn one_decimal(v: f64) -> String {
        fixed(v, 1)
    }

    #[test]
    fn three_runs_show_their_interval_at_its_exact_coverage() {
        let cell = repeats_cell(&[28.0, 24.6, 25.9], one_decimal).unwrap();
        assert_eq!(cell.text, "25.9");
        assert!(cell.repeat);
        assert_eq!(cell.interval, "24.6 – 28.0");
        assert!(cell
            .title
            .starts_with("median of 3 runs, min 24.6 – max 28.0; 75 % interval"));
        let four = repeats_cell(&[1.0, 2.0, 3.0, 4.0], one_decimal).unwrap();
        assert_eq!(four.interval, "1.0 – 4.0");
        assert!(four
            .title
            .contains("; 87.5 % interval of the median 1.0 – 4.0"));
        let five = repeats_cell(&[1.0, 2.0, 3.0, 4.0, 5.0], one_decimal).unwrap();
        assert!(five
            .title
            .contains("; 93.75 % interval of the median 1.0 – 5.0"));
        // only from six runs is an interval 95 %
        let nine: Vec<f64> = (1..=9).map(f64::from).collect();
        let nine = repeats_cell(&nine, one_decimal).unwrap();
        assert_eq!(nine.interval, "2.0 – 8.0");
        assert!(nine
            .title
            .contains("; 95 % interval of the median 2.0 – 8.0"));
        // the row's n carries the coverage of its intervals
        let runs = vec![crate::report::fixture_record(); 5];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        assert_eq!(n_cell(&refs[..3]).interval, "75 % intervals");
        assert_eq!(n_cell(&refs[..4]).interval, "87.5 % intervals");
        assert_eq!(n_cell(&refs).interval, "93.75 % intervals");
        assert!(n_cell(&refs[..2]).interval.is_empty());
        let nine = vec![crate::report::fixture_record(); 9];
        let nine: Vec<&RunRecord> = nine.iter().collect();
        assert_eq!(n_cell(&nine).interval, "95 % intervals");
    }

    #[test]
    fn two_runs_have_a_median_and_no_interval() {
        let cell = repeats_cell(&[10.0, 20.0], one_decimal).unwrap();
        assert_eq!(cell.text, "15.0");
        assert!(cell.interval.is_empty());
        assert!(
            cell.title.ends_with("no interval below 3 runs"),
            "{}",
            cell.title
        );
        assert!(repeats_cell(&[], one_decimal).is_none());
    }

    #[test]
    fn a_single_run_is_marked_lighter() {
        let cell = repeats_cell(&[12.0], one_decimal).unwrap();
        assert_eq!(cell.text, "12.0");
        assert_eq!(cell.class, SINGLE_RUN);
        assert_eq!(cell.title, "single run");
        assert!(!cell.repeat && cell.interval.is_empty());
        let run = crate::report::fixture_record();
        let n = n_cell(&[&run]);
        assert_eq!(
            (n.text.as_str(), n.class.as_str()),
            ("single run", SINGLE_RUN)
        );
        assert_eq!(n_cell(&[&run, &run, &run]).text, "3");
        assert_eq!(metric_cell(&[&run], &CPU_AVG_PCT).class, SINGLE_RUN);
    }

    #[test]
    fn certainty_reads_n_and_the_interval() {
        assert_eq!(
            certainty(&[30.0, 28.0, 31.0], one_decimal),
            "n = 3 · 75 %: 28.0 – 31.0"
        );
        assert_eq!(certainty(&[30.0, 28.0], one_decimal), "n = 2");
        assert_eq!(certainty(&[30.0], one_decimal), "single run");
        assert_eq!(coverage_text(0.75), "75 %");
        assert_eq!(coverage_text(0.9375), "93.75 %");
        assert_eq!(coverage_text(0.95), "95 %");
    }
}
