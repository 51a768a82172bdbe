//! The sweeps of a workload page, newest first. A rate sweep: added p50 and
//! p99 latency against the offered rate, one curve per line, a mark where
//! each line first fell short, and each line's maximum sustainable
//! throughput with its bracket (judged by `analysis::sweep`). A parallelism
//! sweep: consumed/s and rows/s per core against parallelism.

use std::collections::BTreeMap;

use serde::Serialize;

use super::charts::{chart_data, Chart};
use super::header::host_label;
use super::lines::is_chaos;
use super::svg::{self, Curve, Mark, SeriesStyle};
use super::table::{date_time, fixed, grouped, Cell, Column, Row, Table};
use crate::analysis::sweep::{bracket, rate_points, Outcome, RatePoint};
use crate::results::figure::{ADDED_P50_MS, ADDED_P99_MS, CONSUMED_PER_S, ROWS_PER_S_PER_CORE};
use crate::results::{Figure, RunRecord, SweepKind};
use crate::stats::median;

/// One sweep's section.
#[derive(Debug, Serialize)]
pub struct SweepSection {
    /// An id for links within the page.
    pub id: String,
    pub heading: String,
    /// The sweep's id, rounds, window, bound, host.
    pub detail: String,
    pub charts: Vec<Chart>,
    /// A rate sweep's maximum sustainable throughput per line; a
    /// parallelism sweep's figures per line and parallelism.
    pub table: Table,
}

/// One line of a sweep: its runs (no crash injected on purpose) and its
/// style on the page.
struct SweepLine<'a> {
    name: String,
    style: SeriesStyle,
    runs: Vec<&'a RunRecord>,
}

/// The sweeps among `records`, newest first; `order` gives each line its
/// place, so its style, on the page. `default_bound_ms` judges a sweep
/// whose records carry no bound.
pub(super) fn sweep_sections(
    order: &[String],
    records: &[RunRecord],
    default_bound_ms: f64,
) -> Vec<SweepSection> {
    let mut sweeps: BTreeMap<&str, Vec<&RunRecord>> = BTreeMap::new();
    for record in records.iter().filter(|r| !is_chaos(r)) {
        if let Some(tag) = &record.sweep {
            sweeps.entry(&tag.id).or_default().push(record);
        }
    }
    let mut sweeps: Vec<Vec<&RunRecord>> = sweeps.into_values().collect();
    // Newest first, by the sweep's first run.
    let started = |runs: &Vec<&RunRecord>| {
        runs.iter()
            .map(|r| r.started_at.clone())
            .min()
            .unwrap_or_default()
    };
    sweeps.sort_by_key(|runs| std::cmp::Reverse(started(runs)));
    sweeps
        .iter()
        .enumerate()
        .map(|(i, runs)| section(i, order, runs, default_bound_ms))
        .collect()
}

fn section(
    index: usize,
    order: &[String],
    runs: &[&RunRecord],
    default_bound_ms: f64,
) -> SweepSection {
    let first = runs[0];
    let tag = first.sweep.as_ref().expect("grouped by sweep");
    let lines: Vec<SweepLine<'_>> = order
        .iter()
        .enumerate()
        .filter_map(|(i, name)| {
            let line_runs: Vec<&RunRecord> =
                runs.iter().filter(|r| r.line == *name).copied().collect();
            (!line_runs.is_empty()).then(|| SweepLine {
                name: name.clone(),
                style: SeriesStyle::nth(i),
                runs: line_runs,
            })
        })
        .collect();
    let names: Vec<&str> = lines.iter().map(|l| l.name.as_str()).collect();
    let rounds = runs.iter().filter_map(|r| r.round).max().unwrap_or(1);
    let steps = runs
        .iter()
        .filter_map(|r| r.sweep.as_ref().and_then(|t| t.bisect_step))
        .max();
    let mut detail = format!(
        "sweep {} · {} round(s) · window {} s · bench version {} · broker {} · host {}",
        tag.id,
        rounds,
        first.config.window_s,
        first.bench_version,
        first.broker.shape(),
        host_label(&first.host)
    );
    let (heading, charts, table) = match tag.kind {
        SweepKind::Rate => {
            let bound = tag.p99_bound_ms.unwrap_or(default_bound_ms);
            detail.push_str(&format!(
                " · sustained: kept up with added p99 ≤ {} ms · {}",
                fixed(bound, 0),
                match steps {
                    Some(n) => format!("{n} bisection step(s) after the grid"),
                    None => "grid only, no bisection".to_string(),
                }
            ));
            (
                "Rate sweep",
                rate_charts(&lines, bound),
                mst_table(&lines, bound),
            )
        }
        SweepKind::Parallelism => {
            detail.push_str(&format!(" · rate {}/s", grouped(first.config.rate as i64)));
            (
                "Parallelism sweep",
                parallelism_charts(&lines),
                parallelism_table(&lines),
            )
        }
    };
    SweepSection {
        id: format!("sweep-{}", index + 1),
        heading: format!(
            "{heading} · {} · {} UTC",
            names.join(", "),
            date_time(&first.started_at)
        ),
        detail,
        charts,
        table,
    }
}

/// The median of `figure` over the runs of `runs` that have it.
fn median_of(runs: &[&RunRecord], figure: &Figure) -> Option<f64> {
    let values: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.metrics.get(figure.name).map(|m| m.value))
        .collect();
    median(&values)
}

/// A line's curve of `figure`, the median at each value of `x`.
fn curve_of(line: &SweepLine<'_>, x: fn(&RunRecord) -> f64, figure: &Figure) -> Option<Curve> {
    let mut by_x: BTreeMap<u64, (f64, Vec<&RunRecord>)> = BTreeMap::new();
    for run in &line.runs {
        let value = x(run);
        by_x.entry(value.to_bits())
            .or_insert_with(|| (value, Vec::new()))
            .1
            .push(run);
    }
    let mut points: Vec<(f64, f64)> = by_x
        .into_values()
        .filter_map(|(x, runs)| median_of(&runs, figure).map(|y| (x, y)))
        .collect();
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    (!points.is_empty()).then(|| Curve {
        name: line.name.clone(),
        style: line.style,
        points,
    })
}

/// Added p50 and p99 against the offered rate, a mark at each line's first
/// rate not sustained, and on the p99 chart the bound.
fn rate_charts(lines: &[SweepLine<'_>], bound: f64) -> Vec<Chart> {
    let x_label = "offered rate (records/s)";
    let stops: Vec<Mark> = lines
        .iter()
        .filter_map(|line| {
            let b = bracket(&rate_points(&line.runs, bound));
            b.not_sustained.map(|x| Mark::AtX {
                x: x as f64,
                style: line.style,
                label: format!("{} falls short", line.name),
            })
        })
        .collect();
    let mut charts = Vec::new();
    for (title, of) in [
        ("added p50 against offered rate", &ADDED_P50_MS),
        ("added p99 against offered rate", &ADDED_P99_MS),
    ] {
        let curves: Vec<Curve> = lines
            .iter()
            .filter_map(|l| curve_of(l, |r| r.config.rate as f64, of))
            .collect();
        if curves.is_empty() {
            continue;
        }
        let mut marks = stops.clone();
        if *of == ADDED_P99_MS {
            marks.push(Mark::AtY {
                y: bound,
                label: format!("bound {} ms", fixed(bound, 0)),
            });
        }
        let y_label = format!("{} (ms, log)", of.label);
        charts.push(Chart {
            title: title.to_string(),
            svg: svg::points_chart(&curves, &marks, x_label, &y_label, true, svg::WIDE),
            data: chart_data(
                &format!("{title} (ms)"),
                &curves,
                x_label,
                |x| grouped(x as i64),
                1,
            ),
        });
    }
    charts
}

/// Each line's maximum sustainable throughput, its bracket, and what the
/// sweep found at each rate.
fn mst_table(lines: &[SweepLine<'_>], bound: f64) -> Table {
    let mut table = Table::new(
        "Maximum sustainable throughput",
        vec![
            Column::plain("line"),
            Column {
                unit: "records/s".to_string(),
                direction: "higher is better".to_string(),
                ..Column::plain("maximum sustainable")
            },
            Column {
                unit: "records/s".to_string(),
                ..Column::plain("bracket")
            },
            Column::plain("first shortfall"),
            Column::plain("rates run"),
        ],
    );
    for line in lines {
        let points = rate_points(&line.runs, bound);
        let b = bracket(&points);
        let mst = match (b.sustained, b.not_sustained) {
            (Some(low), Some(_)) => Cell::text(grouped(low as i64)),
            (Some(low), None) => Cell::text(format!("≥ {}", grouped(low as i64)))
                .with_title("no rate of the sweep fell short: the bracket is open above"),
            (None, Some(high)) => Cell::text(format!("< {}", grouped(high as i64)))
                .with_title("no rate of the sweep was sustained: the bracket is open below"),
            (None, None) => Cell::not_applicable("no rate was judged"),
        };
        let end = |rate: Option<u64>| rate.map_or("open".to_string(), |r| grouped(r as i64));
        let shortfall = points
            .iter()
            .find(|p| Some(p.rate) == b.not_sustained)
            .and_then(|p| match &p.outcome {
                Outcome::NotSustained(short) => Some(short.describe(bound)),
                _ => None,
            })
            .unwrap_or_else(|| "none".to_string());
        let mut rates_cell = rates_cell(&points, bound);
        if !b.sustained_above.is_empty() {
            rates_cell.class = "warn".to_string();
        }
        table.push(
            Row::new()
                .set("line", Cell::text(&line.name))
                .set("maximum sustainable", mst)
                .set(
                    "bracket",
                    Cell::text(format!("{} – {}", end(b.sustained), end(b.not_sustained))),
                )
                .set("first shortfall", Cell::text(shortfall))
                .set("rates run", rates_cell),
        );
        if !b.sustained_above.is_empty() {
            table.notes.push(format!(
                "{} kept up again at {} records/s, above the first rate it fell short at: \
                 not monotone, so the figure stays below the first shortfall.",
                line.name,
                b.sustained_above
                    .iter()
                    .map(|r| grouped(*r as i64))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    table
}

/// The rates a line ran, each marked sustained (✓), not (✗) or not judged
/// (?), with each one's outcome in the title.
fn rates_cell(points: &[RatePoint], bound: f64) -> Cell {
    let rates: Vec<String> = points
        .iter()
        .map(|p| {
            let mark = match p.outcome {
                Outcome::Sustained { .. } => "✓",
                Outcome::NotSustained(_) => "✗",
                Outcome::Unjudged(_) => "?",
            };
            format!("{} {mark}", grouped(p.rate as i64))
        })
        .collect();
    let outcomes: Vec<String> = points
        .iter()
        .map(|p| {
            let what = match &p.outcome {
                Outcome::Sustained { p99_ms } => format!("sustained, added p99 {p99_ms:.1} ms"),
                Outcome::NotSustained(short) => short.describe(bound),
                Outcome::Unjudged(why) => format!("not judged: {why}"),
            };
            format!("{}/s ({} run(s)): {what}", p.rate, p.runs)
        })
        .collect();
    Cell::text(rates.join(" · ")).with_title(outcomes.join("; "))
}

/// consumed/s and rows/s per core against parallelism.
fn parallelism_charts(lines: &[SweepLine<'_>]) -> Vec<Chart> {
    let x_label = "parallelism";
    let mut charts = Vec::new();
    for (title, name, unit) in [
        (
            "capacity against parallelism",
            &CONSUMED_PER_S,
            "consumed/s (records/s)",
        ),
        (
            "efficiency against parallelism",
            &ROWS_PER_S_PER_CORE,
            "records per core-second",
        ),
    ] {
        let curves: Vec<Curve> = lines
            .iter()
            .filter_map(|l| curve_of(l, |r| f64::from(r.config.parallelism), name))
            .collect();
        if curves.is_empty() {
            continue;
        }
        charts.push(Chart {
            title: title.to_string(),
            svg: svg::points_chart(&curves, &[], x_label, unit, false, svg::WIDE),
            data: chart_data(
                &format!("{title} ({unit})"),
                &curves,
                x_label,
                |x| fixed(x, 0),
                0,
            ),
        });
    }
    charts
}

/// Each line's figures at each parallelism, with the regimes behind them.
fn parallelism_table(lines: &[SweepLine<'_>]) -> Table {
    let mut table = Table::new(
        "Capacity and efficiency by parallelism",
        vec![
            Column::plain("line"),
            Column::plain("parallelism"),
            Column {
                unit: "records/s".to_string(),
                direction: "higher is better".to_string(),
                ..Column::plain("consumed/s")
            },
            Column::plain("regime"),
            Column {
                unit: "records per core-second".to_string(),
                direction: "higher is better".to_string(),
                ..Column::plain("rows/s per core")
            },
            Column::plain("runs"),
        ],
    );
    for line in lines {
        let mut values: Vec<u32> = line.runs.iter().map(|r| r.config.parallelism).collect();
        values.sort_unstable();
        values.dedup();
        for value in values {
            let at: Vec<&RunRecord> = line
                .runs
                .iter()
                .filter(|r| r.config.parallelism == value)
                .copied()
                .collect();
            let figure = |of: &Figure| {
                median_of(&at, of).map_or_else(Cell::missing, |v| Cell::text(grouped(v as i64)))
            };
            let mut regimes: Vec<&str> = at
                .iter()
                .map(|r| r.regime.map_or("failed", |g| g.as_str()))
                .collect();
            regimes.sort_unstable();
            regimes.dedup();
            table.push(
                Row::new()
                    .set("line", Cell::text(&line.name))
                    .set("parallelism", Cell::text(value.to_string()))
                    .set("consumed/s", figure(&CONSUMED_PER_S))
                    .set("regime", Cell::text(regimes.join(", ")))
                    .set("rows/s per core", figure(&ROWS_PER_S_PER_CORE))
                    .set("runs", Cell::text(at.len().to_string())),
            );
        }
    }
    if table
        .rows
        .iter()
        .any(|row| row.iter().any(|c| c.text.contains("keep-up")))
    {
        table.notes.push(
            "Where a line kept up, consumed/s is the rate offered: its capacity is at least that. \
             A sweep at a rate above every line's capacity (or --rate 0) measures capacity itself."
                .to_string(),
        );
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Regime, SweepTag};

    fn run(line: &str, rate: u64, regime: Regime, p99: Option<f64>) -> RunRecord {
        let mut r = crate::report::fixture_record();
        r.line = line.into();
        r.config.rate = rate;
        r.regime = Some(regime);
        r.flags.clear();
        r.chaos = None;
        r.metrics.clear();
        r.not_applicable.clear();
        r.sweep = Some(SweepTag {
            id: "s1".into(),
            kind: SweepKind::Rate,
            p99_bound_ms: Some(100.0),
            bisect_step: None,
        });
        if let Some(p99) = p99 {
            for (figure, v) in [(&ADDED_P50_MS, p99 / 2.0), (&ADDED_P99_MS, p99)] {
                r.metrics.insert(figure.name.into(), figure.metric(v));
            }
        }
        r
    }

    #[test]
    fn a_rate_sweep_draws_a_curve_per_line_marks_its_stop_and_tables_its_bracket() {
        let records = vec![
            run("a", 1000, Regime::KeepUp, Some(10.0)),
            run("a", 2000, Regime::KeepUp, Some(40.0)),
            run("a", 4000, Regime::Saturated, None),
            run("b", 1000, Regime::KeepUp, Some(20.0)),
            run("b", 2000, Regime::KeepUp, Some(150.0)),
            run("b", 4000, Regime::Saturated, None),
        ];
        let order = vec!["a".to_string(), "b".to_string()];
        let sections = sweep_sections(&order, &records, 500.0);
        assert_eq!(sections.len(), 1);
        let s = &sections[0];
        assert!(s.heading.starts_with("Rate sweep · a, b"), "{}", s.heading);
        assert!(s.detail.contains("added p99 ≤ 100 ms"), "{}", s.detail);
        assert_eq!(s.charts.len(), 2);
        let p99 = &s.charts[1].svg;
        for line in ["a", "b"] {
            assert!(p99.contains(&format!("<title>{line}</title></polyline>")));
        }
        assert!(p99.contains("a falls short") && p99.contains("b falls short"));
        assert!(p99.contains("bound 100 ms"));
        let row = |line: &str| {
            s.table
                .rows
                .iter()
                .find(|r| r[0].text == line)
                .unwrap()
                .iter()
                .map(|c| c.text.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(row("a")[1..3], ["2,000", "2,000 – 4,000"]);
        assert_eq!(row("a")[3], "saturated");
        // b's p99 at 2000 is over the bound: it falls short there.
        assert_eq!(row("b")[1..3], ["1,000", "1,000 – 2,000"]);
        assert!(
            row("b")[3].contains("over the 100 ms bound"),
            "{:?}",
            row("b")
        );
        assert_eq!(row("b")[4], "1,000 ✓ · 2,000 ✗ · 4,000 ✗");
    }

    #[test]
    fn a_sweep_that_kept_up_everywhere_is_open_above() {
        let records = vec![
            run("a", 1000, Regime::KeepUp, Some(10.0)),
            run("a", 2000, Regime::KeepUp, Some(20.0)),
        ];
        let sections = sweep_sections(&["a".to_string()], &records, 500.0);
        let row = &sections[0].table.rows[0];
        assert_eq!(row[1].text, "≥ 2,000");
        assert_eq!(row[2].text, "2,000 – open");
        assert!(!sections[0].charts[0].svg.contains("falls short"));
    }

    #[test]
    fn runs_outside_a_sweep_make_no_section() {
        let mut plain = run("a", 1000, Regime::KeepUp, Some(10.0));
        plain.sweep = None;
        assert!(sweep_sections(&["a".to_string()], &[plain], 500.0).is_empty());
    }
}
