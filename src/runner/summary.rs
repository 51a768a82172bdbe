//! The console summary printed when a run ends: a short aligned table.

use crate::results::{RunRecord, Status};

/// The figures shown, in order, with their labels.
const SHOWN: [(&str, &str); 8] = [
    ("offered_per_s", "offered/s"),
    ("consumed_per_s", "consumed/s"),
    ("output_per_s", "output/s"),
    ("latency_p50_ms", "latency p50"),
    ("latency_p99_ms", "latency p99"),
    ("latency_p999_ms", "latency p99.9"),
    ("latency_max_ms", "latency max"),
    ("latency_count", "records timed"),
];

/// Formats the summary of `record` as lines of text.
pub fn format_summary(record: &RunRecord) -> String {
    let mut out = format!(
        "{} · {} · {} · run {}\n",
        record.line, record.workload, record.delivery, record.run_id
    );
    if record.status == Status::Failed {
        out.push_str(&format!(
            "  FAILED: {}\n",
            record.failure.as_deref().unwrap_or("no reason recorded")
        ));
    }
    for (key, label) in SHOWN {
        if let Some(metric) = record.metrics.get(key) {
            let value = if metric.value.fract() == 0.0 || metric.value >= 1000.0 {
                format!("{:.0}", metric.value)
            } else {
                format!("{:.2}", metric.value)
            };
            out.push_str(&format!("  {label:<14} {value:>12} {}\n", metric.unit));
        }
    }
    out
}

/// Prints the summary of `record` to standard error.
pub fn print_summary(record: &RunRecord) {
    eprint!("{}", format_summary(record));
}
