//! Figures of a batch as table cells: the median over the batch's runs, the
//! reason a figure is absent, and the column of a figure with the unit and
//! direction the records give and a fixed number of decimals.

use super::table::{display_unit, fixed, signed_percent, Cell, Column};
use crate::analysis::{spread, Spread};
use crate::results::{Better, Metric, RunRecord};

/// Figure `name` over `runs`: the median of the runs that have it, and its spread.
pub(super) fn figure(runs: &[&RunRecord], name: &str) -> Option<Spread> {
    let values: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.metrics.get(name).map(|m| m.value))
        .collect();
    spread(&values)
}

/// How figure `name` is written: the same decimals for every row of a column.
pub(super) fn format_of(name: &str) -> fn(f64) -> String {
    match name {
        "lag_drift" => signed_percent,
        "us_cpu_per_record" => |v| fixed(v, 2),
        "extra_records_per_record" => |v| fixed(v, 3),
        n if n.ends_with("_ms") || n.ends_with("_pct") || n.ends_with("_mb") => |v| fixed(v, 1),
        _ => |v| fixed(v, 0),
    }
}

/// The cell of figure `name` over `runs`: the median, or why it is absent.
pub(super) fn metric_cell(runs: &[&RunRecord], name: &str) -> Cell {
    if let Some(f) = figure(runs, name) {
        return Cell::figure(f, format_of(name));
    }
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

/// A column of figure `name`, its unit and direction read from the records.
pub(super) fn metric_column(records: &[&RunRecord], label: &str, name: &str) -> Column {
    column_of(label, records.iter().find_map(|r| r.metrics.get(name)))
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

/// Which way figure `name` is better, from the records (lower when unknown).
pub(super) fn better_of(records: &[&RunRecord], name: &str) -> Better {
    records
        .iter()
        .find_map(|r| r.metrics.get(name))
        .map_or(Better::Lower, |m| m.better)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_column_keeps_its_decimals() {
        assert_eq!(format_of("latency_p50_ms")(131.94), "131.9");
        assert_eq!(format_of("latency_p50_ms")(1552.9), "1,552.9");
        assert_eq!(format_of("latency_p50_ms")(12.0), "12.0");
        assert_eq!(format_of("us_cpu_per_record")(5.0), "5.00");
        assert_eq!(format_of("consumed_per_s")(19782.4), "19,782");
        assert_eq!(format_of("lag_drift")(-0.00001), "+0.0 %");
    }
}
