//! The failed runs of a page, newest first, each with its bench point and
//! why it failed. One list for the page: a failed run has no figure to
//! compare, so it needs no section of its point.

use super::points::{distinct_hosts, host_suffix, PointSettings};
use super::table::{date_time, Cell, Column, Row, Table};
use crate::results::{RunRecord, Status};

/// The most failed runs listed.
const SHOWN: usize = 20;

pub(super) fn failed_table(records: &[RunRecord]) -> Table {
    let mut table = Table::new(
        "Failed runs",
        vec![
            Column::plain("line"),
            Column::plain("point"),
            Column::plain("run"),
            Column::utc("started"),
            Column::plain("why"),
        ],
    );
    let mut failed: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .collect();
    failed.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    // Each row names its host when the page's runs ran on several.
    let hosts: Vec<_> = distinct_hosts(records.iter().map(|r| &r.host))
        .into_iter()
        .cloned()
        .collect();
    for r in failed.into_iter().take(SHOWN) {
        let why = r.failure.as_deref().unwrap_or("no reason recorded");
        let settings = PointSettings::from_config(&r.config);
        table.push(
            Row::new()
                .set("line", Cell::text(&r.line))
                .set(
                    "point",
                    Cell::text(settings.label() + &host_suffix(&r.host, &hosts))
                        .with_title(settings.detail()),
                )
                .set("run", Cell::text(&r.run_id))
                .set("started", Cell::text(date_time(&r.started_at)))
                .set("why", Cell::text(one_line(why, 160)).with_title(why)),
        );
    }
    table
}

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    if joined.chars().count() > max {
        format!("{}…", joined.chars().take(max).collect::<String>())
    } else {
        joined
    }
}
