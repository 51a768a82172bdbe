//! The releases section: one line measured on several of its versions at one
//! bench point, newest version first, each against the version below it.
//! Versions are compared only inside a point, so no change is ever computed
//! across a change of bench version, host or run configuration.

use super::figures::{figure, format_of};
use super::lines::comparable;
use super::points::PointRuns;
use super::table::{date_time, signed_percent, Cell, Column, Row, Table};
use crate::results::{Regime, RunRecord};

/// A change worse than this share is marked: about the noise of one run
/// against another on a shared host, so a mark asks for `--repeat 3`.
const WARN_BEYOND: f64 = 0.05;

const EFFICIENCY: &str = "rows/s per core";
const CAPACITY: &str = "capacity";

/// One version of a line at a point: its newest batch there.
struct Release<'a> {
    version: String,
    batch: Vec<&'a RunRecord>,
}

impl<'a> Release<'a> {
    /// When the batch ran: its newest run's start.
    fn started_at(&self) -> &str {
        self.batch.last().map_or("", |r| r.started_at.as_str())
    }

    /// rows/s per core, the median of the batch.
    fn efficiency(&self) -> Option<f64> {
        figure(&self.batch, "rows_per_s_per_core").map(|s| s.median)
    }

    /// What the line can consume at most: the read capacity of drain runs,
    /// or consumed/s when every run of the batch was saturated. A line that
    /// kept up consumed what it was offered, which says nothing of its
    /// capacity.
    fn capacity(&self) -> Option<f64> {
        if let Some(drain) = figure(&self.batch, "drain_capacity_per_s") {
            return Some(drain.median);
        }
        let saturated = self
            .batch
            .iter()
            .all(|r| r.regime == Some(Regime::Saturated));
        if saturated {
            figure(&self.batch, "consumed_per_s").map(|s| s.median)
        } else {
            None
        }
    }
}

/// The versions of `line` among `records`, each with its newest batch,
/// newest version first.
fn releases<'a>(line: &str, records: &[&'a RunRecord]) -> Vec<Release<'a>> {
    let mut runs: Vec<&RunRecord> = records
        .iter()
        .copied()
        .filter(|r| r.line == line && comparable(r))
        .collect();
    runs.sort_by(|a, b| a.started_at.cmp(&b.started_at));
    let mut versions: Vec<String> = Vec::new();
    for run in runs.iter().rev() {
        if !versions.contains(&run.version) {
            versions.push(run.version.clone());
        }
    }
    versions
        .into_iter()
        .map(|version| {
            let newest_batch = runs
                .iter()
                .rev()
                .find(|r| r.version == version)
                .map(|r| r.batch_id.clone());
            let batch = runs
                .iter()
                .copied()
                .filter(|r| r.version == version && Some(&r.batch_id) == newest_batch.as_ref())
                .collect();
            Release { version, batch }
        })
        .collect()
}

/// The change from `older` to `newer`, marked when it is worse (lower)
/// beyond [`WARN_BEYOND`].
fn change_cell(newer: Option<f64>, older: Option<f64>) -> Cell {
    match (newer, older) {
        (Some(n), Some(o)) if o > 0.0 => {
            let change = n / o - 1.0;
            let cell = Cell::text(signed_percent(change));
            if change < -WARN_BEYOND {
                cell.with_class("warn")
                    .with_title(format!("worse by more than {:.0} %", WARN_BEYOND * 100.0))
            } else {
                cell
            }
        }
        _ => Cell::text("—"),
    }
}

fn value_cell(value: Option<f64>, name: &str) -> Cell {
    value.map_or_else(|| Cell::text("—"), |v| Cell::text(format_of(name)(v)))
}

/// Every line measured on two or more versions at a point: one row per
/// version, newest first, with its change against the version below it.
pub(super) fn releases_table(points: &[PointRuns<'_>]) -> Table {
    let mut table = Table::new(
        "Releases",
        vec![
            Column::plain("line"),
            Column::plain("point"),
            Column::plain("version"),
            Column::utc("run"),
            Column::plain(EFFICIENCY),
            Column::plain("Δ efficiency"),
            Column::plain(CAPACITY),
            Column::plain("Δ capacity"),
        ],
    );
    for point in points {
        for line in &point.lines {
            let versions = releases(&line.name, &point.records);
            if versions.len() < 2 {
                continue;
            }
            for (i, release) in versions.iter().enumerate() {
                let older = versions.get(i + 1);
                let row = Row::new()
                    .set("line", Cell::text(&line.name))
                    .set("point", Cell::text(&point.name))
                    .set(
                        "version",
                        Cell::text(&release.version)
                            .with_title(format!("{} run(s)", release.batch.len())),
                    )
                    .set("run", Cell::text(date_time(release.started_at())))
                    .set(
                        EFFICIENCY,
                        value_cell(release.efficiency(), "rows_per_s_per_core"),
                    )
                    .set(
                        "Δ efficiency",
                        change_cell(release.efficiency(), older.and_then(Release::efficiency)),
                    )
                    .set(
                        CAPACITY,
                        value_cell(release.capacity(), "drain_capacity_per_s"),
                    )
                    .set(
                        "Δ capacity",
                        change_cell(release.capacity(), older.and_then(Release::capacity)),
                    );
                table.push(row);
            }
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_marked_only_when_worse_beyond_five_percent() {
        let cell = change_cell(Some(94.0), Some(100.0));
        assert_eq!(cell.class, "warn");
        assert_eq!(cell.text, signed_percent(-0.06));
        assert_eq!(change_cell(Some(96.0), Some(100.0)).class, "");
        assert_eq!(change_cell(Some(120.0), Some(100.0)).class, "");
        assert_eq!(change_cell(None, Some(100.0)).text, "—");
        assert_eq!(change_cell(Some(1.0), None).text, "—");
    }
}
