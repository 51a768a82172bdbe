//! The files beside the pages, so a reader can take what a table or chart
//! shows: `data/` in the pages' folder holds each workload's records as the
//! results file holds them (`WORKLOAD.jsonl`), the records of each of its
//! page's bench point sections (`WORKLOAD/point-N.jsonl`), the CPU rig's
//! records (`cpu-rig.jsonl`) and each run's latency histogram in
//! HdrHistogram's percentile-distribution text (`hgrm/RUN_ID.hgrm`). The
//! page contexts link to them through this module and name the records files
//! they link; `write_site` writes exactly those, and removes the ones an
//! earlier render left behind.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use messages::histogram::decode as decode_histogram;
use serde::Serialize;

use super::table::Link;
use crate::results::{RunRecord, RIG_FILE};

/// The folder beside the pages that holds their data.
const DIR: &str = "data";

/// The file kinds this module writes: only these are removed as stale, so
/// anything else a reader put in `data/` stays.
const OWN_EXTENSIONS: [&str; 2] = ["jsonl", "hgrm"];

/// A link from a table or chart to the records it was drawn from.
#[derive(Debug, Clone, Serialize)]
pub struct DataLink {
    /// Relative to the page.
    pub href: String,
    pub text: String,
}

/// Which records a records file holds.
#[derive(Debug, Clone)]
pub enum Selection {
    /// Every record of the workload's results file.
    Workload(String),
    /// The workload's records of these runs.
    Runs(String, BTreeSet<String>),
    /// Every record of the CPU rig's results file.
    Rig,
}

/// A records file a page links to.
#[derive(Debug, Clone)]
pub struct RecordsFile {
    /// Relative to the pages' folder.
    pub path: String,
    pub selection: Selection,
}

impl RecordsFile {
    /// The link to this file, which holds `count` records.
    fn link(&self, count: usize) -> DataLink {
        DataLink {
            href: self.path.clone(),
            text: format!(
                "data: {count} record{} (JSONL)",
                if count == 1 { "" } else { "s" }
            ),
        }
    }
}

/// Every record of `workload` (none: no file, no link).
pub(super) fn workload_records(workload: &str, count: usize) -> Option<(RecordsFile, DataLink)> {
    let file = RecordsFile {
        path: format!("{DIR}/{workload}.jsonl"),
        selection: Selection::Workload(workload.to_string()),
    };
    (count > 0).then(|| {
        let link = file.link(count);
        (file, link)
    })
}

/// The records of one section of `workload`'s page (`section` its id).
pub(super) fn section_records(
    workload: &str,
    section: &str,
    records: &[&RunRecord],
) -> (RecordsFile, DataLink) {
    let file = RecordsFile {
        path: format!("{DIR}/{workload}/{section}.jsonl"),
        selection: Selection::Runs(
            workload.to_string(),
            records.iter().map(|r| r.run_id.clone()).collect(),
        ),
    };
    let link = file.link(records.len());
    (file, link)
}

/// The CPU rig's records, `count` of them (none: no file, no link).
pub(super) fn rig_records(count: usize) -> Option<(RecordsFile, DataLink)> {
    let file = RecordsFile {
        path: format!("{DIR}/{RIG_FILE}"),
        selection: Selection::Rig,
    };
    (count > 0).then(|| {
        let link = file.link(count);
        (file, link)
    })
}

/// Whether `record` has a histogram file: it stored one that decodes, the
/// same test `export::hgrm` makes, so no link ever points at a file that
/// was not written.
fn has_histogram(record: &RunRecord) -> bool {
    record
        .latency_histogram
        .as_deref()
        .and_then(decode_histogram)
        .is_some()
}

/// A run's histogram file. A run id is letters, digits and `-`; anything
/// else becomes `_`, so no id reaches outside the folder.
fn hgrm_path(run_id: &str) -> String {
    let stem: String = run_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{DIR}/hgrm/{stem}.hgrm")
}

/// Links to the histograms of `runs` that have one: `hgrm` for a single
/// run, `hgrm 1`, `2`, ... in the runs' order for several; the run id on
/// hover.
pub(super) fn histogram_links(runs: &[&RunRecord]) -> Vec<Link> {
    let several = runs.len() > 1;
    runs.iter()
        .enumerate()
        .filter(|(_, r)| has_histogram(r))
        .map(|(i, r)| Link {
            text: match (several, i) {
                (false, _) => "hgrm".to_string(),
                (true, 0) => "hgrm 1".to_string(),
                (true, i) => (i + 1).to_string(),
            },
            href: hgrm_path(&r.run_id),
            title: format!("latency histogram of run {} (HdrHistogram text)", r.run_id),
        })
        .collect()
}

/// The records files `files` and every run's histogram: `(path relative
/// to the pages' folder, contents)`. A records file holds the lines of
/// `lines` (each workload's, and the rig's under [`RIG_FILE`]) of the
/// records it selects, as read, one per line.
pub(super) fn data_files(
    files: &[RecordsFile],
    results: &BTreeMap<String, Vec<RunRecord>>,
    lines: &BTreeMap<String, Vec<String>>,
) -> Result<Vec<(String, String)>> {
    let no_lines = Vec::new();
    let lines_of = |name: &str| lines.get(name).unwrap_or(&no_lines);
    let mut out = Vec::new();
    for file in files {
        let selected: Vec<&String> = match &file.selection {
            Selection::Workload(name) => lines_of(name).iter().collect(),
            Selection::Rig => lines_of(RIG_FILE).iter().collect(),
            Selection::Runs(name, runs) => results
                .get(name)
                .map(Vec::as_slice)
                .unwrap_or(&[])
                .iter()
                .zip(lines_of(name))
                .filter(|(record, _)| runs.contains(&record.run_id))
                .map(|(_, line)| line)
                .collect(),
        };
        let text: String = selected.iter().map(|l| format!("{l}\n")).collect();
        out.push((file.path.clone(), text));
    }
    for record in results.values().flatten().filter(|r| has_histogram(r)) {
        out.push((hgrm_path(&record.run_id), super::export::hgrm(record)?));
    }
    Ok(out)
}

/// Writes `contents` to `path` through a temporary file beside it and a
/// rename, so a reader never sees half a file.
pub(super) fn write_atomically(path: &Path, contents: &str) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let temporary = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&temporary, contents)
        .with_context(|| format!("writing {}", temporary.display()))?;
    std::fs::rename(&temporary, path).with_context(|| format!("writing {}", path.display()))
}

/// Removes from `out_dir`'s `data/` every records or histogram file not in
/// `written` (paths relative to `out_dir`): what an earlier render wrote
/// for runs, sections or workloads that are gone. Folders left empty go too.
pub(super) fn remove_stale(out_dir: &Path, written: &[PathBuf]) -> Result<()> {
    let written: BTreeSet<PathBuf> = written.iter().map(|p| out_dir.join(p)).collect();
    remove_stale_in(&out_dir.join(DIR), &written)
}

fn remove_stale_in(dir: &Path, written: &BTreeSet<PathBuf>) -> Result<()> {
    if !dir.is_dir() {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        if path.is_dir() {
            remove_stale_in(&path, written)?;
            // Only an empty folder is removed; one with other files stays.
            let _ = std::fs::remove_dir(&path);
            continue;
        }
        let own = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| OWN_EXTENSIONS.contains(&e));
        if own && !written.contains(&path) {
            std::fs::remove_file(&path).with_context(|| format!("removing {}", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_id_stays_inside_the_histogram_folder() {
        assert_eq!(
            hgrm_path("20261130T053600Z-rustpipe-eos-b001"),
            "data/hgrm/20261130T053600Z-rustpipe-eos-b001.hgrm"
        );
        assert_eq!(hgrm_path("../../x/y"), "data/hgrm/.._.._x_y.hgrm");
    }

    #[test]
    fn a_run_without_a_histogram_gets_no_link() {
        let with = crate::report::fixture_record();
        assert!(with.latency_histogram.is_some());
        let mut without = with.clone();
        without.latency_histogram = None;
        let mut broken = with.clone();
        broken.latency_histogram = Some("not base64".into());
        let links = histogram_links(&[&with, &without, &broken]);
        assert_eq!(links.len(), 1);
        assert_eq!(links[0].text, "hgrm 1");
        assert!(histogram_links(&[&without]).is_empty());
        assert_eq!(histogram_links(&[&with])[0].text, "hgrm");
    }

    #[test]
    fn stale_files_go_and_others_stay() {
        let out = tempfile::tempdir().unwrap();
        let data = out.path().join(DIR);
        for file in [
            "kept.jsonl",
            "gone.jsonl",
            "hgrm/gone.hgrm",
            "old-workload/point-1.jsonl",
            "notes.txt",
        ] {
            write_atomically(&data.join(file), "x").unwrap();
        }
        remove_stale(out.path(), &[PathBuf::from("data/kept.jsonl")]).unwrap();
        assert!(data.join("kept.jsonl").is_file());
        assert!(data.join("notes.txt").is_file());
        assert!(!data.join("gone.jsonl").exists());
        assert!(!data.join("hgrm").exists());
        assert!(!data.join("old-workload").exists());
    }
}
