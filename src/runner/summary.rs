//! The console summary printed when a run ends: a short aligned table.

use crate::results::{Chaos, RunRecord, SanityVerdict, Status, VerificationVerdict};

/// The figures shown, in order, with their labels.
const SHOWN: [(&str, &str); 24] = [
    ("drain_capacity_per_s", "drain capacity"),
    ("drain_s", "drain time"),
    ("offered_per_s", "offered/s"),
    ("consumed_per_s", "consumed/s"),
    ("output_per_s", "output/s"),
    ("lag_drift", "lag drift"),
    ("rows_per_s", "rows landed/s"),
    ("sink_flush_p50_ms", "sink flush p50"),
    ("sink_flush_p99_ms", "sink flush p99"),
    ("row_e2e_p50_ms", "row e2e p50"),
    ("row_e2e_p99_ms", "row e2e p99"),
    ("backpressure_pauses", "sink pauses"),
    ("latency_p50_ms", "latency p50"),
    ("latency_p99_ms", "latency p99"),
    ("latency_p999_ms", "latency p99.9"),
    ("latency_max_ms", "latency max"),
    ("latency_count", "records timed"),
    ("floor_p50_ms", "floor p50"),
    ("added_p50_ms", "added p50"),
    ("cpu_avg_pct", "cpu avg"),
    ("mem_avg_mb", "memory avg"),
    ("rows_per_s_per_core", "rows/s/core"),
    ("us_cpu_per_record", "cpu/record"),
    ("extra_records_per_record", "extra rec/rec"),
];

/// Formats the summary of `record` as lines of text.
pub fn format_summary(record: &RunRecord) -> String {
    let mut out = format!(
        "{} · {} · {} · run {}\n",
        record.line, record.workload, record.delivery, record.run_id
    );
    if let Some(variant) = &record.variant {
        let format = variant.format.as_deref().unwrap_or("-");
        let rows = match (variant.events, &variant.payload) {
            (Some(events), _) => format!("{events} events/message"),
            (None, Some(payload)) => format!("{payload}: one row/message"),
            (None, None) => String::new(),
        };
        out.push_str(&format!(
            "  {:<14} {} · {format} · {rows}\n",
            "arm", variant.decoder
        ));
    }
    if let Some(regime) = record.regime {
        out.push_str(&format!("  {:<14} {:>12}\n", "regime", regime.as_str()));
    }
    if !record.flags.is_empty() {
        out.push_str(&format!(
            "  {:<14} {:>12}\n",
            "flags",
            record.flags.join(", ")
        ));
    }
    if record.status == Status::Failed {
        out.push_str(&format!(
            "  FAILED: {}\n",
            record.failure.as_deref().unwrap_or("no reason recorded")
        ));
    }
    if let Some(sanity) = &record.sanity {
        let mark = match sanity.verdict {
            SanityVerdict::Ok => "✓",
            SanityVerdict::Warning => "⚠",
        };
        out.push_str(&format!("  {:<14} {mark} {}\n", "sanity", sanity.message));
    }
    if let Some(v) = &record.verification {
        let verdict = match v.verdict {
            VerificationVerdict::Passed => "passed",
            VerificationVerdict::Failed => "VERIFICATION FAILED",
            VerificationVerdict::Incomplete => "NOT VERIFIED (incomplete)",
        };
        out.push_str(&format!(
            "  {:<14} {verdict}: {}\n",
            "verification", v.message
        ));
    } else if let Some(why) = record.not_applicable.get("verification") {
        out.push_str(&format!("  {:<14} not verified: {why}\n", "verification"));
    }
    if let Some(chaos) = &record.chaos {
        out.push_str(&chaos_lines(chaos));
    }
    if record.not_applicable.contains_key("latency") {
        out.push_str(&format!("  {:<14} {:>12}\n", "latency", "not quoted"));
    }
    for (key, label) in SHOWN {
        if let Some(metric) = record.metrics.get(key) {
            let value = match metric.value.abs() {
                v if v >= 1000.0 || metric.value.fract() == 0.0 => format!("{:.0}", metric.value),
                v if v < 0.1 => format!("{:+.4}", metric.value),
                _ => format!("{:.2}", metric.value),
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

/// A chaos run's faults: one line for one kill, else the campaign's figures,
/// then the broker restart.
fn chaos_lines(chaos: &Chaos) -> String {
    let seconds = |ms: f64| format!("{:.1} s", ms / 1000.0);
    let mut out = String::new();
    match chaos.kills.as_slice() {
        [] => {}
        [kill] => {
            let recovery = match kill.recovery_ms {
                Some(ms) => format!("output resumed {} after the kill", seconds(ms)),
                None if chaos.restart => "output did not resume before the window ended".into(),
                None => "not restarted".into(),
            };
            let whom = match &kill.member {
                Some(member) => format!("member {member} ({} process(es))", kill.killed_processes),
                None => format!("{} process(es)", kill.killed_processes),
            };
            out.push_str(&format!(
                "  {:<14} {whom} killed {:.0} s into the window; {recovery}\n",
                "chaos", kill.at_s
            ));
        }
        kills => {
            let figures = match (chaos.recovery_p50_ms, chaos.recovery_max_ms) {
                (Some(p50), Some(max)) => {
                    format!("; recovery p50 {}, max {}", seconds(p50), seconds(max))
                }
                _ => String::new(),
            };
            let of_members = if kills.iter().any(|k| k.member.is_some()) {
                " (one member each)"
            } else {
                ""
            };
            out.push_str(&format!(
                "  {:<14} {} of {} kills{of_members} recovered from{figures}\n",
                "chaos",
                chaos.kills_survived,
                kills.len()
            ));
        }
    }
    if let Some(restart) = &chaos.broker_restart {
        let recovery = match restart.recovery_ms {
            Some(ms) => format!("output resumed {} after the kill", seconds(ms)),
            None => "output did not resume before the window ended".into(),
        };
        let killed = match restart.node {
            Some(node) if restart.was_leader => format!("broker node {node} (the input's leader)"),
            Some(node) => format!("broker node {node}"),
            None => "broker".into(),
        };
        let failover = match restart.failover_ms {
            Some(ms) => format!(", leader moved after {}", seconds(ms)),
            None => String::new(),
        };
        out.push_str(&format!(
            "  {:<14} {killed} killed {:.0} s into the window{failover}, back after {}; {recovery}\n",
            "chaos",
            restart.at_s,
            seconds(restart.outage_ms)
        ));
    }
    out
}
