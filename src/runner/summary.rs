//! The console summary printed when a run ends: a short aligned table.

use crate::results::figure::{
    ADDED_P50_MS, BACKPRESSURE_PAUSES, CONSUMED_PER_S, CPU_AVG_PCT, DRAIN_CAPACITY_PER_S, DRAIN_S,
    EXTRA_RECORDS_PER_RECORD, FLOOR_P50_MS, LAG_DRIFT, LATENCY_COUNT, LATENCY_MAX_MS,
    LATENCY_P50_MS, LATENCY_P999_MS, LATENCY_P99_MS, MEM_AVG_MB, OFFERED_PER_S, OUTPUT_PER_S,
    ROWS_PER_S, ROWS_PER_S_PER_CORE, ROW_E2E_P50_MS, ROW_E2E_P99_MS, SINK_FLUSH_P50_MS,
    SINK_FLUSH_P99_MS, US_CPU_PER_RECORD,
};
use crate::results::{Chaos, Figure, RunRecord, SanityVerdict, Status, VerificationVerdict};

/// The figures shown, in order, with their labels: shorter than a page's,
/// to fit the console's column.
const SHOWN: [(&Figure, &str); 24] = [
    (&DRAIN_CAPACITY_PER_S, "drain capacity"),
    (&DRAIN_S, "drain time"),
    (&OFFERED_PER_S, "offered/s"),
    (&CONSUMED_PER_S, "consumed/s"),
    (&OUTPUT_PER_S, "output/s"),
    (&LAG_DRIFT, "lag drift"),
    (&ROWS_PER_S, "rows landed/s"),
    (&SINK_FLUSH_P50_MS, "sink flush p50"),
    (&SINK_FLUSH_P99_MS, "sink flush p99"),
    (&ROW_E2E_P50_MS, "row e2e p50"),
    (&ROW_E2E_P99_MS, "row e2e p99"),
    (&BACKPRESSURE_PAUSES, "sink pauses"),
    (&LATENCY_P50_MS, "latency p50"),
    (&LATENCY_P99_MS, "latency p99"),
    (&LATENCY_P999_MS, "latency p99.9"),
    (&LATENCY_MAX_MS, "latency max"),
    (&LATENCY_COUNT, "records timed"),
    (&FLOOR_P50_MS, "floor p50"),
    (&ADDED_P50_MS, "added p50"),
    (&CPU_AVG_PCT, "cpu avg"),
    (&MEM_AVG_MB, "memory avg"),
    (&ROWS_PER_S_PER_CORE, "rows/s/core"),
    (&US_CPU_PER_RECORD, "cpu/record"),
    (&EXTRA_RECORDS_PER_RECORD, "extra rec/rec"),
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
    for (figure, label) in SHOWN {
        if let Some(metric) = record.metrics.get(figure.name) {
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
        if !restart.dropped_markers.is_empty() {
            out.push_str(&format!(
                "  {:<14} the restarted broker dropped the transaction markers of {} (a partition it found \
                 without a leader): exactly-once cannot hold through this restart\n",
                "chaos",
                restart.dropped_markers.join(", ")
            ));
        }
    }
    out
}
