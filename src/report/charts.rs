//! Charts as the page shows them: the SVG, and the same figures as a table
//! the reader can open under it. One set per bench point, so the scales of
//! a set compare one point's runs.

use serde::Serialize;

use super::lines::LineRuns;
use super::svg::{self, Curve, XAxis};
use super::table::{fixed, Cell, Column, Row, Table};
use crate::results::{LatencySeries, Series};

/// A chart with its title and its figures as a table.
#[derive(Debug, Serialize)]
pub struct Chart {
    pub title: String,
    pub svg: String,
    pub data: Table,
}

/// The table under a chart: one row per x value, one column per curve.
pub(super) fn chart_data(
    title: &str,
    curves: &[Curve],
    x_label: &str,
    x_text: fn(f64) -> String,
    y_decimals: usize,
) -> Table {
    let mut columns = vec![Column::plain(x_label)];
    columns.extend(curves.iter().map(|c| Column::plain(&c.name)));
    let mut table = Table::new(title, columns);
    let mut xs: Vec<f64> = curves
        .iter()
        .flat_map(|c| c.points.iter().map(|p| p.0))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    for x in xs {
        let mut row = Row::new().set(x_label, Cell::text(x_text(x)));
        for curve in curves {
            // A gap in a curve (NaN) is an empty cell.
            if let Some((_, y)) = curve.points.iter().find(|p| p.0 == x && p.1.is_finite()) {
                row = row.set(&curve.name, Cell::text(fixed(*y, y_decimals)));
            }
        }
        table.push(row);
    }
    table
}

/// consumed/s, backlog and product CPU per second, then latency over time,
/// newest run of each line at one point.
pub(super) fn series_charts(lines: &[LineRuns<'_>]) -> Vec<Chart> {
    let mut charts = rate_charts(lines);
    charts.extend(latency_over_time_charts(lines));
    charts
}

/// p50 and p99 per interval of the window, on a log axis (a stall stands
/// orders of magnitude above the rest), newest run of each line at one
/// point. An interval in which no output arrived is a gap in its curve.
fn latency_over_time_charts(lines: &[LineRuns<'_>]) -> Vec<Chart> {
    type Pick = fn(&LatencySeries) -> &[Option<f64>];
    let kinds: [(&str, &str, Pick); 2] = [
        ("latency p50 over time", "p50 (ms, log)", |s| &s.p50_ms),
        ("latency p99 over time", "p99 (ms, log)", |s| &s.p99_ms),
    ];
    let x_label = "seconds from the window's start";
    let mut charts = Vec::new();
    for (title, y_label, pick) in kinds {
        let curves: Vec<Curve> = lines
            .iter()
            .filter_map(|line| {
                let series = line.batch.last()?.latency_series.as_ref()?;
                let points: Vec<(f64, f64)> = series
                    .t_s
                    .iter()
                    .copied()
                    .zip(pick(series).iter().map(|v| v.unwrap_or(f64::NAN)))
                    .collect();
                points.iter().any(|p| p.1.is_finite()).then(|| Curve {
                    name: line.name.clone(),
                    style: line.style,
                    points,
                })
            })
            .collect();
        if curves.is_empty() {
            continue;
        }
        charts.push(Chart {
            title: title.to_string(),
            svg: svg::log_line_chart(
                &curves,
                &XAxis::Linear {
                    label: x_label.to_string(),
                    marker: None,
                },
                y_label,
                svg::SMALL,
            ),
            data: chart_data(
                &format!("{title} (ms)"),
                &curves,
                x_label,
                |x| fixed(x, 1),
                1,
            ),
        });
    }
    charts
}

/// consumed/s, backlog and product CPU per second, newest run of each line
/// at one point.
fn rate_charts(lines: &[LineRuns<'_>]) -> Vec<Chart> {
    type Pick = fn(&Series) -> Vec<f64>;
    let kinds: [(&str, &str, usize, Pick); 3] = [
        ("consumed/s", "records/s", 0, |s| s.consumed_per_s.clone()),
        ("backlog", "records", 0, |s| {
            s.backlog.iter().map(|b| *b as f64).collect()
        }),
        ("product CPU", "% of one core", 1, |s| {
            s.product_cpu_pct.clone()
        }),
    ];
    let x_label = "seconds from the window's start";
    let mut charts = Vec::new();
    for (title, unit, decimals, pick) in kinds {
        let curves: Vec<Curve> = lines
            .iter()
            .filter_map(|line| {
                let series = line.batch.last()?.series.as_ref()?;
                let points: Vec<(f64, f64)> =
                    series.t_s.iter().copied().zip(pick(series)).collect();
                (!points.is_empty()).then(|| Curve {
                    name: line.name.clone(),
                    style: line.style,
                    points,
                })
            })
            .collect();
        if curves.is_empty() {
            continue;
        }
        let y_label = format!("{title} ({unit})");
        charts.push(Chart {
            title: title.to_string(),
            svg: svg::line_chart(
                &curves,
                &XAxis::Linear {
                    label: x_label.to_string(),
                    marker: Some(0.0),
                },
                &y_label,
                svg::SMALL,
            ),
            data: chart_data(&y_label, &curves, x_label, |x| fixed(x, 0), decimals),
        });
    }
    charts
}
