//! What `suite run`, `suite batch`, `suite regress` and `suite sweep` ask
//! the one path that runs lines for: the entries, each at a version and
//! with settings of its own, and the later batches of a sweep.

use crate::cli::RunOptions;
use crate::config::{ChaosPlan, LineRef, Setting, Workload};
use crate::results::SweepTag;

/// One line of a batch, at a version (none: the product's default).
pub(in crate::commands) struct LineEntry<'s> {
    pub(in crate::commands) line: LineRef<'s>,
    pub(in crate::commands) version: Option<&'s str>,
    /// Settings of this line alone (`LINE@KEY=VALUE`), over the batch's.
    pub(in crate::commands) settings: Vec<Setting>,
    /// The rate of this entry alone (a sweep's), over `--rate`.
    pub(in crate::commands) rate: Option<u64>,
    /// `run.parallelism` for this entry alone (a sweep's), set as
    /// `--set run.parallelism=N` would set it.
    pub(in crate::commands) parallelism: Option<u32>,
}

impl<'s> LineEntry<'s> {
    /// `line` at its product's default version, with no settings of its own.
    pub(in crate::commands) fn of(line: LineRef<'s>) -> LineEntry<'s> {
        LineEntry {
            line,
            version: None,
            settings: Vec::new(),
            rate: None,
            parallelism: None,
        }
    }

    /// The settings the entry adds over the batch's: its own, then its
    /// parallelism.
    pub(super) fn own_settings(&self) -> Vec<Setting> {
        let mut settings = self.settings.clone();
        if let Some(n) = self.parallelism {
            settings.push(Setting {
                key: "run.parallelism".to_string(),
                value: n.to_string(),
            });
        }
        settings
    }

    /// The entry as progress lines name it: the line, its own settings,
    /// and a sweep's rate.
    pub(super) fn label(&self) -> String {
        let mut label = std::iter::once(self.line.line.name.clone())
            .chain(self.own_settings().iter().map(Setting::to_string))
            .collect::<Vec<_>>()
            .join("@");
        if let Some(rate) = self.rate {
            label.push_str(&format!(" at {rate}/s"));
        }
        label
    }
}

/// What `suite run`, `suite batch` and `suite regress` ask for: lines to run
/// round by round.
pub(in crate::commands) struct LinesRequest<'s> {
    pub(in crate::commands) lines: Vec<LineEntry<'s>>,
    pub(in crate::commands) workload: &'s Workload,
    /// Load, results folder, and waiting for the host.
    pub(in crate::commands) options: RunOptions,
    pub(in crate::commands) rounds: u32,
    pub(in crate::commands) chaos: Option<ChaosPlan>,
    /// Records to pre-fill for a drain run.
    pub(in crate::commands) drain: Option<u64>,
    /// bench.yaml settings changed for these runs.
    pub(in crate::commands) settings: Vec<Setting>,
    /// The sweep these runs belong to.
    pub(in crate::commands) sweep: Option<SweepTag>,
}

/// A later batch of the same session: entries of the first batch (by
/// index) again, each at a rate of its own.
pub(in crate::commands) struct NextBatch {
    pub(in crate::commands) entries: Vec<(usize, u64)>,
    pub(in crate::commands) sweep: Option<SweepTag>,
}
