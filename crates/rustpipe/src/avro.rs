//! Decoding the avro-etl workload's batch datums (workloads/avro/event-batch.avsc)
//! three ways, so the cost of each can be measured on the same bytes:
//! serde_avro_fast into borrowed events (strings point into the message),
//! serde_avro_fast into owned events, and apache-avro's reader (a `Value`
//! tree, then owned events). Every path hands each event to a callback as an
//! [`EventRef`], so what follows the decoder is the same code for all three.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;
use std::sync::OnceLock;

use anyhow::{anyhow, Context, Result};
use apache_avro::reader::datum::GenericDatumReader;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

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
            fast: SCHEMA_JSON
                .parse()
                .context("serde_avro_fast: parsing the schema")?,
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
            DecoderKind::FastBorrowed => self.fast_streamed(datum, |e: EventRef<'_>| each(&e)),
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
