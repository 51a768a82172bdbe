//! The ETL workload's ClickHouse tables: the events table's columns, the
//! raw table's, and their rows as verification reads them back.

use serde::Deserialize;

use crate::Event;

/// The `ts` column of an event's row: its intended time in whole seconds
/// (`DateTime`), times before the epoch at 0.
pub fn ts_seconds(ts_us: i64) -> u32 {
    (ts_us.max(0) / 1_000_000) as u32
}

/// The events table's columns and their ClickHouse types, in table order:
/// the event's fields with `ts` before `ts_us`. Rows are written as
/// RowBinary or Native in exactly this order.
pub const EVENT_COLUMNS: [(&str, &str); 20] = [
    ("seq", "UInt64"),
    ("event_id", "String"),
    ("ts", "DateTime"),
    ("ts_us", "Int64"),
    ("tenant", "String"),
    ("region", "String"),
    ("zone", "String"),
    ("service", "String"),
    ("endpoint", "String"),
    ("method", "String"),
    ("status", "UInt16"),
    ("latency_ms", "UInt32"),
    ("sla_ms", "UInt32"),
    ("bytes", "UInt32"),
    ("user_id", "String"),
    ("session_id", "String"),
    ("device", "String"),
    ("os", "String"),
    ("app_version", "String"),
    ("trace_id", "String"),
];

/// The raw table's columns: a message passed through undecoded, its
/// sequence number (the message key) and its bytes.
pub const RAW_COLUMNS: [(&str, &str); 2] = [("seq", "UInt64"), ("payload", "String")];

/// One row of the events table, as verification reads it back.
#[derive(Debug, Clone, PartialEq, Eq, clickhouse::Row, Deserialize)]
pub struct EventRow {
    pub seq: u64,
    pub event_id: String,
    /// [`ts_seconds`] of `ts_us`, as the pipeline wrote it.
    pub ts: u32,
    pub ts_us: i64,
    pub tenant: String,
    pub region: String,
    pub zone: String,
    pub service: String,
    pub endpoint: String,
    pub method: String,
    pub status: u16,
    pub latency_ms: u32,
    pub sla_ms: u32,
    pub bytes: u32,
    pub user_id: String,
    pub session_id: String,
    pub device: String,
    pub os: String,
    pub app_version: String,
    pub trace_id: String,
}

impl EventRow {
    /// The row a pipeline writes for `event`.
    pub fn of<S: AsRef<str>>(event: &Event<S>) -> EventRow {
        let e = event.as_ref();
        let text = str::to_string;
        EventRow {
            seq: e.seq,
            event_id: text(e.event_id),
            ts: ts_seconds(e.ts_us),
            ts_us: e.ts_us,
            tenant: text(e.tenant),
            region: text(e.region),
            zone: text(e.zone),
            service: text(e.service),
            endpoint: text(e.endpoint),
            method: text(e.method),
            status: e.status,
            latency_ms: e.latency_ms,
            sla_ms: e.sla_ms,
            bytes: e.bytes,
            user_id: text(e.user_id),
            session_id: text(e.session_id),
            device: text(e.device),
            os: text(e.os),
            app_version: text(e.app_version),
            trace_id: text(e.trace_id),
        }
    }

    /// The event the row holds, without its `ts`.
    pub fn event(&self) -> Event<&str> {
        Event {
            seq: self.seq,
            event_id: &self.event_id,
            ts_us: self.ts_us,
            tenant: &self.tenant,
            region: &self.region,
            zone: &self.zone,
            service: &self.service,
            endpoint: &self.endpoint,
            method: &self.method,
            status: self.status,
            latency_ms: self.latency_ms,
            sla_ms: self.sla_ms,
            bytes: self.bytes,
            user_id: &self.user_id,
            session_id: &self.session_id,
            device: &self.device,
            os: &self.os,
            app_version: &self.app_version,
            trace_id: &self.trace_id,
        }
    }
}

/// One row of the raw table, as verification reads it back.
#[derive(Debug, Clone, PartialEq, Eq, clickhouse::Row, Deserialize)]
pub struct RawRow {
    pub seq: u64,
    #[serde(with = "serde_bytes")]
    pub payload: Vec<u8>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tests::event;
    use clickhouse::Row;

    #[test]
    fn the_rows_read_back_are_the_tables_columns() {
        let names: Vec<&str> = EVENT_COLUMNS.iter().map(|(name, _)| *name).collect();
        assert_eq!(EventRow::COLUMN_NAMES, names.as_slice());
        let raw: Vec<&str> = RAW_COLUMNS.iter().map(|(name, _)| *name).collect();
        assert_eq!(RawRow::COLUMN_NAMES, raw.as_slice());
    }

    #[test]
    fn a_row_holds_its_event_and_every_form_compares_borrowed() {
        let owned = event();
        let row = EventRow::of(&owned);
        assert_eq!(row.event(), owned.as_ref());
        assert_eq!(row.ts, 1_700_000_000);
        let mut other = owned.clone();
        other.os = "ios".to_string();
        assert_ne!(row.event(), other.as_ref());
    }

    #[test]
    fn ts_is_whole_seconds_and_never_before_the_epoch() {
        assert_eq!(ts_seconds(1_999_999), 1);
        assert_eq!(ts_seconds(-5), 0);
    }
}
