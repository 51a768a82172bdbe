//! The cost of exactly-once: each exactly-once line against the
//! at-least-once line of the same product (by the records' product and
//! delivery mode, never by name), at each bench point where both have runs.
//! A pair measured only at different points is "not comparable", without a
//! number; a pair whose two batches are one batch is `interleaved`, and its
//! changes are the median of the per-round ratios with their interval and
//! sign test. Efficiency is compared only where both lines kept up (or were
//! fed beyond capacity by design), as in the throughput tables.

use super::figures::{
    coverage_for, coverage_of_n, coverage_text, figure, format_of, metric_cell, metric_column,
    SINGLE_RUN,
};
use super::lines::{efficiency_runs, may_lead, LineRuns};
use super::points::PointRuns;
use super::table::{joined, signed_percent, Cell, Column, Row, Table};
use crate::analysis::paired::{self, RatioSummary, RoundPair, RunFigures, Verdict};
use crate::config::{Delivery, Suite};
use crate::results::figure::{
    CONSUMED_PER_S, LATENCY_P50_MS, ROWS_PER_S_PER_CORE, US_CPU_PER_RECORD,
};
use crate::results::{Figure, Regime, RunConfig, RunRecord};

/// The cost of exactly-once of one product at the iso point, for the summary.
pub(super) struct IsoCost {
    pub(super) product: String,
    /// The change in rows/s per core and CPU per record, in words.
    pub(super) text: String,
    /// Its n and interval: `5 paired rounds · 93.75 %: -12.0 % – -9.1 %`.
    pub(super) certainty: String,
    /// `interleaved` or `separately`.
    pub(super) measured: &'static str,
    /// The fewest runs behind the figures: the summary wants 3.
    pub(super) n: usize,
    /// Whether the figures may head the summary (no flag of
    /// [`super::lines::NEVER_LEADS`]).
    pub(super) may_lead: bool,
}

/// An exactly-once line and the at-least-once line it is set against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LinePair {
    pub(super) product: String,
    pub(super) eos: String,
    pub(super) alos: String,
}

/// Pairs each exactly-once line with the first at-least-once line of the
/// same product; `lines` are (product, line, delivery) in page order.
pub(super) fn pair_lines(lines: &[(String, String, Delivery)]) -> Vec<LinePair> {
    let mut pairs = Vec::new();
    for (product, eos, _) in lines.iter().filter(|l| l.2 == Delivery::ExactlyOnce) {
        let alos = lines
            .iter()
            .find(|(p, _, d)| p == product && *d == Delivery::AtLeastOnce);
        if let Some((_, alos, _)) = alos {
            let pair = LinePair {
                product: product.clone(),
                eos: eos.clone(),
                alos: alos.clone(),
            };
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    pairs
}

/// Whether two batches ran as one: `interleaved`, else `separately`.
pub(super) fn measured(alos: &[&RunRecord], eos: &[&RunRecord]) -> &'static str {
    match (alos.first(), eos.first()) {
        (Some(a), Some(e)) if a.batch_id == e.batch_id => "interleaved",
        _ => "separately",
    }
}

const COLUMNS: [&str; 10] = [
    "line",
    "vs",
    "point",
    "regime",
    "n",
    "rows/s per core",
    "CPU / record",
    "consumed/s",
    "latency p50",
    "measured",
];

/// The table, and the iso point's costs for the summary.
pub(super) fn eos_cost(
    suite: &Suite,
    order: &[String],
    records: &[RunRecord],
    points: &[PointRuns<'_>],
    page_lines: &[LineRuns<'_>],
) -> (Table, Vec<IsoCost>) {
    let all: Vec<&RunRecord> = records.iter().collect();
    let mut table = Table::new("Cost of exactly-once", cost_columns(&all));
    let mut iso_costs = Vec::new();
    let tie_band = suite.bench.tolerances.tie_band;
    let described = described_lines(suite, order, page_lines);
    let pairs = pair_lines(&described);
    for (product, name, delivery) in &described {
        let paired = pairs.iter().any(|p| &p.product == product);
        if !paired && page_lines.iter().any(|l| &l.name == name) {
            let missing = match delivery {
                Delivery::ExactlyOnce => "at-least-once",
                Delivery::AtLeastOnce => "exactly-once",
            };
            table.notes.push(format!(
                "{name}: product {product} has no {missing} line to pair with."
            ));
        }
    }
    for pair in &pairs {
        let mut at_points = 0;
        for point in points {
            let find = |name: &str| {
                point
                    .lines
                    .iter()
                    .find(|l| l.name == name && !l.batch.is_empty())
            };
            let (Some(eos), Some(alos)) = (find(&pair.eos), find(&pair.alos)) else {
                continue;
            };
            at_points += 1;
            let costs = PairCosts::at(point, alos, eos, tie_band);
            if point.is_iso() {
                iso_costs.extend(costs.iso_cost(pair));
            }
            table.push(costs.row(pair, point.name.clone()));
        }
        if at_points == 0 {
            table.push(unpaired_row(pair, points, page_lines));
        }
    }
    (table, iso_costs)
}

/// The columns, each figure's unit from the records.
fn cost_columns(all: &[&RunRecord]) -> Vec<Column> {
    COLUMNS
        .iter()
        .map(|label| match *label {
            "rows/s per core" | "consumed/s" => Column {
                unit: "change".to_string(),
                ..metric_column(all, label, &ROWS_PER_S_PER_CORE)
            },
            "CPU / record" => metric_column(all, label, &US_CPU_PER_RECORD),
            "latency p50" => metric_column(all, label, &LATENCY_P50_MS),
            "n" => Column {
                unit: "runs".to_string(),
                ..Column::plain(label)
            },
            _ => Column::plain(label),
        })
        .collect()
}

/// Lines in page order, each with its product and delivery: from the
/// records where a line ran, else from its product.yaml.
fn described_lines(
    suite: &Suite,
    order: &[String],
    page_lines: &[LineRuns<'_>],
) -> Vec<(String, String, Delivery)> {
    order
        .iter()
        .filter_map(|name| {
            if let Some(line) = page_lines.iter().find(|l| l.name == *name) {
                return Some((line.product.clone(), line.name.clone(), line.delivery));
            }
            suite
                .lines()
                .find(|l| l.line.name == *name)
                .map(|l| (l.product.name.clone(), l.line.name.clone(), l.line.delivery))
        })
        .collect()
}

/// The row of a pair measured at no common point: where each line was
/// measured, or that the pair has no runs yet.
fn unpaired_row(pair: &LinePair, points: &[PointRuns<'_>], page_lines: &[LineRuns<'_>]) -> Row {
    let newest = |name: &str| {
        page_lines
            .iter()
            .find(|l| l.name == name && !l.batch.is_empty())
    };
    let row = Row::new()
        .set("line", Cell::text(&pair.eos))
        .set("vs", Cell::text(&pair.alos));
    let (Some(eos), Some(alos)) = (newest(&pair.eos), newest(&pair.alos)) else {
        return row.set("point", Cell::text("no pair yet").with_class("na"));
    };
    // The point's name: its settings that differ, and its host when the
    // page has several.
    let at = |l: &LineRuns<'_>| {
        l.batch
            .last()
            .and_then(|r| points.iter().find(|p| p.point.holds(r)))
            .map(|p| p.name.clone())
            .unwrap_or_default()
    };
    let why = format!(
        "measured at different points: {} at {}, {} at {}",
        eos.name,
        at(eos),
        alos.name,
        at(alos)
    );
    let not_comparable = || {
        Cell::text("not comparable")
            .with_class("na")
            .with_title(why.clone())
    };
    row.set(
        "point",
        Cell::text("different points").with_title(why.clone()),
    )
    .set("regime", not_comparable())
    .set("n", Cell::missing())
    .set("rows/s per core", not_comparable())
    .set("CPU / record", not_comparable())
    .set("consumed/s", not_comparable())
    .set("latency p50", not_comparable())
    .set("measured", Cell::text(measured(&alos.batch, &eos.batch)))
}

/// How the runs of a pair are set against each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Matched {
    /// Round by round within one batch: this many paired rounds.
    Rounds(usize),
    /// The median of each line's batch: this many runs at-least-once, and
    /// exactly-once.
    Medians(usize, usize),
}

impl Matched {
    /// Rounds when the runs are one batch with two or more rounds of both.
    fn of(alos: &[&RunRecord], eos: &[&RunRecord]) -> Matched {
        match round_pairs(alos, eos) {
            Some(pairs) if measured(alos, eos) == "interleaved" && pairs.len() >= 2 => {
                Matched::Rounds(pairs.len())
            }
            _ => Matched::Medians(alos.len(), eos.len()),
        }
    }

    /// The fewest runs behind a figure.
    fn n(self) -> usize {
        match self {
            Matched::Rounds(n) => n,
            Matched::Medians(a, e) => a.min(e),
        }
    }

    /// `5 paired rounds`, `3 → 1 runs`.
    fn text(self) -> String {
        match self {
            Matched::Rounds(n) => format!("{n} paired rounds"),
            Matched::Medians(a, e) => format!("{a} → {e} runs"),
        }
    }

    fn cell(self) -> Cell {
        let cell = Cell::text(self.text());
        match self {
            Matched::Rounds(n) => Cell {
                interval: coverage_of_n(n),
                ..cell.with_title(
                    "one interleaved batch: each change is the median of the per-round ratios",
                )
            },
            Matched::Medians(..) if self.n() == 1 => cell
                .with_class(SINGLE_RUN)
                .with_title("a single run on one side at least: the change is of single runs"),
            Matched::Medians(..) => cell.with_title(
                "runs at-least-once → exactly-once: each change is the ratio of the two medians",
            ),
        }
    }
}

/// The runs of one pair at one point, and what they compare on.
struct PairCosts<'p, 'a> {
    alos: &'p LineRuns<'a>,
    eos: &'p LineRuns<'a>,
    /// The runs efficiency is compared on (kept up, or fed beyond capacity
    /// by design), when both lines have some.
    efficiency: Option<(Vec<&'a RunRecord>, Vec<&'a RunRecord>)>,
    tie_band: f64,
}

impl<'p, 'a> PairCosts<'p, 'a> {
    fn at(
        point: &PointRuns<'_>,
        alos: &'p LineRuns<'a>,
        eos: &'p LineRuns<'a>,
        tie_band: f64,
    ) -> PairCosts<'p, 'a> {
        let by_design = point.point.settings.beyond_capacity_by_design();
        let (a, e) = (
            efficiency_runs(&alos.batch, by_design),
            efficiency_runs(&eos.batch, by_design),
        );
        PairCosts {
            alos,
            eos,
            efficiency: (!a.is_empty() && !e.is_empty()).then_some((a, e)),
            tie_band,
        }
    }

    /// Why efficiency is not compared: the regimes of the lines without
    /// runs that kept up.
    fn no_efficiency(&self) -> Cell {
        let regimes: Vec<String> = [self.alos, self.eos]
            .iter()
            .filter_map(|l| {
                let regime = l.regime().map_or("mixed", Regime::as_str);
                (regime != "keep-up").then(|| format!("{} was {regime}", l.name))
            })
            .collect();
        Cell::text("—").with_class("na").with_title(format!(
            "efficiency only when both kept up: {}",
            regimes.join(", ")
        ))
    }

    /// The summary's finding at the iso point: None when efficiency is not
    /// compared.
    fn iso_cost(&self, pair: &LinePair) -> Option<IsoCost> {
        let (a, e) = self.efficiency.as_ref()?;
        let matched = Matched::of(a, e);
        let rows = change(a, e, &ROWS_PER_S_PER_CORE, self.tie_band);
        let cpu = transition(a, e, &US_CPU_PER_RECORD);
        let certainty = match matched {
            Matched::Rounds(n) if !rows.interval.is_empty() => format!(
                "{} · {}: {}",
                matched.text(),
                coverage_for(n).map_or_else(String::new, coverage_text),
                rows.interval
            ),
            Matched::Rounds(_) => matched.text(),
            Matched::Medians(..) => format!("{}, no paired interval", matched.text()),
        };
        Some(IsoCost {
            // An exactly-once line with a qualifier is named with it.
            product: match &self.eos.qualifier {
                Some(qualifier) => format!("{} ({qualifier})", pair.product),
                None => pair.product.clone(),
            },
            text: format!(
                "rows/s per core {}, CPU / record {} µs",
                rows.text, cpu.text
            ),
            certainty,
            measured: measured(a, e),
            n: matched.n(),
            may_lead: may_lead(a) && may_lead(e),
        })
    }

    /// The row of the pair at one point.
    fn row(&self, pair: &LinePair, point: String) -> Row {
        let (alos, eos) = (self.alos, self.eos);
        let (a, e) = (&alos.batch[..], &eos.batch[..]);
        let regime = |l: &LineRuns<'_>| l.regime().map_or("mixed", Regime::as_str);
        let both = |r: Regime| alos.regime() == Some(r) && eos.regime() == Some(r);
        let consumed = if both(Regime::Saturated) {
            change(a, e, &CONSUMED_PER_S, self.tie_band)
        } else {
            Cell::text("—").with_class("na").with_title(
                "a change in capacity only when both were saturated; otherwise it is the offered rate",
            )
        };
        let latency = if both(Regime::KeepUp) {
            transition(a, e, &LATENCY_P50_MS)
        } else {
            Cell::text("—")
                .with_class("na")
                .with_title("latency only when both kept up")
        };
        let (n, rows, cpu) = match &self.efficiency {
            Some((ea, ee)) => (
                Matched::of(ea, ee).cell(),
                change(ea, ee, &ROWS_PER_S_PER_CORE, self.tie_band),
                transition(ea, ee, &US_CPU_PER_RECORD),
            ),
            None => (
                Matched::of(a, e).cell(),
                self.no_efficiency(),
                self.no_efficiency(),
            ),
        };
        let mut marks = vec![measured(a, e)];
        let mut differences = Vec::new();
        if let (Some(ra), Some(re)) = (a.last(), e.last()) {
            if ra.config != re.config {
                marks.push("≠ config");
                differences = config_differences(&ra.config, &re.config);
            }
        }
        Row::new()
            .set("line", Cell::text(&pair.eos))
            .set("vs", Cell::text(&pair.alos))
            .set("point", Cell::text(point))
            .set(
                "regime",
                Cell::text(format!("{} → {}", regime(alos), regime(eos))),
            )
            .set("n", n)
            .set("rows/s per core", rows)
            .set("CPU / record", cpu)
            .set("consumed/s", consumed)
            .set("latency p50", latency)
            .set(
                "measured",
                Cell::text(marks.join(" · ")).with_title(differences.join("; ")),
            )
    }
}

/// How the at-least-once run's configuration differs from the exactly-once
/// run's, in words.
fn config_differences(alos: &RunConfig, eos: &RunConfig) -> Vec<String> {
    let mut differences = Vec::new();
    if alos.commit_interval_ms != eos.commit_interval_ms {
        differences.push(format!(
            "commits every {} ms at-least-once, {} ms exactly-once: at-least-once output does not wait for a commit",
            alos.commit_interval_ms, eos.commit_interval_ms
        ));
    }
    for ((key, a), (_, e)) in alos.client.entries().into_iter().zip(eos.client.entries()) {
        if a != e {
            differences.push(format!("{key} {a} at-least-once, {e} exactly-once"));
        }
    }
    let rest = |c: &RunConfig| RunConfig {
        commit_interval_ms: 0,
        client: Default::default(),
        settings: Vec::new(),
        ..c.clone()
    };
    if rest(alos) != rest(eos) {
        differences.push("other run settings differ too".to_string());
    }
    differences
}

/// The change of figure `name` from `alos` to `eos`, as a signed percentage:
/// for an interleaved batch, the median of the per-round paired ratios with
/// its interval, or "not separable" when the interval straddles no change
/// or the sign test's p is above 0.05 (`tie_band`: a round within 1 ± it is
/// a tie); for two batches measured separately, the ratio of their medians.
fn change(alos: &[&RunRecord], eos: &[&RunRecord], of: &Figure, tie_band: f64) -> Cell {
    if measured(alos, eos) == "interleaved" {
        if let Some(cell) = paired_change(alos, eos, of, tie_band) {
            return cell;
        }
    }
    match (figure(alos, of), figure(eos, of)) {
        (Some(x), Some(y)) if x.median > 0.0 => {
            let format = format_of(of);
            let cell = Cell::text(signed_percent(y.median / x.median - 1.0)).with_title(format!(
                "{} → {}, the ratio of the medians of {} and {} runs",
                format(x.median),
                format(y.median),
                x.count,
                y.count
            ));
            if x.count.min(y.count) == 1 {
                cell.with_class(SINGLE_RUN)
            } else {
                cell
            }
        }
        _ => Cell::missing(),
    }
}

/// The runs of both lines paired by round; None when a run has no round.
fn round_pairs<'r>(alos: &[&'r RunRecord], eos: &[&'r RunRecord]) -> Option<Vec<RoundPair<'r>>> {
    fn figures<'r>(runs: &[&'r RunRecord]) -> Option<Vec<RunFigures<'r>>> {
        runs.iter().map(|r| RunFigures::from_record(r)).collect()
    }
    Some(paired::pair_by_round(&figures(alos)?, &figures(eos)?).pairs)
}

/// A sign test's p as the page writes it.
fn p_text(p: f64) -> String {
    if p < 0.001 {
        "< 0.001".to_string()
    } else {
        format!("{p:.3}")
    }
}

/// The interval of a median ratio as a change: `-12.0 % – -9.1 %`.
fn ratio_interval(ratios: &RatioSummary) -> String {
    ratios.interval.map_or_else(String::new, |i| {
        format!(
            "{} – {}",
            signed_percent(i.low - 1.0),
            signed_percent(i.high - 1.0)
        )
    })
}

/// The paired change of `name` over the rounds of one batch; None when its
/// runs carry no rounds to pair.
fn paired_change(
    alos: &[&RunRecord],
    eos: &[&RunRecord],
    of: &Figure,
    tie_band: f64,
) -> Option<Cell> {
    let pairs = round_pairs(alos, eos)?;
    if pairs.len() < 2 {
        return None;
    }
    let figure = paired::compare_figure(&pairs, of.name, tie_band);
    let ratios = match &figure.verdict {
        Verdict::NotComparable { reason } => {
            return Some(Cell::text("—").with_class("na").with_title(reason.clone()))
        }
        Verdict::Separable { ratios, .. } | Verdict::NotSeparable { ratios } => ratios,
    };
    let interval = ratio_interval(ratios);
    let evidence = format!(
        "median of {} per-round ratios {}{}; sign test p = {} ({} rounds worse, {} better, {} within the {} tie band)",
        ratios.n,
        signed_percent(ratios.median - 1.0),
        match ratios.interval {
            Some(i) => format!(", {} interval {interval}", coverage_text(i.coverage)),
            None => ", no interval under 3 rounds".to_string(),
        },
        p_text(ratios.sign.p),
        ratios.sign.worse,
        ratios.sign.better,
        ratios.sign.ties,
        coverage_text(tie_band),
    );
    let mut cell = match &figure.verdict {
        Verdict::Separable { standing, .. } => Cell::text(signed_percent(ratios.median - 1.0))
            .with_title(format!("exactly-once {}: {evidence}", standing.as_str())),
        _ => Cell::text("not separable")
            .with_class("na")
            .with_title(format!(
                "not separable, {}: {evidence}",
                ratios.not_separable_because()
            )),
    };
    cell.interval = interval;
    Some(cell)
}

/// `a → b` of one figure, each a median of its batch.
fn transition(alos: &[&RunRecord], eos: &[&RunRecord], of: &Figure) -> Cell {
    let (a, b) = (metric_cell(alos, of), metric_cell(eos, of));
    let text = format!("{} → {}", a.text, b.text);
    let interval = joined(&a.interval, &b.interval, " → ");
    Cell {
        text,
        interval,
        ..Cell::pair(a, b)
    }
}

#[cfg(test)]
mod tests;
