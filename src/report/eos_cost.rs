//! The cost of exactly-once: each exactly-once line against the
//! at-least-once line of the same product (by the records' product and
//! delivery mode, never by name), at each bench point where both have runs.
//! A pair measured only at different points is "not comparable", without a
//! number; a pair whose two batches are one batch is `interleaved`.

use super::figures::{figure, format_of, metric_cell, metric_column};
use super::lines::LineRuns;
use super::points::PointRuns;
use super::table::{signed_percent, Cell, Column, Row, Table};
use crate::analysis::paired::{self, RunFigures, Verdict};
use crate::config::{Delivery, Suite};
use crate::results::{Regime, RunConfig, RunRecord};

/// The cost of exactly-once of one product at the iso point, for the summary.
pub(super) struct IsoCost {
    pub(super) product: String,
    /// The change in rows/s per core and CPU per record, in words.
    pub(super) text: String,
    /// `interleaved` or `separately`.
    pub(super) measured: &'static str,
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

const COLUMNS: [&str; 9] = [
    "line",
    "vs",
    "point",
    "regime",
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
    let columns = COLUMNS
        .iter()
        .map(|label| match *label {
            "rows/s per core" | "consumed/s" => Column {
                unit: "change".to_string(),
                ..metric_column(&all, label, "rows_per_s_per_core")
            },
            "CPU / record" => metric_column(&all, label, "us_cpu_per_record"),
            "latency p50" => metric_column(&all, label, "latency_p50_ms"),
            _ => Column::plain(label),
        })
        .collect();
    let mut table = Table::new("Cost of exactly-once", columns);
    let mut iso_costs = Vec::new();
    // Lines in page order, each with its product and delivery: from the
    // records where a line ran, else from its product.yaml.
    let described: Vec<(String, String, Delivery)> = order
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
        .collect();
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
            let row = cost_row(pair, point.name.clone(), alos, eos);
            if point.is_iso() {
                iso_costs.push(IsoCost {
                    product: pair.product.clone(),
                    text: format!(
                        "rows/s per core {}, CPU / record {} µs",
                        change(&alos.batch, &eos.batch, "rows_per_s_per_core").text,
                        transition(&alos.batch, &eos.batch, "us_cpu_per_record").text
                    ),
                    measured: measured(&alos.batch, &eos.batch),
                });
            }
            table.push(row);
        }
        if at_points > 0 {
            continue;
        }
        let newest = |name: &str| {
            page_lines
                .iter()
                .find(|l| l.name == name && !l.batch.is_empty())
        };
        let row = Row::new()
            .set("line", Cell::text(&pair.eos))
            .set("vs", Cell::text(&pair.alos));
        let row = match (newest(&pair.eos), newest(&pair.alos)) {
            (Some(eos), Some(alos)) => {
                let at = |l: &LineRuns<'_>| {
                    l.batch
                        .last()
                        .map(|r| super::points::PointSettings::from_config(&r.config).label())
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
                .set("rows/s per core", not_comparable())
                .set("CPU / record", not_comparable())
                .set("consumed/s", not_comparable())
                .set("latency p50", not_comparable())
                .set("measured", Cell::text(measured(&alos.batch, &eos.batch)))
            }
            _ => row.set("point", Cell::text("no pair yet").with_class("na")),
        };
        table.push(row);
    }
    (table, iso_costs)
}

/// The row of one pair at one point.
fn cost_row(pair: &LinePair, point: String, alos: &LineRuns<'_>, eos: &LineRuns<'_>) -> Row {
    let (a, e) = (&alos.batch[..], &eos.batch[..]);
    let regime = |l: &LineRuns<'_>| l.regime().map_or("mixed", Regime::as_str);
    let both = |r: Regime| alos.regime() == Some(r) && eos.regime() == Some(r);
    let consumed = if both(Regime::Saturated) {
        change(a, e, "consumed_per_s")
    } else {
        Cell::text("—").with_class("na").with_title(
            "a change in capacity only when both were saturated; otherwise it is the offered rate",
        )
    };
    let latency = if both(Regime::KeepUp) {
        transition(a, e, "latency_p50_ms")
    } else {
        Cell::text("—")
            .with_class("na")
            .with_title("latency only when both kept up")
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
        .set("rows/s per core", change(a, e, "rows_per_s_per_core"))
        .set("CPU / record", transition(a, e, "us_cpu_per_record"))
        .set("consumed/s", consumed)
        .set("latency p50", latency)
        .set(
            "measured",
            Cell::text(marks.join(" · ")).with_title(differences.join("; ")),
        )
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
/// for an interleaved batch, the median of the per-round paired ratios, or
/// "not separable" when the sign flipped between rounds; for two batches
/// measured separately, the ratio of their medians.
fn change(alos: &[&RunRecord], eos: &[&RunRecord], name: &'static str) -> Cell {
    if measured(alos, eos) == "interleaved" {
        if let Some(cell) = paired_change(alos, eos, name) {
            return cell;
        }
    }
    match (figure(alos, name), figure(eos, name)) {
        (Some(x), Some(y)) if x.median > 0.0 => {
            let format = format_of(name);
            Cell::text(signed_percent(y.median / x.median - 1.0)).with_title(format!(
                "{} → {}",
                format(x.median),
                format(y.median)
            ))
        }
        _ => Cell::missing(),
    }
}

/// The paired change of `name` over the rounds of one batch; None when its
/// runs carry no rounds to pair.
fn paired_change(alos: &[&RunRecord], eos: &[&RunRecord], name: &'static str) -> Option<Cell> {
    fn figures<'r>(runs: &[&'r RunRecord]) -> Option<Vec<RunFigures<'r>>> {
        runs.iter().map(|r| RunFigures::from_record(r)).collect()
    }
    let pairing = paired::pair_by_round(&figures(alos)?, &figures(eos)?);
    if pairing.pairs.len() < 2 {
        return None;
    }
    let figure = paired::compare_figure(&pairing.pairs, name);
    Some(match figure.verdict {
        Verdict::Separable { standing, ratios } => Cell::text(signed_percent(ratios.median - 1.0))
            .with_title(format!(
                "median of {} per-round ratios ({} – {}); exactly-once {} in every round",
                ratios.count,
                signed_percent(ratios.min - 1.0),
                signed_percent(ratios.max - 1.0),
                standing.as_str()
            )),
        Verdict::NotSeparable => Cell::text("not separable")
            .with_class("na")
            .with_title("the sign of the change flipped between rounds: within the noise"),
        Verdict::NotComparable { reason } => Cell::text("—").with_class("na").with_title(reason),
    })
}

/// `a → b` of one figure, each a median of its batch.
fn transition(alos: &[&RunRecord], eos: &[&RunRecord], name: &str) -> Cell {
    let (a, b) = (metric_cell(alos, name), metric_cell(eos, name));
    let text = format!("{} → {}", a.text, b.text);
    Cell {
        text,
        ..Cell::pair(a, b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(product: &str, name: &str, delivery: Delivery) -> (String, String, Delivery) {
        (product.into(), name.into(), delivery)
    }

    #[test]
    fn lines_pair_by_product_and_delivery_not_by_name() {
        let lines = [
            line("turbine", "turbine-tx", Delivery::ExactlyOnce),
            line("flink", "flink-eos", Delivery::ExactlyOnce),
            line("turbine", "turbine-plain", Delivery::AtLeastOnce),
            // named like flink's pair, but another product's line
            line("other", "flink", Delivery::AtLeastOnce),
            line("legacy", "legacy", Delivery::AtLeastOnce),
        ];
        let pairs = pair_lines(&lines);
        assert_eq!(
            pairs,
            [LinePair {
                product: "turbine".into(),
                eos: "turbine-tx".into(),
                alos: "turbine-plain".into(),
            }]
        );
    }

    #[test]
    fn one_batch_is_interleaved_two_are_separately() {
        let a = crate::report::fixture_record();
        let mut b = a.clone();
        assert_eq!(measured(&[&a], &[&b]), "interleaved");
        b.batch_id = "another".into();
        assert_eq!(measured(&[&a], &[&b]), "separately");
    }

    #[test]
    fn an_interleaved_change_is_the_median_of_its_rounds() {
        let base = crate::report::fixture_record();
        let run = |round: u32, value: f64| {
            let mut r = base.clone();
            r.round = Some(round);
            r.metrics.insert(
                "rows_per_s_per_core".into(),
                crate::results::Metric::new(
                    value,
                    "records/s per core",
                    crate::results::Better::Higher,
                ),
            );
            r
        };
        let alos = [run(1, 100.0), run(2, 200.0)];
        // -10 % and -20 %: the median of the rounds is -15 %, where the
        // ratio of the medians (150 -> 125) would read -16.7 %
        let eos = [run(1, 90.0), run(2, 160.0)];
        fn refs(runs: &[RunRecord]) -> Vec<&RunRecord> {
            runs.iter().collect()
        }
        let cell = change(&refs(&alos), &refs(&eos), "rows_per_s_per_core");
        assert_eq!(cell.text, signed_percent(-0.15));
        // -10 % then +10 %: within the noise, no number
        let flipped = [run(1, 90.0), run(2, 220.0)];
        let cell = change(&refs(&alos), &refs(&flipped), "rows_per_s_per_core");
        assert_eq!(cell.text, "not separable");
        // measured separately: the ratio of the medians
        let mut apart = eos.clone();
        for r in &mut apart {
            r.batch_id = "another".into();
        }
        let cell = change(&refs(&alos), &refs(&apart), "rows_per_s_per_core");
        assert_eq!(cell.text, signed_percent(125.0 / 150.0 - 1.0));
    }
}
