//! The index's matrix: every product line against every workload. A cell
//! holds the workload's headline figures for the line's newest batch at the
//! point its page compares lines at (the iso point; a workload with no run
//! there, such as an unpaced ETL study, at its first point), or says the
//! line has not run it or does not support it.

use std::collections::BTreeMap;

use super::context::workload_names;
use super::figures::{figure, format_of};
use super::lines::line_order;
use super::points::group_points;
use super::table::{display_unit, Cell, Column, Row, Table};
use crate::config::Suite;
use crate::results::RunRecord;
use crate::workloads;

/// What a workload's cell shows when its implementation is unknown.
const HEADLINE: [&str; 2] = ["added_p50_ms", "us_cpu_per_record"];

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
    let mut cells = BTreeMap::new();
    for line in point.lines.iter().filter(|l| !l.batch.is_empty()) {
        let parts: Vec<String> = headline
            .iter()
            .map(|name| match figure(&line.batch, name) {
                Some(f) => {
                    let unit = line
                        .batch
                        .iter()
                        .find_map(|r| r.metrics.get(*name))
                        .map(|m| display_unit(&m.unit))
                        .unwrap_or_default();
                    format!("{} {unit}", format_of(name)(f.median))
                }
                None => "—".to_string(),
            })
            .collect();
        let newest = line.batch.last().map_or("", |r| r.run_id.as_str());
        cells.insert(
            line.name.clone(),
            Cell::text(parts.join(" · ")).with_title(format!(
                "{}: median of {} run(s) of the newest batch at {}; newest {newest}",
                headline.join(", "),
                line.batch.len(),
                point.name
            )),
        );
    }
    cells
}
