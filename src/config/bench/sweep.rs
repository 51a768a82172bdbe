//! bench.yaml's `sweep:`: what a rate sweep holds a line to.

use serde::{Deserialize, Serialize};

/// The terms of a line's maximum sustainable throughput.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepConfig {
    /// A rate is sustained only when the run kept up and its added p99
    /// latency (product p99 minus the floor's) stayed at or under this.
    #[serde(default = "default_p99_bound_ms")]
    pub p99_bound_ms: f64,
}

fn default_p99_bound_ms() -> f64 {
    500.0
}

impl Default for SweepConfig {
    fn default() -> Self {
        SweepConfig {
            p99_bound_ms: default_p99_bound_ms(),
        }
    }
}

impl SweepConfig {
    /// The bound must be a positive number of milliseconds.
    pub(super) fn check(&self) -> Result<(), String> {
        if self.p99_bound_ms.is_finite() && self.p99_bound_ms > 0.0 {
            Ok(())
        } else {
            Err(format!(
                "sweep.p99_bound_ms {} is not a bound; give a number of milliseconds above 0, such as 500",
                self.p99_bound_ms
            ))
        }
    }
}
