//! The rows of the ETL workload's ClickHouse tables, as verification reads
//! them back.

use serde::Deserialize;

/// One row of `<db>.raw_messages`.
#[derive(Debug, Clone, PartialEq, Eq, ::clickhouse::Row, Deserialize)]
#[clickhouse(crate = "::clickhouse")]
pub struct RawRow {
    pub seq: u64,
    #[serde(with = "serde_bytes")]
    pub payload: Vec<u8>,
}

/// One row of `<db>.events`, as verification reads it back.
#[derive(Debug, Clone, PartialEq, Eq, ::clickhouse::Row, Deserialize)]
#[clickhouse(crate = "::clickhouse")]
pub struct EventRow {
    pub seq: u64,
    pub event_id: String,
    /// `DateTime`: whole seconds since the epoch.
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
