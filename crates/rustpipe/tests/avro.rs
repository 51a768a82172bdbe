//! The three Avro decoders read gendata's batch datums back to exactly the
//! events the JSON path carries, and the borrowed path allocates nothing.
//! Allocations are counted exactly by a global allocator.

use rustpipe::alloc_count::CountingAllocator;
use rustpipe::avro::{Decoder, DecoderKind};
use streamsuite::gendata::avro::AvroEncoder;
use streamsuite::gendata::Event;

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

/// The count is process-wide: the tests take turns.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

const SEED: u64 = 42;
const TS_US: i64 = 1_700_000_000_250_000;

fn datum(message: u64, events: u32) -> Vec<u8> {
    let mut out = Vec::new();
    AvroEncoder::new(events)
        .encode(SEED, message, TS_US, &mut out)
        .unwrap();
    out
}

#[test]
fn every_decoder_reads_back_the_events_the_json_path_carries() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    for kind in DecoderKind::ALL {
        let decoder = Decoder::new(kind).unwrap();
        for message in [0u64, 1, 977] {
            let bytes = datum(message, 20);
            let mut decoded = Vec::new();
            let count = decoder
                .decode(&bytes, |e| decoded.push(serde_json::to_value(e).unwrap()))
                .unwrap();
            assert_eq!(count, 20, "{kind}");
            let expected: Vec<_> = (message * 20..message * 20 + 20)
                .map(|seq| serde_json::to_value(Event::generate(SEED, seq, TS_US)).unwrap())
                .collect();
            assert_eq!(decoded, expected, "{kind}, message {message}");
        }
    }
}

#[test]
fn a_truncated_datum_is_an_error_not_a_short_batch() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let bytes = datum(5, 20);
    for kind in DecoderKind::ALL {
        let decoder = Decoder::new(kind).unwrap();
        let result = decoder.decode(&bytes[..bytes.len() / 2], |_| {});
        assert!(result.is_err(), "{kind} accepted half a datum");
    }
}

/// Allocations of decoding `bytes` once, after a warm-up decode.
fn allocations(decoder: &Decoder, bytes: &[u8]) -> u64 {
    let mut seqs = 0u64;
    decoder.decode(bytes, |e| seqs += e.seq).unwrap();
    let before = ALLOCATOR.counts();
    decoder.decode(bytes, |e| seqs += e.seq).unwrap();
    let after = ALLOCATOR.counts();
    assert!(seqs > 0);
    (after - before).allocations
}

#[test]
fn the_borrowed_path_allocates_nothing_and_the_owned_paths_do() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
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

#[test]
fn the_rig_measures_every_arm_on_the_same_events_and_rows() {
    use rustpipe::rig::{self, RigPlan, RigStage};
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let datums: Vec<Vec<u8>> = (0..8).map(|m| datum(m, 50)).collect();
    // Rows the filter keeps from one pass over the ring, from the generator.
    let kept_per_ring = (0..8 * 50)
        .filter(|&seq| Event::generate(SEED, seq, TS_US).endpoint != "/health")
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
        let rows = if m.arm.stage == RigStage::Pipeline {
            2 * kept_per_ring
        } else {
            0
        };
        assert_eq!(m.rows, rows, "{:?}", m.arm);
    }
    // The arms' order rotates: repetition 1 starts with the second arm.
    assert_eq!(measurements[9].arm, rig::arms()[1]);
    let borrowed_decode = measurements
        .iter()
        .find(|m| m.arm.stage == RigStage::Decode && m.arm.decoder == DecoderKind::FastBorrowed)
        .unwrap();
    assert_eq!(borrowed_decode.allocations, 0);
}
