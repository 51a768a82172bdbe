//! The workloads' event, defined once for everything that writes or reads it:
//! gendata and verification in the suite, and rustpipe (its tests and
//! benchmarks too), which must not link the suite. Its 19 fields, in this
//! order, are the JSON object on the stateless topics, the Avro record of the
//! avro-etl batches (workloads/avro/event-batch.avsc) and, with `ts` added,
//! the columns of the ETL workload's events table; the tests below hold the
//! four forms equal. [`generate`] makes any event of a run from its seed and
//! sequence number alone.

pub mod generator;
pub mod table;

use serde::{Deserialize, Serialize};

pub use generator::{generate, Generated};
pub use table::{ts_seconds, EventRow, RawRow, EVENT_COLUMNS, RAW_COLUMNS};

/// The avro-etl workload's writer schema: a batch of events per message.
pub const SCHEMA_JSON: &str = include_str!("../../../workloads/avro/event-batch.avsc");

/// One event, generic over how it holds its strings: `Event<&str>` borrows
/// them from a decoded message, `Event<String>` owns them, and a
/// [`Generated`] event borrows the fixed vocabularies and owns the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event<S> {
    pub seq: u64,
    pub event_id: S,
    /// Intended send time (the schedule slot), microseconds since the Unix epoch.
    pub ts_us: i64,
    pub tenant: S,
    pub region: S,
    pub zone: S,
    pub service: S,
    pub endpoint: S,
    pub method: S,
    pub status: u16,
    pub latency_ms: u32,
    pub sla_ms: u32,
    pub bytes: u32,
    pub user_id: S,
    pub session_id: S,
    pub device: S,
    pub os: S,
    pub app_version: S,
    pub trace_id: S,
}

impl<S: AsRef<str>> Event<S> {
    /// The event with its strings borrowed: the one form that code after a
    /// decoder, and comparisons between forms, work on.
    pub fn as_ref(&self) -> Event<&str> {
        Event {
            seq: self.seq,
            event_id: self.event_id.as_ref(),
            ts_us: self.ts_us,
            tenant: self.tenant.as_ref(),
            region: self.region.as_ref(),
            zone: self.zone.as_ref(),
            service: self.service.as_ref(),
            endpoint: self.endpoint.as_ref(),
            method: self.method.as_ref(),
            status: self.status,
            latency_ms: self.latency_ms,
            sla_ms: self.sla_ms,
            bytes: self.bytes,
            user_id: self.user_id.as_ref(),
            session_id: self.session_id.as_ref(),
            device: self.device.as_ref(),
            os: self.os.as_ref(),
            app_version: self.app_version.as_ref(),
            trace_id: self.trace_id.as_ref(),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn event() -> Event<String> {
        let text = |s: &str| s.to_string();
        Event {
            seq: 7,
            event_id: text("2a-7"),
            ts_us: 1_700_000_000_123_456,
            tenant: text("tenant-001"),
            region: text("eu-west"),
            zone: text("eu-west-a"),
            service: text("search"),
            endpoint: text("/api/v1/items"),
            method: text("GET"),
            status: 200,
            latency_ms: 42,
            sla_ms: 100,
            bytes: 512,
            user_id: text("u000001"),
            session_id: text("s000001-00ff"),
            device: text("mobile"),
            os: text("linux"),
            app_version: text("3.2.0"),
            trace_id: text("00ff"),
        }
    }

    /// The event's field names in the order serde writes them (read off
    /// the text: serde_json's map sorts its keys).
    fn event_fields() -> Vec<String> {
        let json = serde_json::to_string(&event()).unwrap();
        let object: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&json).unwrap();
        let mut names: Vec<String> = object.keys().cloned().collect();
        names.sort_by_key(|k| json.find(&format!("\"{k}\":")));
        names
    }

    fn columns_without_ts() -> Vec<&'static str> {
        EVENT_COLUMNS
            .iter()
            .map(|(name, _)| *name)
            .filter(|name| *name != "ts")
            .collect()
    }

    #[test]
    fn the_event_is_the_events_table_without_ts() {
        assert_eq!(event_fields(), columns_without_ts());
        assert_eq!(EVENT_COLUMNS[2], ("ts", "DateTime"));
    }

    #[test]
    fn the_avro_schema_has_the_events_fields_in_order() {
        let schema: serde_json::Value = serde_json::from_str(SCHEMA_JSON).unwrap();
        let fields: Vec<&str> = schema["fields"][0]["type"]["items"]["fields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(fields, columns_without_ts());
    }
}
