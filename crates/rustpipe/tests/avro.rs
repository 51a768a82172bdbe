//! The three Avro decoders read gendata's batch datums back to exactly the
//! events the JSON path carries, and refuse the same broken datums (what they
//! allocate: avro_allocations.rs).

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

/// `bytes` with the first `from` in it, a string's start, replaced by `to`
/// of the same length.
fn edited(mut bytes: Vec<u8>, from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(from.len(), to.len());
    let at = bytes
        .windows(from.len())
        .position(|window| window == from)
        .expect("the datum holds the string");
    bytes[at..at + to.len()].copy_from_slice(to);
    bytes
}

#[test]
fn a_string_that_is_not_utf8_is_an_error() {
    // A lone continuation byte, then a lead byte with no continuation.
    for bad in [b"\x80e".as_slice(), b"t\xc3"] {
        let bytes = edited(datum(5, 20), b"te", bad);
        for kind in DecoderKind::ALL {
            let decoder = Decoder::new(kind).unwrap();
            let result = decoder.decode(&bytes, |_| {});
            assert!(result.is_err(), "{kind} accepted {bad:?} in a string");
        }
    }
}

#[test]
fn every_decoder_reads_a_string_that_is_not_ascii() {
    let bytes = edited(datum(5, 20), b"te", "\u{e9}".as_bytes());
    for kind in DecoderKind::ALL {
        let decoder = Decoder::new(kind).unwrap();
        let mut tenants = Vec::new();
        decoder
            .decode(&bytes, |e| tenants.push(e.tenant.to_string()))
            .unwrap();
        assert!(
            tenants[0].starts_with("\u{e9}nant-"),
            "{kind}: {}",
            tenants[0]
        );
        assert!(
            tenants[1..].iter().all(|t| t.starts_with("tenant-")),
            "{kind}"
        );
    }
}
