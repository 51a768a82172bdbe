//! The stage allocates nothing per record in the steady state: what it
//! allocates for a chunk (Arrow's kernel outputs, the batch) is the same
//! count for 64 records as for 2048. Counted exactly by a global allocator.

use rustpipe::alloc_count::CountingAllocator;
use rustpipe::chunk::{InputChunk, OutputChunk};
use rustpipe::settings::{PipelineOptions, Workload};
use rustpipe::shards;
use rustpipe::stage::Stage;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// One test for the file: the count is process-wide, and the test harness
/// allocates whenever another test of the binary ends (it reports it), which
/// would land in a count under way.
#[test]
fn the_stage_and_the_shards_allocate_per_chunk_never_per_record() {
    the_stage_allocates_per_chunk_never_per_record();
    four_shards_hand_chunks_over_without_allocating_per_record();
}

fn chunk_of(records: u64) -> InputChunk {
    let mut chunk = InputChunk::default();
    for seq in 0..records {
        let payload = serde_json::to_vec(&event_model::generate(11, seq, seq as i64)).unwrap();
        chunk.push(0, seq as i64, None, Some(&payload));
    }
    chunk
}

/// Allocations of one `process` call, after warm-up calls on the same chunk
/// and the largest one, so every reused vector has grown.
fn allocations_for(stage: &mut Stage, output: &mut OutputChunk, chunk: &InputChunk) -> u64 {
    stage.process(chunk, output).unwrap();
    let before = ALLOCATOR.counts();
    stage.process(chunk, output).unwrap();
    (ALLOCATOR.counts() - before).allocations
}

fn the_stage_allocates_per_chunk_never_per_record() {
    let (small, large) = (chunk_of(64), chunk_of(2048));
    let mut stage = Stage::new(PipelineOptions::default());
    let mut output = OutputChunk::default();
    stage.process(&large, &mut output).unwrap();
    let per_small = allocations_for(&mut stage, &mut output, &small);
    let per_large = allocations_for(&mut stage, &mut output, &large);
    assert!(output.len() > 400, "the large chunk kept {}", output.len());
    assert_eq!(
        per_small, per_large,
        "allocations for 64 records against 2048: any difference grows with the records"
    );
    // A fixed cost per chunk, from Arrow's kernels and the batch.
    assert!(
        per_large > 0 && per_large < 64,
        "{per_large} allocations a chunk"
    );
}

fn four_shards_hand_chunks_over_without_allocating_per_record() {
    let chunks: Vec<InputChunk> = [64, 2048].iter().map(|&n| chunk_of(n)).collect();
    let run = |chunk: &InputChunk, times: usize| {
        let mut written = 0usize;
        shards::run(
            4,
            Workload::Stateless,
            &PipelineOptions::default(),
            |out: &OutputChunk| {
                written += out.len();
                Ok(())
            },
            |stages| {
                for _ in 0..times {
                    for record in chunk.records() {
                        stages.chunk().push(0, 0, record.key, record.payload);
                    }
                    stages.dispatch()?;
                }
                Ok(())
            },
        )
        .unwrap();
        written
    };
    // Thread start-up and the pool's first growth are per run: the
    // difference between 40 and 80 chunks (every pooled chunk used in both)
    // is what each further chunk costs.
    let per_chunk = |chunk: &InputChunk| {
        let before = ALLOCATOR.counts();
        assert!(run(chunk, 40) > 0, "the shards wrote output");
        let forty = (ALLOCATOR.counts() - before).allocations as f64;
        let before = ALLOCATOR.counts();
        run(chunk, 80);
        ((ALLOCATOR.counts() - before).allocations as f64 - forty) / 40.0
    };
    let (small, large) = (per_chunk(&chunks[0]), per_chunk(&chunks[1]));
    // A channel that blocks registers its waiting thread, which allocates
    // now and then, by timing: exactness is per record, not per chunk. One
    // allocation per record would put 1984 between the two.
    let per_record = (large - small).abs() / (2048.0 - 64.0);
    assert!(
        per_record < 0.01,
        "{small} allocations a chunk of 64 records, {large} of 2048: {per_record} a record"
    );
}
