//! An ETL run's judgement: the input's flow and regime as any run's, the
//! rows landed per second, the sink's own figures, resources and the
//! table's verification. The output is a table, so no probe times it.

use super::super::etl::SinkFigures;
use super::super::flow_checks::{flow_disagreements, FlowFigures};
use super::super::window::{OffsetRead, Sample};
use super::{
    close, fail_on_delivery_errors, flag_generator_behind, flag_host, put_efficiency, put_settle,
    put_verification, resources, windowed, withhold_if_inconsistent, Helpers, Judgement, Settle,
    Verified, Windowed, RATE,
};
use crate::config::Tolerances;
use crate::model::gendata::GendataSummary;
use crate::results::{flag, Better, Resources, RunConfig};

/// Everything an ETL run's figures are judged from: a run whose output is
/// a ClickHouse table, not a topic, so it has no probe.
#[derive(Debug, Clone, Copy)]
pub struct EtlInputs<'a> {
    /// Samples from the first after start-up to the window's end.
    pub samples: &'a [Sample],
    pub window_start: usize,
    pub offset_polls: &'a [OffsetRead],
    pub window_start_us: i64,
    pub ticks_per_s: f64,
    pub config: &'a RunConfig,
    pub gendata: &'a GendataSummary,
    /// (count time, rows in the table) at the window's start and end.
    pub table_rows: [(i64, u64); 2],
    /// Events per message: rows/s is compared with messages/s through it.
    pub events: u32,
    /// The inserts acknowledged in the window; none when there were none.
    pub sink: Option<&'a SinkFigures>,
    pub verified: &'a Verified,
    pub settle: Option<Settle>,
    pub tolerances: &'a Tolerances,
}

/// An ETL run's regime (from the input's lag drift, as any run's), rows
/// landed per second, the sink's figures, resources and verification.
pub fn judge_etl(m: &EtlInputs<'_>) -> Judgement {
    let mut j = Judgement::default();
    let window_s = m.config.window_s as f64;
    let Windowed {
        window,
        flow,
        regime,
    } = match windowed(
        m.samples,
        m.window_start,
        m.offset_polls,
        window_s,
        m.tolerances,
    ) {
        Ok(windowed) => windowed,
        Err(why) => {
            j.failure = Some(why);
            return j;
        }
    };
    let disagreements = flow_disagreements(&FlowFigures {
        flow: &flow,
        window_s,
        regime,
        offered_per_s: m.gendata.window_records as f64 / window_s,
        output_per_s: None,
        expected_selectivity: None,
        offered_vs_input: m.tolerances.offered_vs_input,
        output_vs_consumed: m.tolerances.output_vs_consumed,
        lag_drift: m.tolerances.lag_drift,
    });
    let helpers = Helpers {
        gendata: true,
        probe: false,
        sink: true,
    };
    let resources = resources(window, m.ticks_per_s, helpers);
    flag_generator_behind(&mut j, m.gendata, m.config, m.tolerances);
    flag_host(&mut j, &resources, m.tolerances);
    if flow.coarse_commits {
        j.flags.push(flag::COARSE_COMMITS);
    }
    fail_on_delivery_errors(&mut j, m.gendata);
    j.put(
        "offered_per_s",
        m.gendata.window_records as f64 / window_s,
        RATE,
        Better::Higher,
    );
    j.put("consumed_per_s", flow.consumed_per_s, RATE, Better::Higher);
    j.put("lag_drift", flow.drift, "ratio", Better::Lower);
    put_table_figures(&mut j, m);
    put_settle(&mut j, m.settle);
    put_etl_resources(&mut j, &resources, flow.consumed_per_s);
    put_verification(&mut j, m.verified);
    withhold_if_inconsistent(&mut j, &disagreements);
    close(
        &mut j,
        regime,
        m.samples,
        m.window_start_us,
        m.ticks_per_s,
        resources,
    );
    j
}

/// Rows landed per second in the window, and the sink's own figures from
/// the product's insert log.
fn put_table_figures(j: &mut Judgement, m: &EtlInputs<'_>) {
    let [(start_us, start_rows), (end_us, end_rows)] = m.table_rows;
    let counted_s = (end_us - start_us) as f64 / 1e6;
    if counted_s > 0.0 {
        j.put(
            "rows_per_s",
            end_rows.saturating_sub(start_rows) as f64 / counted_s,
            "rows/s",
            Better::Higher,
        );
    }
    j.put(
        "events_per_message",
        f64::from(m.events),
        "events",
        Better::Higher,
    );
    match m.sink {
        Some(sink) => {
            j.put("sink_flush_p50_ms", sink.flush_p50_ms, "ms", Better::Lower);
            j.put("sink_flush_p99_ms", sink.flush_p99_ms, "ms", Better::Lower);
            j.put("row_e2e_p50_ms", sink.row_e2e_p50_ms, "ms", Better::Lower);
            j.put("row_e2e_p99_ms", sink.row_e2e_p99_ms, "ms", Better::Lower);
            j.put(
                "backpressure_pauses",
                sink.pauses as f64,
                "pauses",
                Better::Lower,
            );
            j.put(
                "sink_inserts",
                sink.inserts as f64,
                "inserts",
                Better::Higher,
            );
        }
        None => {
            let why = "no insert was acknowledged in the window";
            for name in [
                "sink_flush_p50_ms",
                "sink_flush_p99_ms",
                "row_e2e_p50_ms",
                "row_e2e_p99_ms",
                "backpressure_pauses",
            ] {
                j.not_applies(name, why);
            }
            j.failure.get_or_insert_with(|| why.to_string());
        }
    }
}

/// The product's efficiency, and the sink's CPU and memory.
fn put_etl_resources(j: &mut Judgement, resources: &Resources, consumed_per_s: f64) {
    match &resources.product {
        Some(p) => put_efficiency(j, p, consumed_per_s),
        None => j.not_applies("cpu_avg_pct", "the product's tree could not be sampled"),
    }
    if let Some(sink) = &resources.sink {
        j.put(
            "sink_cpu_avg_pct",
            sink.cpu_avg_pct,
            "% of one core",
            Better::Lower,
        );
        j.put("sink_mem_avg_mb", sink.mem_avg_mb, "MB", Better::Lower);
    }
}
