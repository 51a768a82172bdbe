//! bench.yaml's `run:`: the defaults of one run, which the command line
//! overrides, and the shortest window they allow.

use serde::{Deserialize, Serialize};

use crate::model::record::EMBEDDED;
use crate::model::settings::CommitIntervals;

/// The fewest samples a measurement window may span: the regime is a slope
/// over the window's samples, and fewer cannot carry one.
pub const MIN_WINDOW_SAMPLES: u64 = 5;

/// Defaults for one run; the command line overrides each.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunDefaults {
    /// Seconds of load before measuring.
    pub warmup_s: u64,
    /// Seconds measured.
    pub window_s: u64,
    /// Records per second offered by gendata (0 = as fast as it can); when
    /// absent, the iso rate: a new user's first run is at the point every
    /// line keeps up with, so it quotes a latency.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// gendata's seed: the same seed gives the same records.
    pub seed: u64,
    /// How often the orchestrator polls offsets and samples processes.
    pub sample_interval_ms: u64,
    /// How often each delivery mode commits, handed to a line as
    /// BENCH_COMMIT_INTERVAL_MS.
    pub commit_interval_ms: CommitIntervals,
    /// Handed to every product as BENCH_PARALLELISM.
    pub parallelism: u32,
    /// The form each product runs in: `embedded` (its `start` command) or
    /// a deployment its product.yaml offers (`cluster`).
    #[serde(default = "default_deploy")]
    pub deploy: String,
    /// How long a product may take to become ready.
    pub ready_timeout_s: u64,
    /// How long a product may take to stop after SIGTERM before SIGKILL.
    pub stop_grace_s: u64,
    /// After the window, how long the product may take to commit the rest
    /// of its input before it is stopped and verified.
    #[serde(default = "default_settle_s")]
    pub settle_s: u64,
    /// The longest warm-up: a paced run's warm-up lasts from `warmup_s`
    /// until the product is steady, and a run that reaches this first is
    /// measured and flagged `not-steady`.
    #[serde(default = "default_warmup_cap_s")]
    pub warmup_cap_s: u64,
}

fn default_deploy() -> String {
    EMBEDDED.to_string()
}

fn default_warmup_cap_s() -> u64 {
    120
}

fn default_settle_s() -> u64 {
    30
}

impl RunDefaults {
    /// The shortest window, in whole seconds, that spans
    /// [`MIN_WINDOW_SAMPLES`] samples at `sample_interval_ms`.
    pub fn min_window_s(&self) -> u64 {
        MIN_WINDOW_SAMPLES
            .saturating_mul(self.sample_interval_ms)
            .div_ceil(1000)
            .max(1)
    }

    /// `Err` with the shortest allowed window when `window_s` spans fewer
    /// than [`MIN_WINDOW_SAMPLES`] samples.
    pub fn check_window(&self, window_s: u64) -> Result<(), u64> {
        let min = self.min_window_s();
        if window_s < min {
            Err(min)
        } else {
            Ok(())
        }
    }
}
