//! The summary box at the top of a workload page: at the iso point, the
//! best exactly-once line by added p50 latency and by CPU per record, and
//! the cost of exactly-once of each product, each marked `interleaved` (the
//! figures come from one batch) or `separately`.

use serde::Serialize;

use super::eos_cost::IsoCost;
use super::figures::{figure, format_of};
use super::latency::latency_runs;
use super::lines::LineRuns;
use super::points::PointRuns;
use super::table::display_unit;
use crate::config::Delivery;
use crate::results::RunRecord;

/// The summary of a page.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The iso point's rate and window.
    pub point: String,
    pub items: Vec<SummaryItem>,
}

/// One finding of the summary.
#[derive(Debug, Serialize)]
pub struct SummaryItem {
    pub label: String,
    pub value: String,
    /// `interleaved`, `separately`, or empty.
    pub measured: String,
}

pub(super) fn summary(
    iso: Option<&PointRuns<'_>>,
    iso_label: String,
    costs: Vec<IsoCost>,
) -> Summary {
    let mut items = Vec::new();
    match iso {
        Some(point) => {
            let eos: Vec<&LineRuns<'_>> = point
                .lines
                .iter()
                .filter(|l| l.delivery == Delivery::ExactlyOnce)
                .collect();
            items.push(best(
                "best exactly-once line by added p50",
                &eos,
                "added_p50_ms",
                latency_runs,
            ));
            items.push(best(
                "best exactly-once line by CPU / record",
                &eos,
                "us_cpu_per_record",
                |l| l.batch.clone(),
            ));
        }
        None => items.push(SummaryItem {
            label: "iso point".to_string(),
            value: "no run at this point yet".to_string(),
            measured: String::new(),
        }),
    }
    for cost in costs {
        items.push(SummaryItem {
            label: format!("cost of exactly-once, {}", cost.product),
            value: cost.text,
            measured: cost.measured.to_string(),
        });
    }
    Summary {
        point: iso_label,
        items,
    }
}

/// The line with the lowest median of `name` over the runs `runs` picks.
fn best<'a>(
    label: &str,
    lines: &[&LineRuns<'a>],
    name: &str,
    runs: fn(&LineRuns<'a>) -> Vec<&'a RunRecord>,
) -> SummaryItem {
    let mut ranked: Vec<(&LineRuns<'_>, f64, Vec<&RunRecord>)> = lines
        .iter()
        .filter_map(|l| {
            let r = runs(l);
            figure(&r, name).map(|f| (*l, f.median, r))
        })
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some((line, value, _)) = ranked.first() else {
        return SummaryItem {
            label: label.to_string(),
            value: "no exactly-once line measured here yet".to_string(),
            measured: String::new(),
        };
    };
    let unit = line
        .batch
        .iter()
        .find_map(|r| r.metrics.get(name))
        .map(|m| display_unit(&m.unit))
        .unwrap_or_default();
    let batches: Vec<&str> = ranked
        .iter()
        .filter_map(|(_, _, r)| r.first().map(|r| r.batch_id.as_str()))
        .collect();
    let measured = if ranked.len() < 2 {
        "only line measured"
    } else if batches.iter().all(|b| *b == batches[0]) {
        "interleaved"
    } else {
        "separately"
    };
    SummaryItem {
        label: label.to_string(),
        value: format!("{}: {} {unit}", line.label(), format_of(name)(*value)),
        measured: measured.to_string(),
    }
}
