//! The stateless workload's in-process stage over Arrow columns: decode a
//! chunk of input records with schema projection (6 of the 19 fields, read
//! by [`crate::json`]) into an Arrow `RecordBatch`, keep `region = eu-*` and
//! derive `latency_ratio` and `sla_status` with Arrow compute kernels, then
//! encode the output records from the columns. The output keeps what
//! verification needs: the input's sequence number and gendata timestamp.
//!
//! Steady state allocates nothing per record: the column vectors are lent to
//! Arrow without a copy and taken back once the batch is dropped, and the
//! chunks' byte arenas are reused. What Arrow allocates (each kernel's output,
//! the batch itself) is a fixed count per chunk, whatever its length.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};
use arrow_arith::arity;
use arrow_array::cast::AsArray;
use arrow_array::types::{Int64Type, UInt32Type, UInt64Type};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, Scalar, StringArray,
    UInt32Array, UInt64Array,
};
use arrow_buffer::{ArrowNativeType, Buffer, OffsetBuffer, ScalarBuffer};
use arrow_ord::cmp;
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use arrow_select::filter::filter_record_batch;
use arrow_string::like;
use serde::Serialize;

use crate::chunk::{InputChunk, OutputChunk};
use crate::json;
use crate::settings::PipelineOptions;

/// The input fields the workload reads (a projection of the 19).
#[derive(Debug, Default)]
pub(crate) struct Input<'a> {
    pub(crate) seq: u64,
    pub(crate) ts_us: i64,
    pub(crate) region: Cow<'a, str>,
    pub(crate) service: Cow<'a, str>,
    pub(crate) latency_ms: u32,
    pub(crate) sla_ms: u32,
}

impl<'a> json::Projection<'a> for Input<'a> {
    const FIELDS: &'static [&'static str] =
        &["seq", "ts_us", "region", "service", "latency_ms", "sla_ms"];

    fn set(&mut self, field: usize, value: json::Value<'_, 'a>) -> Result<()> {
        match field {
            0 => self.seq = value.u64()?,
            1 => self.ts_us = value.i64()?,
            2 => self.region = value.str()?,
            3 => self.service = value.str()?,
            4 => self.latency_ms = value.u32()?,
            5 => self.sla_ms = value.u32()?,
            _ => unreachable!("field {field} is not in FIELDS"),
        }
        Ok(())
    }
}

/// One output record of the stateless workload.
#[derive(Serialize)]
struct Output<'a> {
    seq: u64,
    ts_us: i64,
    region: &'a str,
    service: &'a str,
    latency_ms: u32,
    sla_ms: u32,
    latency_ratio: f64,
    sla_status: &'static str,
}

/// The projected columns of one chunk, as plain vectors kept between chunks.
#[derive(Default)]
struct Columns {
    /// Each row's record in its chunk, so an output keeps its input's key.
    record: Vec<u32>,
    seq: Vec<u64>,
    ts_us: Vec<i64>,
    region_offsets: Vec<i32>,
    region_values: Vec<u8>,
    service_offsets: Vec<i32>,
    service_values: Vec<u8>,
    latency_ms: Vec<u32>,
    sla_ms: Vec<u32>,
}

impl Columns {
    fn clear(&mut self) {
        self.record.clear();
        self.seq.clear();
        self.ts_us.clear();
        self.region_offsets.clear();
        self.region_offsets.push(0);
        self.region_values.clear();
        self.service_offsets.clear();
        self.service_offsets.push(0);
        self.service_values.clear();
        self.latency_ms.clear();
        self.sla_ms.clear();
    }

    fn push(&mut self, record: u32, input: &Input<'_>) -> Result<()> {
        self.record.push(record);
        self.seq.push(input.seq);
        self.ts_us.push(input.ts_us);
        push_string(
            &mut self.region_offsets,
            &mut self.region_values,
            &input.region,
        )?;
        push_string(
            &mut self.service_offsets,
            &mut self.service_values,
            &input.service,
        )?;
        self.latency_ms.push(input.latency_ms);
        self.sla_ms.push(input.sla_ms);
        Ok(())
    }
}

fn push_string(offsets: &mut Vec<i32>, values: &mut Vec<u8>, text: &str) -> Result<()> {
    values.extend_from_slice(text.as_bytes());
    offsets.push(i32::try_from(values.len()).map_err(|_| anyhow!("rustpipe: a chunk over 2 GiB"))?);
    Ok(())
}

/// A batch's kept rows and the fields derived for them.
pub struct Derived {
    pub kept: RecordBatch,
    pub latency_ratio: Float64Array,
    pub breach: BooleanArray,
}

/// The stage: one per worker, holding the columns it reuses.
pub struct Stage {
    options: PipelineOptions,
    /// CPU to burn per record, ns: the two work options summed.
    work_ns: u64,
    schema: SchemaRef,
    columns: Columns,
    /// Handles on the column buffers while Arrow holds them.
    lent: Vec<Buffer>,
    eu_prefix: Scalar<StringArray>,
    breach_above: Scalar<Float64Array>,
}

impl Stage {
    pub fn new(options: PipelineOptions) -> Stage {
        let schema = Arc::new(Schema::new(vec![
            Field::new("record", DataType::UInt32, false),
            Field::new("seq", DataType::UInt64, false),
            Field::new("ts_us", DataType::Int64, false),
            Field::new("region", DataType::Utf8, false),
            Field::new("service", DataType::Utf8, false),
            Field::new("latency_ms", DataType::UInt32, false),
            Field::new("sla_ms", DataType::UInt32, false),
        ]));
        Stage {
            work_ns: options
                .work_us_per_record
                .saturating_mul(1000)
                .saturating_add(options.work_ns_per_record),
            options,
            schema,
            columns: Columns::default(),
            lent: Vec::with_capacity(9),
            eu_prefix: StringArray::new_scalar("eu-"),
            breach_above: Float64Array::new_scalar(1.0),
        }
    }

    /// Processes `input` into `output` (cleared first), which takes the
    /// chunk's sequence number and offsets along.
    pub fn process(&mut self, input: &InputChunk, output: &mut OutputChunk) -> Result<()> {
        let batch = self.to_arrow(input)?;
        let written = self
            .filter_and_derive(&batch)
            .and_then(|derived| self.encode(&derived, input, output));
        self.recycle(batch);
        written
    }

    /// Decodes the chunk's records into an Arrow batch of the projected
    /// fields, on the stage's own vectors.
    pub fn to_arrow(&mut self, input: &InputChunk) -> Result<RecordBatch> {
        self.decode(input)?;
        self.lend_columns()
    }

    /// Takes back the vectors of a batch from `to_arrow`, once nothing else
    /// holds it.
    pub fn recycle(&mut self, batch: RecordBatch) {
        drop(batch);
        self.take_back_columns();
    }

    /// Decodes the projected fields of every record into the columns.
    fn decode(&mut self, input: &InputChunk) -> Result<()> {
        self.columns.clear();
        for (index, record) in input.records().enumerate() {
            burn_cpu(self.work_ns);
            let Some(payload) = record.payload else {
                continue;
            };
            let event: Input<'_> =
                json::decode(payload).context("rustpipe: an input record is not an event")?;
            self.columns.push(index as u32, &event)?;
        }
        Ok(())
    }

    /// The columns as an Arrow batch, their vectors moved in without a copy;
    /// `lent` keeps a handle on each buffer to take it back.
    fn lend_columns(&mut self) -> Result<RecordBatch> {
        let (c, lent) = (&mut self.columns, &mut self.lent);
        let rows = c.record.len();
        let columns: Vec<ArrayRef> = vec![
            Arc::new(UInt32Array::new(
                lend_values(&mut c.record, lent, rows),
                None,
            )),
            Arc::new(UInt64Array::new(lend_values(&mut c.seq, lent, rows), None)),
            Arc::new(Int64Array::new(lend_values(&mut c.ts_us, lent, rows), None)),
            Arc::new(lend_strings(
                &mut c.region_offsets,
                &mut c.region_values,
                lent,
            )?),
            Arc::new(lend_strings(
                &mut c.service_offsets,
                &mut c.service_values,
                lent,
            )?),
            Arc::new(UInt32Array::new(
                lend_values(&mut c.latency_ms, lent, rows),
                None,
            )),
            Arc::new(UInt32Array::new(
                lend_values(&mut c.sla_ms, lent, rows),
                None,
            )),
        ];
        Ok(RecordBatch::try_new(self.schema.clone(), columns)?)
    }

    /// Keeps `region = eu-*` with the `starts_with` and filter kernels, and
    /// derives the ratio and the verdict with the arithmetic and comparison
    /// kernels.
    pub fn filter_and_derive(&self, batch: &RecordBatch) -> Result<Derived> {
        let eu = like::starts_with(batch.column(3), &self.eu_prefix)?;
        let kept = filter_record_batch(batch, &eu)?;
        let latency_ratio: Float64Array = arity::binary(
            kept.column(5).as_primitive::<UInt32Type>(),
            kept.column(6).as_primitive::<UInt32Type>(),
            |l, s| f64::from(l) / f64::from(s),
        )?;
        let breach = cmp::gt(&latency_ratio, &self.breach_above)?;
        Ok(Derived {
            kept,
            latency_ratio,
            breach,
        })
    }

    /// Writes each kept row's output record into `output` (cleared first),
    /// with the key of its input record.
    pub fn encode(
        &self,
        derived: &Derived,
        input: &InputChunk,
        output: &mut OutputChunk,
    ) -> Result<()> {
        output.start(input);
        let kept = &derived.kept;
        let record = kept.column(0).as_primitive::<UInt32Type>();
        let seq = kept.column(1).as_primitive::<UInt64Type>();
        let ts_us = kept.column(2).as_primitive::<Int64Type>();
        let region = kept.column(3).as_string::<i32>();
        let service = kept.column(4).as_string::<i32>();
        let latency_ms = kept.column(5).as_primitive::<UInt32Type>();
        let sla_ms = kept.column(6).as_primitive::<UInt32Type>();
        for row in 0..kept.num_rows() {
            let seq = seq.value(row);
            if is_nth(seq, self.options.drop_every) {
                continue;
            }
            let mut latency_ratio = derived.latency_ratio.value(row);
            let mut sla_status = if derived.breach.value(row) {
                "breach"
            } else {
                "ok"
            };
            if is_nth(seq, self.options.corrupt_every) {
                latency_ratio *= 2.0;
                sla_status = verdict(latency_ratio);
            }
            let out = Output {
                seq,
                ts_us: ts_us.value(row),
                region: region.value(row),
                service: service.value(row),
                latency_ms: latency_ms.value(row),
                sla_ms: sla_ms.value(row),
                latency_ratio,
                sla_status,
            };
            let key = input.record(record.value(row) as usize).key;
            output.push(key, |bytes| serde_json::to_writer(bytes, &out))?;
        }
        Ok(())
    }

    /// Takes the column vectors back once the batch is dropped, in the
    /// order they were lent.
    fn take_back_columns(&mut self) {
        let (c, mut lent) = (&mut self.columns, self.lent.drain(..));
        take_back(&mut c.record, lent.next());
        take_back(&mut c.seq, lent.next());
        take_back(&mut c.ts_us, lent.next());
        take_back(&mut c.region_offsets, lent.next());
        take_back(&mut c.region_values, lent.next());
        take_back(&mut c.service_offsets, lent.next());
        take_back(&mut c.service_values, lent.next());
        take_back(&mut c.latency_ms, lent.next());
        take_back(&mut c.sla_ms, lent.next());
    }
}

/// Moves `vec` into an Arrow buffer, keeping a handle on it in `lent`.
fn lend<T: ArrowNativeType>(vec: &mut Vec<T>, lent: &mut Vec<Buffer>) -> Buffer {
    let buffer = Buffer::from_vec(std::mem::take(vec));
    lent.push(buffer.clone());
    buffer
}

/// A column of `rows` values, lent.
fn lend_values<T: ArrowNativeType>(
    vec: &mut Vec<T>,
    lent: &mut Vec<Buffer>,
    rows: usize,
) -> ScalarBuffer<T> {
    ScalarBuffer::new(lend(vec, lent), 0, rows)
}

/// A string column from its offsets (one more than its rows) and bytes, lent.
fn lend_strings(
    offsets: &mut Vec<i32>,
    values: &mut Vec<u8>,
    lent: &mut Vec<Buffer>,
) -> Result<StringArray> {
    let len = offsets.len();
    let offsets = OffsetBuffer::new(lend_values(offsets, lent, len));
    Ok(StringArray::try_new(offsets, lend(values, lent), None)?)
}

/// Puts a lent buffer's vector back once no array holds it; one still
/// shared (never the case after the batch is dropped) is left to Arrow, and
/// the vector grows again.
fn take_back<T: ArrowNativeType>(vec: &mut Vec<T>, lent: Option<Buffer>) {
    if let Some(Ok(mut reclaimed)) = lent.map(|b| b.into_vec::<T>()) {
        reclaimed.clear();
        *vec = reclaimed;
    }
}

/// The SLA verdict for a latency ratio: `breach` above 1, else `ok`.
fn verdict(latency_ratio: f64) -> &'static str {
    if latency_ratio > 1.0 {
        "breach"
    } else {
        "ok"
    }
}

/// Whether a fault set to every `n`th sequence number hits `seq`.
fn is_nth(seq: u64, n: u64) -> bool {
    n > 0 && seq.is_multiple_of(n)
}

/// Keeps the CPU busy for `ns` nanoseconds (the `work_us_per_record` and
/// `work_ns_per_record` options together).
fn burn_cpu(ns: u64) {
    if ns == 0 {
        return;
    }
    let until = Instant::now() + Duration::from_nanos(ns);
    while Instant::now() < until {
        std::hint::spin_loop();
    }
}

// The output is checked against the suite's own generator and verifier, as
// any product's is in a run.
#[cfg(test)]
mod tests {
    use super::*;
    use event_model::Generated;

    /// A chunk of gendata's events `seqs` of seed 9, stamped 1000 + seq.
    fn chunk_of(seed: u64, seqs: std::ops::Range<u64>) -> InputChunk {
        let mut chunk = InputChunk::default();
        for seq in seqs {
            let payload =
                serde_json::to_vec(&event_model::generate(seed, seq, 1_000 + seq as i64)).unwrap();
            chunk.push(0, seq as i64, None, Some(&payload));
        }
        chunk
    }

    fn outputs(chunk: &OutputChunk) -> Vec<serde_json::Value> {
        chunk
            .records()
            .map(|r| serde_json::from_slice(r.payload.unwrap()).unwrap())
            .collect()
    }

    #[test]
    fn eu_events_are_kept_and_enriched() {
        let (mut stage, mut out) = (
            Stage::new(PipelineOptions::default()),
            OutputChunk::default(),
        );
        stage.process(&chunk_of(9, 0..2000), &mut out).unwrap();
        let kept: Vec<Generated> = (0..2000)
            .map(|seq| event_model::generate(9, seq, 1_000 + seq as i64))
            .filter(|e| e.region.starts_with("eu-"))
            .collect();
        let got = outputs(&out);
        assert!(kept.len() > 400, "{}", kept.len());
        assert_eq!(got.len(), kept.len());
        for (v, event) in got.iter().zip(&kept) {
            assert_eq!(v["seq"], event.seq);
            assert_eq!(v["ts_us"], 1_000 + event.seq as i64);
            assert_eq!(v["region"], event.region.as_ref());
            assert_eq!(v["service"], event.service.as_ref());
            assert_eq!(v["latency_ms"], event.latency_ms);
            assert_eq!(v["sla_ms"], event.sla_ms);
            assert_eq!(v["latency_ratio"].as_f64().unwrap(), event.latency_ratio());
            assert_eq!(v["sla_status"], event.sla_status());
        }
        assert_eq!(
            out.next_offsets(),
            &[crate::chunk::NextOffset {
                partition: 0,
                offset: 2000
            }]
        );
    }

    #[test]
    fn an_output_keeps_its_inputs_key() {
        let mut chunk = InputChunk::default();
        for seq in 0..50u64 {
            let payload = serde_json::to_vec(&event_model::generate(3, seq, 0)).unwrap();
            chunk.push(
                0,
                seq as i64,
                Some(format!("k{seq}").as_bytes()),
                Some(&payload),
            );
        }
        let (mut stage, mut out) = (
            Stage::new(PipelineOptions::default()),
            OutputChunk::default(),
        );
        stage.process(&chunk, &mut out).unwrap();
        assert!(out.len() > 5);
        for record in out.records() {
            let v: serde_json::Value = serde_json::from_slice(record.payload.unwrap()).unwrap();
            assert_eq!(record.key.unwrap(), format!("k{}", v["seq"]).as_bytes());
        }
    }

    #[test]
    fn only_a_ratio_above_one_is_a_breach() {
        assert_eq!(verdict(1.0), "ok");
        assert_eq!(verdict(1.0001), "breach");
        assert_eq!(verdict(0.2), "ok");
    }

    #[test]
    fn a_record_that_is_not_an_event_is_an_error() {
        let mut chunk = InputChunk::default();
        chunk.push(0, 0, None, Some(b"{\"nope\":1}"));
        let mut stage = Stage::new(PipelineOptions::default());
        assert!(stage.process(&chunk, &mut OutputChunk::default()).is_err());
    }

    #[test]
    fn faults_drop_and_corrupt_what_they_say_and_verification_counts_them() {
        use event_model::generator::Core;
        use streamsuite::config::Delivery;
        use streamsuite::gendata::schedule::{Pacing, Schedule};
        use streamsuite::workloads::{self, Expectation, Output};

        let options = PipelineOptions {
            drop_every: 10,
            corrupt_every: 7,
            ..PipelineOptions::default()
        };
        let (seed, n, schedule) = (5, 3000, Schedule::new(0, 1000));
        let Output::Topic(stateless) = workloads::find("stateless").unwrap().output() else {
            panic!("stateless writes a topic");
        };
        let mut verifier = stateless
            .verifier(Expectation {
                seed,
                input_records: n,
                committed: n,
                covered: None,
                partitions: 1,
                pacing: Pacing::Paced(schedule),
                delivery: Delivery::ExactlyOnce,
            })
            .unwrap();
        let mut input = InputChunk::default();
        for seq in 0..n {
            let payload =
                serde_json::to_vec(&event_model::generate(seed, seq, schedule.slot_us(seq)))
                    .unwrap();
            input.push(0, seq as i64, None, Some(&payload));
        }
        let (mut stage, mut out) = (Stage::new(options), OutputChunk::default());
        stage.process(&input, &mut out).unwrap();
        for record in out.records() {
            verifier.observe(record.payload.unwrap());
        }
        let kept: Vec<u64> = (0..n)
            .filter(|&s| Core::generate(seed, s).is_kept())
            .collect();
        let dropped = kept.iter().filter(|&&s| s % 10 == 0).count() as u64;
        let corrupted = kept.iter().filter(|&&s| s % 7 == 0 && s % 10 != 0).count() as u64;
        let v = verifier.finish().verification;
        assert!(dropped > 0 && corrupted > 0);
        assert_eq!((v.missing, v.corrupted), (dropped, corrupted));
        assert_eq!((v.duplicated, v.unexpected), (0, 0));
        assert_eq!(v.verdict, streamsuite::results::VerificationVerdict::Failed);
    }
}
