//! The releases section: release checks at one bench point, each the paired
//! change of one version of a line against another measured in the same
//! batch (`suite regress`: baseline entry 1, current entry 2, their order
//! rotating round by round), beside the noise floor: the paired change of
//! one version against itself (an A/A check) on the same host. Versions
//! measured in different batches or at different points are never compared.

use super::lines::comparable;
use super::points::PointRuns;
use super::table::{date_time, signed_percent, Cell, Column, Row, Table};
use crate::analysis::paired::{self, PairedFigure, RoundPair, RunFigures, Verdict};
use crate::results::figure::{
    ADDED_P50_MS, ADDED_P99_MS, CONSUMED_PER_S, DRAIN_CAPACITY_PER_S, US_CPU_PER_RECORD,
};
use crate::results::{Better, Regime, RunRecord};

/// A change worse than this share at the median, in every round, is
/// marked: `suite regress`'s default threshold.
const WARN_BEYOND: f64 = 0.05;

/// A ratio within 1 ± this share is a tie in the sign counts, as in
/// `suite regress` at bench.yaml's default tie band.
const TIE_BAND: f64 = 0.01;

/// The paired figures of a check, each with its column.
const FIGURES: [(Figure, &str); 4] = [
    (Figure::Metric(ADDED_P50_MS.name), "Δ added p50"),
    (Figure::Metric(ADDED_P99_MS.name), "Δ added p99"),
    (Figure::Metric(US_CPU_PER_RECORD.name), "Δ CPU / record"),
    (Figure::Capacity, "Δ capacity"),
];

/// A figure of a check: a recorded metric, or the capacity, which a run
/// measures only when it is fed beyond it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Figure {
    Metric(&'static str),
    Capacity,
}

/// Two entries of one line in one batch: a release check (two versions) or
/// an A/A check (one version twice). Ratios are current / baseline.
struct Check<'a> {
    line: &'a str,
    batch_id: &'a str,
    /// The newest run's start.
    started_at: &'a str,
    baseline: &'a str,
    current: &'a str,
    /// Rounds with a run of both entries; a figure may use fewer (see
    /// [`compare_where_measured`]).
    rounds: usize,
    figures: Vec<PairedFigure>,
}

impl Check<'_> {
    fn is_a_a(&self) -> bool {
        self.baseline == self.current
    }

    fn figure(&self, figure: Figure) -> Option<&PairedFigure> {
        self.figures.iter().find(|f| match figure {
            Figure::Metric(name) => f.metric == name,
            Figure::Capacity => CAPACITY_METRICS.contains(&f.metric),
        })
    }
}

/// Where a capacity comes from: a drain run's read capacity, or what a
/// saturated run consumed.
const CAPACITY_METRICS: [&str; 2] = [DRAIN_CAPACITY_PER_S.name, CONSUMED_PER_S.name];

/// Every check among `records` (one point's runs): per line and batch, the
/// first entry against each later one.
fn checks<'a>(records: &[&'a RunRecord]) -> Vec<Check<'a>> {
    let mut runs: Vec<&RunRecord> = records
        .iter()
        .copied()
        .filter(|r| comparable(r) && r.entry.is_some() && r.round.is_some())
        .collect();
    runs.sort_by(|a, b| (&a.line, &a.batch_id, a.entry).cmp(&(&b.line, &b.batch_id, b.entry)));
    let mut found = Vec::new();
    for group in runs.chunk_by(|a, b| a.line == b.line && a.batch_id == b.batch_id) {
        let mut entries: Vec<u32> = group.iter().filter_map(|r| r.entry).collect();
        entries.dedup();
        let Some((&first, later)) = entries.split_first() else {
            continue;
        };
        let of = |entry: u32| -> Vec<&RunRecord> {
            group
                .iter()
                .copied()
                .filter(|r| r.entry == Some(entry))
                .collect()
        };
        let baseline = of(first);
        for &entry in later {
            found.push(check(&baseline, &of(entry)));
        }
    }
    found.sort_by(|a, b| {
        (a.line, b.started_at)
            .cmp(&(b.line, a.started_at))
            .then(a.batch_id.cmp(b.batch_id))
    });
    found
}

/// The paired check of `current`'s runs against `baseline`'s (both of one
/// line and batch, at least one run each).
fn check<'a>(baseline: &[&'a RunRecord], current: &[&'a RunRecord]) -> Check<'a> {
    let figures_of = |runs: &[&'a RunRecord]| -> Vec<RunFigures<'a>> {
        runs.iter()
            .filter_map(|r| RunFigures::from_record(r))
            .collect()
    };
    let (a, b) = (figures_of(baseline), figures_of(current));
    let pairing = paired::pair_by_round(&a, &b);
    let both = || baseline.iter().chain(current);
    let capacity = if both().all(|r| r.metrics.contains_key(DRAIN_CAPACITY_PER_S.name)) {
        Some(DRAIN_CAPACITY_PER_S.name)
    } else if both().all(|r| r.regime == Some(Regime::Saturated)) {
        Some(CONSUMED_PER_S.name)
    } else {
        None
    };
    let metrics = FIGURES.iter().filter_map(|(figure, _)| match figure {
        Figure::Metric(name) => Some(*name),
        Figure::Capacity => capacity,
    });
    Check {
        line: &baseline[0].line,
        batch_id: &baseline[0].batch_id,
        started_at: both().map(|r| r.started_at.as_str()).max().unwrap_or(""),
        baseline: &baseline[0].version,
        current: &current[0].version,
        rounds: pairing.pairs.len(),
        figures: metrics
            .map(|metric| compare_where_measured(&pairing.pairs, metric))
            .collect(),
    }
}

/// `metric` compared over the rounds where both runs measured it: a run
/// whose latency was withheld (its gendata or probe fell behind) leaves its
/// round out of the latency figures only, as an unpaired round would be.
/// With no such round, the comparison says why.
fn compare_where_measured(pairs: &[RoundPair<'_>], metric: &'static str) -> PairedFigure {
    let measured: Vec<RoundPair<'_>> = pairs
        .iter()
        .filter(|p| p.a.metrics.contains_key(metric) && p.b.metrics.contains_key(metric))
        .copied()
        .collect();
    if measured.is_empty() {
        paired::compare_figure(pairs, metric, TIE_BAND)
    } else {
        paired::compare_figure(&measured, metric, TIE_BAND)
    }
}

/// The spread of a figure's per-round ratios in A/A checks: the least and
/// the greatest, and the checks they come from.
#[derive(Debug, Clone, PartialEq)]
struct Noise {
    low: f64,
    high: f64,
    from: String,
}

/// The noise floor a check of `line` is read against, for `figure`: the
/// line's own newest A/A check at the point, else the widest spread of
/// every A/A check there; None without one.
fn noise_for(line: &str, figure: Figure, a_a: &[&Check<'_>]) -> Option<Noise> {
    let spread = |check: &Check<'_>| -> Option<(f64, f64)> {
        let rounds = &check.figure(figure)?.rounds;
        let low = rounds.iter().map(|r| r.ratio).reduce(f64::min)?;
        let high = rounds.iter().map(|r| r.ratio).reduce(f64::max)?;
        Some((low, high))
    };
    let own = a_a.iter().find(|c| c.line == line);
    let chosen: Vec<&&Check<'_>> = match own {
        Some(check) => vec![check],
        None => a_a.iter().collect(),
    };
    let spreads: Vec<(&str, (f64, f64))> = chosen
        .iter()
        .filter_map(|c| spread(c).map(|s| (c.line, s)))
        .collect();
    let low = spreads.iter().map(|(_, s)| s.0).reduce(f64::min)?;
    let high = spreads.iter().map(|(_, s)| s.1).reduce(f64::max)?;
    let mut from: Vec<&str> = spreads.iter().map(|(l, _)| *l).collect();
    from.dedup();
    Some(Noise {
        low,
        high,
        from: from.join(", "),
    })
}

/// A paired change in a cell: the median change with its interval, ⚠ when
/// it is worse in every round and beyond [`WARN_BEYOND`], "within noise"
/// when `noise` spans it.
fn change_cell(figure: Option<&PairedFigure>, noise: Option<&Noise>) -> Cell {
    let Some(figure) = figure else {
        return Cell::text("kept up").with_class("na").with_title(
            "a run that kept up consumed what it was offered, which says nothing of its \
             capacity: capacity is compared on drain or saturated runs",
        );
    };
    let ratios = match &figure.verdict {
        Verdict::NotComparable { reason } => return Cell::not_applicable(reason),
        Verdict::Separable { ratios, .. } | Verdict::NotSeparable { ratios } => ratios,
    };
    let change = ratios.median - 1.0;
    let interval = match ratios.interval {
        Some(i) => format!(
            " [{} … {}]",
            signed_percent(i.low - 1.0),
            signed_percent(i.high - 1.0)
        ),
        None => String::new(),
    };
    let better = figure_better(figure.metric);
    let worse_in_every_round = ratios.n > 0 && ratios.sign.worse == ratios.n;
    let beyond = match better {
        Better::Lower => change > WARN_BEYOND,
        Better::Higher => change < -WARN_BEYOND,
    };
    let within_noise = noise.is_some_and(|n| n.low <= ratios.median && ratios.median <= n.high);
    let mut text = format!("{}{interval}", signed_percent(change));
    let mut title = format!(
        "median of {} paired round(s); worse in {}, better in {}, tied in {} (within ±{:.0} %); \
         sign test p {:.3}",
        ratios.n,
        ratios.sign.worse,
        ratios.sign.better,
        ratios.sign.ties,
        TIE_BAND * 100.0,
        ratios.sign.p
    );
    if let Some(i) = ratios.interval {
        title.push_str(&format!(
            "; the interval holds the median {:.2} % of the time",
            i.coverage * 100.0
        ));
    }
    if let Some(n) = noise {
        title.push_str(&format!(
            "; A/A spread of {}: {} … {}",
            n.from,
            signed_percent(n.low - 1.0),
            signed_percent(n.high - 1.0)
        ));
    }
    if within_noise {
        text.push_str(" · within noise");
    }
    let cell = if worse_in_every_round && beyond {
        text.insert_str(0, "⚠ ");
        Cell::text(text).with_class("warn")
    } else {
        Cell::text(text)
    };
    cell.with_title(title)
}

/// Which way `metric` is better: the one paired figure whose higher value
/// is better is what was consumed.
fn figure_better(metric: &str) -> Better {
    if CAPACITY_METRICS.contains(&metric) {
        Better::Higher
    } else {
        Better::Lower
    }
}

fn columns(version: &str) -> Vec<Column> {
    let mut columns = vec![
        Column::plain("line"),
        Column::plain("point"),
        Column::plain(version),
        Column::utc("run"),
        Column::plain("rounds"),
    ];
    columns.extend(FIGURES.iter().map(|(_, label)| Column::plain(label)));
    columns
}

/// The release checks and the A/A checks of every point, as two tables:
/// releases (newest first per line) and the noise floor.
pub(super) fn releases_tables(points: &[PointRuns<'_>]) -> (Table, Table) {
    let mut releases = Table::new("Releases", columns("baseline → current"));
    releases.empty =
        "no release check recorded yet: `suite regress LINE WORKLOAD --baseline VERSION`".into();
    let mut noise_floor = Table::new("Noise floor (A/A)", columns("version"));
    noise_floor.empty =
        "no A/A check recorded yet: `suite regress LINE WORKLOAD --baseline <its current version>`"
            .into();
    for point in points {
        let found = checks(&point.records);
        let a_a: Vec<&Check<'_>> = found.iter().filter(|c| c.is_a_a()).collect();
        for check in &found {
            let (table, version) = if check.is_a_a() {
                (&mut noise_floor, check.current.to_string())
            } else {
                (
                    &mut releases,
                    format!("{} → {}", check.baseline, check.current),
                )
            };
            let mut row = Row::new()
                .set("line", Cell::text(check.line))
                .set("point", Cell::text(&point.name))
                .set(
                    if check.is_a_a() {
                        "version"
                    } else {
                        "baseline → current"
                    },
                    Cell::text(version).with_title(format!("batch {}", check.batch_id)),
                )
                .set("run", Cell::text(date_time(check.started_at)))
                .set("rounds", Cell::text(check.rounds.to_string()));
            for (figure, label) in FIGURES {
                let noise = (!check.is_a_a())
                    .then(|| noise_for(check.line, figure, &a_a))
                    .flatten();
                row = row.set(label, change_cell(check.figure(figure), noise.as_ref()));
            }
            table.push(row);
        }
    }
    (releases, noise_floor)
}

#[cfg(test)]
mod tests;
