//! The lines of a workload page: each product line's runs, its newest
//! batch, which runs compare, and the page's one-line verdicts.

use std::collections::BTreeSet;

use serde::Serialize;

use super::svg::PALETTE;
use crate::config::Suite;
use crate::results::{flag, Regime, RunRecord, Status};

/// The one-line conclusion of the sanity and verification table.
#[derive(Debug, Serialize)]
pub struct Verdict {
    pub text: String,
    /// `ok`, `warn` or `na`.
    pub class: String,
}

/// The runs of one product line on one workload.
pub(super) struct LineRuns<'a> {
    pub(super) name: String,
    /// Every record of the line, oldest first.
    pub(super) all: Vec<&'a RunRecord>,
    /// The newest batch's comparable runs (ok, no injected crash).
    pub(super) batch: Vec<&'a RunRecord>,
    pub(super) colour: &'static str,
}

impl LineRuns<'_> {
    /// The line's label: name and version of its newest comparable run.
    pub(super) fn label(&self) -> String {
        match self.batch.last().or(self.all.last()) {
            Some(r) => format!("{} {}", self.name, r.version),
            None => self.name.clone(),
        }
    }

    pub(super) fn regime(&self) -> Option<Regime> {
        let regimes: BTreeSet<&str> = self
            .batch
            .iter()
            .filter_map(|r| r.regime.map(Regime::as_str))
            .collect();
        match regimes.len() {
            1 => self.batch.iter().find_map(|r| r.regime),
            _ => None,
        }
    }
}

/// Whether a run can be compared with others: it ended well and had no crash
/// injected on purpose.
pub(super) fn comparable(record: &RunRecord) -> bool {
    record.status == Status::Ok && !is_chaos(record)
}

pub(super) fn is_chaos(record: &RunRecord) -> bool {
    record.chaos.is_some() || record.has_flag(flag::CHAOS)
}

/// Line names in page order: the configuration's order, then unknown ones.
pub(super) fn line_order(suite: &Suite, records: &[RunRecord]) -> Vec<String> {
    let mut names: Vec<String> = suite.lines().map(|l| l.line.name.clone()).collect();
    let extra: BTreeSet<&str> = records
        .iter()
        .map(|r| r.line.as_str())
        .filter(|l| !names.iter().any(|n| n == l))
        .collect();
    names.extend(extra.into_iter().map(str::to_string));
    names
}

/// The lines that have records, each with its newest batch.
pub(super) fn group_lines<'a>(suite: &Suite, records: &'a [RunRecord]) -> Vec<LineRuns<'a>> {
    let mut lines = Vec::new();
    for name in line_order(suite, records) {
        let mut all: Vec<&RunRecord> = records.iter().filter(|r| r.line == name).collect();
        if all.is_empty() {
            continue;
        }
        all.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        let newest_batch = all
            .iter()
            .rev()
            .find(|r| comparable(r))
            .map(|r| r.batch_id.clone());
        let batch = all
            .iter()
            .filter(|r| comparable(r) && Some(&r.batch_id) == newest_batch.as_ref())
            .copied()
            .collect();
        let colour = PALETTE[lines.len() % PALETTE.len()];
        lines.push(LineRuns {
            name,
            all,
            batch,
            colour,
        });
    }
    lines
}
