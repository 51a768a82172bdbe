//! The report pages: every results file is read, each workload's records
//! are grouped by bench point (points.rs) and line (lines.rs) and become a
//! typed context of formatted values (context.rs puts the page together from
//! one module per section, over the table model of table.rs, with inline SVG
//! charts from svg.rs), and minijinja renders the templates of templates/
//! with HTML autoescaping. The Avro pipeline page (avro/) sets the CPU rig's
//! records beside the avro-etl runs. The pages load nothing at view time,
//! so they work offline and from file://. data.rs lays out the files
//! written beside them: the records each table and chart was drawn from,
//! and each run's latency histogram; cdf.rs draws the latency CDF.
//! export.rs writes the same tables as CSV or Markdown, and a run's latency
//! histogram in HdrHistogram's percentile-distribution format.

mod avro;
mod cdf;
mod chaos;
mod characteristics;
mod charts;
mod context;
mod data;
mod eos_cost;
pub mod export;
mod failed;
mod figures;
mod header;
mod histograms;
mod latency;
mod lines;
mod matrix;
mod points;
mod releases;
mod resources;
mod sanity;
mod settings;
mod summary;
mod svg;
mod sweeps;
mod table;
mod throughput;

pub use avro::{AvroPage, E2eSection, Headline, PageLink, RigSection};
pub use characteristics::ProductNote;
pub use charts::Chart;
pub use context::{Header, IndexPage, PageData, PointSection, WorkloadEntry, WorkloadPage};
pub use data::{DataLink, RecordsFile, Selection};
pub use latency::LatencySection;
pub use lines::Verdict;
pub use summary::{Summary, SummaryItem};
pub use sweeps::SweepSection;
pub use table::{Cell, Column, Link, Row, Table};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use minijinja::Environment;
use serde::Serialize;

use crate::config::Suite;
use crate::results::{
    read_results_file, read_rig_records, ResultsFile, RigRecord, RunRecord, SkippedLine, RIG_FILE,
};

/// The folder the pages go to when `--out` is not given: `html/` inside the
/// results folder, so pages never land outside the folder the runs wrote to.
pub fn default_out_dir(results_dir: &Path) -> PathBuf {
    results_dir.join("html")
}

/// What reading the results does with a line that is not a run record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadLines {
    /// Print a warning naming its file and line, and go on with the rest.
    Warn,
    /// Fail, naming its file and line (`suite report --strict`).
    Fail,
}

impl BadLines {
    /// Warns of each skipped line, or fails on the first.
    fn handle(self, skipped: &[SkippedLine]) -> Result<()> {
        if let (BadLines::Fail, Some(bad)) = (self, skipped.first()) {
            return Err(bad.clone().into());
        }
        for bad in skipped {
            eprintln!("warning: {bad} (line skipped)");
        }
        Ok(())
    }
}

/// Every record of every `<workload>.jsonl` in `dir`, by workload. A missing
/// folder holds no records. A line that is not a record is skipped with a
/// warning on standard error, or fails the whole read, as `bad_lines` says.
pub fn load_results(dir: &Path, bad_lines: BadLines) -> Result<BTreeMap<String, Vec<RunRecord>>> {
    Ok(read_workload_files(dir, bad_lines)?
        .into_iter()
        .map(|(name, file)| (name, file.records))
        .collect())
}

/// Every `<workload>.jsonl` of `dir` as read, records and their lines, by
/// workload; lines that are not records treated as `bad_lines` says.
fn read_workload_files(dir: &Path, bad_lines: BadLines) -> Result<BTreeMap<String, ResultsFile>> {
    let mut results = BTreeMap::new();
    if !dir.exists() {
        return Ok(results);
    }
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut paths = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        // The CPU rig's records are not run records; the Avro page reads them.
        let is_rig = path.file_name().and_then(|n| n.to_str()) == Some(RIG_FILE);
        if path.extension().and_then(|e| e.to_str()) == Some("jsonl") && !is_rig {
            paths.push(path);
        }
    }
    // In name order, so warnings and the first failure are the same each time.
    paths.sort();
    for path in paths {
        let Some(stem) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let file = read_results_file(&path)?;
        bad_lines.handle(&file.skipped)?;
        results.insert(stem.to_string(), file);
    }
    Ok(results)
}

/// The CPU rig's records of `dir` (none when it has no cpu-rig.jsonl); a
/// line that is not a rig record is treated as `bad_lines` says.
pub fn load_rig_results(dir: &Path, bad_lines: BadLines) -> Result<Vec<RigRecord>> {
    Ok(read_rig_file(dir, bad_lines)?.records)
}

fn read_rig_file(dir: &Path, bad_lines: BadLines) -> Result<ResultsFile<RigRecord>> {
    let file = read_rig_records(dir)?;
    bad_lines.handle(&file.skipped)?;
    Ok(file)
}

/// The templates, compiled into the binary so `suite` renders from anywhere.
const TEMPLATES: [(&str, &str); 5] = [
    ("base.html", include_str!("../../templates/base.html")),
    ("macros.html", include_str!("../../templates/macros.html")),
    ("index.html", include_str!("../../templates/index.html")),
    (
        "workload.html",
        include_str!("../../templates/workload.html"),
    ),
    ("avro.html", include_str!("../../templates/avro.html")),
];

fn environment() -> Result<Environment<'static>> {
    let mut env = Environment::new();
    env.set_syntax(
        minijinja::syntax::SyntaxConfig::builder()
            .trim_blocks(true)
            .lstrip_blocks(true)
            .build()
            .context("template syntax")?,
    );
    for (name, source) in TEMPLATES {
        env.add_template(name, source)
            .with_context(|| format!("templates/{name}"))?;
    }
    Ok(env)
}

/// The rendered pages and the records files they link to.
pub struct Site {
    /// `(file name, HTML)`, the index first, the Avro pipeline page last.
    pub pages: Vec<(String, String)>,
    /// Every records file a page links to.
    pub records_files: Vec<RecordsFile>,
}

/// Renders every page, the Avro pipeline page from the run records and the
/// CPU rig's.
pub fn render_site(
    suite: &Suite,
    results: &BTreeMap<String, Vec<RunRecord>>,
    rig: &[RigRecord],
) -> Result<Site> {
    let env = environment()?;
    let mut pages = vec![(
        "index.html".to_string(),
        render(&env, "index.html", &context::index_page(suite, results))?,
    )];
    let mut records_files = Vec::new();
    for name in header::workload_names(suite, results) {
        let records = results.get(&name).map(Vec::as_slice).unwrap_or(&[]);
        let page = context::workload_page(suite, &name, records);
        pages.push((
            format!("{name}.html"),
            render(&env, "workload.html", &page)?,
        ));
        records_files.extend(page.data.files);
    }
    let avro_runs = results
        .get(avro::WORKLOAD)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    pages.push((
        avro::PAGE.to_string(),
        render(&env, "avro.html", &avro::avro_page(avro_runs, rig))?,
    ));
    records_files.extend(data::rig_records(rig.len()).map(|(file, _)| file));
    Ok(Site {
        pages,
        records_files,
    })
}

fn render(env: &Environment<'_>, template: &str, page: &impl Serialize) -> Result<String> {
    env.get_template(template)
        .and_then(|t| t.render(minijinja::value::Serde(page)))
        .with_context(|| format!("rendering templates/{template}"))
}

/// Reads `results_dir` (treating lines that are not records as `bad_lines`
/// says) and writes every page into `out_dir`, with the files its links
/// name under `data/` (data.rs), each file through a rename so a reader
/// never sees half of one; returns the index's path. The data goes first,
/// so no page links to a file not yet written, and the data files of an
/// earlier render that no page names any more are removed last.
pub fn write_site(
    suite: &Suite,
    results_dir: &Path,
    out_dir: &Path,
    bad_lines: BadLines,
) -> Result<PathBuf> {
    let mut results = BTreeMap::new();
    let mut lines = BTreeMap::new();
    for (name, file) in read_workload_files(results_dir, bad_lines)? {
        results.insert(name.clone(), file.records);
        lines.insert(name, file.lines);
    }
    let rig = read_rig_file(results_dir, bad_lines)?;
    lines.insert(RIG_FILE.to_string(), rig.lines);
    let site = render_site(suite, &results, &rig.records)?;
    let data_files = data::data_files(&site.records_files, &results, &lines)?;
    for (name, text) in data_files.iter().chain(&site.pages) {
        data::write_atomically(&out_dir.join(name), text)?;
    }
    let written: Vec<PathBuf> = data_files.iter().map(|(p, _)| PathBuf::from(p)).collect();
    data::remove_stale(out_dir, &written)?;
    Ok(out_dir.join("index.html"))
}

/// One workload's page context, for export.
pub fn workload_page(suite: &Suite, workload: &str, records: &[RunRecord]) -> WorkloadPage {
    context::workload_page(suite, workload, records)
}

/// The first record of the report's fixture results, for unit tests that
/// change one field of a real record.
#[cfg(test)]
fn fixture_record() -> RunRecord {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/report/results/stateless.jsonl");
    crate::results::read_records(&path).unwrap().remove(0)
}

/// The repository's own suite, for unit tests that need its lines.
#[cfg(test)]
fn repo_suite() -> Suite {
    Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml")).unwrap()
}
