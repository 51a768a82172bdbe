//! From records to page contexts: the index, and each workload page put
//! together from its sections (summary, latency at the iso point, one
//! section per bench point, cost of exactly-once, sanity, characteristics,
//! releases, failed runs), every value formatted, so templates only lay out
//! text.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use super::avro::{self, PageLink};
use super::cdf::cdf_chart;
use super::chaos;
use super::characteristics::{
    availability_cell, characteristics_table, product_notes, ProductNote,
};
use super::charts::{series_charts, Chart};
use super::data::{self, DataLink, RecordsFile};
use super::eos_cost::eos_cost;
use super::failed::failed_table;
use super::header::{commits_of, host_label, workload_names};
use super::latency::{latency_section, LatencySection};
use super::lines::{group_lines, is_chaos, line_order, LineRuns, Verdict};
use super::points::{distinct_hosts, group_points, host_suffix, PointRuns, PointSettings};
use super::releases::releases_tables;
use super::resources::resources_table;
use super::sanity;
use super::summary::{summary, Summary};
use super::svg::{self, FlowBox};
use super::sweeps::{sweep_sections, SweepSection};
use super::table::{date_time, Cell, Column, Row, Table};
use super::throughput::throughput_table;
use crate::config::{Suite, Workload};
use crate::model::host::HostInfo;
use crate::results::{Regime, RunRecord, Status};

/// Everything the index page shows.
#[derive(Debug, Serialize)]
pub struct IndexPage {
    /// Every line against every workload.
    pub matrix: Table,
    pub workloads: Vec<WorkloadEntry>,
    pub products: Table,
    /// The newest run of all, or empty.
    pub last_updated: String,
    /// The suite commits of the records, newest first.
    pub commits: Vec<String>,
    /// The Avro pipeline page, which sets the CPU rig beside avro-etl.
    pub avro: PageLink,
}

/// The links from a workload page's tables and charts to their records,
/// and the records files those links name.
#[derive(Debug, Serialize)]
pub struct PageData {
    /// Every record of the workload, for the tables drawn from several
    /// points; none without any record.
    pub all: Option<DataLink>,
    /// The files the page links to, for the writer.
    #[serde(skip)]
    pub files: Vec<RecordsFile>,
}

/// One workload on the index.
#[derive(Debug, Serialize)]
pub struct WorkloadEntry {
    pub name: String,
    pub description: String,
    pub href: String,
    pub lines: Table,
    /// The workload's records; none without any.
    pub data: Option<DataLink>,
}

/// Everything one workload's page shows.
#[derive(Debug, Serialize)]
pub struct WorkloadPage {
    pub name: String,
    pub description: String,
    /// A page that shows the workload's runs from another side.
    pub see_also: Option<PageLink>,
    /// Inline SVG of the flow, or empty when the workload is not described.
    pub flow_svg: String,
    pub header: Header,
    pub summary: Summary,
    pub latency: LatencySection,
    /// One section per bench point with a comparable run, the default point
    /// first.
    pub points: Vec<PointSection>,
    /// One section per sweep (`suite sweep`), newest first.
    pub sweeps: Vec<SweepSection>,
    pub eos_cost: Table,
    pub sanity: Table,
    pub sanity_verdict: Verdict,
    /// Fault runs (kills, broker restarts) per line; None when there are none.
    pub chaos: Option<Table>,
    pub chaos_verdict: Verdict,
    pub characteristics: Table,
    pub client_settings: Table,
    pub expert_settings: Table,
    pub notes: Vec<ProductNote>,
    /// Lines measured on several versions at one point.
    pub releases: Table,
    /// The A/A checks the releases are read against.
    pub noise_floor: Table,
    pub failed: Table,
    /// The suite commits of the records shown, newest first.
    pub commits: Vec<String>,
    pub data: PageData,
}

/// The tables and charts of one bench point.
#[derive(Debug, Serialize)]
pub struct PointSection {
    /// An id for links within the page.
    pub id: String,
    /// Rate and window, and whether the point is the default or iso one.
    pub heading: String,
    /// The rest of the point: configuration, bench version, host.
    pub detail: String,
    pub throughput: Table,
    pub charts: Vec<Chart>,
    pub resources: Table,
    /// The point's records: what every table and chart here is drawn from.
    pub data: DataLink,
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

/// The distinct suite commits of `records`, newest run first; records
/// without one are counted as such.
fn commits<'a>(records: impl Iterator<Item = &'a RunRecord>) -> Vec<String> {
    commits_of(records.map(|r| (r.started_at.as_str(), r.suite_commit.as_ref())))
}

/// Builds the index page.
pub fn index_page(suite: &Suite, results: &BTreeMap<String, Vec<RunRecord>>) -> IndexPage {
    let mut workloads = Vec::new();
    for name in workload_names(suite, results) {
        let records = results.get(&name).map(Vec::as_slice).unwrap_or(&[]);
        workloads.push(WorkloadEntry {
            description: suite
                .workloads
                .get(&name)
                .map(|w| w.description.clone())
                .unwrap_or_else(|| "not described in workloads/".to_string()),
            href: format!("{name}.html"),
            lines: index_lines(suite, &name, records),
            data: data::workload_records(&name, records.len()).map(|(_, link)| link),
            name,
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
        matrix: super::matrix::matrix(suite, results),
        workloads,
        products: products_table(suite),
        last_updated,
        commits: commits(results.values().flatten()),
        avro: avro::page_link(),
    }
}

/// A workload's lines on the index: each line's newest run, then the
/// lines that implement the workload but have not run it yet.
fn index_lines(suite: &Suite, name: &str, records: &[RunRecord]) -> Table {
    let mut lines = Table::new(
        "lines",
        vec![
            Column::plain("line"),
            Column::plain("runs"),
            Column::utc("last run"),
            Column::plain("point"),
            Column::plain("status"),
            Column::plain("regime"),
        ],
    );
    let all: Vec<&RunRecord> = records.iter().collect();
    let grouped = group_lines(suite, &line_order(suite, records), &all);
    let hosts: Vec<HostInfo> = distinct_hosts(records.iter().map(|r| &r.host))
        .into_iter()
        .cloned()
        .collect();
    for line in &grouped {
        let Some(last) = line.all.last() else {
            continue;
        };
        let point = PointSettings::from_config(&last.config);
        lines.push(
            Row::new()
                .set("line", Cell::text(line.label()))
                .set("runs", Cell::text(line.all.len().to_string()))
                .set("last run", Cell::text(date_time(&last.started_at)))
                .set(
                    "point",
                    Cell::text(point.label() + &host_suffix(&last.host, &hosts))
                        .with_title(point.detail()),
                )
                .set("status", status_cell(last))
                .set(
                    "regime",
                    Cell::text(last.regime.map(Regime::as_str).unwrap_or("—")),
                ),
        );
    }
    for line in suite.lines().filter(|l| {
        l.product.workloads.iter().any(|w| w == name)
            && !grouped.iter().any(|g| g.name == l.line.name)
    }) {
        lines.push(
            Row::new()
                .set("line", Cell::text(&line.line.name))
                .set("runs", Cell::text("0"))
                .set("last run", Cell::missing())
                .set("point", Cell::missing())
                .set("status", Cell::text("not run yet").with_class("na"))
                .set("regime", Cell::missing()),
        );
    }
    lines
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

fn products_table(suite: &Suite) -> Table {
    let mut table = Table::new(
        "products",
        Column::plain_all(&["product", "version", "lines", "workloads", "status"]),
    );
    for product in suite.products.values() {
        let lines: Vec<&str> = product.lines.iter().map(|l| l.name.as_str()).collect();
        table.push(
            Row::new()
                .set(
                    "product",
                    Cell::text(&product.name).with_title(&product.description),
                )
                .set("version", Cell::text(product.resolved_version()))
                .set("lines", Cell::text(lines.join(", ")))
                .set("workloads", Cell::text(product.workloads.join(", ")))
                .set("status", availability_cell(product)),
        );
    }
    table
}

/// Builds one workload's page.
pub fn workload_page(suite: &Suite, name: &str, records: &[RunRecord]) -> WorkloadPage {
    let order = line_order(suite, records);
    let all: Vec<&RunRecord> = records.iter().collect();
    let page_lines = group_lines(suite, &order, &all);
    let points = group_points(suite, name, &order, records);
    let workload = suite.workloads.get(name);
    let sanity_spec = workload
        .and_then(crate::workloads::topic_output)
        .map(|output| output.sanity());
    let iso_settings = PointSettings::from_defaults(suite, suite.bench.iso_rate, workload);
    let iso = points.iter().find(|p| p.is_iso());
    // The iso point's name carries its host when the page has several.
    let iso_name = iso.map_or_else(|| iso_settings.label(), |p| p.name.clone());
    let (eos_cost, iso_costs) = eos_cost(suite, &order, records, &points, &page_lines);
    let mut files = Vec::new();
    let all = data::workload_records(name, records.len()).map(|(file, link)| {
        files.push(file);
        link
    });
    let (sections, iso_data) = point_sections(name, &points, &mut files);
    // The latency section and the summary are the iso point's: its
    // section's records when it has one, else every record.
    let iso_data = iso_data.or_else(|| all.clone());
    let (releases, noise_floor) = releases_tables(&points);
    WorkloadPage {
        name: name.to_string(),
        description: workload
            .map(|w| w.description.clone())
            .unwrap_or_else(|| "not described in workloads/".to_string()),
        see_also: (name == avro::WORKLOAD).then(avro::page_link),
        flow_svg: workload
            .map(|w| flow_svg(suite, w, &page_lines))
            .unwrap_or_default(),
        header: header(records),
        summary: summary(iso, iso_name.clone(), iso_costs),
        latency: latency_section(iso, iso_name, iso_settings.detail(), iso_data),
        points: sections,
        sweeps: sweep_sections(&order, records, suite.bench.sweep.p99_bound_ms),
        eos_cost,
        sanity: sanity::sanity_table(&points, sanity_spec),
        sanity_verdict: sanity::sanity_verdict(&points, sanity_spec),
        chaos: chaos::chaos_table(&order, records),
        chaos_verdict: chaos::chaos_verdict(&order, records),
        characteristics: characteristics_table(suite, name, &page_lines),
        client_settings: super::settings::client_settings_table(suite, name, &page_lines),
        expert_settings: super::settings::expert_settings_table(suite, name),
        notes: product_notes(suite, name, &page_lines),
        releases,
        noise_floor,
        failed: failed_table(records),
        commits: commits(records.iter()),
        data: PageData { all, files },
    }
}

/// The sections of the points where some run compares, with the link to the
/// iso point's records when it has a section. A point where no run compares
/// (only failed runs or crashes on purpose) has no figure to show: its runs
/// are listed under sanity and failed runs, with their point.
fn point_sections(
    name: &str,
    points: &[PointRuns<'_>],
    files: &mut Vec<RecordsFile>,
) -> (Vec<PointSection>, Option<DataLink>) {
    let several_hosts = points
        .iter()
        .any(|p| !p.point.host.same_host(&points[0].point.host));
    let mut iso_data = None;
    let sections = points
        .iter()
        .filter(|p| p.lines.iter().any(|l| !l.batch.is_empty()))
        .enumerate()
        .map(|(i, p)| {
            let id = format!("point-{}", i + 1);
            let (file, link) = data::section_records(name, &id, &p.records);
            files.push(file);
            if p.is_iso() {
                iso_data = Some(link.clone());
            }
            point_section(p, id, link, several_hosts)
        })
        .collect();
    (sections, iso_data)
}

/// One point's section: its throughput, charts and resources.
fn point_section(
    p: &PointRuns<'_>,
    id: String,
    data: DataLink,
    several_hosts: bool,
) -> PointSection {
    let label = &p.name;
    let mut detail = format!(
        "{} · bench version {}",
        p.point.settings.detail(),
        p.point.bench_version
    );
    if several_hosts {
        detail.push_str(&format!(" · host {}", host_label(&p.point.host)));
    }
    let mut charts = series_charts(&p.lines);
    charts.extend(cdf_chart(&p.lines));
    PointSection {
        heading: p.heading(),
        detail,
        throughput: throughput_table(
            &format!("Throughput / efficiency · {label}"),
            &p.records,
            &p.lines,
            p.point.settings.beyond_capacity_by_design(),
        ),
        charts,
        resources: resources_table(&format!("Resources (raw) · {label}"), &p.records, &p.lines),
        data,
        id,
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
        &match (workload.output_topic(), &workload.sink) {
            (Some(output), _) => topic("output topic", output.partitions, &output.compression),
            (None, _) => FlowBox {
                title: "ClickHouse table".to_string(),
                detail: "events (raw_messages on the raw arm)".to_string(),
            },
        },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_kernels_are_two_hosts_in_the_header() {
        let (a, mut b) = (
            crate::report::fixture_record(),
            crate::report::fixture_record(),
        );
        b.host.kernel.push_str("-next");
        let hosts = header(&[a, b]).hosts;
        assert_eq!(hosts.len(), 2, "{hosts:?}");
        assert_ne!(hosts[0], hosts[1]);
    }

    #[test]
    fn two_machines_alike_in_all_else_are_two_hosts_in_the_header() {
        let (mut a, mut b) = (
            crate::report::fixture_record(),
            crate::report::fixture_record(),
        );
        a.host.machine_id_hash = Some("00112233aabbccdd".into());
        b.host.machine_id_hash = Some("99887766aabbccdd".into());
        let hosts = header(&[a.clone(), b]).hosts;
        assert_eq!(hosts.len(), 2, "{hosts:?}");
        assert!(hosts.iter().any(|h| h.ends_with("(vm, machine 00112233)")));
        // an older record of the same host, without the new fields, joins it
        let hosts = header(&[a, crate::report::fixture_record()]).hosts;
        assert_eq!(hosts.len(), 1, "{hosts:?}");
    }
}
