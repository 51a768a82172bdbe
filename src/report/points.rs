//! Bench points: the runs a table may compare. A point is a workload, its
//! rate and window, the run configuration (commit interval, parallelism,
//! input partitions), the bench version and the host; every table, ratio
//! and colour of a page compares the runs of one point, and a line's figure
//! at a point is its newest batch there.

use std::cmp::Ordering;

use super::lines::{group_lines, LineRuns};
use super::table::grouped;
use crate::config::{ClientProfile, CommitIntervals, EtlConfig, Profile, Suite, Workload};
use crate::model::broker::BrokerShape;
use crate::model::host::HostInfo;
use crate::results::{Isolation, RunConfig, RunRecord};

/// The settings of a run that decide what it measured: two runs whose
/// settings differ are never compared. Built from [`RunConfig`], one field
/// per setting, so a new setting is one more line here.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct PointSettings {
    /// Records per second offered (0 = as fast as gendata can).
    pub(super) rate: u64,
    pub(super) window_s: u64,
    /// Each delivery mode's commit interval.
    pub(super) commit_policy: CommitIntervals,
    pub(super) client: ClientProfile,
    pub(super) parallelism: u32,
    /// The form the products ran in: `embedded`, or a deployment such as
    /// `cluster` (the engine's own cluster processes).
    pub(super) deployment: String,
    /// The hosts the products ran on over SSH; empty for this one.
    pub(super) hosts: Vec<String>,
    pub(super) input_partitions: i32,
    /// Records pre-filled for a drain run; none for a paced one.
    pub(super) drain_records: Option<u64>,
    /// An ETL run's arm and sink settings.
    pub(super) etl: Option<EtlConfig>,
    /// The uniform profile or the products' experts'.
    pub(super) profile: Profile,
    /// Keys of the product's own settings the runs had otherwise, as JSON
    /// (empty for none).
    pub(super) product_settings: String,
    /// Which CPUs each role had.
    pub(super) isolation: Isolation,
}

impl PointSettings {
    /// The settings a run used.
    pub(super) fn from_config(config: &RunConfig) -> PointSettings {
        PointSettings {
            rate: config.rate,
            window_s: config.window_s,
            commit_policy: config.commit_policy(),
            client: config.client.clone(),
            parallelism: config.parallelism,
            deployment: config.deployment.clone(),
            hosts: config.hosts.clone(),
            input_partitions: config.input_partitions,
            drain_records: config.drain_records,
            etl: config.etl.clone(),
            profile: config.profile,
            product_settings: product_settings_text(&config.product_settings),
            isolation: config.isolation.clone(),
        }
    }

    /// bench.yaml's run defaults at `rate`, on `workload` (its input
    /// partitions, and bench.yaml's `etl` when its output is a table).
    pub(super) fn from_defaults(
        suite: &Suite,
        rate: u64,
        workload: Option<&Workload>,
    ) -> PointSettings {
        let input_partitions = workload.map_or(1, |w| w.input.partitions);
        let run = &suite.bench.run;
        PointSettings {
            rate,
            window_s: run.window_s,
            commit_policy: run.commit_interval_ms,
            client: suite.bench.client.clone(),
            parallelism: run.parallelism,
            deployment: run.deploy.clone(),
            hosts: Vec::new(),
            input_partitions,
            drain_records: None,
            etl: workload
                .filter(|w| w.is_etl())
                .map(|_| suite.bench.etl.clone()),
            profile: Profile::Uniform,
            product_settings: String::new(),
            // The point pages lead with: bench.yaml's layout on this host.
            isolation: crate::isolation::CpuSet::of_the_suite()
                .and_then(|cpus| crate::isolation::resolve(&suite.bench.isolation, &cpus))
                .unwrap_or_default(),
        }
    }

    /// Rate and window: `20,000/s · 30 s window`; a drain's size.
    pub(super) fn label(&self) -> String {
        if let Some(records) = self.drain_records {
            return format!("drain of {} records", grouped(records as i64));
        }
        let rate = if self.rate == 0 {
            "unpaced".to_string()
        } else {
            format!("{}/s", grouped(self.rate as i64))
        };
        let deployment = if self.deployment == crate::config::EMBEDDED {
            String::new()
        } else {
            format!(" · {} deployment", self.deployment)
        };
        let hosts = if self.hosts.is_empty() {
            String::new()
        } else {
            format!(" · on {}", self.hosts.join(", "))
        };
        let isolation = match &self.isolation {
            Isolation::None => String::new(),
            pinned => format!(" · pinned: {}", pinned.label()),
        };
        format!(
            "{rate} · {} s window{deployment}{hosts}{isolation}",
            self.window_s
        )
    }

    /// Whether every run here is fed beyond its capacity by design (a
    /// drain, an unpaced run): its figures are the capacity, whatever its
    /// regime.
    pub(super) fn beyond_capacity_by_design(&self) -> bool {
        self.drain_records.is_some() || self.rate == 0
    }

    /// The rest of the configuration, in words.
    pub(super) fn detail(&self) -> String {
        format!(
            "commits every {} ms exactly-once, {} ms at-least-once · parallelism {} · {} input partition{}",
            self.commit_policy.exactly_once,
            self.commit_policy.at_least_once,
            self.parallelism,
            self.input_partitions,
            if self.input_partitions == 1 { "" } else { "s" }
        )
    }
}

/// A run's product settings as one comparable text: `{"key":value}`, or
/// empty when the run had the product's own.
fn product_settings_text(
    settings: &std::collections::BTreeMap<String, serde_json::Value>,
) -> String {
    if settings.is_empty() {
        String::new()
    } else {
        serde_json::to_string(settings).unwrap_or_default()
    }
}

/// One bench point.
#[derive(Debug, Clone)]
pub(super) struct BenchPoint {
    pub(super) workload: String,
    pub(super) settings: PointSettings,
    pub(super) bench_version: u32,
    pub(super) host: HostInfo,
    /// What the broker ran (`apache-kafka 4.4.0`): a broker release changes
    /// what every product is measured against.
    pub(super) broker: Option<String>,
    /// Its nodes and replicas.
    pub(super) broker_shape: BrokerShape,
}

impl BenchPoint {
    /// The point a run was measured at.
    pub(super) fn from_record(record: &RunRecord) -> BenchPoint {
        BenchPoint {
            workload: record.workload.clone(),
            settings: PointSettings::from_config(&record.config),
            bench_version: record.bench_version,
            host: record.host.clone(),
            broker: record.broker.version.clone(),
            broker_shape: record.broker.shape(),
        }
    }

    /// Whether `record` was measured at this point.
    pub(super) fn holds(&self, record: &RunRecord) -> bool {
        self.workload == record.workload
            && self.settings == PointSettings::from_config(&record.config)
            && self.bench_version == record.bench_version
            && self.host.same_host(&record.host)
            && self.broker == record.broker.version
            && self.broker_shape == record.broker.shape()
    }

    /// Whether `record` was measured here but for its ETL arm (decoder and
    /// format): the arms the Avro page sets side by side.
    pub(super) fn holds_any_arm(&self, record: &RunRecord) -> bool {
        self.workload == record.workload
            && self.settings.clone().arm_free()
                == PointSettings::from_config(&record.config).arm_free()
            && self.bench_version == record.bench_version
            && self.host.same_host(&record.host)
            && self.broker == record.broker.version
            && self.broker_shape == record.broker.shape()
    }
}

impl PointSettings {
    /// These settings with the ETL arm set aside: every arm alike.
    fn arm_free(mut self) -> PointSettings {
        if let Some(etl) = &mut self.etl {
            let defaults = EtlConfig::default();
            etl.decoder = defaults.decoder;
            etl.format = defaults.format;
        }
        self
    }
}

/// What a point is to the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PointRole {
    /// bench.yaml's run defaults, and the iso rate too.
    DefaultAndIso,
    /// bench.yaml's run defaults.
    Default,
    /// The run defaults at bench.yaml's iso rate: the latency tables' point.
    Iso,
    Other,
}

/// The runs of one point and its lines.
pub(super) struct PointRuns<'a> {
    pub(super) point: BenchPoint,
    /// Rate and window, and whatever else sets the point apart from the run
    /// defaults: no two points of a page share a name.
    pub(super) name: String,
    pub(super) role: PointRole,
    pub(super) records: Vec<&'a RunRecord>,
    pub(super) lines: Vec<LineRuns<'a>>,
}

impl PointRuns<'_> {
    /// Whether the latency tables are at this point.
    pub(super) fn is_iso(&self) -> bool {
        matches!(self.role, PointRole::Iso | PointRole::DefaultAndIso)
    }

    /// The section heading: rate and window, and what the point is.
    pub(super) fn heading(&self) -> String {
        let role = match self.role {
            PointRole::DefaultAndIso => " (run defaults, iso rate)",
            PointRole::Default => " (run defaults)",
            PointRole::Iso => " (iso rate)",
            PointRole::Other => "",
        };
        format!("{}{role}", self.name)
    }

    fn newest_run(&self) -> &str {
        self.records
            .iter()
            .map(|r| r.started_at.as_str())
            .max()
            .unwrap_or("")
    }
}

/// The records of a page by point: the default point first, then the iso
/// point, then the others by settings, the newest bench version first.
pub(super) fn group_points<'a>(
    suite: &Suite,
    workload: &str,
    order: &[String],
    records: &'a [RunRecord],
) -> Vec<PointRuns<'a>> {
    let mut grouped: Vec<(BenchPoint, Vec<&RunRecord>)> = Vec::new();
    for record in records {
        match grouped.iter_mut().find(|(p, _)| p.holds(record)) {
            Some((_, runs)) => runs.push(record),
            None => grouped.push((BenchPoint::from_record(record), vec![record])),
        }
    }
    let spec = suite.workloads.get(workload);
    let defaults = PointSettings::from_defaults(suite, suite.bench.default_rate(), spec);
    let iso = PointSettings::from_defaults(suite, suite.bench.iso_rate, spec);
    let mut points: Vec<PointRuns<'a>> = grouped
        .into_iter()
        .map(|(point, records)| PointRuns {
            lines: group_lines(suite, order, &records),
            role: PointRole::Other,
            name: String::new(),
            point,
            records,
        })
        .collect();
    // The current bench version before older ones, then the newest runs.
    points.sort_by(|a, b| {
        b.point
            .bench_version
            .cmp(&a.point.bench_version)
            .then_with(|| b.newest_run().cmp(a.newest_run()))
    });
    // Only the first point with the default (iso) settings takes the role:
    // another host or bench version at those settings is its own section.
    let default_at = points.iter().position(|p| p.point.settings == defaults);
    let iso_at = points.iter().position(|p| p.point.settings == iso);
    for (i, point) in points.iter_mut().enumerate() {
        point.role = match (Some(i) == default_at, Some(i) == iso_at) {
            (true, true) => PointRole::DefaultAndIso,
            (true, false) => PointRole::Default,
            (false, true) => PointRole::Iso,
            (false, false) => PointRole::Other,
        };
    }
    let rank = |role: PointRole| match role {
        PointRole::DefaultAndIso | PointRole::Default => 0,
        PointRole::Iso => 1,
        PointRole::Other => 2,
    };
    points.sort_by(|a, b| {
        rank(a.role)
            .cmp(&rank(b.role))
            .then_with(|| match (a.role, b.role) {
                (PointRole::Other, PointRole::Other) => a
                    .point
                    .settings
                    .cmp(&b.point.settings)
                    .then_with(|| b.point.bench_version.cmp(&a.point.bench_version)),
                _ => Ordering::Equal,
            })
    });
    let hosts: Vec<HostInfo> = distinct_hosts(points.iter().map(|p| &p.point.host))
        .into_iter()
        .cloned()
        .collect();
    for point in &mut points {
        point.name = point_name(suite, &defaults, &hosts, &point.point);
    }
    points
}

/// The different hosts among `hosts`, in order of first appearance.
pub(super) fn distinct_hosts<'h>(hosts: impl Iterator<Item = &'h HostInfo>) -> Vec<&'h HostInfo> {
    let mut distinct: Vec<&HostInfo> = Vec::new();
    for host in hosts {
        if !distinct.iter().any(|h| h.same_host(host)) {
            distinct.push(host);
        }
    }
    distinct
}

/// ` · host <label>` for `host` where `hosts` holds more than one host (so
/// each row of a table that mixes hosts names its own), else nothing.
pub(super) fn host_suffix(host: &HostInfo, hosts: &[HostInfo]) -> String {
    if hosts.len() < 2 {
        return String::new();
    }
    let all: Vec<&HostInfo> = hosts.iter().collect();
    format!(" · host {}", host.label_among(&all))
}

/// A point's rate and window, each of its other settings that is not the
/// run defaults', and its host when the page has several (`hosts`).
fn point_name(
    suite: &Suite,
    defaults: &PointSettings,
    hosts: &[HostInfo],
    point: &BenchPoint,
) -> String {
    let s = &point.settings;
    let mut parts = vec![s.label()];
    if !s.profile.is_uniform() {
        parts.push(format!("{} profile", s.profile.as_str()));
    }
    if !s.product_settings.is_empty() {
        parts.push(format!("product settings {}", s.product_settings));
    }
    if s.commit_policy != defaults.commit_policy {
        parts.push(format!(
            "commits every {} ms exactly-once, {} ms at-least-once",
            s.commit_policy.exactly_once, s.commit_policy.at_least_once
        ));
    }
    for ((key, value), (_, default)) in s
        .client
        .entries()
        .into_iter()
        .zip(defaults.client.entries())
    {
        if value != default {
            parts.push(format!("{key} {value}"));
        }
    }
    if s.parallelism != defaults.parallelism {
        parts.push(format!("parallelism {}", s.parallelism));
    }
    if s.input_partitions != defaults.input_partitions {
        parts.push(format!("{} input partitions", s.input_partitions));
    }
    if point.bench_version != suite.bench.bench_version {
        parts.push(format!("bench version {}", point.bench_version));
    }
    if point.broker != suite.bench.broker.recorded_version() {
        let broker = point.broker.as_deref().unwrap_or("of no recorded version");
        parts.push(format!("broker {broker}"));
    }
    if !suite.bench.broker.has_shape(&point.broker_shape) {
        parts.push(point.broker_shape.to_string());
    }
    parts.join(" · ") + &host_suffix(&point.host, hosts)
}

#[cfg(test)]
mod tests;
