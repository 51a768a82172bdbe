//! An ETL run's judgement: the input's flow and regime as any run's, the
//! rows landed per second, the sink's own figures, resources and the
//! table's verification. The output is a table, so no probe times it.

use super::super::etl::SinkFigures;
use super::super::flow_checks::{flow_disagreements, FlowFigures};
use super::super::window::{OffsetRead, Sample};
use super::{
    close, fail_on_delivery_errors, flag_generator_behind, flag_host, put_efficiency, put_settle,
    put_verification, resources, windowed, withhold_if_inconsistent, Helpers, Judgement, Settle,
    Verified, Windowed,
};
use crate::config::Tolerances;
use crate::model::gendata::GendataSummary;
use crate::results::figure::{
    BACKPRESSURE_PAUSES, CONSUMED_PER_S, CPU_AVG_PCT, EVENTS_PER_MESSAGE, LAG_DRIFT, OFFERED_PER_S,
    ROWS_PER_S, ROW_E2E_P50_MS, ROW_E2E_P99_MS, SINK_CPU_AVG_PCT, SINK_FLUSH_P50_MS,
    SINK_FLUSH_P99_MS, SINK_INSERTS, SINK_MEM_AVG_MB,
};
use crate::results::{flag, Resources, RunConfig};

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
    j.put(&OFFERED_PER_S, m.gendata.window_records as f64 / window_s);
    j.put(&CONSUMED_PER_S, flow.consumed_per_s);
    j.put(&LAG_DRIFT, flow.drift);
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
            &ROWS_PER_S,
            end_rows.saturating_sub(start_rows) as f64 / counted_s,
        );
    }
    j.put(&EVENTS_PER_MESSAGE, f64::from(m.events));
    match m.sink {
        Some(sink) => {
            j.put(&SINK_FLUSH_P50_MS, sink.flush_p50_ms);
            j.put(&SINK_FLUSH_P99_MS, sink.flush_p99_ms);
            j.put(&ROW_E2E_P50_MS, sink.row_e2e_p50_ms);
            j.put(&ROW_E2E_P99_MS, sink.row_e2e_p99_ms);
            j.put(&BACKPRESSURE_PAUSES, sink.pauses as f64);
            j.put(&SINK_INSERTS, sink.inserts as f64);
        }
        None => {
            let why = "no insert was acknowledged in the window";
            for figure in [
                &SINK_FLUSH_P50_MS,
                &SINK_FLUSH_P99_MS,
                &ROW_E2E_P50_MS,
                &ROW_E2E_P99_MS,
                &BACKPRESSURE_PAUSES,
            ] {
                j.not_applies(figure, why);
            }
            j.failure.get_or_insert_with(|| why.to_string());
        }
    }
}

/// The product's efficiency, and the sink's CPU and memory.
fn put_etl_resources(j: &mut Judgement, resources: &Resources, consumed_per_s: f64) {
    match &resources.product {
        Some(p) => put_efficiency(j, p, consumed_per_s),
        None => j.not_applies(&CPU_AVG_PCT, "the product's tree could not be sampled"),
    }
    if let Some(sink) = &resources.sink {
        j.put(&SINK_CPU_AVG_PCT, sink.cpu_avg_pct);
        j.put(&SINK_MEM_AVG_MB, sink.mem_avg_mb);
    }
}
