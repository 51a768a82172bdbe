//! The in-process stage, step by step: JSON chunk to Arrow, filter and
//! derive, encode, the whole stage, and the stage through N shards; and the
//! windowed step, which decodes 4 fields of each record into its aggregates.
//! Criterion gives time per chunk and records/s; the counting allocator
//! gives allocations and bytes per record, printed before the timings.
//! Allocations are exact; times are directional (a shared, noisy host).

use criterion::{criterion_group, BenchmarkId, Criterion, Throughput};
use rustpipe::alloc_count::{CountingAllocator, Counts};
use rustpipe::chunk::{InputChunk, OutputChunk};
use rustpipe::settings::{PipelineOptions, Workload};
use rustpipe::shards;
use rustpipe::stage::Stage;
use rustpipe::windows::Windows;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// Chunk sizes: a few records (what arrives together at the iso rate) and
/// a full chunk (a backlog).
const SIZES: [u64; 2] = [4, 2048];

fn chunk_of(records: u64) -> InputChunk {
    let mut chunk = InputChunk::default();
    for seq in 0..records {
        let payload = serde_json::to_vec(&event_model::generate(7, seq, seq as i64 * 100)).unwrap();
        chunk.push(0, seq as i64, None, Some(&payload));
    }
    chunk
}

/// Allocations and bytes per record of `step`, over enough calls to pass
/// a warm-up.
fn per_record(records: u64, mut step: impl FnMut()) -> (f64, f64) {
    for _ in 0..16 {
        step();
    }
    let calls = 256;
    let before: Counts = ALLOCATOR.counts();
    for _ in 0..calls {
        step();
    }
    let spent = ALLOCATOR.counts() - before;
    let n = (records * calls) as f64;
    (spent.allocations as f64 / n, spent.bytes as f64 / n)
}

fn print_allocations() {
    println!("allocations per record (counting allocator, steady state)");
    for records in SIZES {
        let input = chunk_of(records);
        let mut stage = Stage::new(PipelineOptions::default());
        let mut windows = Windows::default();
        let mut output = OutputChunk::default();
        let rows = [
            (
                "json_to_arrow",
                per_record(records, || {
                    let batch = stage.to_arrow(&input).unwrap();
                    stage.recycle(batch);
                }),
            ),
            (
                "stage",
                per_record(records, || stage.process(&input, &mut output).unwrap()),
            ),
            (
                "windows",
                per_record(records, || windows.process(&input, &mut output).unwrap()),
            ),
        ];
        for (name, (allocations, bytes)) in rows {
            println!("  {name:<14} chunk of {records:>4}: {allocations:>8.3} allocations, {bytes:>9.1} bytes");
        }
    }
}

fn stage_steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("stage");
    for records in SIZES {
        let input = chunk_of(records);
        let mut stage = Stage::new(PipelineOptions::default());
        let mut output = OutputChunk::default();
        group.throughput(Throughput::Elements(records));
        group.bench_function(BenchmarkId::new("json_to_arrow", records), |b| {
            b.iter(|| {
                let batch = stage.to_arrow(&input).unwrap();
                stage.recycle(batch);
            })
        });
        let batch = stage.to_arrow(&input).unwrap();
        group.bench_function(BenchmarkId::new("filter_and_derive", records), |b| {
            b.iter(|| stage.filter_and_derive(&batch).unwrap())
        });
        let derived = stage.filter_and_derive(&batch).unwrap();
        group.bench_function(BenchmarkId::new("encode", records), |b| {
            b.iter(|| stage.encode(&derived, &input, &mut output).unwrap())
        });
        drop(derived);
        stage.recycle(batch);
        group.bench_function(BenchmarkId::new("whole", records), |b| {
            b.iter(|| stage.process(&input, &mut output).unwrap())
        });
    }
    group.finish();
}

/// The windowed step on a chunk within one window: each call starts the
/// window over (its offsets go back), so it decodes and counts every record.
fn windows_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("windows");
    for records in SIZES {
        let input = chunk_of(records);
        let mut windows = Windows::default();
        let mut output = OutputChunk::default();
        group.throughput(Throughput::Elements(records));
        group.bench_function(BenchmarkId::new("process", records), |b| {
            b.iter(|| windows.process(&input, &mut output).unwrap())
        });
    }
    group.finish();
}

/// 256 full chunks through the stage on `parallelism` workers, handed over
/// and written back in order.
fn shard_handoff(c: &mut Criterion) {
    let input = chunk_of(2048);
    let chunks = 256u64;
    let mut group = c.benchmark_group("shards");
    group.sample_size(10);
    group.throughput(Throughput::Elements(chunks * 2048));
    for parallelism in [1, 2, 4] {
        group.bench_function(BenchmarkId::from_parameter(parallelism), |b| {
            b.iter(|| {
                shards::run(
                    parallelism,
                    Workload::Stateless,
                    &PipelineOptions::default(),
                    |_: &OutputChunk| Ok(()),
                    |stages| {
                        for _ in 0..chunks {
                            for record in input.records() {
                                stages.chunk().push(0, 0, record.key, record.payload);
                            }
                            stages.dispatch()?;
                        }
                        Ok(())
                    },
                )
                .unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, stage_steps, windows_step, shard_handoff);

fn main() {
    print_allocations();
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
