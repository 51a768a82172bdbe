//! The index's matrix: every product line against every workload. A cell
//! holds the workload's headline figures for the line's newest batch at the
//! point its page compares lines at (the iso point; a workload with no run
//! there, such as an unpaced ETL study, at its first point), with its n and
//! interval, or says the line has not run it or does not support it. As in
//! the efficiency tables, only runs that kept up count: a line that was
//! saturated or draining there shows its regime instead.

use std::collections::BTreeMap;

use super::figures::{coverage_text, format_of, values, SINGLE_RUN};
use super::header::workload_names;
use super::lines::{efficiency_runs, line_order};
use super::points::group_points;
use super::table::{display_unit, Cell, Column, Row, Table};
use crate::config::Suite;
use crate::results::figure::{ADDED_P50_MS, US_CPU_PER_RECORD};
use crate::results::Regime;
use crate::results::{Figure, RunRecord};
use crate::stats::median_interval_any_n;
use crate::stats::spread;
use crate::workloads;

/// What a workload's cell shows when its implementation is unknown.
const HEADLINE: [&Figure; 2] = [&ADDED_P50_MS, &US_CPU_PER_RECORD];

pub(super) fn matrix(suite: &Suite, results: &BTreeMap<String, Vec<RunRecord>>) -> Table {
    let names = workload_names(suite, results);
    let mut columns = vec![Column::plain("line")];
    columns.extend(names.iter().map(|w| Column::plain(w)));
    let mut table = Table::new("Workloads × lines", columns);
    // Per workload: each line's cell, by line name.
    let cells: Vec<BTreeMap<String, Cell>> = names
        .iter()
        .map(|w| workload_cells(suite, w, results.get(w).map_or(&[], Vec::as_slice)))
        .collect();
    for line in suite.lines() {
        let name = &line.line.name;
        let mut row = Row::new().set("line", Cell::text(name));
        for (workload, cells) in names.iter().zip(&cells) {
            let cell = match cells.get(name) {
                Some(cell) => cell.clone(),
                None if line.product.workloads.contains(workload) => {
                    Cell::text("not run").with_class("na")
                }
                None => Cell::text("not supported")
                    .with_class("na")
                    .with_title(format!(
                        "{} does not implement {workload} (products/{}/product.yaml)",
                        line.product.name, line.product.name
                    )),
            };
            row = row.set(workload, cell);
        }
        table.push(row);
    }
    table
}

/// The cells of the lines that have a comparable run of `workload` at its
/// compared point.
fn workload_cells(suite: &Suite, workload: &str, records: &[RunRecord]) -> BTreeMap<String, Cell> {
    let headline = workloads::find(workload).map_or(HEADLINE, |w| w.headline());
    let order = line_order(suite, records);
    let points = group_points(suite, workload, &order, records);
    let Some(point) = points.iter().find(|p| p.is_iso()).or(points.first()) else {
        return BTreeMap::new();
    };
    let by_design = point.point.settings.beyond_capacity_by_design();
    let mut cells = BTreeMap::new();
    for line in point.lines.iter().filter(|l| !l.batch.is_empty()) {
        let runs = efficiency_runs(&line.batch, by_design);
        let newest = line.batch.last().map_or("", |r| r.run_id.as_str());
        if runs.is_empty() {
            let regime = line.regime().map_or("mixed regimes", Regime::as_str);
            cells.insert(
                line.name.clone(),
                Cell::text(regime).with_class("na").with_title(format!(
                    "{regime} at {}: figures only for runs that kept up; newest {newest}",
                    point.name
                )),
            );
            continue;
        }
        let mut parts = Vec::new();
        let mut intervals = Vec::new();
        let mut n = 0;
        for figure in headline {
            let values = values(&runs, figure);
            let format = format_of(figure);
            let Some(median) = spread(&values) else {
                parts.push("—".to_string());
                continue;
            };
            n = n.max(median.count);
            let unit = runs
                .iter()
                .find_map(|r| r.metrics.get(figure.name))
                .map(|m| display_unit(&m.unit))
                .unwrap_or_default();
            parts.push(format!("{} {unit}", format(median.median)));
            if let Some(i) = median_interval_any_n(&values) {
                intervals.push((
                    i.coverage,
                    format!("{} – {}", format(i.low), format(i.high)),
                ));
            }
        }
        let mut cell = Cell::text(parts.join(" · ")).with_title(format!(
            "{}: median of {} run(s) of the newest batch at {}; newest {newest}",
            headline.map(|f| f.name).join(", "),
            runs.len(),
            point.name
        ));
        cell.interval = match (n, intervals.first()) {
            (1, _) => "single run".to_string(),
            (_, Some((coverage, _))) => format!(
                "n = {n} · {}: {}",
                coverage_text(*coverage),
                intervals
                    .iter()
                    .map(|(_, text)| text.as_str())
                    .collect::<Vec<_>>()
                    .join(" · ")
            ),
            (_, None) => format!("n = {n}"),
        };
        if n == 1 {
            cell = cell.with_class(SINGLE_RUN);
        }
        cells.insert(line.name.clone(), cell);
    }
    cells
}
