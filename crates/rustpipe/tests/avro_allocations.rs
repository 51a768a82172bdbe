//! The borrowed Avro path allocates nothing and the owned ones do, and the
//! CPU rig measures every arm on the same events and rows. Allocations are
//! counted exactly by a global allocator.

use rustpipe::alloc_count::CountingAllocator;
use rustpipe::avro::{Decoder, DecoderKind};
use streamsuite::gendata::avro::AvroEncoder;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

const SEED: u64 = 42;
const TS_US: i64 = 1_700_000_000_250_000;

fn datum(message: u64, events: u32) -> Vec<u8> {
    let mut out = Vec::new();
    AvroEncoder::new(events)
        .encode(SEED, message, TS_US, &mut out)
        .unwrap();
    out
}

/// One test for the file: the count is process-wide, and the test harness
/// allocates whenever another test of the binary ends (it reports it), which
/// would land in a count under way.
#[test]
fn the_decoders_and_the_rig_allocate_what_they_should() {
    the_borrowed_path_allocates_nothing_and_the_owned_paths_do();
    the_rig_measures_every_arm_on_the_same_events_and_rows();
}

/// Allocations of decoding `bytes` once, after a warm-up decode: the least
/// of three decodes, since the count is process-wide and the harness's own
/// thread may allocate while one is under way (a decode that allocates does
/// so every time).
fn allocations(decoder: &Decoder, bytes: &[u8]) -> u64 {
    let mut seqs = 0u64;
    decoder.decode(bytes, |e| seqs += e.seq).unwrap();
    let least = (0..3)
        .map(|_| {
            let before = ALLOCATOR.counts();
            decoder.decode(bytes, |e| seqs += e.seq).unwrap();
            (ALLOCATOR.counts() - before).allocations
        })
        .min()
        .unwrap_or_default();
    assert!(seqs > 0);
    least
}

fn the_borrowed_path_allocates_nothing_and_the_owned_paths_do() {
    let bytes = datum(3, 50);
    let borrowed = allocations(&Decoder::new(DecoderKind::FastBorrowed).unwrap(), &bytes);
    assert_eq!(borrowed, 0, "fast-borrowed allocated for a 50-event datum");
    // 13 strings an event, each copied: the counter sees every copy.
    let owned = allocations(&Decoder::new(DecoderKind::FastOwned).unwrap(), &bytes);
    assert!(owned >= 50 * 13, "fast-owned: {owned}");
    let apache = allocations(&Decoder::new(DecoderKind::ApacheOwned).unwrap(), &bytes);
    assert!(
        apache > owned,
        "apache-owned: {apache}, fast-owned: {owned}"
    );
}

fn the_rig_measures_every_arm_on_the_same_events_and_rows() {
    use messages::rig::{DECODE, PIPELINE};
    use rustpipe::rig::{self, RigPlan};
    let datums: Vec<Vec<u8>> = (0..8).map(|m| datum(m, 50)).collect();
    // Rows the filter keeps from one pass over the ring, from the generator.
    let kept_per_ring = (0..8 * 50)
        .filter(|&seq| event_model::generate(SEED, seq, TS_US).endpoint != "/health")
        .count() as u64;
    let plan = RigPlan {
        datums,
        warmup_datums: 8,
        timed_datums: 16,
        counted_datums: 8,
        repetitions: 2,
        block_rows: 64,
        shards: 2,
    };
    let mut measurements = Vec::new();
    rig::run(&plan, &ALLOCATOR, |m| {
        measurements.push(m.clone());
        Ok(())
    })
    .unwrap();
    assert_eq!(measurements.len(), 2 * rig::arms().len());
    for m in &measurements {
        assert_eq!(m.events, 16 * 50, "{:?}", m.arm);
        assert_eq!(m.counted_events, 8 * 50, "{:?}", m.arm);
        assert!(m.seconds > 0.0);
        let rows = if m.arm.stage == PIPELINE {
            2 * kept_per_ring
        } else {
            0
        };
        assert_eq!(m.rows, rows, "{:?}", m.arm);
    }
    // The arms' order rotates: repetition 1 starts with the second arm.
    assert_eq!(measurements[9].arm, rig::arms()[1].named());
    let borrowed_decode = measurements
        .iter()
        .find(|m| m.arm.stage == DECODE && m.arm.decoder == DecoderKind::FastBorrowed.as_str())
        .unwrap();
    assert_eq!(borrowed_decode.allocations, 0);
}
