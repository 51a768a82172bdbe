//! Decoding the avro-etl workload's batch datums (workloads/avro/event-batch.avsc)
//! three ways, so the cost of each can be measured on the same bytes:
//! serde_avro_fast into borrowed events (strings point into the message),
//! serde_avro_fast into owned events, and apache-avro's reader (a `Value`
//! tree, then owned events). Every path hands each event to a callback as an
//! [`EventRef`], so what follows the decoder is the same code for all three.
//!
//! The borrowed path reads an event's fields by position and its strings as
//! bytes, then checks their UTF-8 once for the whole event, where derived
//! code would match every field's name and validate every string on its own.
//! Reading by position holds because [`Decoder::new`] checks that the schema
//! lists the event's fields in [`event_model::Event`]'s order, with their
//! types.

use std::fmt;
use std::marker::PhantomData;
use std::str::{FromStr, Utf8Error};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context, Result};
use apache_avro::reader::datum::GenericDatumReader;
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_avro_fast::schema::{RegularType, SchemaMut, SchemaNode};

/// The writer schema gendata encodes with.
pub use event_model::SCHEMA_JSON;

/// One event, its strings borrowed from the datum it was decoded from.
pub type EventRef<'a> = event_model::Event<&'a str>;

/// One event with strings of its own.
pub type EventOwned = event_model::Event<String>;

#[derive(Deserialize)]
struct OwnedBatch {
    events: Vec<EventOwned>,
}

/// Which decoder a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DecoderKind {
    /// serde_avro_fast, events borrowed from the datum: no copies of strings.
    FastBorrowed,
    /// serde_avro_fast, events with owned strings.
    FastOwned,
    /// apache-avro: the datum as a `Value`, then owned events.
    ApacheOwned,
}

impl DecoderKind {
    pub const ALL: [DecoderKind; 3] = [
        DecoderKind::FastBorrowed,
        DecoderKind::FastOwned,
        DecoderKind::ApacheOwned,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DecoderKind::FastBorrowed => "fast-borrowed",
            DecoderKind::FastOwned => "fast-owned",
            DecoderKind::ApacheOwned => "apache-owned",
        }
    }
}

impl fmt::Display for DecoderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for DecoderKind {
    type Err = anyhow::Error;

    fn from_str(text: &str) -> Result<DecoderKind> {
        DecoderKind::ALL
            .into_iter()
            .find(|kind| kind.as_str() == text)
            .ok_or_else(|| {
                anyhow!("unknown decoder `{text}` (fast-borrowed, fast-owned or apache-owned)")
            })
    }
}

/// apache-avro's parsed schema, once per process: its datum reader borrows it.
fn apache_schema() -> Result<&'static apache_avro::Schema> {
    static SCHEMA: OnceLock<apache_avro::Schema> = OnceLock::new();
    if let Some(schema) = SCHEMA.get() {
        return Ok(schema);
    }
    let parsed =
        apache_avro::Schema::parse_str(SCHEMA_JSON).context("apache-avro: parsing the schema")?;
    Ok(SCHEMA.get_or_init(|| parsed))
}

/// The Avro type of an event field, as far as the borrowed path reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldType {
    Long,
    Int,
    String,
}

/// The event record's fields in [`event_model::Event`]'s order: the order
/// the borrowed path reads them in.
const EVENT_FIELDS: [(&str, FieldType); 19] = [
    ("seq", FieldType::Long),
    ("event_id", FieldType::String),
    ("ts_us", FieldType::Long),
    ("tenant", FieldType::String),
    ("region", FieldType::String),
    ("zone", FieldType::String),
    ("service", FieldType::String),
    ("endpoint", FieldType::String),
    ("method", FieldType::String),
    ("status", FieldType::Int),
    ("latency_ms", FieldType::Int),
    ("sla_ms", FieldType::Int),
    ("bytes", FieldType::Int),
    ("user_id", FieldType::String),
    ("session_id", FieldType::String),
    ("device", FieldType::String),
    ("os", FieldType::String),
    ("app_version", FieldType::String),
    ("trace_id", FieldType::String),
];

/// The string fields of an event.
const EVENT_STRINGS: usize = 13;

/// serde_avro_fast's schema for the borrowed path: `json`, refused unless
/// it is a batch whose only field is an array of records of
/// [`EVENT_FIELDS`], in order; its strings become bytes, which Avro encodes
/// alike, so that serde_avro_fast hands them over unchecked and the event's
/// UTF-8 is checked once for all of them.
fn borrowed_schema(json: &str) -> Result<serde_avro_fast::Schema> {
    let mut schema: SchemaMut = json
        .parse()
        .context("serde_avro_fast: parsing the schema")?;
    let events = match &schema.root().type_ {
        RegularType::Record(batch) if batch.fields.len() == 1 => &batch.fields[0],
        _ => bail!("the schema is not a record of one field, the events"),
    };
    let event = match &schema[events.type_].type_ {
        RegularType::Array(array) => &schema[array.items].type_,
        _ => bail!("the schema's `{}` is not an array", events.name),
    };
    let RegularType::Record(event) = event else {
        bail!("the schema's events are not records");
    };
    let layout: Vec<_> = event
        .fields
        .iter()
        .map(|field| (field.name.as_str(), field_type(&schema[field.type_])))
        .collect();
    if layout != EVENT_FIELDS.map(|(name, kind)| (name, Some(kind))) {
        bail!(
            "the schema's event fields ({layout:?}) are not the event's, in order and with \
             their types ({EVENT_FIELDS:?})"
        );
    }
    for node in schema.nodes_mut() {
        if matches!(node.type_, RegularType::String) {
            node.type_ = RegularType::Bytes;
        }
    }
    schema
        .freeze()
        .context("serde_avro_fast: resolving the schema")
}

/// The type of a field's schema node, if it is one the borrowed path reads.
fn field_type(node: &SchemaNode) -> Option<FieldType> {
    if node.logical_type.is_some() {
        return None;
    }
    match node.type_ {
        RegularType::Long => Some(FieldType::Long),
        RegularType::Int => Some(FieldType::Int),
        RegularType::String => Some(FieldType::String),
        _ => None,
    }
}

/// The chosen decoder, its schema parsed and resolved once.
pub struct Decoder {
    kind: DecoderKind,
    fast: serde_avro_fast::Schema,
    apache: GenericDatumReader<'static>,
}

impl Decoder {
    pub fn new(kind: DecoderKind) -> Result<Decoder> {
        Ok(Decoder {
            kind,
            fast: match kind {
                DecoderKind::FastBorrowed => borrowed_schema(SCHEMA_JSON)?,
                _ => SCHEMA_JSON
                    .parse()
                    .context("serde_avro_fast: parsing the schema")?,
            },
            apache: GenericDatumReader::builder(apache_schema()?)
                .build()
                .context("apache-avro: resolving the schema")?,
        })
    }

    pub fn kind(&self) -> DecoderKind {
        self.kind
    }

    /// Decodes one batch datum, handing each event to `each` in order;
    /// returns the number of events.
    pub fn decode(&self, datum: &[u8], mut each: impl FnMut(&EventRef<'_>)) -> Result<usize> {
        match self.kind {
            DecoderKind::FastBorrowed => {
                self.fast_streamed(datum, |e: BorrowedEvent<'_>| each(&e.0))
            }
            DecoderKind::FastOwned => self.fast_streamed(datum, |e: EventOwned| each(&e.as_ref())),
            DecoderKind::ApacheOwned => {
                let value = self
                    .apache
                    .read_value(&mut &datum[..])
                    .context("apache-avro: reading a datum")?;
                let batch: OwnedBatch =
                    apache_avro::from_value(&value).context("apache-avro: reading a datum")?;
                batch.events.iter().for_each(|e| each(&e.as_ref()));
                Ok(batch.events.len())
            }
        }
    }

    /// serde_avro_fast, each event handed on as soon as it is read: the batch
    /// never becomes a vector, so the borrowed path allocates nothing.
    fn fast_streamed<'de, T: Deserialize<'de>>(
        &self,
        datum: &'de [u8],
        each: impl FnMut(T),
    ) -> Result<usize> {
        let mut state = serde_avro_fast::de::DeserializerState::from_slice(datum, &self.fast);
        BatchSeed {
            each,
            event: PhantomData,
        }
        .deserialize(state.deserializer())
        .context("serde_avro_fast: reading a datum")
    }
}

/// Reads the batch record, streaming its `events` array.
struct BatchSeed<T, F> {
    each: F,
    event: PhantomData<fn() -> T>,
}

impl<'de, T: Deserialize<'de>, F: FnMut(T)> DeserializeSeed<'de> for BatchSeed<T, F> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_struct("EventBatch", &["events"], self)
    }
}

impl<'de, T: Deserialize<'de>, F: FnMut(T)> Visitor<'de> for BatchSeed<T, F> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an EventBatch record")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<usize, A::Error> {
        let mut events = 0;
        // The schema's only field is `events`.
        while map.next_key::<IgnoredAny>()?.is_some() {
            events += map.next_value_seed(EventsSeed {
                each: &mut self.each,
                event: PhantomData,
            })?;
        }
        Ok(events)
    }
}

/// Reads the `events` array, one event at a time.
struct EventsSeed<'f, T, F> {
    each: &'f mut F,
    event: PhantomData<fn() -> T>,
}

impl<'de, T: Deserialize<'de>, F: FnMut(T)> DeserializeSeed<'de> for EventsSeed<'_, T, F> {
    type Value = usize;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, T: Deserialize<'de>, F: FnMut(T)> Visitor<'de> for EventsSeed<'_, T, F> {
    type Value = usize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of events")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        let mut events = 0;
        while let Some(event) = seq.next_element::<T>()? {
            (self.each)(event);
            events += 1;
        }
        Ok(events)
    }
}

/// An event read by position from [`borrowed_schema`]'s records.
struct BorrowedEvent<'de>(EventRef<'de>);

impl<'de> Deserialize<'de> for BorrowedEvent<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // serde_avro_fast presents a record as a map of its fields in order.
        deserializer.deserialize_map(BorrowedEventVisitor)
    }
}

struct BorrowedEventVisitor;

impl<'de> Visitor<'de> for BorrowedEventVisitor {
    type Value = BorrowedEvent<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "an Event record of {} fields", EVENT_FIELDS.len())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let mut fields = FieldsInOrder { map, read: 0 };
        let seq = fields.next()?;
        let event_id = fields.next()?;
        let ts_us = fields.next()?;
        let tenant = fields.next()?;
        let region = fields.next()?;
        let zone = fields.next()?;
        let service = fields.next()?;
        let endpoint = fields.next()?;
        let method = fields.next()?;
        let status = fields.next()?;
        let latency_ms = fields.next()?;
        let sla_ms = fields.next()?;
        let bytes = fields.next()?;
        let user_id = fields.next()?;
        let session_id = fields.next()?;
        let device = fields.next()?;
        let os = fields.next()?;
        let app_version = fields.next()?;
        let trace_id = fields.next()?;
        fields.end()?;
        let strings = [
            event_id,
            tenant,
            region,
            zone,
            service,
            endpoint,
            method,
            user_id,
            session_id,
            device,
            os,
            app_version,
            trace_id,
        ];
        let checked = utf8(strings)
            .map_err(|e| de::Error::custom(format_args!("an event's string is not UTF-8: {e}")))?;
        let [event_id, tenant, region, zone, service, endpoint, method, rest @ ..] = checked;
        let [user_id, session_id, device, os, app_version, trace_id] = rest;
        Ok(BorrowedEvent(EventRef {
            seq,
            event_id,
            ts_us,
            tenant,
            region,
            zone,
            service,
            endpoint,
            method,
            status,
            latency_ms,
            sla_ms,
            bytes,
            user_id,
            session_id,
            device,
            os,
            app_version,
            trace_id,
        }))
    }
}

/// A record's values one after the other, its keys unread: the schema
/// fixed their order.
struct FieldsInOrder<A> {
    map: A,
    read: usize,
}

impl<'de, A: MapAccess<'de>> FieldsInOrder<A> {
    fn next<T: Deserialize<'de>>(&mut self) -> Result<T, A::Error> {
        if self.map.next_key::<IgnoredAny>()?.is_none() {
            return Err(de::Error::invalid_length(self.read, &BorrowedEventVisitor));
        }
        self.read += 1;
        self.map.next_value()
    }

    fn end(mut self) -> Result<(), A::Error> {
        match self.map.next_key::<IgnoredAny>()? {
            None => Ok(()),
            Some(_) => Err(de::Error::invalid_length(
                self.read + 1,
                &BorrowedEventVisitor,
            )),
        }
    }
}

/// The event's strings as `str`, their UTF-8 checked once for all of them:
/// one pass over their bytes when all are ASCII, as generated events are,
/// else string by string.
fn utf8(strings: [&[u8]; EVENT_STRINGS]) -> Result<[&str; EVENT_STRINGS], Utf8Error> {
    if all_ascii(&strings) {
        // SAFETY: every byte is ASCII, and ASCII is UTF-8.
        return Ok(strings.map(|s| unsafe { std::str::from_utf8_unchecked(s) }));
    }
    let mut text = [""; EVENT_STRINGS];
    for (text, bytes) in text.iter_mut().zip(strings) {
        *text = std::str::from_utf8(bytes)?;
    }
    Ok(text)
}

/// Whether every byte of `strings` is ASCII: their bytes ORed together,
/// eight at a time, without a branch per string.
fn all_ascii(strings: &[&[u8]]) -> bool {
    let mut bits = 0u64;
    for s in strings {
        let (words, tail) = s.as_chunks::<8>();
        for word in words {
            bits |= u64::from_ne_bytes(*word);
        }
        for &byte in tail {
            bits |= u64::from(byte);
        }
    }
    bits & 0x8080_8080_8080_8080 == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_writer_schema_lists_the_events_fields_in_order() {
        assert!(borrowed_schema(SCHEMA_JSON).is_ok());
    }

    #[test]
    fn a_schema_whose_event_fields_differ_is_refused() {
        let swapped = SCHEMA_JSON.replacen(
            r#"{"name": "tenant", "type": "string"},
            {"name": "region", "type": "string"},"#,
            r#"{"name": "region", "type": "string"},
            {"name": "tenant", "type": "string"},"#,
            1,
        );
        let retyped = SCHEMA_JSON.replacen(
            r#"{"name": "status", "type": "int"}"#,
            r#"{"name": "status", "type": "long"}"#,
            1,
        );
        let shortened = SCHEMA_JSON.replacen(
            r#",
            {"name": "trace_id", "type": "string"}"#,
            "",
            1,
        );
        for (what, schema) in [
            ("swapped", swapped),
            ("retyped", retyped),
            ("shortened", shortened),
        ] {
            assert_ne!(schema, SCHEMA_JSON, "{what}: the edit did not apply");
            let refused = borrowed_schema(&schema).unwrap_err();
            assert!(
                format!("{refused:#}").contains("not the event's"),
                "{what}: {refused:#}"
            );
        }
    }

    #[test]
    fn strings_are_checked_as_utf8_once_ascii_or_not() {
        let mut strings = [b"eu-west".as_slice(); EVENT_STRINGS];
        assert_eq!(utf8(strings).unwrap(), ["eu-west"; EVENT_STRINGS]);
        strings[4] = "zürich-0123456789".as_bytes();
        assert_eq!(utf8(strings).unwrap()[4], "zürich-0123456789");
        strings[12] = b"0123456789abcdef\xff";
        assert!(utf8(strings).is_err());
        strings[12] = b"\xc3";
        assert!(utf8(strings).is_err());
    }
}
