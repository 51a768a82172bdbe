//! From records to page contexts: which runs each table compares (the newest
//! batch of each line, chaos runs left out), their medians, and every value
//! formatted, so templates only lay out text.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde::Serialize;

use super::lines::{group_lines, is_chaos, LineRuns, Verdict};
use super::sanity;
use super::svg::{self, Curve, FlowBox, XAxis};
use super::table::{
    colour_column, date_time, grouped, number, signed_percent, Cell, Column, Table,
};
use crate::analysis::{spread, Spread};
use crate::config::{Suite, Workload};
use crate::host::HostInfo;
use crate::products::{self, Availability};
use crate::results::{Better, Regime, RunRecord, Status};

/// Everything the index page shows.
#[derive(Debug, Serialize)]
pub struct IndexPage {
    pub workloads: Vec<WorkloadEntry>,
    pub products: Table,
    /// The newest run of all, or empty.
    pub last_updated: String,
}

/// One workload on the index.
#[derive(Debug, Serialize)]
pub struct WorkloadEntry {
    pub name: String,
    pub description: String,
    pub href: String,
    pub lines: Table,
}

/// Everything one workload's page shows.
#[derive(Debug, Serialize)]
pub struct WorkloadPage {
    pub name: String,
    pub description: String,
    /// Inline SVG of the flow, or empty when the workload is not described.
    pub flow_svg: String,
    pub header: Header,
    pub latency: Table,
    /// Inline SVG, or empty without keep-up latency.
    pub latency_chart: String,
    pub throughput: Table,
    pub series_charts: Vec<Chart>,
    pub eos_cost: Table,
    pub resources: Table,
    pub sanity: Table,
    pub sanity_verdict: Verdict,
    pub characteristics: Table,
    pub notes: Vec<ProductNote>,
    pub failed: Table,
}

/// Where and on what the runs of a page were measured.
#[derive(Debug, Serialize)]
pub struct Header {
    pub hosts: Vec<String>,
    pub brokers: Vec<String>,
    pub last_updated: String,
    pub bench_versions: String,
    pub runs: usize,
}

/// A chart with its title.
#[derive(Debug, Serialize)]
pub struct Chart {
    pub title: String,
    pub svg: String,
}

/// A product's notes from its product.yaml.
#[derive(Debug, Serialize)]
pub struct ProductNote {
    pub product: String,
    pub text: String,
}

/// Figure `name` over `runs`: the median of the runs that have it, and its spread.
fn figure(runs: &[&RunRecord], name: &str) -> Option<Spread> {
    let values: Vec<f64> = runs
        .iter()
        .filter_map(|r| r.metrics.get(name).map(|m| m.value))
        .collect();
    spread(&values)
}

/// The cell of figure `name` over `runs`: the median, or why it is absent.
fn metric_cell(runs: &[&RunRecord], name: &str) -> Cell {
    if let Some(f) = figure(runs, name) {
        return Cell::figure(f, number);
    }
    let reason = runs.iter().rev().find_map(|r| {
        r.not_applicable.get(name).or_else(|| {
            name.starts_with("latency_")
                .then(|| r.not_applicable.get("latency"))
                .flatten()
        })
    });
    match reason {
        Some(reason) => Cell::not_applicable(reason),
        None => Cell::missing(),
    }
}

/// A column of figure `name`, its unit and direction read from the records.
fn metric_column(records: &[RunRecord], label: &str, name: &str) -> Column {
    match records.iter().find_map(|r| r.metrics.get(name)) {
        Some(m) => Column {
            label: label.to_string(),
            unit: m.unit.clone(),
            direction: match m.better {
                Better::Lower => "lower is better".to_string(),
                Better::Higher => "higher is better".to_string(),
            },
        },
        None => Column::plain(label),
    }
}

/// Builds the index page.
pub fn index_page(suite: &Suite, results: &BTreeMap<String, Vec<RunRecord>>) -> IndexPage {
    let mut workloads = Vec::new();
    for name in workload_names(suite, results) {
        let records = results.get(&name).map(Vec::as_slice).unwrap_or(&[]);
        let mut lines = Table::new(
            "lines",
            vec![
                Column::plain("line"),
                Column::plain("runs"),
                Column::utc("last run"),
                Column::plain("status"),
                Column::plain("regime"),
            ],
        );
        let grouped = group_lines(suite, records);
        for line in &grouped {
            let Some(last) = line.all.last() else {
                continue;
            };
            lines.rows.push(vec![
                Cell::text(line.label()),
                Cell::text(line.all.len().to_string()),
                Cell::text(date_time(&last.started_at)),
                status_cell(last),
                Cell::text(last.regime.map(Regime::as_str).unwrap_or("—")),
            ]);
        }
        // Lines that implement the workload but have not run it yet.
        for line in suite.lines().filter(|l| {
            l.product.workloads.contains(&name) && !grouped.iter().any(|g| g.name == l.line.name)
        }) {
            lines.rows.push(vec![
                Cell::text(&line.line.name),
                Cell::text("0"),
                Cell::missing(),
                Cell::text("not run yet").with_class("na"),
                Cell::missing(),
            ]);
        }
        workloads.push(WorkloadEntry {
            description: suite
                .workloads
                .get(&name)
                .map(|w| w.description.clone())
                .unwrap_or_else(|| "not described in workloads/".to_string()),
            href: format!("{name}.html"),
            name,
            lines,
        });
    }
    let last_updated = results
        .values()
        .flatten()
        .map(|r| r.started_at.as_str())
        .max()
        .map(|t| format!("{} UTC", date_time(t)))
        .unwrap_or_default();
    IndexPage {
        workloads,
        products: products_table(suite),
        last_updated,
    }
}

/// Workloads in the configuration or in the results, in name order.
pub fn workload_names(suite: &Suite, results: &BTreeMap<String, Vec<RunRecord>>) -> Vec<String> {
    let names: BTreeSet<&String> = suite.workloads.keys().chain(results.keys()).collect();
    names.into_iter().cloned().collect()
}

fn status_cell(record: &RunRecord) -> Cell {
    match record.status {
        Status::Ok if is_chaos(record) => Cell::text("ok (crash injected)"),
        Status::Ok => Cell::text("ok").with_class("ok"),
        Status::Failed => Cell::text("failed")
            .with_class("warn")
            .with_title(record.failure.clone().unwrap_or_default()),
    }
}

/// Whether a product runs here; a product that is not installed says how.
fn availability_cell(product: &crate::config::Product) -> Cell {
    match products::capability(product) {
        Availability::Runnable
        | Availability::Installed
        | Availability::Installable
        | Availability::Buildable => Cell::text("runnable here").with_class("ok"),
        Availability::NotInstalled { hint } => {
            Cell::text(format!("not installed here: {hint}")).with_class("na")
        }
    }
}

fn products_table(suite: &Suite) -> Table {
    let mut table = Table::new(
        "products",
        Column::plain_all(&["product", "version", "lines", "workloads", "status"]),
    );
    for product in suite.products.values() {
        let lines: Vec<&str> = product.lines.iter().map(|l| l.name.as_str()).collect();
        table.rows.push(vec![
            Cell::text(&product.name).with_title(&product.description),
            Cell::text(product.resolved_version()),
            Cell::text(lines.join(", ")),
            Cell::text(product.workloads.join(", ")),
            availability_cell(product),
        ]);
    }
    table
}

/// Builds one workload's page.
pub fn workload_page(suite: &Suite, name: &str, records: &[RunRecord]) -> WorkloadPage {
    let lines = group_lines(suite, records);
    let workload = suite.workloads.get(name);
    let (latency, latency_chart) = latency_section(records, &lines);
    WorkloadPage {
        name: name.to_string(),
        description: workload
            .map(|w| w.description.clone())
            .unwrap_or_else(|| "not described in workloads/".to_string()),
        flow_svg: workload
            .map(|w| flow_svg(suite, w, &lines))
            .unwrap_or_default(),
        header: header(records),
        latency,
        latency_chart,
        throughput: throughput_table(records, &lines),
        series_charts: series_charts(&lines),
        eos_cost: eos_cost_table(suite, records, &lines),
        resources: resources_table(records, &lines),
        sanity: sanity::sanity_table(&lines),
        sanity_verdict: sanity::sanity_verdict(&lines),
        characteristics: characteristics_table(suite, name, &lines),
        notes: product_notes(suite, name, &lines),
        failed: failed_table(records),
    }
}

fn flow_svg(suite: &Suite, workload: &Workload, lines: &[LineRuns<'_>]) -> String {
    let topic = |role: &str, partitions: i32, compression: &str| FlowBox {
        title: role.to_string(),
        detail: format!(
            "{partitions} partition{} · {compression}",
            if partitions == 1 { "" } else { "s" }
        ),
    };
    let operators: Vec<FlowBox> = workload
        .operators
        .iter()
        .map(|op| FlowBox {
            title: op.kind.clone(),
            detail: op.does.clone(),
        })
        .collect();
    // The delivery modes of the lines shown, else of every line that implements it.
    let mut modes: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| l.all.last())
        .map(|r| r.delivery.as_str())
        .collect();
    if modes.is_empty() {
        modes = suite
            .lines()
            .filter(|l| l.product.workloads.contains(&workload.name))
            .map(|l| l.line.delivery.as_str())
            .collect();
    }
    let modes: Vec<&str> = modes.into_iter().collect();
    svg::flow(
        &topic(
            "input topic",
            workload.input.partitions,
            &workload.input.compression,
        ),
        &operators,
        &topic(
            "output topic",
            workload.output.partitions,
            &workload.output.compression,
        ),
        &modes.join(" / "),
    )
}

fn header(records: &[RunRecord]) -> Header {
    let mut newest_first: Vec<&RunRecord> = records.iter().collect();
    newest_first.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    let distinct = |f: &dyn Fn(&RunRecord) -> String| {
        let mut seen = Vec::new();
        for r in &newest_first {
            let text = f(r);
            if !seen.contains(&text) {
                seen.push(text);
            }
        }
        seen
    };
    let mut hosts: Vec<&HostInfo> = Vec::new();
    for r in &newest_first {
        if !hosts.iter().any(|h| h.same_host(&r.host)) {
            hosts.push(&r.host);
        }
    }
    let brokers = distinct(&|r| {
        format!(
            "{} broker, {}",
            r.broker.kind,
            r.broker.version.as_deref().unwrap_or("version not given")
        )
    });
    let bench_versions = distinct(&|r| r.bench_version.to_string()).join(", ");
    Header {
        hosts: hosts.into_iter().map(host_label).collect(),
        brokers,
        last_updated: newest_first
            .first()
            .map(|r| format!("{} UTC", date_time(&r.started_at)))
            .unwrap_or_default(),
        bench_versions,
        runs: records.len(),
    }
}

/// A host as the page header shows it: every field [`HostInfo::same_host`]
/// compares, so two hosts read apart (the machine id by the first
/// digits of its digest).
fn host_label(h: &HostInfo) -> String {
    let mut parts = vec![h.cpu_model.clone()];
    parts.extend(h.cpu_mhz.map(|mhz| format!("{mhz} MHz")));
    parts.push(format!("{} cores", h.cores));
    parts.extend(h.threads.map(|t| format!("{t} threads")));
    parts.push(format!("{} MB", grouped(h.memory_mb as i64)));
    parts.push(format!("kernel {}", h.kernel));
    let machine = h
        .machine_id_hash
        .as_deref()
        .map(|id| format!(", machine {}", id.get(..8).unwrap_or(id)))
        .unwrap_or_default();
    format!("{} ({}{machine})", parts.join(" · "), h.hostname)
}

const PERCENTILES: [(&str, &str); 5] = [
    ("p50", "latency_p50_ms"),
    ("p90", "latency_p90_ms"),
    ("p99", "latency_p99_ms"),
    ("p99.9", "latency_p999_ms"),
    ("max", "latency_max_ms"),
];

/// The latency table and chart: keep-up runs of each line's newest batch.
fn latency_section(records: &[RunRecord], lines: &[LineRuns<'_>]) -> (Table, String) {
    let mut columns = vec![Column::plain("line"), Column::plain("regime")];
    columns.extend(
        PERCENTILES
            .iter()
            .map(|(label, name)| metric_column(records, label, name)),
    );
    columns.push(metric_column(records, "records", "latency_count"));
    columns.push(metric_column(
        records,
        "setup floor p50 / p99",
        "floor_p50_ms",
    ));
    columns.push(metric_column(records, "added p50 / p99", "added_p50_ms"));
    let mut table = Table::new("Latency", columns);
    let mut values: Vec<Vec<Option<f64>>> = vec![Vec::new(); PERCENTILES.len()];
    let mut curves = Vec::new();
    for line in lines {
        let runs: Vec<&RunRecord> = line
            .batch
            .iter()
            .filter(|r| {
                r.regime == Some(Regime::KeepUp) && r.metrics.contains_key("latency_p50_ms")
            })
            .copied()
            .collect();
        if runs.is_empty() {
            if let Some(newest) = line.batch.last() {
                let reason = newest
                    .not_applicable
                    .get("latency")
                    .cloned()
                    .unwrap_or_else(|| "no latency recorded".to_string());
                table
                    .notes
                    .push(format!("{}: not quoted ({reason}).", line.label()));
            }
            continue;
        }
        let mut row = vec![Cell::text(line.label()), Cell::text("keep-up")];
        for (i, (_, name)) in PERCENTILES.iter().enumerate() {
            values[i].push(figure(&runs, name).map(|f| f.median));
            row.push(metric_cell(&runs, name));
        }
        row.push(metric_cell(&runs, "latency_count"));
        row.push(Cell::pair(
            metric_cell(&runs, "floor_p50_ms"),
            metric_cell(&runs, "floor_p99_ms"),
        ));
        row.push(Cell::pair(
            metric_cell(&runs, "added_p50_ms"),
            metric_cell(&runs, "added_p99_ms"),
        ));
        table.rows.push(row);
        if let Some(points) = percentile_curve(&runs) {
            curves.push(Curve {
                name: line.name.clone(),
                colour: line.colour,
                points,
            });
        }
    }
    for (i, (_, name)) in PERCENTILES.iter().enumerate() {
        let better = records
            .iter()
            .find_map(|r| r.metrics.get(*name))
            .map_or(Better::Lower, |m| m.better);
        colour_column(&mut table, 2 + i, &values[i], better);
    }
    let chart = if curves.is_empty() {
        String::new()
    } else {
        let unit = records
            .iter()
            .find_map(|r| r.metrics.get("latency_p50_ms"))
            .map_or("ms".to_string(), |m| m.unit.clone());
        svg::line_chart(
            &curves,
            &XAxis::Nines { max: 4.0 },
            &format!("latency ({unit})"),
            svg::WIDE,
        )
    };
    (table, chart)
}

/// Latency (ms) by percentile, from the runs' histograms merged (exact for
/// repeats); None when no run kept a readable histogram.
fn percentile_curve(runs: &[&RunRecord]) -> Option<Vec<(f64, f64)>> {
    let mut merged: Option<Histogram<u64>> = None;
    for run in runs {
        let Some(h) = run.latency_histogram.as_deref().and_then(decode_histogram) else {
            continue;
        };
        match merged.as_mut() {
            Some(m) => m.add(&h).ok()?,
            None => merged = Some(h),
        }
    }
    let merged = merged.filter(|h| !h.is_empty())?;
    let steps = 80;
    Some(
        (0..=steps)
            .map(|i| {
                let x = 4.0 * f64::from(i) / f64::from(steps);
                let q = 1.0 - 10f64.powf(-x);
                (x, merged.value_at_quantile(q) as f64 / 1000.0)
            })
            .collect(),
    )
}

/// A stored histogram (base64 of HdrHistogram V2 + deflate), microseconds.
pub fn decode_histogram(encoded: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    Deserializer::new().deserialize(&mut &bytes[..]).ok()
}

/// The regime of the batch with its lag drift: `keep-up (+0.0%)`.
fn regime_cell(line: &LineRuns<'_>) -> Cell {
    let drift = figure(&line.batch, "lag_drift");
    let regime = match line.regime() {
        Some(r) => r.as_str().to_string(),
        None => {
            let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
            for r in &line.batch {
                *counts
                    .entry(r.regime.map_or("unmeasured", Regime::as_str))
                    .or_default() += 1;
            }
            let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n}× {k}")).collect();
            format!("mixed: {}", parts.join(", "))
        }
    };
    let mut cell = match drift {
        Some(f) => {
            let mut c = Cell::figure(f, signed_percent);
            c.text = format!("{regime} ({})", c.text);
            c
        }
        None => Cell::text(regime),
    };
    cell.class = match line.regime() {
        Some(Regime::KeepUp) => "ok",
        Some(_) => "warn",
        None => "",
    }
    .to_string();
    cell
}

/// When the newest batch ran: its date, and the number of runs.
fn run_cell(line: &LineRuns<'_>) -> Cell {
    let Some(last) = line.batch.last() else {
        return Cell::missing();
    };
    let date = date_time(&last.started_at);
    if line.batch.len() > 1 {
        Cell::text(format!("{date} · {} runs", line.batch.len())).with_title(format!(
            "batch {}: {}",
            last.batch_id,
            line.batch
                .iter()
                .map(|r| r.run_id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    } else {
        Cell::text(date).with_title(last.run_id.clone())
    }
}

/// The flags of `runs`, every one kept, known or not.
fn flags(runs: &[&RunRecord]) -> Vec<String> {
    let flags: BTreeSet<&str> = runs
        .iter()
        .flat_map(|r| r.flags.iter().map(String::as_str))
        .collect();
    flags.into_iter().map(str::to_string).collect()
}

const THROUGHPUT: [(&str, &str); 8] = [
    ("cpu_avg", "cpu_avg_pct"),
    ("rows/s per core", "rows_per_s_per_core"),
    ("rows/s per GB", "rows_per_s_per_gb"),
    ("CPU / record", "us_cpu_per_record"),
    ("output/s", "output_per_s"),
    ("extra rec/rec", "extra_records_per_record"),
    ("offered/s", "offered_per_s"),
    ("consumed/s", "consumed_per_s"),
];

fn throughput_table(records: &[RunRecord], lines: &[LineRuns<'_>]) -> Table {
    let mut columns = vec![Column::plain("line")];
    columns.extend(
        THROUGHPUT[6..]
            .iter()
            .map(|(label, name)| metric_column(records, label, name)),
    );
    // The drift is shown as a percentage: the record's unit would mislead.
    columns.push(Column::plain("regime (lag drift)"));
    columns.extend(
        THROUGHPUT[..6]
            .iter()
            .map(|(label, name)| metric_column(records, label, name)),
    );
    columns.push(Column::utc("run"));
    let mut table = Table::new("Throughput / efficiency", columns);
    for line in lines.iter().filter(|l| !l.batch.is_empty()) {
        let flags = flags(&line.batch);
        let mut row = vec![if flags.is_empty() {
            Cell::text(line.label())
        } else {
            table
                .notes
                .push(format!("{} flagged: {}.", line.name, flags.join(", ")));
            Cell::text(format!("{} ⚑", line.label())).with_title(flags.join(", "))
        }];
        row.extend(
            THROUGHPUT[6..]
                .iter()
                .map(|(_, name)| metric_cell(&line.batch, name)),
        );
        row.push(regime_cell(line));
        row.extend(
            THROUGHPUT[..6]
                .iter()
                .map(|(_, name)| metric_cell(&line.batch, name)),
        );
        row.push(run_cell(line));
        table.rows.push(row);
    }
    table
}

/// consumed/s, backlog and product CPU per second, newest run of each line.
fn series_charts(lines: &[LineRuns<'_>]) -> Vec<Chart> {
    type Pick = fn(&crate::results::Series) -> Vec<f64>;
    let kinds: [(&str, &str, Pick); 3] = [
        ("consumed/s", "records/s", |s| s.consumed_per_s.clone()),
        ("backlog", "records", |s| {
            s.backlog.iter().map(|b| *b as f64).collect()
        }),
        ("product CPU", "% of one core", |s| {
            s.product_cpu_pct.clone()
        }),
    ];
    let mut charts = Vec::new();
    for (title, unit, pick) in kinds {
        let curves: Vec<Curve> = lines
            .iter()
            .filter_map(|line| {
                let series = line.batch.last()?.series.as_ref()?;
                let points: Vec<(f64, f64)> =
                    series.t_s.iter().copied().zip(pick(series)).collect();
                (!points.is_empty()).then(|| Curve {
                    name: line.name.clone(),
                    colour: line.colour,
                    points,
                })
            })
            .collect();
        if curves.is_empty() {
            continue;
        }
        charts.push(Chart {
            title: title.to_string(),
            svg: svg::line_chart(
                &curves,
                &XAxis::Linear {
                    label: "seconds from the window's start".to_string(),
                    marker: Some(0.0),
                },
                &format!("{title} ({unit})"),
                svg::SMALL,
            ),
        });
    }
    charts
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

fn eos_cost_table(suite: &Suite, records: &[RunRecord], lines: &[LineRuns<'_>]) -> Table {
    let mut table = Table::new(
        "Cost of exactly-once",
        vec![
            Column::plain("line"),
            Column::plain("vs"),
            Column::plain("regime"),
            metric_column(records, "rows/s per core", "rows_per_s_per_core"),
            metric_column(records, "CPU / record", "us_cpu_per_record"),
            metric_column(records, "consumed/s", "consumed_per_s"),
            metric_column(records, "latency p50", "latency_p50_ms"),
            Column::plain("measured"),
        ],
    );
    let find = |name: &str| lines.iter().find(|l| l.name == name && !l.batch.is_empty());
    let mut pairs: Vec<(String, String)> = Vec::new();
    for line in lines {
        let pair = match line.name.strip_suffix("-eos") {
            Some(base) => (line.name.clone(), base.to_string()),
            None => (format!("{}-eos", line.name), line.name.clone()),
        };
        if !pairs.contains(&pair) {
            pairs.push(pair);
        }
    }
    for (eos_name, alos_name) in pairs {
        let (Some(eos), Some(alos)) = (find(&eos_name), find(&alos_name)) else {
            // A line no product defines and no record names will never pair.
            let defined = |name: &str| {
                suite.lines().any(|l| l.line.name == name) || lines.iter().any(|l| l.name == name)
            };
            let why = if defined(&eos_name) && defined(&alos_name) {
                "no pair yet"
            } else {
                "no such line"
            };
            let mut row = vec![
                Cell::text(&eos_name),
                Cell::text(&alos_name),
                Cell::text(why).with_class("na"),
            ];
            row.extend((0..5).map(|_| Cell::text("")));
            table.rows.push(row);
            continue;
        };
        let (a, e) = (&alos.batch[..], &eos.batch[..]);
        let regime = |l: &LineRuns<'_>| l.regime().map_or("mixed", Regime::as_str);
        let both = |r: Regime| alos.regime() == Some(r) && eos.regime() == Some(r);
        let change =
            |name: &str| -> Cell {
                match (figure(a, name), figure(e, name)) {
                    (Some(x), Some(y)) if x.median > 0.0 => Cell::text(signed_percent(
                        y.median / x.median - 1.0,
                    ))
                    .with_title(format!("{} → {}", number(x.median), number(y.median))),
                    _ => Cell::missing(),
                }
            };
        let consumed = if both(Regime::Saturated) {
            change("consumed_per_s")
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
        let mut measured = vec![if a[0].batch_id == e[0].batch_id {
            "interleaved"
        } else {
            "separately"
        }];
        let (ra, re) = (a[a.len() - 1], e[e.len() - 1]);
        if ra.config != re.config {
            measured.push("≠ config");
        }
        if !ra.host.same_host(&re.host) {
            measured.push("≠ host");
        }
        if ra.bench_version != re.bench_version {
            measured.push("≠ bench");
        }
        table.rows.push(vec![
            Cell::text(&eos.name),
            Cell::text(&alos.name),
            Cell::text(format!("{} → {}", regime(alos), regime(eos))),
            change("rows_per_s_per_core"),
            transition(a, e, "us_cpu_per_record"),
            consumed,
            latency,
            Cell::text(measured.join(" · ")),
        ]);
    }
    table
}

fn resources_table(records: &[RunRecord], lines: &[LineRuns<'_>]) -> Table {
    let figures = [
        ("cpu_avg", "cpu_avg_pct"),
        ("cpu_p95", "cpu_p95_pct"),
        ("mem_avg", "mem_avg_mb"),
        ("mem_max", "mem_max_mb"),
        ("samples", "samples"),
    ];
    let mut columns = vec![Column::plain("line")];
    columns.extend(
        figures
            .iter()
            .map(|(label, name)| metric_column(records, label, name)),
    );
    columns.push(Column::plain("instrument"));
    let mut table = Table::new("Resources (raw)", columns);
    for line in lines.iter().filter(|l| !l.batch.is_empty()) {
        let mut row = vec![Cell::text(line.label())];
        row.extend(
            figures
                .iter()
                .map(|(_, name)| metric_cell(&line.batch, name)),
        );
        let instruments: BTreeSet<String> = line
            .batch
            .iter()
            .filter_map(|r| r.resources.as_ref()?.product.as_ref())
            .map(|p| {
                serde_json::to_value(p.instrument)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_default()
            })
            .collect();
        row.push(if instruments.is_empty() {
            Cell::missing()
        } else {
            Cell::text(format!(
                "/proc Δ, {}",
                instruments.into_iter().collect::<Vec<_>>().join(" + ")
            ))
        });
        table.rows.push(row);
    }
    table
}

fn characteristics_table(suite: &Suite, workload: &str, lines: &[LineRuns<'_>]) -> Table {
    let mut table = Table::new(
        "Bench characteristics",
        Column::plain_all(&[
            "line",
            "delivery",
            "processing",
            "engine",
            "scaling on one partition",
            "decode",
            "status",
        ]),
    );
    let mut described = BTreeSet::new();
    for line in suite.lines() {
        let shown = line.product.workloads.iter().any(|w| w == workload)
            || lines.iter().any(|l| l.name == line.line.name);
        if !shown {
            continue;
        }
        described.insert(line.line.name.clone());
        let c = &line.product.characteristics;
        table.rows.push(vec![
            Cell::text(&line.line.name),
            Cell::text(&line.line.delivery_detail),
            Cell::text(&c.processing),
            Cell::text(&c.engine),
            Cell::text(&c.scaling),
            Cell::text(&c.decode),
            availability_cell(line.product),
        ]);
    }
    for line in lines.iter().filter(|l| !described.contains(&l.name)) {
        let mut row = vec![Cell::text(&line.name)];
        row.push(Cell::text("not described in products/").with_class("na"));
        row.extend((0..5).map(|_| Cell::text("")));
        table.rows.push(row);
    }
    table
}

fn product_notes(suite: &Suite, workload: &str, lines: &[LineRuns<'_>]) -> Vec<ProductNote> {
    suite
        .products
        .values()
        .filter(|p| {
            p.workloads.iter().any(|w| w == workload)
                || lines
                    .iter()
                    .any(|l| p.lines.iter().any(|pl| pl.name == l.name))
        })
        .filter(|p| !p.notes.trim().is_empty())
        .map(|p| ProductNote {
            product: p.name.clone(),
            text: p.notes.trim().to_string(),
        })
        .collect()
}

fn failed_table(records: &[RunRecord]) -> Table {
    let mut table = Table::new(
        "Failed runs",
        vec![
            Column::plain("line"),
            Column::plain("run"),
            Column::utc("started"),
            Column::plain("why"),
        ],
    );
    let mut failed: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .collect();
    failed.sort_by(|a, b| b.started_at.cmp(&a.started_at));
    for r in failed.into_iter().take(20) {
        let why = r.failure.as_deref().unwrap_or("no reason recorded");
        table.rows.push(vec![
            Cell::text(&r.line),
            Cell::text(&r.run_id),
            Cell::text(date_time(&r.started_at)),
            Cell::text(one_line(why, 160)).with_title(why),
        ]);
    }
    table
}

/// `text` on one line, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let joined = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    if joined.chars().count() > max {
        format!("{}…", joined.chars().take(max).collect::<String>())
    } else {
        joined
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::read_records;

    fn fixture() -> RunRecord {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/report/results/stateless.jsonl");
        read_records(&path).unwrap().remove(0)
    }

    #[test]
    fn two_kernels_are_two_hosts_in_the_header() {
        let (a, mut b) = (fixture(), fixture());
        b.host.kernel.push_str("-next");
        let hosts = header(&[a, b]).hosts;
        assert_eq!(hosts.len(), 2, "{hosts:?}");
        assert_ne!(hosts[0], hosts[1]);
    }

    #[test]
    fn two_machines_alike_in_all_else_are_two_hosts_in_the_header() {
        let (mut a, mut b) = (fixture(), fixture());
        a.host.machine_id_hash = Some("00112233aabbccdd".into());
        b.host.machine_id_hash = Some("99887766aabbccdd".into());
        let hosts = header(&[a.clone(), b]).hosts;
        assert_eq!(hosts.len(), 2, "{hosts:?}");
        assert!(hosts.iter().any(|h| h.ends_with("(vm, machine 00112233)")));
        // an older record of the same host, without the new fields, joins it
        let hosts = header(&[a, fixture()]).hosts;
        assert_eq!(hosts.len(), 1, "{hosts:?}");
    }
}
