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
    /// What its guarantee holds under, from its product.yaml.
    pub(super) qualifier: Option<String>,
}

impl<'a> LineRuns<'a> {
    /// The line's label: name and version of its newest comparable run.
    pub(super) fn label(&self) -> String {
        let named = match self.batch.last().or(self.all.last()) {
            Some(r) => format!("{} {}", self.name, r.version),
            None => self.name.clone(),
        };
        match &self.qualifier {
            Some(qualifier) => format!("{named} ({qualifier})"),
            None => named,
        }
    }

    /// The line's older batches here, of the newest batch's version (another
    /// version is another release), newest first: each its comparable runs.
    pub(super) fn older_batches(&self) -> Vec<Vec<&'a RunRecord>> {
        let Some(newest) = self.batch.first() else {
            return Vec::new();
        };
        let mut batches: Vec<Vec<&RunRecord>> = Vec::new();
        for run in self.all.iter().rev().filter(|r| {
            comparable(r) && r.version == newest.version && r.batch_id != newest.batch_id
        }) {
            match batches.iter_mut().find(|b| b[0].batch_id == run.batch_id) {
                Some(batch) => batch.insert(0, run),
                None => batches.push(vec![run]),
            }
        }
        batches
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

/// Flags that keep a run from heading a table: its figures are shown and
/// marked ⚑, but never set the best of a coloured column, and the summary
/// never names it. A flag of that kind is one more name here.
pub(super) const NEVER_LEADS: [&str; 8] = [
    flag::GENERATOR_BEHIND,
    flag::NOISY_HOST,
    flag::CPU_MISMATCH,
    flag::PROBE_BEHIND,
    flag::HOST_SATURATED,
    flag::VERIFICATION_FAILED,
    flag::INCONSISTENT_FLOW,
    flag::NOT_STEADY,
];

/// Whether figures over `runs` may head a table: no run carries a flag of
/// [`NEVER_LEADS`].
pub(super) fn may_lead(runs: &[&RunRecord]) -> bool {
    !runs
        .iter()
        .any(|r| NEVER_LEADS.iter().any(|f| r.has_flag(f)))
}

/// The runs of `runs` an efficiency table compares: those that kept up. A
/// saturated run works at its capacity and a draining one catches up on
/// its warm-up, so neither CPU per record is the steady state's; they are
/// listed with their regime instead. Where every run is fed beyond its
/// capacity by design (`by_design`: a drain, an unpaced run) all count.
pub(super) fn efficiency_runs<'a>(runs: &[&'a RunRecord], by_design: bool) -> Vec<&'a RunRecord> {
    runs.iter()
        .filter(|r| by_design || !matches!(r.regime, Some(Regime::Saturated | Regime::Draining)))
        .copied()
        .collect()
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
pub(super) fn group_lines<'a>(
    suite: &Suite,
    order: &[String],
    records: &[&'a RunRecord],
) -> Vec<LineRuns<'a>> {
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
            qualifier: suite
                .line(name, None)
                .ok()
                .and_then(|l| l.line.qualifier.clone()),
        });
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(batch: &str, version: &str, started: &str) -> RunRecord {
        let mut r = crate::report::fixture_record();
        r.batch_id = batch.into();
        r.version = version.into();
        r.started_at = started.into();
        r.flags.clear();
        r
    }

    #[test]
    fn older_batches_are_of_the_newest_version_newest_first() {
        let records = [
            run("old", "0.1.0", "2026-11-30T01:00:00Z"),
            run("old", "0.1.0", "2026-11-30T01:01:00Z"),
            run("release", "0.0.9", "2026-11-30T02:00:00Z"),
            run("mid", "0.1.0", "2026-11-30T03:00:00Z"),
            run("new", "0.1.0", "2026-11-30T04:00:00Z"),
        ];
        let all: Vec<&RunRecord> = records.iter().collect();
        let lines = group_lines(
            &crate::report::repo_suite(),
            &[records[0].line.clone()],
            &all,
        );
        let older: Vec<(&str, usize)> = lines[0]
            .older_batches()
            .iter()
            .map(|b| (b[0].batch_id.as_str(), b.len()))
            .collect();
        assert_eq!(older, [("mid", 1), ("old", 2)]);
    }

    #[test]
    fn the_flags_that_keep_a_run_from_leading_are_named_in_one_list() {
        let clean = run("b", "1", "2026-11-30T01:00:00Z");
        assert!(may_lead(&[&clean]));
        for flag in NEVER_LEADS {
            let mut flagged = clean.clone();
            flagged.flags.push(flag.to_string());
            assert!(!may_lead(&[&clean, &flagged]), "{flag}");
        }
        assert!(NEVER_LEADS.contains(&"inconsistent-flow") && NEVER_LEADS.contains(&"not-steady"));
        let mut noted = clean.clone();
        noted.flags.push(flag::SANITY_WARNING.to_string());
        assert!(
            may_lead(&[&noted]),
            "a sanity warning is shown, not disqualifying"
        );
    }
}
