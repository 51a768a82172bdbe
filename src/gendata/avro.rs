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

use super::event::{self, Event};

/// The writer schema of every Avro message.
pub use event_model::SCHEMA_JSON;

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
            (first..first + u64::from(self.events)).map(|seq| event::generate(seed, seq, ts_us)),
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

    #[derive(serde::Deserialize)]
    struct DecodedBatch {
        events: Vec<event_model::Event<String>>,
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
            let expected = event::generate(42, 60 + i as u64, 1_700_000_000_123_456);
            assert_eq!(decoded.as_ref(), expected.as_ref(), "event {i}");
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
