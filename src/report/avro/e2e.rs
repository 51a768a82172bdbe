//! The end-to-end section: avro-etl runs from Kafka into ClickHouse at one
//! bench point (the newest ok run's, sink settings included), each arm's
//! figures the median of its ok runs there, with n. Rows/s and the sink's
//! flush p99 are charts of their own (two units, two panels); the raw arm,
//! one row per message, is in the table only; then the bottleneck sentence.

use serde::Serialize;

use super::bottleneck::{bottleneck, ArmRate, CpuUse};
use super::Arm;
use crate::model::host::HostInfo;
use crate::report::charts::Chart;
use crate::report::figures::{figure, format_of, metric_cell, metric_column, repeats_cell};
use crate::report::header::host_label;
use crate::report::lines::comparable;
use crate::report::points::BenchPoint;
use crate::report::svg::{self, Bar};
use crate::report::table::{date_time, display_unit, fixed, grouped, Cell, Column, Row, Table};
use crate::results::figure::{
    BACKPRESSURE_PAUSES, CONSUMED_PER_S, ROWS_PER_S, ROW_E2E_P50_MS, ROW_E2E_P99_MS,
    SINK_FLUSH_P50_MS, SINK_FLUSH_P99_MS,
};
use crate::results::{flag, Better, Figure, Regime, ResourceSummary, RunRecord, Status};
use crate::stats::{spread, Spread};

/// The end-to-end section of the page.
#[derive(Debug, Serialize)]
pub struct E2eSection {
    /// Why the section is empty and which command fills it; empty when a
    /// run is shown.
    pub missing: String,
    /// The bench point shown, in words.
    pub detail: String,
    /// Runs left out of the figures, and why.
    pub notes: Vec<String>,
    /// Rows/s, then the sink's flush p99: the Avro arms only.
    pub charts: Vec<Chart>,
    pub table: Table,
    /// What limits the rate, in a few words.
    pub limit: String,
    /// The sentence that says so, from the figures.
    pub bottleneck: String,
}

/// The avro-etl runs, sorted for the page.
pub(super) struct E2eRuns<'a> {
    /// The newest ok run: the page shows its bench point.
    newest: Option<&'a RunRecord>,
    /// The ok runs at that point, by arm, in page order.
    arms: Vec<(Arm, Vec<&'a RunRecord>)>,
    failed: usize,
    /// Ok runs at other bench points or with other sink settings.
    elsewhere: usize,
    /// Ok runs that name no arm.
    without_arm: usize,
}

impl<'a> E2eRuns<'a> {
    pub(super) fn from_records(records: &'a [RunRecord]) -> E2eRuns<'a> {
        let ok: Vec<&RunRecord> = records.iter().filter(|r| comparable(r)).collect();
        let with_arm: Vec<(Arm, &RunRecord)> = ok
            .iter()
            .filter_map(|r| Some((Arm::from_run(r)?, *r)))
            .collect();
        let newest = with_arm
            .iter()
            .map(|(_, r)| *r)
            .max_by(|a, b| a.started_at.cmp(&b.started_at));
        let mut arms: Vec<(Arm, Vec<&RunRecord>)> = Vec::new();
        if let Some(newest) = newest {
            let point = BenchPoint::from_record(newest);
            for (arm, run) in &with_arm {
                if !point.holds_any_arm(run) {
                    continue;
                }
                match arms.iter_mut().find(|(a, _)| a == arm) {
                    Some((_, runs)) => runs.push(run),
                    None => arms.push((arm.clone(), vec![run])),
                }
            }
        }
        arms.sort_by(|a, b| a.0.order().cmp(&b.0.order()));
        let shown: usize = arms.iter().map(|(_, runs)| runs.len()).sum();
        E2eRuns {
            newest,
            failed: records
                .iter()
                .filter(|r| r.status == Status::Failed)
                .count(),
            elsewhere: with_arm.len() - shown,
            without_arm: ok.len() - with_arm.len(),
            arms,
        }
    }

    /// The host of the runs shown.
    pub(super) fn host(&self) -> Option<&'a HostInfo> {
        self.newest.map(|r| &r.host)
    }

    /// Every run the figures come from.
    pub(super) fn shown(&self) -> impl Iterator<Item = &'a RunRecord> + '_ {
        self.arms.iter().flat_map(|(_, runs)| runs.iter().copied())
    }

    /// The arms that decode: the raw arm's rows are messages, not events.
    fn avro_arms(&self) -> impl Iterator<Item = &(Arm, Vec<&'a RunRecord>)> {
        self.arms.iter().filter(|(arm, _)| !arm.is_raw())
    }
}

pub(super) fn e2e_section(runs: &E2eRuns<'_>, decode_multiple: Option<f64>) -> E2eSection {
    let mut notes = Vec::new();
    let mut note = |count: usize, one: &str, many: &str| match count {
        0 => {}
        1 => notes.push(one.to_string()),
        n => notes.push(many.replace("{n}", &n.to_string())),
    };
    note(
        runs.failed,
        "1 failed run is left out of every figure; the avro-etl page lists it with its reason.",
        "{n} failed runs are left out of every figure; the avro-etl page lists them with their reasons.",
    );
    note(
        runs.elsewhere,
        "1 run at another bench point or with other sink settings is not shown: the figures compare one point.",
        "{n} runs at other bench points or with other sink settings are not shown: the figures compare one point.",
    );
    note(
        runs.without_arm,
        "1 run names no arm (neither a variant nor ETL settings) and is not shown.",
        "{n} runs name no arm (neither a variant nor ETL settings) and are not shown.",
    );
    let Some(newest) = runs.newest else {
        return E2eSection {
            missing: "No end-to-end run of avro-etl in the results folder yet: suite run \
                      rustpipe avro-etl records one arm, the one bench.yaml's etl settings \
                      name; suite batch with lines such as rustpipe@etl.decoder=fast-owned \
                      runs several arms interleaved."
                .to_string(),
            detail: String::new(),
            notes,
            charts: Vec::new(),
            table: Table::new("End-to-end figures per arm", vec![Column::plain("arm")]),
            limit: String::new(),
            bottleneck: String::new(),
        };
    };
    let finding = bottleneck(&arm_rates(runs), decode_multiple, cpu_use(runs));
    let shown: Vec<&RunRecord> = runs.shown().collect();
    let saturated = shown
        .iter()
        .filter(|r| r.has_flag(flag::HOST_SATURATED))
        .count();
    let host_note = match saturated {
        0 => String::new(),
        n => format!(
            " The host's CPUs were all busy in {n} of these {} runs (host-saturated): gendata, \
             the broker, ClickHouse and the product share its cores, so each part's rate is \
             also what the others left it.",
            shown.len()
        ),
    };
    E2eSection {
        missing: String::new(),
        detail: detail(newest),
        notes,
        charts: [
            arm_chart(runs, &ROWS_PER_S, "End-to-end rows/s"),
            arm_chart(runs, &SINK_FLUSH_P99_MS, "Sink flush p99"),
        ]
        .into_iter()
        .flatten()
        .collect(),
        table: arm_table(runs),
        limit: finding.limit.as_str().to_string(),
        bottleneck: finding.text + &host_note,
    }
}

/// The point shown: rate and window, run configuration, sink settings,
/// bench version, host and newest run.
fn detail(newest: &RunRecord) -> String {
    let point = BenchPoint::from_record(newest);
    let sink = newest
        .config
        .etl
        .as_ref()
        .map(|etl| {
            format!(
                " · an insert every {} rows or {} ms, {} in flight",
                grouped(i64::from(etl.block_rows)),
                etl.flush_ms,
                etl.max_in_flight
            )
        })
        .unwrap_or_default();
    format!(
        "{} · {}{sink} · bench version {} · host {} · newest run {} UTC",
        point.settings.label(),
        point.settings.detail(),
        point.bench_version,
        host_label(&point.host),
        date_time(&newest.started_at)
    )
}

/// Rows written to ClickHouse per Kafka message: at most the events of a
/// datum for an Avro arm, one for the raw arm.
fn rows_per_message(arm: &Arm, runs: &[&RunRecord]) -> Option<u32> {
    if arm.is_raw() {
        return Some(1);
    }
    let newest = runs.iter().max_by(|a, b| a.started_at.cmp(&b.started_at))?;
    newest
        .variant
        .as_ref()
        .and_then(|v| v.events)
        .or_else(|| newest.config.etl.as_ref().map(|etl| etl.events))
}

/// The CPU of `pick` over the runs that have it.
fn resource_values(
    runs: &[&RunRecord],
    pick: fn(&RunRecord) -> Option<&ResourceSummary>,
) -> Vec<f64> {
    runs.iter()
        .filter_map(|r| pick(r).map(|s| s.cpu_avg_pct))
        .collect()
}

/// The median of `pick` over the runs that have it.
fn resource_spread(
    runs: &[&RunRecord],
    pick: fn(&RunRecord) -> Option<&ResourceSummary>,
) -> Option<Spread> {
    spread(&resource_values(runs, pick))
}

fn product_of(r: &RunRecord) -> Option<&ResourceSummary> {
    r.resources.as_ref()?.product.as_ref()
}

fn sink_of(r: &RunRecord) -> Option<&ResourceSummary> {
    r.resources.as_ref()?.sink.as_ref()
}

/// Each Avro arm's median rows/s.
fn arm_rates(runs: &E2eRuns<'_>) -> Vec<ArmRate> {
    runs.avro_arms()
        .filter_map(|(arm, records)| {
            Some(ArmRate {
                label: arm.label(),
                rows_per_s: figure(records, &ROWS_PER_S)?.median,
                kept_up: 2 * records
                    .iter()
                    .filter(|r| matches!(r.regime, Some(Regime::KeepUp | Regime::Draining)))
                    .count()
                    > records.len(),
            })
        })
        .collect()
}

/// The product's and ClickHouse's CPU over the Avro arms' runs that
/// recorded both.
fn cpu_use(runs: &E2eRuns<'_>) -> Option<CpuUse> {
    let both: Vec<&RunRecord> = runs
        .avro_arms()
        .flat_map(|(_, records)| records.iter().copied())
        .filter(|r| product_of(r).is_some() && sink_of(r).is_some())
        .collect();
    Some(CpuUse {
        product: resource_spread(&both, product_of)?.median,
        sink: resource_spread(&both, sink_of)?.median,
    })
}

/// One figure of the Avro arms as a bar chart, with its table; none when
/// no arm has it.
fn arm_chart(runs: &E2eRuns<'_>, of: &Figure, title: &str) -> Option<Chart> {
    let arms: Vec<(&Arm, Spread)> = runs
        .avro_arms()
        .filter_map(|(arm, records)| Some((arm, figure(records, of)?)))
        .collect();
    let metric = runs
        .avro_arms()
        .flat_map(|(_, records)| records.iter())
        .find_map(|r| r.metrics.get(of.name))?;
    let unit = display_unit(&metric.unit);
    let direction = match metric.better {
        Better::Lower => "lower is better",
        Better::Higher => "higher is better",
    };
    let format = format_of(of);
    let title = format!("{title} ({direction})");
    let mut table = Table::new(
        &title,
        vec![
            Column::plain("arm"),
            Column {
                unit: unit.clone(),
                direction: direction.to_string(),
                ..Column::plain("median")
            },
            Column {
                unit: unit.clone(),
                ..Column::plain("min – max")
            },
            Column::plain("n"),
        ],
    );
    let bars = arms
        .iter()
        .map(|(arm, s)| {
            table.push(
                Row::new()
                    .set("arm", Cell::text(arm.label()).with_title(arm.description()))
                    .set("median", Cell::text(format(s.median)))
                    .set(
                        "min – max",
                        Cell::text(format!("{} – {}", format(s.min), format(s.max))),
                    )
                    .set("n", Cell::text(s.count.to_string())),
            );
            Bar {
                label: arm.label(),
                value: s.median,
                interval: None,
                text: format(s.median),
                colour: arm.colour(),
            }
        })
        .collect::<Vec<Bar>>();
    Some(Chart {
        svg: svg::bar_chart(&bars, &unit, svg::BAR_WIDTH),
        title,
        data: table,
    })
}

/// Every arm's figures, the raw arm's rows/s marked as not comparable.
fn arm_table(runs: &E2eRuns<'_>) -> Table {
    let shown: Vec<&RunRecord> = runs.shown().collect();
    let cpu = |label: &str| Column {
        unit: "% of one core".to_string(),
        direction: "lower is better".to_string(),
        ..Column::plain(label)
    };
    let mut table = Table::new(
        "End-to-end figures per arm",
        vec![
            Column::plain("arm"),
            Column::plain("rows / message"),
            Column::plain("runs"),
            metric_column(&shown, "rows/s", &ROWS_PER_S),
            metric_column(&shown, "consumed/s", &CONSUMED_PER_S),
            metric_column(&shown, "sink flush p50 / p99", &SINK_FLUSH_P50_MS),
            metric_column(&shown, "row e2e p50 / p99", &ROW_E2E_P50_MS),
            metric_column(&shown, "backpressure pauses", &BACKPRESSURE_PAUSES),
            cpu("product CPU"),
            cpu("ClickHouse CPU"),
        ],
    );
    let avro_events: Vec<u32> = {
        let mut events: Vec<u32> = runs
            .avro_arms()
            .filter_map(|(arm, records)| rows_per_message(arm, records))
            .collect();
        events.sort_unstable();
        events.dedup();
        events
    };
    for (arm, records) in &runs.arms {
        let mut rows_per_s = metric_cell(records, &ROWS_PER_S);
        if arm.is_raw() {
            let why = raw_not_comparable(records, &avro_events);
            table.notes.push(format!(
                "{}: {why}. It is left out of the charts.",
                arm.label()
            ));
            let title = match rows_per_s.title.as_str() {
                "" => why,
                median => format!("{why}; {median}"),
            };
            rows_per_s = rows_per_s.with_class("na").with_title(title);
        }
        table.push(arm_row(arm, records, rows_per_s));
    }
    table
}

/// Why the raw arm's rows/s does not compare with the Avro arms': one row
/// per message where they write up to `avro_events` rows each.
fn raw_not_comparable(records: &[&RunRecord], avro_events: &[u32]) -> String {
    let events = match avro_events {
        [] => records
            .iter()
            .find_map(|r| r.config.etl.as_ref())
            .map_or("several".to_string(), |etl| etl.events.to_string()),
        many => many
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join(" or "),
    };
    format!(
        "not comparable on rows/s: one row per message, where the Avro arms write \
         up to {events} rows per message"
    )
}

/// One arm's row, its rows/s cell given.
fn arm_row(arm: &Arm, records: &[&RunRecord], rows_per_s: Cell) -> Row {
    let pair =
        |a: &Figure, b: &Figure| Cell::pair(metric_cell(records, a), metric_cell(records, b));
    let cpu_cell = |pick| {
        repeats_cell(&resource_values(records, pick), |v| fixed(v, 1)).unwrap_or_else(Cell::missing)
    };
    Row::new()
        .set("arm", Cell::text(arm.label()).with_title(arm.description()))
        .set(
            "rows / message",
            rows_per_message(arm, records)
                .map_or_else(Cell::missing, |n| Cell::text(n.to_string())),
        )
        .set("runs", Cell::text(records.len().to_string()))
        .set("rows/s", rows_per_s)
        .set("consumed/s", metric_cell(records, &CONSUMED_PER_S))
        .set(
            "sink flush p50 / p99",
            pair(&SINK_FLUSH_P50_MS, &SINK_FLUSH_P99_MS),
        )
        .set("row e2e p50 / p99", pair(&ROW_E2E_P50_MS, &ROW_E2E_P99_MS))
        .set(
            "backpressure pauses",
            metric_cell(records, &BACKPRESSURE_PAUSES),
        )
        .set("product CPU", cpu_cell(product_of))
        .set("ClickHouse CPU", cpu_cell(sink_of))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_runs() -> Vec<RunRecord> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/report/results/avro-etl.jsonl");
        crate::results::read_records(&path).unwrap()
    }

    #[test]
    fn one_point_is_shown_and_the_other_runs_are_counted() {
        let mut records = fixture_runs();
        // An older run at another rate, and one with other sink settings.
        records[0].config.rate = 1000;
        if let Some(etl) = records[1].config.etl.as_mut() {
            etl.block_rows = 8192;
        }
        let runs = E2eRuns::from_records(&records);
        assert_eq!((runs.failed, runs.elsewhere, runs.without_arm), (1, 2, 0));
        let arms: Vec<(String, usize)> = runs
            .arms
            .iter()
            .map(|(arm, runs)| (arm.label(), runs.len()))
            .collect();
        assert_eq!(
            arms,
            [
                ("fast-borrowed · RowBinary".to_string(), 1),
                ("fast-borrowed · Native".to_string(), 1),
                ("apache-owned · RowBinary".to_string(), 1),
                ("raw · RowBinary".to_string(), 1),
            ]
        );
        let section = e2e_section(&runs, Some(9.1));
        assert_eq!(section.notes.len(), 2, "{:?}", section.notes);
        assert_eq!(section.limit, "the sink (ClickHouse)");
    }

    #[test]
    fn a_run_without_variant_takes_its_arm_from_its_etl_settings() {
        let mut records = fixture_runs();
        records[0].variant = None;
        let mut bare = records[1].clone();
        bare.variant = None;
        bare.config.etl = None;
        records.push(bare);
        let runs = E2eRuns::from_records(&records);
        assert_eq!(runs.without_arm, 1);
        assert_eq!(runs.arms[0].0.label(), "fast-borrowed · RowBinary");
        assert_eq!(runs.arms[0].1.len(), 2);
    }
}
