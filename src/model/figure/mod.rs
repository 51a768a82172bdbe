//! Every figure a record's `metrics` can hold, defined once: its key, the
//! label pages give it, the unit and direction records store, how many
//! decimals a page writes, and whether an inconsistent flow withholds it.
//! The judge, the pages, the paired comparisons and the console summary
//! read these, so a figure is added here and documented in
//! docs/results-schema.md, whose tables a test keeps equal to [`ALL`].

use super::record::{Better, Metric};
use Better::{Higher, Lower};
use Format::{Decimals, SignedPercent};

/// How a page writes a figure: the same for every row of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Grouped thousands and this many decimals: `19,782`, `131.9`.
    Decimals(usize),
    /// A ratio as a signed percentage with one decimal: `+0.3 %`.
    SignedPercent,
}

/// One figure of a record's `metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Figure {
    /// The key in the record's `metrics`.
    pub name: &'static str,
    /// How a page's column heads it.
    pub label: &'static str,
    /// The unit the record stores with the value.
    pub unit: &'static str,
    pub better: Better,
    pub format: Format,
    /// Leans on the consumed rate: withheld when the flow figures disagree.
    pub flow_dependent: bool,
}

impl Figure {
    const fn new(
        name: &'static str,
        label: &'static str,
        unit: &'static str,
        better: Better,
        format: Format,
    ) -> Figure {
        Figure {
            name,
            label,
            unit,
            better,
            format,
            flow_dependent: false,
        }
    }

    const fn leaning_on_flow(self) -> Figure {
        Figure {
            flow_dependent: true,
            ..self
        }
    }

    /// The figure of `name`, if it is one of [`ALL`].
    pub fn named(name: &str) -> Option<&'static Figure> {
        ALL.iter().find(|f| f.name == name)
    }

    /// `value` as a record stores this figure: with its unit and direction.
    pub fn metric(&self, value: f64) -> Metric {
        Metric::new(value, self.unit, self.better)
    }
}

const WHOLE: Format = Decimals(0);
const ONE: Format = Decimals(1);
const RATE: &str = "records/s";
const CPU: &str = "% of one core";

const fn ms(name: &'static str, label: &'static str) -> Figure {
    Figure::new(name, label, "ms", Lower, ONE)
}

const fn mb(name: &'static str, label: &'static str) -> Figure {
    Figure::new(name, label, "MB", Lower, ONE)
}

const fn rate(name: &'static str, label: &'static str) -> Figure {
    Figure::new(name, label, RATE, Higher, WHOLE)
}

// The window's flow and what bears on it.
/// What gendata offered per second of window.
pub const OFFERED_PER_S: Figure = rate("offered_per_s", "offered/s");
/// The slope of the committed offset: the product's consumption.
pub const CONSUMED_PER_S: Figure = rate("consumed_per_s", "consumed/s").leaning_on_flow();
/// The slope of the input's high watermark.
pub const INPUT_PER_S: Figure = rate("input_per_s", "input/s");
/// Output records the probe read per second of window.
pub const OUTPUT_PER_S: Figure = rate("output_per_s", "output/s");
/// The warm-up the run used.
pub const WARMUP_USED_S: Figure = Figure::new("warmup_used_s", "warm-up used", "s", Lower, WHOLE);
/// CPU per input record over the window's first third.
pub const CPU_PER_RECORD_FIRST_THIRD_US: Figure = Figure::new(
    "cpu_per_record_first_third_us",
    "CPU / record, first third",
    "us",
    Lower,
    WHOLE,
);
/// CPU per input record over the window's last third.
pub const CPU_PER_RECORD_LAST_THIRD_US: Figure = Figure::new(
    "cpu_per_record_last_third_us",
    "CPU / record, last third",
    "us",
    Lower,
    WHOLE,
);
/// Output records without a readable `ts_us`.
pub const UNREADABLE_OUTPUT_RECORDS: Figure = Figure::new(
    "unreadable_output_records",
    "unreadable output",
    "records",
    Lower,
    WHOLE,
);
/// The backlog at the window's first sample.
pub const BACKLOG_START: Figure =
    Figure::new("backlog_start", "backlog at start", "records", Lower, WHOLE);
/// The backlog at the window's last sample.
pub const BACKLOG_END: Figure =
    Figure::new("backlog_end", "backlog at end", "records", Lower, WHOLE);
/// The backlog's growth over the window, per record consumed: the regime.
pub const LAG_DRIFT: Figure = Figure::new("lag_drift", "lag drift", "ratio", Lower, SignedPercent);
/// The probe's own lag at p99.
pub const PROBE_LAG_P99_MS: Figure = ms("probe_lag_p99_ms", "probe lag p99");
/// The probe's largest lag.
pub const PROBE_LAG_MAX_MS: Figure = ms("probe_lag_max_ms", "probe lag max");
/// How many lag samples the probe took.
pub const PROBE_LAG_SAMPLES: Figure = Figure::new(
    "probe_lag_samples",
    "probe lag samples",
    "samples",
    Higher,
    WHOLE,
);
/// Sample intervals in which the committed offset moved.
pub const COMMIT_MOVES: Figure =
    Figure::new("commit_moves", "commit moves", "intervals", Higher, WHOLE);
/// Samples whose timed reads took too long.
pub const SLOW_SAMPLES: Figure =
    Figure::new("slow_samples", "slow samples", "samples", Lower, WHOLE);
/// From the window's end until the whole input was committed.
pub const SETTLE_S: Figure = Figure::new("settle_s", "settle time", "s", Lower, WHOLE);
/// gendata's lateness against its slots at p99.
pub const GENDATA_BEHIND_P99_MS: Figure = ms("gendata_behind_p99_ms", "gendata behind p99");
/// gendata's largest lateness.
pub const GENDATA_BEHIND_MAX_MS: Figure = ms("gendata_behind_max_ms", "gendata behind max");

// A drain run's.
/// Records committed per second from the first commit to the last.
pub const DRAIN_CAPACITY_PER_S: Figure = rate("drain_capacity_per_s", "read capacity");
/// The span the capacity was timed over.
pub const DRAIN_S: Figure = Figure::new("drain_s", "drain time", "s", Lower, WHOLE);
/// From the product's readiness to its first commit.
pub const DRAIN_FIRST_COMMIT_S: Figure =
    Figure::new("drain_first_commit_s", "first commit", "s", Lower, WHOLE);

// The product's resources and efficiency.
/// Records written to the run's other topics per record consumed.
pub const EXTRA_RECORDS_PER_RECORD: Figure = Figure::new(
    "extra_records_per_record",
    "extra rec/rec",
    "records/record",
    Lower,
    Decimals(3),
);
/// The product tree's CPU, averaged over the window's intervals.
pub const CPU_AVG_PCT: Figure = Figure::new("cpu_avg_pct", "cpu_avg", CPU, Lower, ONE);
/// The 95th percentile of those intervals.
pub const CPU_P95_PCT: Figure = Figure::new("cpu_p95_pct", "cpu_p95", CPU, Lower, ONE);
/// The product tree's memory (PSS), averaged.
pub const MEM_AVG_MB: Figure = mb("mem_avg_mb", "mem_avg");
/// The largest memory reading.
pub const MEM_MAX_MB: Figure = mb("mem_max_mb", "mem_max");
/// The product tree's RSS, averaged.
pub const RSS_AVG_MB: Figure = mb("rss_avg_mb", "rss_avg");
/// The product tree's USS, averaged.
pub const USS_AVG_MB: Figure = mb("uss_avg_mb", "uss_avg");
/// The sample intervals the CPU figures average.
pub const SAMPLES: Figure = Figure::new("samples", "samples", "samples", Higher, WHOLE);
/// Records consumed per second per core kept busy.
pub const ROWS_PER_S_PER_CORE: Figure = Figure::new(
    "rows_per_s_per_core",
    "rows/s per core",
    "records/s per core",
    Higher,
    WHOLE,
)
.leaning_on_flow();
/// Microseconds of CPU per record consumed.
pub const US_CPU_PER_RECORD: Figure = Figure::new(
    "us_cpu_per_record",
    "CPU / record",
    "us",
    Lower,
    Decimals(2),
)
.leaning_on_flow();
/// Records consumed per second per GB of memory.
pub const ROWS_PER_S_PER_GB: Figure = Figure::new(
    "rows_per_s_per_gb",
    "rows/s per GB",
    "records/s per GB",
    Higher,
    WHOLE,
)
.leaning_on_flow();

// Latency, as the probe timed it.
/// The setup floor's median.
pub const FLOOR_P50_MS: Figure = ms("floor_p50_ms", "floor p50");
/// The setup floor's 99th percentile.
pub const FLOOR_P99_MS: Figure = ms("floor_p99_ms", "floor p99");
/// The output's median latency.
pub const LATENCY_P50_MS: Figure = ms("latency_p50_ms", "latency p50");
/// Its 90th percentile.
pub const LATENCY_P90_MS: Figure = ms("latency_p90_ms", "latency p90");
/// Its 99th percentile.
pub const LATENCY_P99_MS: Figure = ms("latency_p99_ms", "latency p99");
/// Its 99.9th percentile.
pub const LATENCY_P999_MS: Figure = ms("latency_p999_ms", "latency p99.9");
/// Its largest latency.
pub const LATENCY_MAX_MS: Figure = ms("latency_max_ms", "latency max");
/// Output records timed.
pub const LATENCY_COUNT: Figure =
    Figure::new("latency_count", "records timed", "records", Higher, WHOLE);
/// The median above the floor's.
pub const ADDED_P50_MS: Figure = ms("added_p50_ms", "added p50");
/// The 99th percentile above the floor's.
pub const ADDED_P99_MS: Figure = ms("added_p99_ms", "added p99");
/// Intervals of the latency series that stalled.
pub const STALLS: Figure = Figure::new("stalls", "stalls", "intervals", Lower, WHOLE);

// An avro-etl run's table and sink.
/// Rows landed in the table per second.
pub const ROWS_PER_S: Figure = Figure::new("rows_per_s", "rows/s", "rows/s", Higher, WHOLE);
/// Events per Kafka message: rows are at most this many times messages.
pub const EVENTS_PER_MESSAGE: Figure = Figure::new(
    "events_per_message",
    "events/message",
    "events",
    Higher,
    WHOLE,
);
/// An insert's acknowledgement time at p50.
pub const SINK_FLUSH_P50_MS: Figure = ms("sink_flush_p50_ms", "sink flush p50");
/// An insert's acknowledgement time at p99.
pub const SINK_FLUSH_P99_MS: Figure = ms("sink_flush_p99_ms", "sink flush p99");
/// A row's acknowledgement minus its event's intended time, at p50.
pub const ROW_E2E_P50_MS: Figure = ms("row_e2e_p50_ms", "row e2e p50");
/// The same at p99.
pub const ROW_E2E_P99_MS: Figure = ms("row_e2e_p99_ms", "row e2e p99");
/// Times the product paused its consumer for want of an insert slot.
pub const BACKPRESSURE_PAUSES: Figure = Figure::new(
    "backpressure_pauses",
    "backpressure pauses",
    "pauses",
    Lower,
    WHOLE,
);
/// Inserts acknowledged in the window.
pub const SINK_INSERTS: Figure =
    Figure::new("sink_inserts", "sink inserts", "inserts", Higher, WHOLE);
/// ClickHouse's CPU.
pub const SINK_CPU_AVG_PCT: Figure =
    Figure::new("sink_cpu_avg_pct", "ClickHouse CPU", CPU, Lower, ONE);
/// ClickHouse's memory.
pub const SINK_MEM_AVG_MB: Figure = mb("sink_mem_avg_mb", "ClickHouse memory");

// The CPU rig's, each a median of repetitions.
/// The decoder's time per event.
pub const DECODE_NS_PER_EVENT: Figure = Figure::new(
    "decode_ns_per_event",
    "decode / event",
    "ns/event",
    Lower,
    ONE,
);
/// Events through the in-process pipeline stage per second.
pub const PIPELINE_RECORDS_PER_S: Figure = rate("pipeline_records_per_s", "pipeline records/s");
/// Allocations per event, counted in an untimed pass.
pub const ALLOCS_PER_EVENT: Figure = Figure::new(
    "allocs_per_event",
    "allocations",
    "allocs/event",
    Lower,
    Decimals(2),
);
/// Bytes allocated per event, in the same pass.
pub const BYTES_PER_EVENT: Figure = Figure::new(
    "bytes_per_event",
    "bytes allocated",
    "bytes/event",
    Lower,
    ONE,
);

/// Every figure, in the order docs/results-schema.md lists them.
pub const ALL: &[Figure] = &[
    OFFERED_PER_S,
    CONSUMED_PER_S,
    INPUT_PER_S,
    OUTPUT_PER_S,
    WARMUP_USED_S,
    CPU_PER_RECORD_FIRST_THIRD_US,
    CPU_PER_RECORD_LAST_THIRD_US,
    UNREADABLE_OUTPUT_RECORDS,
    BACKLOG_START,
    BACKLOG_END,
    LAG_DRIFT,
    PROBE_LAG_P99_MS,
    PROBE_LAG_MAX_MS,
    PROBE_LAG_SAMPLES,
    COMMIT_MOVES,
    SLOW_SAMPLES,
    SETTLE_S,
    GENDATA_BEHIND_P99_MS,
    GENDATA_BEHIND_MAX_MS,
    EXTRA_RECORDS_PER_RECORD,
    CPU_AVG_PCT,
    CPU_P95_PCT,
    MEM_AVG_MB,
    MEM_MAX_MB,
    RSS_AVG_MB,
    USS_AVG_MB,
    SAMPLES,
    ROWS_PER_S_PER_CORE,
    US_CPU_PER_RECORD,
    ROWS_PER_S_PER_GB,
    FLOOR_P50_MS,
    FLOOR_P99_MS,
    LATENCY_P50_MS,
    LATENCY_P90_MS,
    LATENCY_P99_MS,
    LATENCY_P999_MS,
    LATENCY_MAX_MS,
    LATENCY_COUNT,
    ADDED_P50_MS,
    ADDED_P99_MS,
    STALLS,
    DRAIN_CAPACITY_PER_S,
    DRAIN_S,
    DRAIN_FIRST_COMMIT_S,
    ROWS_PER_S,
    EVENTS_PER_MESSAGE,
    SINK_FLUSH_P50_MS,
    SINK_FLUSH_P99_MS,
    ROW_E2E_P50_MS,
    ROW_E2E_P99_MS,
    BACKPRESSURE_PAUSES,
    SINK_INSERTS,
    SINK_CPU_AVG_PCT,
    SINK_MEM_AVG_MB,
    DECODE_NS_PER_EVENT,
    PIPELINE_RECORDS_PER_S,
    ALLOCS_PER_EVENT,
    BYTES_PER_EVENT,
];

#[cfg(test)]
mod tests;
