//! The avro-etl workload's rows: which events become rows, and the bytes of
//! an insert block in ClickHouse's RowBinary or Native format.
//!
//! A row is the event's 19 fields with `ts` (DateTime, whole seconds) added
//! before `ts_us`, in the column order of the run's `events` table. Both
//! encoders write the body of `INSERT INTO ... FORMAT <format>` themselves,
//! into buffers that are reused from block to block.

use std::fmt;
use std::str::FromStr;

use anyhow::{anyhow, Result};

use crate::avro::EventRef;

/// The filter: health checks are not worth a row.
pub fn keeps(event: &EventRef<'_>) -> bool {
    event.endpoint != "/health"
}

/// A row's columns and their ClickHouse types, in table order.
pub use event_model::{EVENT_COLUMNS as COLUMNS, RAW_COLUMNS};

/// The insert format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowFormat {
    /// Row after row, each field in its binary form.
    RowBinary,
    /// Column after column, with a block header naming each column's type.
    Native,
}

impl RowFormat {
    pub const ALL: [RowFormat; 2] = [RowFormat::RowBinary, RowFormat::Native];

    /// The name in the run record and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RowFormat::RowBinary => "rowbinary",
            RowFormat::Native => "native",
        }
    }

    /// The name ClickHouse knows it by, for `FORMAT`.
    pub fn clickhouse_name(self) -> &'static str {
        match self {
            RowFormat::RowBinary => "RowBinary",
            RowFormat::Native => "Native",
        }
    }
}

impl fmt::Display for RowFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RowFormat {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<RowFormat> {
        RowFormat::ALL
            .into_iter()
            .find(|format| format.as_str() == text)
            .ok_or_else(|| anyhow!("unknown insert format `{text}` (rowbinary or native)"))
    }
}

/// ClickHouse's unsigned LEB128 length prefix.
fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn put_str(out: &mut Vec<u8>, value: &str) {
    put_varint(out, value.len() as u64);
    out.extend_from_slice(value.as_bytes());
}

/// Calls `put` with each of the row's fields in column order, each already
/// in its binary form.
fn fields(event: &EventRef<'_>, mut put: impl FnMut(usize, Field<'_>)) {
    let e = event;
    put(0, Field::Fixed(&e.seq.to_le_bytes()));
    put(1, Field::Str(e.event_id));
    put(
        2,
        Field::Fixed(&event_model::ts_seconds(e.ts_us).to_le_bytes()),
    );
    put(3, Field::Fixed(&e.ts_us.to_le_bytes()));
    put(4, Field::Str(e.tenant));
    put(5, Field::Str(e.region));
    put(6, Field::Str(e.zone));
    put(7, Field::Str(e.service));
    put(8, Field::Str(e.endpoint));
    put(9, Field::Str(e.method));
    put(10, Field::Fixed(&e.status.to_le_bytes()));
    put(11, Field::Fixed(&e.latency_ms.to_le_bytes()));
    put(12, Field::Fixed(&e.sla_ms.to_le_bytes()));
    put(13, Field::Fixed(&e.bytes.to_le_bytes()));
    put(14, Field::Str(e.user_id));
    put(15, Field::Str(e.session_id));
    put(16, Field::Str(e.device));
    put(17, Field::Str(e.os));
    put(18, Field::Str(e.app_version));
    put(19, Field::Str(e.trace_id));
}

enum Field<'a> {
    Fixed(&'a [u8]),
    Str(&'a str),
    /// A String column holding bytes that need not be UTF-8.
    Bytes(&'a [u8]),
}

impl Field<'_> {
    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Field::Fixed(bytes) => out.extend_from_slice(bytes),
            Field::Str(text) => put_str(out, text),
            Field::Bytes(bytes) => {
                put_varint(out, bytes.len() as u64);
                out.extend_from_slice(bytes);
            }
        }
    }
}

/// Builds one insert block at a time in a chosen format.
pub struct BlockEncoder {
    format: RowFormat,
    /// The table's columns: [`COLUMNS`] or [`RAW_COLUMNS`].
    spec: &'static [(&'static str, &'static str)],
    /// RowBinary: the body itself. Native: the finished block.
    body: Vec<u8>,
    /// Native only: one buffer per column.
    columns: Vec<Vec<u8>>,
    rows: usize,
}

impl BlockEncoder {
    /// An encoder of event rows ([`COLUMNS`]).
    pub fn new(format: RowFormat) -> BlockEncoder {
        BlockEncoder::with_columns(format, &COLUMNS)
    }

    /// An encoder of raw rows ([`RAW_COLUMNS`]).
    pub fn raw(format: RowFormat) -> BlockEncoder {
        BlockEncoder::with_columns(format, &RAW_COLUMNS)
    }

    fn with_columns(
        format: RowFormat,
        spec: &'static [(&'static str, &'static str)],
    ) -> BlockEncoder {
        BlockEncoder {
            format,
            spec,
            body: Vec::new(),
            columns: match format {
                RowFormat::RowBinary => Vec::new(),
                RowFormat::Native => vec![Vec::new(); spec.len()],
            },
            rows: 0,
        }
    }

    pub fn format(&self) -> RowFormat {
        self.format
    }

    /// Rows in the block so far.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Appends a raw row: `seq` and the message's bytes (an encoder made
    /// with [`BlockEncoder::raw`]).
    pub fn push_raw(&mut self, seq: u64, payload: &[u8]) {
        debug_assert_eq!(self.spec.len(), RAW_COLUMNS.len());
        let (seq, payload) = (seq.to_le_bytes(), Field::Bytes(payload));
        match self.format {
            RowFormat::RowBinary => {
                self.body.extend_from_slice(&seq);
                payload.write(&mut self.body);
            }
            RowFormat::Native => {
                self.columns[0].extend_from_slice(&seq);
                payload.write(&mut self.columns[1]);
            }
        }
        self.rows += 1;
    }

    /// Appends `event`'s row (an encoder made with [`BlockEncoder::new`]).
    pub fn push(&mut self, event: &EventRef<'_>) {
        match self.format {
            RowFormat::RowBinary => {
                let body = &mut self.body;
                fields(event, |_, field| field.write(body));
            }
            RowFormat::Native => {
                let columns = &mut self.columns;
                fields(event, |column, field| field.write(&mut columns[column]));
            }
        }
        self.rows += 1;
    }

    /// The finished block's bytes, swapped for `spare` (an earlier block's
    /// buffer, handed back so blocks reuse their memory). The encoder is
    /// empty again.
    pub fn finish(&mut self, mut spare: Vec<u8>) -> Vec<u8> {
        spare.clear();
        if self.format == RowFormat::Native {
            let body = &mut self.body;
            put_varint(body, self.spec.len() as u64);
            put_varint(body, self.rows as u64);
            for ((name, kind), data) in self.spec.iter().zip(&mut self.columns) {
                put_str(body, name);
                put_str(body, kind);
                body.extend_from_slice(data);
                data.clear();
            }
        }
        self.rows = 0;
        std::mem::replace(&mut self.body, spare)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(seq: u64, endpoint: &str) -> EventRef<'_> {
        EventRef {
            seq,
            event_id: "2a-1",
            ts_us: 1_700_000_001_500_000,
            tenant: "tenant-007",
            region: "eu-west",
            zone: "eu-west-a",
            service: "search",
            endpoint,
            method: "GET",
            status: 200,
            latency_ms: 31,
            sla_ms: 100,
            bytes: 4096,
            user_id: "u000123",
            session_id: "s000123-00ff",
            device: "mobile",
            os: "ios",
            app_version: "3.2.1",
            trace_id: "0123456789abcdef0123456789abcdef",
        }
    }

    #[test]
    fn health_checks_are_dropped() {
        assert!(keeps(&event(1, "/api/v1/items")));
        assert!(!keeps(&event(1, "/health")));
    }

    #[test]
    fn a_rowbinary_row_is_its_fields_in_column_order() {
        let mut encoder = BlockEncoder::new(RowFormat::RowBinary);
        encoder.push(&event(7, "/api/v1/cart"));
        let body = encoder.finish(Vec::new());
        let mut expected = 7u64.to_le_bytes().to_vec();
        expected.extend([4, b'2', b'a', b'-', b'1']);
        expected.extend(1_700_000_001u32.to_le_bytes());
        expected.extend(1_700_000_001_500_000i64.to_le_bytes());
        expected.push(10);
        expected.extend(b"tenant-007");
        assert_eq!(&body[..expected.len()], &expected[..]);
        // Fixed fields of 8, 4, 8, 2 and 3 x 4 bytes; 13 strings with one-byte lengths.
        let strings: usize = [
            "2a-1",
            "tenant-007",
            "eu-west",
            "eu-west-a",
            "search",
            "/api/v1/cart",
            "GET",
            "u000123",
            "s000123-00ff",
            "mobile",
            "ios",
            "3.2.1",
            "0123456789abcdef0123456789abcdef",
        ]
        .iter()
        .map(|s| s.len() + 1)
        .sum();
        assert_eq!(body.len(), 8 + 4 + 8 + 2 + 4 * 3 + strings);
        assert_eq!(encoder.rows(), 0);
    }

    #[test]
    fn a_native_block_names_each_column_then_holds_its_values() {
        let mut encoder = BlockEncoder::new(RowFormat::Native);
        encoder.push(&event(1, "/api/v1/cart"));
        encoder.push(&event(2, "/api/v1/cart"));
        assert_eq!(encoder.rows(), 2);
        let body = encoder.finish(Vec::new());
        assert_eq!(&body[..2], &[20, 2]);
        let mut expected = vec![3];
        expected.extend(b"seq");
        expected.push(6);
        expected.extend(b"UInt64");
        expected.extend(1u64.to_le_bytes());
        expected.extend(2u64.to_le_bytes());
        expected.push(8);
        expected.extend(b"event_id");
        assert_eq!(&body[2..2 + expected.len()], &expected[..]);
        // Same values as two RowBinary rows, plus the header.
        let mut rowbinary = BlockEncoder::new(RowFormat::RowBinary);
        rowbinary.push(&event(1, "/api/v1/cart"));
        rowbinary.push(&event(2, "/api/v1/cart"));
        let header: usize = 2 + COLUMNS
            .iter()
            .map(|(name, kind)| 2 + name.len() + kind.len())
            .sum::<usize>();
        assert_eq!(body.len(), rowbinary.finish(Vec::new()).len() + header);
    }

    #[test]
    fn a_raw_row_is_its_seq_then_its_bytes_in_either_format() {
        let mut rowbinary = BlockEncoder::raw(RowFormat::RowBinary);
        rowbinary.push_raw(9, &[0xff, 0x00, 0x01]);
        let mut expected = 9u64.to_le_bytes().to_vec();
        expected.extend([3, 0xff, 0x00, 0x01]);
        assert_eq!(rowbinary.finish(Vec::new()), expected);
        let mut native = BlockEncoder::raw(RowFormat::Native);
        native.push_raw(9, &[0xff]);
        native.push_raw(10, &[]);
        let mut expected = vec![2, 2, 3];
        expected.extend(b"seq");
        expected.push(6);
        expected.extend(b"UInt64");
        expected.extend(9u64.to_le_bytes());
        expected.extend(10u64.to_le_bytes());
        expected.push(7);
        expected.extend(b"payload");
        expected.push(6);
        expected.extend(b"String");
        expected.extend([1, 0xff, 0]);
        assert_eq!(native.finish(Vec::new()), expected);
    }

    #[test]
    fn long_strings_get_multi_byte_lengths() {
        let mut out = Vec::new();
        put_varint(&mut out, 300);
        assert_eq!(out, [0xac, 0x02]);
    }

    #[test]
    fn the_next_block_is_built_in_the_spare_buffer() {
        let mut encoder = BlockEncoder::new(RowFormat::RowBinary);
        encoder.push(&event(1, "/x"));
        let first = encoder.finish(Vec::with_capacity(4096));
        encoder.push(&event(2, "/x"));
        let second = encoder.finish(Vec::new());
        assert_eq!(second.len(), first.len());
        assert!(second.capacity() >= 4096, "built in the spare");
    }
}
