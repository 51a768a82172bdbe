//! Chunks: the records the reader took from the consumer in one go, and the
//! output records the stage made of them. Each keeps its bytes in one arena
//! that is cleared and reused, so a chunk costs no allocation per record
//! once its arena has grown to the load.

use std::io::Write;

/// Where one record's bytes sit in a chunk's arena.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn of<'a>(&self, bytes: &'a [u8]) -> &'a [u8] {
        &bytes[self.start as usize..self.end as usize]
    }
}

/// One record of a chunk, borrowed from its arena.
#[derive(Debug, Clone, Copy)]
pub struct RecordRef<'a> {
    pub key: Option<&'a [u8]>,
    pub payload: Option<&'a [u8]>,
}

/// The next offset to consume, per input partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextOffset {
    pub partition: i32,
    pub offset: i64,
}

/// Input records in consumption order, with the offsets they advance to.
#[derive(Debug, Default)]
pub struct InputChunk {
    /// The chunk's place in the reader's order, from 0.
    pub seq: u64,
    bytes: Vec<u8>,
    records: Vec<(Option<Span>, Option<Span>)>,
    /// Where each record was read, beside the spans the stages iterate.
    positions: Vec<NextOffset>,
    next_offsets: Vec<NextOffset>,
}

impl InputChunk {
    /// Empties the chunk for reuse as the reader's chunk `seq`.
    pub fn reset(&mut self, seq: u64) {
        self.seq = seq;
        self.bytes.clear();
        self.records.clear();
        self.positions.clear();
        self.next_offsets.clear();
    }

    /// Adds the record at `offset` of `partition`.
    pub fn push(
        &mut self,
        partition: i32,
        offset: i64,
        key: Option<&[u8]>,
        payload: Option<&[u8]>,
    ) {
        let key = key.map(|k| append(&mut self.bytes, k));
        let payload = payload.map(|p| append(&mut self.bytes, p));
        self.records.push((key, payload));
        self.positions.push(NextOffset { partition, offset });
        advance(&mut self.next_offsets, partition, offset + 1);
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    pub fn record(&self, index: usize) -> RecordRef<'_> {
        let (key, payload) = self.records[index];
        RecordRef {
            key: key.map(|s| s.of(&self.bytes)),
            payload: payload.map(|s| s.of(&self.bytes)),
        }
    }

    /// The offset a consumer resumes at to read record `index` again.
    pub fn resume_at(&self, index: usize) -> NextOffset {
        self.positions[index]
    }

    pub fn records(&self) -> impl Iterator<Item = RecordRef<'_>> {
        (0..self.records.len()).map(|i| self.record(i))
    }

    pub fn next_offsets(&self) -> &[NextOffset] {
        &self.next_offsets
    }
}

/// The output records of one input chunk, and the input offsets they cover.
#[derive(Debug, Default)]
pub struct OutputChunk {
    /// The input chunk's sequence number.
    pub seq: u64,
    bytes: Vec<u8>,
    records: Vec<(Option<Span>, Span)>,
    next_offsets: Vec<NextOffset>,
}

impl OutputChunk {
    /// Empties the chunk to take `input`'s output.
    pub fn start(&mut self, input: &InputChunk) {
        self.seq = input.seq;
        self.bytes.clear();
        self.records.clear();
        self.next_offsets.clear();
        self.next_offsets.extend_from_slice(&input.next_offsets);
    }

    /// Adds an output record with `key`, its payload written by `write`.
    pub fn push<E>(
        &mut self,
        key: Option<&[u8]>,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let key = key.map(|k| append(&mut self.bytes, k));
        let start = self.bytes.len() as u32;
        write(&mut self.bytes)?;
        self.records.push((
            key,
            Span {
                start,
                end: self.bytes.len() as u32,
            },
        ));
        Ok(())
    }

    /// Reports `next` as the only input offset the chunk covers, in place of
    /// its input's: a stage that holds records in memory covers the input
    /// only up to the first record its state still needs.
    pub fn cover_up_to(&mut self, next: NextOffset) {
        self.next_offsets.clear();
        self.next_offsets.push(next);
    }

    /// Copies `other`'s records after this chunk's, and takes its offsets.
    pub fn append(&mut self, other: &OutputChunk) {
        for record in other.records() {
            let _ = self.push(record.key, |bytes| {
                bytes.write_all(record.payload.unwrap_or_default())
            });
        }
        for next in &other.next_offsets {
            advance(&mut self.next_offsets, next.partition, next.offset);
        }
        self.seq = other.seq;
    }

    /// Empties the chunk, offsets included.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.records.clear();
        self.next_offsets.clear();
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty() && self.next_offsets.is_empty()
    }

    pub fn records(&self) -> impl Iterator<Item = RecordRef<'_>> {
        self.records.iter().map(|(key, payload)| RecordRef {
            key: key.map(|s| s.of(&self.bytes)),
            payload: Some(payload.of(&self.bytes)),
        })
    }

    pub fn next_offsets(&self) -> &[NextOffset] {
        &self.next_offsets
    }
}

fn append(bytes: &mut Vec<u8>, data: &[u8]) -> Span {
    let start = bytes.len() as u32;
    bytes.extend_from_slice(data);
    Span {
        start,
        end: bytes.len() as u32,
    }
}

/// Moves `partition`'s next offset forward to `next`.
pub fn advance(offsets: &mut Vec<NextOffset>, partition: i32, next: i64) {
    match offsets.iter_mut().find(|o| o.partition == partition) {
        Some(o) => o.offset = o.offset.max(next),
        None => offsets.push(NextOffset {
            partition,
            offset: next,
        }),
    }
}
