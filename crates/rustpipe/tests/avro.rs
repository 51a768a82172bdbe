//! The three Avro decoders read gendata's batch datums back to exactly the
//! events the JSON path carries (what they allocate: avro_allocations.rs).

use rustpipe::avro::{Decoder, DecoderKind};
use streamsuite::gendata::avro::AvroEncoder;

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
                .map(|seq| serde_json::to_value(event_model::generate(SEED, seq, TS_US)).unwrap())
                .collect();
            assert_eq!(decoded, expected, "{kind}, message {message}");
        }
    }
}

#[test]
fn a_truncated_datum_is_an_error_not_a_short_batch() {
    let bytes = datum(5, 20);
    for kind in DecoderKind::ALL {
        let decoder = Decoder::new(kind).unwrap();
        let result = decoder.decode(&bytes[..bytes.len() / 2], |_| {});
        assert!(result.is_err(), "{kind} accepted half a datum");
    }
}
