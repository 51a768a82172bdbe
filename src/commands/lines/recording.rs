//! Where the batch's records and pages go, checked writable before anything
//! starts, and each record appended as its run ends, the pages re-rendered.

use std::path::PathBuf;

use anyhow::Result;

use super::request::LinesRequest;
use crate::config::Suite;
use crate::report::{self, BadLines};
use crate::results::{self, RunRecord};
use crate::runner;

/// Where the batch's records and pages go.
pub(super) struct Folders {
    pub(super) results: PathBuf,
    pages: PathBuf,
}

/// The results and report folders, checked writable before anything
/// starts: a record that cannot be written would cost the whole measurement.
pub(super) fn writable_folders(suite: &Suite, request: &LinesRequest<'_>) -> Result<Folders> {
    let results = runner::results_dir(&suite.root, &suite.bench, request.options.results.clone());
    let pages = report::default_out_dir(&results);
    results::ensure_writable(&results).map_err(|err| {
        anyhow::anyhow!(
            "results folder {} cannot be written ({err}); choose another with --results",
            results.display()
        )
    })?;
    results::ensure_writable(&pages).map_err(|err| {
        anyhow::anyhow!(
            "report folder {} cannot be written ({err}); make it writable or choose another --results",
            pages.display()
        )
    })?;
    Ok(Folders { results, pages })
}

/// The records of a session, each appended and shown as its run ends, and
/// kept in the order the runs ended.
pub(super) struct Recorder<'r> {
    suite: &'r Suite,
    folders: &'r Folders,
    records: Vec<RunRecord>,
}

impl<'r> Recorder<'r> {
    pub(super) fn new(suite: &'r Suite, folders: &'r Folders) -> Recorder<'r> {
        Recorder {
            suite,
            folders,
            records: Vec::new(),
        }
    }

    /// Keeps `record` and writes it down with [`record_run`].
    pub(super) fn record(&mut self, record: &RunRecord) -> Result<()> {
        self.records.push(record.clone());
        record_run(self.suite, self.folders, record)
    }

    /// Every record written so far.
    pub(super) fn records(&self) -> &[RunRecord] {
        &self.records
    }

    /// Every record written, the recorder done.
    pub(super) fn into_records(self) -> Vec<RunRecord> {
        self.records
    }
}

/// Appends a run's record as it ends, prints its summary and re-renders
/// the pages: they always show the newest result, and a page that fails to
/// render never costs a measurement.
fn record_run(suite: &Suite, folders: &Folders, record: &RunRecord) -> Result<()> {
    let path = results::append_record(&folders.results, record)?;
    runner::print_summary(record);
    eprintln!("  appended to {}", path.display());
    match report::write_site(suite, &folders.results, &folders.pages, BadLines::Warn) {
        Ok(index) => eprintln!("  report: {}", index.display()),
        Err(err) => eprintln!("warning: the report was not updated: {err:#}"),
    }
    Ok(())
}
