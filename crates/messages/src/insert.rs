//! A sink's insert acknowledgement: one JSON line per insert ClickHouse
//! acknowledged, in the file a product is given as BENCH_SINK_INSERT_LOG.

use serde::{Deserialize, Serialize};

/// One acknowledged insert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InsertAck {
    /// When ClickHouse acknowledged it, epoch microseconds.
    pub ack_us: i64,
    /// From the insert's first byte sent to its acknowledgement.
    pub flush_us: u64,
    pub rows: u64,
    /// Backpressure pauses so far.
    pub pauses: u64,
    /// The rows' end-to-end latency in µs, as [`crate::histogram::encode`]
    /// gives it.
    pub latency: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::histogram;

    #[test]
    fn an_acknowledgement_round_trips_as_one_json_line() {
        let mut latency = histogram::latency_us();
        latency.record_n(1_500, 1_000).unwrap();
        let ack = InsertAck {
            ack_us: 1_796_472_468_940_679,
            flush_us: 2_150,
            rows: 1_000,
            pauses: 2,
            latency: histogram::encode(&latency).unwrap(),
        };
        let line = serde_json::to_string(&ack).unwrap();
        assert!(!line.contains('\n'));
        let back: InsertAck = serde_json::from_str(&line).unwrap();
        assert_eq!(back, ack);
        assert_eq!(histogram::decode(&back.latency).unwrap().len(), 1_000);
    }
}
