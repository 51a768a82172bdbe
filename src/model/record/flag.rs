//! The flags a record may carry, in the order they are set
//! (docs/results-schema.md says when each applies).

pub const UNREADABLE_OUTPUT: &str = "unreadable-output";
pub const GENERATOR_BEHIND: &str = "generator-behind";
pub const HOST_SATURATED: &str = "host-saturated";
pub const CHAOS: &str = "chaos";
pub const SANITY_WARNING: &str = "sanity-warning";
pub const VERIFICATION_FAILED: &str = "verification-failed";
pub const VERIFICATION_INCOMPLETE: &str = "verification-incomplete";
pub const COARSE_COMMITS: &str = "coarse-commits";
pub const PROBE_BEHIND: &str = "probe-behind";
pub const SLOW_SAMPLES: &str = "slow-samples";
/// An interval of the window stalled (docs/methodology.md gives the rule).
pub const STALLS: &str = "stalls";
/// The flow figures disagree with one another: no capacity, efficiency
/// or latency is quoted.
pub const INCONSISTENT_FLOW: &str = "inconsistent-flow";
/// The warm-up hit its cap before the product was steady, or the
/// window's first and last thirds differ in CPU per record.
pub const NOT_STEADY: &str = "not-steady";
/// Steal time, or processes that are none of the run's, took more CPU
/// than bench.yaml's tolerances allow over the window.
pub const NOISY_HOST: &str = "noisy-host";
/// The product's CPU from its cgroup and from the /proc samples
/// disagree beyond bench.yaml's `cpu_mismatch`.
pub const CPU_MISMATCH: &str = "cpu-mismatch";
