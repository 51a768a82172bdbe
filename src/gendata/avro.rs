//! The Avro message encoding: one Kafka message carries a batch datum of
//! consecutive events, written with the fixed schema kept in the repository
//! (workloads/avro/event-batch.avsc). Message `m` of a run with `events` per
//! datum carries the events `m * events .. (m + 1) * events`, all stamped
//! with the message's slot, so any row can be regenerated from its `seq`.

use std::sync::OnceLock;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_avro_fast::ser::SerializerConfig;
use serde_avro_fast::Schema;

use super::Event;

/// The writer schema of every Avro message.
pub const SCHEMA_JSON: &str = include_str!("../../workloads/avro/event-batch.avsc");

/// The schema, parsed once per process.
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        SCHEMA_JSON
            .parse()
            .expect("workloads/avro/event-batch.avsc is a valid Avro schema")
    })
}

/// The first event sequence number of message `message_seq`.
pub fn first_event_seq(message_seq: u64, events: u32) -> u64 {
    message_seq * u64::from(events)
}

#[derive(Serialize)]
struct Batch<'e> {
    events: &'e [Event],
}

/// Encodes batch datums, reusing its buffers from one message to the next.
pub struct AvroEncoder {
    events: u32,
    batch: Vec<Event>,
    config: SerializerConfig<'static>,
}

impl AvroEncoder {
    /// An encoder of datums of `events` events each.
    pub fn new(events: u32) -> AvroEncoder {
        AvroEncoder {
            events,
            batch: Vec::with_capacity(events as usize),
            config: SerializerConfig::new(schema()),
        }
    }

    /// Replaces `out` with message `message_seq`'s datum, its events stamped `ts_us`.
    pub fn encode(
        &mut self,
        seed: u64,
        message_seq: u64,
        ts_us: i64,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        let first = first_event_seq(message_seq, self.events);
        self.batch.clear();
        self.batch.extend(
            (first..first + u64::from(self.events)).map(|seq| Event::generate(seed, seq, ts_us)),
        );
        let mut buffer = std::mem::take(out);
        buffer.clear();
        let datum = serde_avro_fast::to_datum(
            &Batch {
                events: &self.batch,
            },
            buffer,
            &mut self.config,
        )
        .context("gendata: encoding an Avro batch datum")?;
        *out = datum;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct DecodedEvent {
        seq: u64,
        event_id: String,
        ts_us: i64,
        tenant: String,
        region: String,
        zone: String,
        service: String,
        endpoint: String,
        method: String,
        status: u16,
        latency_ms: u32,
        sla_ms: u32,
        bytes: u32,
        user_id: String,
        session_id: String,
        device: String,
        os: String,
        app_version: String,
        trace_id: String,
    }

    #[derive(serde::Deserialize)]
    struct DecodedBatch {
        events: Vec<DecodedEvent>,
    }

    #[test]
    fn a_datum_carries_its_messages_events_in_order() {
        let mut encoder = AvroEncoder::new(20);
        let mut out = Vec::new();
        encoder
            .encode(42, 3, 1_700_000_000_123_456, &mut out)
            .unwrap();
        let batch: DecodedBatch = serde_avro_fast::from_datum_slice(&out, schema()).unwrap();
        assert_eq!(batch.events.len(), 20);
        for (i, decoded) in batch.events.iter().enumerate() {
            let expected = Event::generate(42, 60 + i as u64, 1_700_000_000_123_456);
            let as_json = serde_json::to_value(&expected).unwrap();
            let decoded_json = serde_json::json!({
                "seq": decoded.seq, "event_id": decoded.event_id, "ts_us": decoded.ts_us,
                "tenant": decoded.tenant, "region": decoded.region, "zone": decoded.zone,
                "service": decoded.service, "endpoint": decoded.endpoint,
                "method": decoded.method, "status": decoded.status,
                "latency_ms": decoded.latency_ms, "sla_ms": decoded.sla_ms,
                "bytes": decoded.bytes, "user_id": decoded.user_id,
                "session_id": decoded.session_id, "device": decoded.device, "os": decoded.os,
                "app_version": decoded.app_version, "trace_id": decoded.trace_id,
            });
            assert_eq!(decoded_json, as_json, "event {i}");
        }
    }

    #[test]
    fn the_buffer_is_reused_and_holds_one_datum() {
        let mut encoder = AvroEncoder::new(5);
        let mut out = Vec::new();
        encoder.encode(1, 0, 0, &mut out).unwrap();
        let first = out.clone();
        encoder.encode(1, 0, 0, &mut out).unwrap();
        assert_eq!(
            out, first,
            "a datum is a pure function of seed, message and time"
        );
        encoder.encode(1, 1, 0, &mut out).unwrap();
        assert_ne!(out, first);
    }
}
