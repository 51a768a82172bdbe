//! bench.yaml's `tolerances:`: the thresholds of flags and verdicts, each
//! checked while parsing.

use serde::{Deserialize, Serialize};

/// Thresholds for flags and verdicts; each is a finite number, zero or more.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerances {
    /// |lag drift| within this is keep-up.
    #[serde(deserialize_with = "non_negative")]
    pub lag_drift: f64,
    /// Selectivity further than this share from the expected value is a warning.
    #[serde(deserialize_with = "non_negative")]
    pub selectivity: f64,
    /// gendata late at delivery by more than this (p99, ms) flags the run;
    /// its max beyond this withholds the latency tail.
    #[serde(deserialize_with = "non_negative")]
    pub generator_behind_ms: f64,
    /// The host busier than this (average over the window, % of all cores)
    /// flags the run `host-saturated`: the product may have been starved.
    #[serde(deserialize_with = "non_negative")]
    pub host_busy_pct: f64,
    /// A paired round whose ratio B / A lies within 1 ± this share is a tie:
    /// neither better nor worse, and left out of the sign test.
    #[serde(default = "default_tie_band", deserialize_with = "non_negative")]
    pub tie_band: f64,
    /// offered/s (gendata's count) and the input's growth (its high
    /// watermark's slope) further apart than this share flag the run
    /// `inconsistent-flow`.
    #[serde(
        default = "default_offered_vs_input",
        deserialize_with = "non_negative"
    )]
    pub offered_vs_input: f64,
    /// output/s further than this share from consumed/s x the expected
    /// selectivity flags the run `inconsistent-flow`.
    #[serde(
        default = "default_output_vs_consumed",
        deserialize_with = "non_negative"
    )]
    pub output_vs_consumed: f64,
    /// A warm-up may end once consumed/s has kept within this share of
    /// offered/s over the steady look-back ...
    #[serde(default = "default_steady_rate", deserialize_with = "non_negative")]
    pub steady_rate: f64,
    /// ... and CPU per record within this share between its first and last
    /// thirds.
    #[serde(default = "default_steady_cpu", deserialize_with = "non_negative")]
    pub steady_cpu: f64,
    /// CPU per record in the window's first and last thirds further apart
    /// than this share flags a keep-up run `not-steady`.
    #[serde(
        default = "default_window_thirds_cpu",
        deserialize_with = "non_negative"
    )]
    pub window_thirds_cpu: f64,
    /// Steal time above this (window average, % of all cores) flags the
    /// run `noisy-host`: the hypervisor took CPU from every role.
    #[serde(default = "default_steal_pct", deserialize_with = "non_negative")]
    pub steal_pct: f64,
    /// Processes that are none of the run's using more than this (window
    /// average, % of one core) flag the run `noisy-host`.
    #[serde(default = "default_outside_pct", deserialize_with = "non_negative")]
    pub outside_pct: f64,
    /// The product's CPU from its cgroup and from the /proc samples further
    /// apart than this share of the cgroup's flags `cpu-mismatch`.
    #[serde(default = "default_cpu_mismatch", deserialize_with = "non_negative")]
    pub cpu_mismatch: f64,
}

fn default_steal_pct() -> f64 {
    2.0
}

fn default_outside_pct() -> f64 {
    10.0
}

fn default_cpu_mismatch() -> f64 {
    0.05
}

fn default_steady_rate() -> f64 {
    0.05
}

fn default_steady_cpu() -> f64 {
    0.15
}

fn default_window_thirds_cpu() -> f64 {
    0.25
}

fn default_offered_vs_input() -> f64 {
    0.02
}

fn default_output_vs_consumed() -> f64 {
    0.25
}

/// The tie band of a bench.yaml that names none.
fn default_tie_band() -> f64 {
    0.01
}

/// A tolerance: checked while parsing, so the error names its line.
fn non_negative<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    let value = f64::deserialize(deserializer)?;
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(serde::de::Error::custom(format!(
            "a tolerance must be a finite number, zero or more; got {value}"
        )))
    }
}
