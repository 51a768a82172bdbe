//! What every page's header and navigation say of the results behind it:
//! the host, the suite's commits and the workloads.

use std::collections::{BTreeMap, BTreeSet};

use super::table::grouped;
use crate::config::Suite;
use crate::model::host::HostInfo;
use crate::results::RunRecord;

/// The distinct commits of `(started_at, suite_commit)` stamps, newest
/// first; stamps without one are counted as such.
pub fn commits_of<'a>(stamps: impl Iterator<Item = (&'a str, Option<&'a String>)>) -> Vec<String> {
    let mut newest_first: Vec<(&str, Option<&String>)> = stamps.collect();
    newest_first.sort_by(|a, b| b.0.cmp(a.0));
    let mut seen: Vec<String> = Vec::new();
    let mut without = 0;
    for (_, commit) in newest_first {
        match commit {
            Some(c) if !seen.contains(c) => seen.push(c.clone()),
            Some(_) => {}
            None => without += 1,
        }
    }
    if without > 0 {
        seen.push(format!(
            "{without} run{} without a recorded commit",
            if without == 1 { "" } else { "s" }
        ));
    }
    seen
}

/// Workloads in the configuration or in the results, in name order.
pub fn workload_names(suite: &Suite, results: &BTreeMap<String, Vec<RunRecord>>) -> Vec<String> {
    let names: BTreeSet<&String> = suite.workloads.keys().chain(results.keys()).collect();
    names.into_iter().cloned().collect()
}

/// A host as the page header shows it: every field [`HostInfo::same_host`]
/// compares, so two hosts read apart (the machine id by the first
/// digits of its digest).
pub fn host_label(h: &HostInfo) -> String {
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
