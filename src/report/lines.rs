//! The lines of a workload page: each product line's runs (at one bench
//! point, or on the whole page), its newest batch, and which runs compare.

use std::collections::BTreeSet;

use serde::Serialize;

use super::svg::SeriesStyle;
use crate::config::{Delivery, Suite};
use crate::results::{flag, Regime, RunRecord, Status};

/// The one-line conclusion of the sanity and verification table.
#[derive(Debug, Serialize)]
pub struct Verdict {
    pub text: String,
    /// `ok`, `warn` or `na`.
    pub class: String,
}

/// The runs of one product line.
pub(super) struct LineRuns<'a> {
    pub(super) name: String,
    /// The product the line belongs to, from its records.
    pub(super) product: String,
    pub(super) delivery: Delivery,
    /// Every record of the line, oldest first.
    pub(super) all: Vec<&'a RunRecord>,
    /// The newest batch's comparable runs (ok, no injected crash).
    pub(super) batch: Vec<&'a RunRecord>,
    /// The line's colour and dash, the same in every chart of the page.
    pub(super) style: SeriesStyle,
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

/// The lines of `order` that have records, each with its newest batch; a
/// line's style is its place in `order`, so it is the same at every point.
pub(super) fn group_lines<'a>(order: &[String], records: &[&'a RunRecord]) -> Vec<LineRuns<'a>> {
    let mut lines = Vec::new();
    for (index, name) in order.iter().enumerate() {
        let mut all: Vec<&RunRecord> = records
            .iter()
            .copied()
            .filter(|r| r.line == *name)
            .collect();
        let Some(first) = all.first() else {
            continue;
        };
        let (product, delivery) = (first.product.clone(), first.delivery);
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
        lines.push(LineRuns {
            name: name.clone(),
            product,
            delivery,
            all,
            batch,
            style: SeriesStyle::nth(index),
        });
    }
    lines
}
