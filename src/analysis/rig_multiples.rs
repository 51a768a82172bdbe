//! The CPU rig's headline: how many times faster the fast-borrowed Avro
//! decoder is than apache-owned, alone and through the whole pipeline.

use crate::results::figure::{DECODE_NS_PER_EVENT, PIPELINE_RECORDS_PER_S};
use crate::results::RigRecord;

/// The two multiples the rig exists for: fast-borrowed against apache-owned,
/// on decode (ns per event) and through the pipeline on RowBinary
/// (records per second), each a ratio of medians from one rig run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Multiples {
    pub decode: Option<f64>,
    pub pipeline: Option<f64>,
}

/// The arm's median figure, if the records hold that arm.
fn median_of(records: &[RigRecord], stage: &str, decoder: &str, metric: &str) -> Option<f64> {
    records
        .iter()
        .find(|r| {
            r.variant.stage.as_deref() == Some(stage)
                && r.variant.decoder == decoder
                && (stage == "decode" || r.variant.format.as_deref() == Some("rowbinary"))
        })
        .and_then(|r| r.metrics.get(metric))
        .map(|m| m.value)
}

/// The headline multiples of one rig run's records.
pub fn multiples(records: &[RigRecord]) -> Multiples {
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let decode = DECODE_NS_PER_EVENT.name;
    let pipeline = PIPELINE_RECORDS_PER_S.name;
    Multiples {
        decode: ratio(
            median_of(records, "decode", "apache-owned", decode),
            median_of(records, "decode", "fast-borrowed", decode),
        ),
        pipeline: ratio(
            median_of(records, "pipeline", "fast-borrowed", pipeline),
            median_of(records, "pipeline", "apache-owned", pipeline),
        ),
    }
}
