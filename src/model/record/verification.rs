//! A record's exact verification: the run's whole output read back and
//! matched against the deterministic input.

use serde::{Deserialize, Serialize};

/// Exact verification of one run's whole output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verification {
    /// The product's committed input offset: it owns the output of `[0, this)`.
    pub committed_offset: u64,
    /// Records gendata wrote to the input topic.
    pub input_records: u64,
    /// Output records owed for `[0, committed_offset)`.
    pub expected: u64,
    /// Records read from the output topic (read_committed).
    pub output_records: u64,
    /// Owed records that never appeared.
    pub missing: u64,
    /// Extra copies of records already seen.
    pub duplicated: u64,
    /// Outputs that match nothing the workload owes (a filtered record, a
    /// foreign one, a pane of a window that never closed).
    pub unexpected: u64,
    /// Records with a field that differs from what the input implies.
    pub corrupted: u64,
    /// Correct records for input past the committed offset: allowed, since a
    /// product may write before it commits.
    pub beyond_commit: u64,
    /// First copies out of the order the workload requires: after a later
    /// record of the same key (stateless, noted), after a later record
    /// (passthrough, noted), after a pane of a later window (windowed, late:
    /// a failure).
    #[serde(default)]
    pub out_of_order: u64,
    pub verdict: VerificationVerdict,
    pub message: String,
}

/// Exact verification's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerificationVerdict {
    /// Every input record's output is there, nothing else is.
    Passed,
    /// Something is missing, unexpected or corrupted (or duplicated on an
    /// exactly-once line).
    Failed,
    /// Nothing wrong was found, but the product committed only part of its
    /// input by the end of the settle phase: the rest was never checked.
    Incomplete,
}

impl VerificationVerdict {
    pub fn as_str(self) -> &'static str {
        match self {
            VerificationVerdict::Passed => "passed",
            VerificationVerdict::Failed => "failed",
            VerificationVerdict::Incomplete => "incomplete",
        }
    }
}
