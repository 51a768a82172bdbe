//! A record's place in a sweep: the sweep's id, what it varies, and a
//! bisection's step.

use serde::{Deserialize, Serialize};

/// A run's place in a sweep: a grid of lines against rates or against
/// parallelism, run as batches, and for a rate sweep the bisection that
/// follows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepTag {
    /// Shared by every run of one `suite sweep`, its grid and its bisection.
    pub id: String,
    pub kind: SweepKind,
    /// A rate sweep's bound on added p99 (bench.yaml `sweep.p99_bound_ms`)
    /// when it ran: the maximum sustainable throughput is judged against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99_bound_ms: Option<f64>,
    /// The bisection step that ran this rate, from 1; absent for the grid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bisect_step: Option<u32>,
}

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepKind {
    /// The offered rate (`config.rate`).
    Rate,
    /// `run.parallelism` (`config.parallelism`).
    Parallelism,
}

impl SweepKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SweepKind::Rate => "rate",
            SweepKind::Parallelism => "parallelism",
        }
    }
}
