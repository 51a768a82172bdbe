//! The summary box at the top of a workload page: at the iso point, the
//! best exactly-once line by added p50 latency and by CPU per record, and
//! the cost of exactly-once of each product, each with its n and interval
//! and marked `interleaved` (the figures come from one batch) or
//! `separately`. Only figures of at least [`MIN_RUNS`] runs, none flagged
//! as unfit to lead, take part: a single run never heads the summary, and
//! when no figure qualifies the box says so.

use serde::Serialize;

use super::eos_cost::IsoCost;
use super::figures::{certainty, format_of, values};
use super::histograms::latency_runs;
use super::lines::{efficiency_runs, may_lead, LineRuns, NEVER_LEADS};
use super::points::PointRuns;
use super::table::display_unit;
use crate::config::Delivery;
use crate::results::figure::{ADDED_P50_MS, US_CPU_PER_RECORD};
use crate::results::{Figure, RunRecord};
use crate::stats::spread;

/// The fewest runs (rounds) a figure of the summary is the median of.
pub(super) const MIN_RUNS: usize = 3;

/// The summary of a page.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// The iso point's rate and window.
    pub point: String,
    pub items: Vec<SummaryItem>,
    /// Which figures take part, in words.
    pub rules: String,
}

/// One finding of the summary.
#[derive(Debug, Serialize)]
pub struct SummaryItem {
    pub label: String,
    pub value: String,
    /// Its n and interval (`n = 5 · 93.75 %: 27.1 – 31.0 ms`), or empty.
    pub certainty: String,
    /// `interleaved`, `separately`, or empty.
    pub measured: String,
}

impl SummaryItem {
    fn none(label: &str, value: String) -> SummaryItem {
        SummaryItem {
            label: label.to_string(),
            value,
            certainty: String::new(),
            measured: String::new(),
        }
    }
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
            let by_design = point.point.settings.beyond_capacity_by_design();
            items.push(best(
                "best exactly-once line by added p50",
                &eos,
                &ADDED_P50_MS,
                &|l| latency_runs(l),
            ));
            items.push(best(
                "best exactly-once line by CPU / record",
                &eos,
                &US_CPU_PER_RECORD,
                &|l| efficiency_runs(&l.batch, by_design),
            ));
        }
        None => items.push(SummaryItem::none(
            "iso point",
            "no run at this point yet".to_string(),
        )),
    }
    let (qualified, fewer): (Vec<IsoCost>, Vec<IsoCost>) = costs
        .into_iter()
        .partition(|c| c.n >= MIN_RUNS && c.may_lead);
    for cost in qualified {
        items.push(SummaryItem {
            label: format!("cost of exactly-once, {}", cost.product),
            value: cost.text,
            certainty: cost.certainty,
            measured: cost.measured.to_string(),
        });
    }
    if !fewer.is_empty() {
        let products: Vec<String> = fewer
            .iter()
            .map(|c| format!("{} ({})", c.product, c.certainty))
            .collect();
        items.push(SummaryItem::none(
            "cost of exactly-once",
            format!(
                "not shown for {}: fewer than {MIN_RUNS} runs of each line, or a flagged run",
                products.join(", ")
            ),
        ));
    }
    Summary {
        point: iso_label,
        items,
        rules: format!(
            "Only figures of {MIN_RUNS} runs or more take part, and none with a run flagged {}. \
             In brackets: n, the runs (or paired rounds) a figure is the median of, and the \
             interval of that median with its coverage.",
            NEVER_LEADS.join(", ")
        ),
    }
}

/// The line with the lowest median of `name` over the runs `runs` picks,
/// among lines with at least [`MIN_RUNS`] such runs and no flag that keeps
/// them from leading.
fn best<'a>(
    label: &str,
    lines: &[&LineRuns<'a>],
    figure: &Figure,
    runs: &dyn Fn(&LineRuns<'a>) -> Vec<&'a RunRecord>,
) -> SummaryItem {
    let measured_lines: Vec<(&LineRuns<'_>, Vec<&RunRecord>, Vec<f64>)> = lines
        .iter()
        .map(|l| {
            let r = runs(l);
            let v = values(&r, figure);
            (*l, r, v)
        })
        .filter(|(_, _, v)| !v.is_empty())
        .collect();
    let mut ranked: Vec<(&LineRuns<'_>, f64, &[&RunRecord], &[f64])> = measured_lines
        .iter()
        .filter(|(_, r, v)| v.len() >= MIN_RUNS && may_lead(r))
        .filter_map(|(l, r, v)| Some((*l, spread(v)?.median, r.as_slice(), v.as_slice())))
        .collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    let Some((line, value, _, line_values)) = ranked.first() else {
        let value = if measured_lines.is_empty() {
            "no exactly-once line measured here yet".to_string()
        } else {
            let lines: Vec<String> = measured_lines
                .iter()
                .map(|(l, r, v)| {
                    let n = v.len();
                    let why = if n < MIN_RUNS {
                        format!("{n} run{}", if n == 1 { "" } else { "s" })
                    } else if !may_lead(r) {
                        "flagged".to_string()
                    } else {
                        format!("{n} runs")
                    };
                    format!("{} {why}", l.name)
                })
                .collect();
            format!(
                "no exactly-once line measured with {MIN_RUNS} runs or more here yet ({})",
                lines.join(", ")
            )
        };
        return SummaryItem::none(label, value);
    };
    let unit = line
        .batch
        .iter()
        .find_map(|r| r.metrics.get(figure.name))
        .map(|m| display_unit(&m.unit))
        .unwrap_or_default();
    let batches: Vec<&str> = ranked
        .iter()
        .filter_map(|(_, _, r, _)| r.first().map(|r| r.batch_id.as_str()))
        .collect();
    let measured = if ranked.len() < 2 {
        "only line measured"
    } else if batches.iter().all(|b| *b == batches[0]) {
        "interleaved"
    } else {
        "separately"
    };
    let format = format_of(figure);
    SummaryItem {
        label: label.to_string(),
        value: format!("{}: {} {unit}", line.label(), format(*value)),
        certainty: format!("{} {unit}", certainty(line_values, format)),
        measured: measured.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::lines::group_lines;
    use crate::report::points::{BenchPoint, PointRole};
    use crate::results::Metric;

    fn eos_run(round: u32, batch: &str, added_p50: f64) -> RunRecord {
        let mut r = crate::report::fixture_record();
        r.line = "rustpipe-eos".into();
        r.version = "0.1.0".into();
        r.delivery = Delivery::ExactlyOnce;
        r.flags.clear();
        r.batch_id = batch.into();
        r.round = Some(round);
        r.started_at = format!("2026-11-30T07:0{round}:00Z");
        r.metrics.insert(
            ADDED_P50_MS.name.into(),
            Metric::new(added_p50, "ms", crate::results::Better::Lower),
        );
        r
    }

    fn summary_of(records: &[RunRecord]) -> Summary {
        let all: Vec<&RunRecord> = records.iter().collect();
        let point = PointRuns {
            point: BenchPoint::from_record(&records[0]),
            name: "iso".into(),
            role: PointRole::DefaultAndIso,
            records: all.clone(),
            lines: group_lines(
                &crate::report::repo_suite(),
                &["rustpipe-eos".to_string()],
                &all,
            ),
        };
        summary(Some(&point), "iso".into(), Vec::new())
    }

    #[test]
    fn three_runs_head_the_summary_with_their_n_and_interval() {
        let runs: Vec<RunRecord> = [30.0, 28.0, 31.0]
            .iter()
            .zip(1..)
            .map(|(v, i)| eos_run(i, "b", *v))
            .collect();
        let item = &summary_of(&runs).items[0];
        assert_eq!(item.value, "rustpipe-eos 0.1.0: 30.0 ms");
        assert_eq!(item.certainty, "n = 3 · 75 %: 28.0 – 31.0 ms");
    }

    #[test]
    fn a_single_run_never_heads_the_summary() {
        let item = &summary_of(&[eos_run(1, "b", 30.0)]).items[0];
        assert_eq!(
            item.value,
            "no exactly-once line measured with 3 runs or more here yet (rustpipe-eos 1 run)"
        );
        assert!(item.certainty.is_empty() && item.measured.is_empty());
    }

    #[test]
    fn a_flagged_batch_never_heads_the_summary() {
        let mut runs: Vec<RunRecord> = (1..=3).map(|i| eos_run(i, "b", 30.0)).collect();
        runs[1].flags.push(crate::results::flag::NOT_STEADY.into());
        let item = &summary_of(&runs).items[0];
        assert!(
            item.value.contains("(rustpipe-eos flagged)"),
            "{}",
            item.value
        );
    }
}
