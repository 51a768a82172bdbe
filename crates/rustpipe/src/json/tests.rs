//! The checks of json. Every test compares the decoder with serde_json's
//! derive decoding the same projection from the same bytes, on the records
//! gendata writes and on hand-made and damaged ones.

use std::borrow::Cow;

use anyhow::Result;
use serde::Deserialize;
use streamsuite::gendata::event;
use streamsuite::gendata::schedule::Schedule;

use super::decode;
use super::skip::MAX_DEPTH;
use super::strings::{plain_ascii, STRING_STOPS};

/// The stateless step's fields, as serde_json decodes them.
#[derive(Deserialize)]
struct SerdeStage<'a> {
    seq: u64,
    ts_us: i64,
    #[serde(borrow)]
    region: Cow<'a, str>,
    #[serde(borrow)]
    service: Cow<'a, str>,
    latency_ms: u32,
    sla_ms: u32,
}

/// The windowed step's fields, as serde_json decodes them.
#[derive(Deserialize)]
struct SerdeWindows<'a> {
    ts_us: i64,
    #[serde(borrow)]
    region: Cow<'a, str>,
    #[serde(borrow)]
    service: Cow<'a, str>,
    latency_ms: u32,
}

type StageFields = (u64, i64, String, String, u32, u32);
type WindowsFields = (i64, String, String, u32);

fn ours_stage(bytes: &[u8]) -> Result<StageFields> {
    let i: crate::stage::Input<'_> = decode(bytes)?;
    let (region, service) = (i.region.into_owned(), i.service.into_owned());
    Ok((i.seq, i.ts_us, region, service, i.latency_ms, i.sla_ms))
}

fn serde_stage(bytes: &[u8]) -> serde_json::Result<StageFields> {
    let i: SerdeStage<'_> = serde_json::from_slice(bytes)?;
    let (region, service) = (i.region.into_owned(), i.service.into_owned());
    Ok((i.seq, i.ts_us, region, service, i.latency_ms, i.sla_ms))
}

fn ours_windows(bytes: &[u8]) -> Result<WindowsFields> {
    let i: crate::windows::Input<'_> = decode(bytes)?;
    let (region, service) = (i.region.into_owned(), i.service.into_owned());
    Ok((i.ts_us, region, service, i.latency_ms))
}

fn serde_windows(bytes: &[u8]) -> serde_json::Result<WindowsFields> {
    let i: SerdeWindows<'_> = serde_json::from_slice(bytes)?;
    let (region, service) = (i.region.into_owned(), i.service.into_owned());
    Ok((i.ts_us, region, service, i.latency_ms))
}

/// Asserts that both projections decode `bytes` as serde_json does: the
/// same fields, or an error from both. serde_json does not check the
/// UTF-8 of the strings it skips, so input that is not UTF-8 counts as
/// its error. Returns whether the stateless projection decoded.
fn agrees(bytes: &[u8]) -> bool {
    let utf8 = std::str::from_utf8(bytes).is_ok();
    let shown = String::from_utf8_lossy(bytes);
    let (ours, theirs) = (ours_windows(bytes), serde_windows(bytes));
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) if utf8 => assert_eq!(a, b, "{shown}"),
        (Err(_), Ok(_)) if !utf8 => {}
        (Err(_), Err(_)) => {}
        _ => panic!("{shown}: ours {ours:?}, serde_json's {theirs:?}"),
    }
    let (ours, theirs) = (ours_stage(bytes), serde_stage(bytes));
    match (&ours, &theirs) {
        (Ok(a), Ok(b)) if utf8 => assert_eq!(a, b, "{shown}"),
        (Err(_), Ok(_)) if !utf8 => {}
        (Err(_), Err(_)) => {}
        _ => panic!("{shown}: ours {ours:?}, serde_json's {theirs:?}"),
    }
    ours.is_ok()
}

/// A record as gendata writes it to the input topic.
fn gendata_record(seed: u64, seq: u64, ts_us: i64) -> Vec<u8> {
    let mut payload = Vec::new();
    serde_json::to_writer(&mut payload, &event::generate(seed, seq, ts_us)).unwrap();
    payload
}

#[test]
fn gendata_records_decode_as_serde_json_decodes_them() {
    let runs = [
        (1, Schedule::new(0, 1_000)),
        (7, Schedule::new(1_764_540_000_000_000, 10_000)),
        (42, Schedule::new(1_764_540_123_456_789, 100_000)),
        (0xdead_beef, Schedule::new(-5_000_000, 50_000)),
        (u64::MAX, Schedule::new(4_000_000_000_000_000, 1)),
    ];
    let mut records = 0;
    for (seed, schedule) in runs {
        for seq in 0..40_000 {
            let bytes = gendata_record(seed, seq, schedule.slot_us(seq));
            assert!(agrees(&bytes));
            let stage: crate::stage::Input<'_> = decode(&bytes).unwrap();
            assert!(matches!(
                (stage.region, stage.service),
                (Cow::Borrowed(_), Cow::Borrowed(_))
            ));
            records += 1;
        }
    }
    assert_eq!(records, 200_000);
}

/// The fields of a record, as raw JSON text, stateless and windowed.
const FIELDS: [(&str, &str); 7] = [
    ("seq", "5"),
    ("event_id", r#""x-5""#),
    ("ts_us", "-12"),
    ("region", r#""eu-west""#),
    ("service", r#""api""#),
    ("latency_ms", "7"),
    ("sla_ms", "100"),
];

/// A record of `fields`, each written `"key":value`.
fn object(fields: &[(&str, &str)]) -> String {
    let pairs: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", pairs.join(","))
}

/// The record of [`FIELDS`] with `key`'s raw value set to `value`.
fn with(key: &str, value: &str) -> String {
    let fields: Vec<(&str, &str)> = FIELDS
        .iter()
        .map(|&(k, v)| (k, if k == key { value } else { v }))
        .collect();
    object(&fields)
}

#[test]
fn hand_made_records_decode_as_serde_json_decodes_them() {
    let reordered: Vec<_> = FIELDS.iter().rev().copied().collect();
    let accepted = [
        object(&FIELDS),
        object(&reordered),
        " \n\t{ \"seq\" :\t5 ,\r\n \"ts_us\" : -12 , \"region\":\"eu-west\",\n\
         \"service\" : \"api\" , \"latency_ms\":7,\"sla_ms\" :100\n}\r\n "
            .to_string(),
        // Nested values and every kind of value among the skipped fields.
        with(
            "event_id",
            r#"{"a":[1,-2.5e+3,{"b":null,"c":[[],{}]}],"d":true,"e":false,"f":"\"}"}"#,
        ),
        with(
            "event_id",
            r#"[0, -0, 0.0, 1E400, -1e-400, 12.5E-3, "]", [[["x"]]]]"#,
        ),
        with("region", r#""\u00e9u-west""#),
        with("region", r#""caf\u00E9 \ud83d\ude00""#),
        with("region", r#""\ud800\udc00 \udbff\udfff""#),
        with("service", r#""a\"b\\c\/d\be\ff\ng\rh\ti""#),
        with("service", "\"caf\u{e9} \u{1f600}\""),
        with("service", r#""""#),
        format!("{{\"s\\u0065q\":5,{}", &object(&FIELDS[1..])[1..]),
        with("latency_ms", "4294967295"),
        with("latency_ms", "0"),
        with("ts_us", "-9223372036854775808"),
        with("ts_us", "9223372036854775807"),
        with("ts_us", "0"),
        with("seq", "18446744073709551615"),
        object(&[FIELDS.as_slice(), &[("region2", "1"), ("seq_", "-1")]].concat()),
    ];
    for record in &accepted {
        assert!(agrees(record.as_bytes()), "rejected: {record}");
    }
    let rejected = [
        with("latency_ms", "4294967296"),
        with("latency_ms", "-1"),
        with("latency_ms", "1.0"),
        with("latency_ms", "1e3"),
        with("latency_ms", "1E3"),
        with("latency_ms", "7.5"),
        with("sla_ms", r#""100""#),
        with("ts_us", "-9223372036854775809"),
        with("ts_us", "9223372036854775808"),
        with("ts_us", "-0"),
        with("ts_us", "99999999999999999999999"),
        with("seq", "18446744073709551616"),
        with("seq", "-1"),
        with("seq", "-0"),
        with("seq", "null"),
        with("region", "5"),
        with("region", "null"),
        with("service", r#"["api"]"#),
    ];
    for record in &rejected {
        assert!(!agrees(record.as_bytes()), "accepted: {record}");
    }
}

#[test]
fn every_truncation_of_a_record_is_an_error() {
    let record = gendata_record(42, 7, 1_764_540_000_000_000);
    assert!(agrees(&record));
    for end in 0..record.len() {
        assert!(!agrees(&record[..end]), "{end}");
        assert!(ours_stage(&record[..end]).is_err());
    }
}

/// Asserts that both decoders reject `bytes` and that our error says
/// `why`.
fn rejects(bytes: &[u8], why: &str) {
    let shown = String::from_utf8_lossy(bytes);
    assert!(serde_stage(bytes).is_err(), "serde_json accepts {shown}");
    match ours_stage(bytes) {
        Ok(fields) => panic!("{shown} decoded as {fields:?}"),
        Err(e) => assert!(e.to_string().contains(why), "{shown}: {e}"),
    }
}

#[test]
fn malformed_records_are_errors_that_say_why() {
    let record = object(&FIELDS);
    let in_region =
        |raw: &[u8]| [br#"{"region":""#, raw, br#"","#, &record.as_bytes()[1..]].concat();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (format!("{record}x").into(), "trailing characters"),
        (format!("{record} {{}}").into(), "trailing characters"),
        (format!("{record}}}").into(), "trailing characters"),
        (object(&FIELDS[..6]).into(), "missing field `sla_ms`"),
        (object(&FIELDS[1..]).into(), "missing field `seq`"),
        (
            object(&[FIELDS.as_slice(), &[("seq", "5")]].concat()).into(),
            "duplicate field `seq`",
        ),
        (with("seq", r#""5""#).into(), "`seq`: expected an integer"),
        (
            with("latency_ms", "4294967296").into(),
            "out of range for u32",
        ),
        (
            with("latency_ms", "1.0").into(),
            "a fraction or an exponent",
        ),
        (with("region", "7").into(), "`region`: expected a string"),
        (with("region", r#""eu\x""#).into(), "invalid escape"),
        (with("event_id", r#""\a""#).into(), "invalid escape"),
        (with("region", r#""\u12G4""#).into(), "four hex digits"),
        (
            with("region", r#""\ud800""#).into(),
            "unpaired UTF-16 surrogate",
        ),
        (
            with("region", r#""\udc00\ud800""#).into(),
            "unpaired UTF-16 surrogate",
        ),
        (
            with("region", r#""\ud800\u0041""#).into(),
            "unpaired UTF-16 surrogate",
        ),
        (
            with("region", r#""\ud800\n""#).into(),
            "unpaired UTF-16 surrogate",
        ),
        (
            br#"{"seq":5,"region":"eu-west"#.to_vec(),
            "unterminated string",
        ),
        (br#"{"seq":5,"region":"eu\"#.to_vec(), "unterminated string"),
        (in_region(b"eu\xff"), "invalid UTF-8"),
        (in_region(b"\xc3"), "invalid UTF-8"),
        (in_region(b"\xc0\xaf"), "invalid UTF-8"),
        (in_region(b"\xed\xa0\x80"), "invalid UTF-8"),
        (with("seq", "01").into(), "leading zero"),
        (with("event_id", "01").into(), "expected `,`"),
        (with("seq", "-").into(), "`seq`: expected an integer"),
        (with("event_id", "-").into(), "expected a digit"),
        (with("event_id", "1.").into(), "expected a digit"),
        (with("event_id", "1e+").into(), "expected a digit"),
        (with("event_id", ".5").into(), "expected a value"),
        (with("event_id", "+1").into(), "expected a value"),
        (with("event_id", "tru").into(), "expected `true`"),
        (with("event_id", "[1,]").into(), "expected a value"),
        (with("event_id", r#"{"a" 1}"#).into(), "expected `:`"),
        (with("event_id", "{1:2}").into(), "expected a key"),
        (in_region(b"eu\nwest"), "control character"),
        (in_region(b"\x00"), "control character"),
        (in_region(b"\x1f"), "control character"),
        (with("event_id", "\"a\tb\"").into(), "control character"),
        (record.replacen(':', "", 1).into(), "expected `:`"),
        (record.replacen(',', " ", 1).into(), "expected `,`"),
        (record.replacen('}', ",}", 1).into(), "expected a key"),
        (b"".to_vec(), "expected `{`"),
        (b"null".to_vec(), "expected `{`"),
        (br#"{seq:5}"#.to_vec(), "expected a key"),
    ];
    for (bytes, why) in cases {
        rejects(&bytes, why);
    }
}

#[test]
fn where_the_decoder_is_stricter_than_serde_json() {
    let in_skipped = |raw: &[u8]| {
        [
            br#"{"event_id":"#,
            raw,
            b",",
            &object(&FIELDS).as_bytes()[1..],
        ]
        .concat()
    };
    let array = br#"[5,-12,"eu-west","api",7,100]"#.to_vec();
    for record in [in_skipped(br#""\ud800""#), in_skipped(b"\"\xff\""), array] {
        assert!(serde_stage(&record).is_ok());
        assert!(ours_stage(&record).is_err());
    }
}

#[test]
fn plain_ascii_stops_where_a_byte_at_a_time_scan_stops() {
    for stop in 0..=255u8 {
        for at in 0..20 {
            for after in [b'a', 0, b'"', 0xff] {
                let mut bytes = [b'a'; 20];
                bytes[at] = stop;
                if at + 1 < bytes.len() {
                    bytes[at + 1] = after;
                }
                let expected = bytes.iter().position(|&b| STRING_STOPS[usize::from(b)]);
                assert_eq!(plain_ascii(&bytes), expected.unwrap_or(bytes.len()));
            }
        }
    }
}

#[test]
fn nesting_deeper_than_the_limit_is_an_error() {
    let nested = |depth| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    assert!(ours_stage(with("event_id", &nested(MAX_DEPTH)).as_bytes()).is_ok());
    let error = ours_stage(with("event_id", &nested(MAX_DEPTH + 1)).as_bytes()).unwrap_err();
    assert!(
        error.to_string().contains("nesting deeper than 128"),
        "{error}"
    );
}

/// Real records with one byte replaced, inserted or removed agree with
/// serde_json. gendata's records have no `\u` escape and no `u` before
/// a hex digit `d`, so no single change makes a surrogate escape in a
/// skipped string, the other case the two decoders differ on.
#[test]
fn damaged_records_decode_as_serde_json_decodes_them() {
    const BYTES: &[u8] = b"\"\\{}[],: \n-+.eE019ux\x00\x1f\x7f\x80\xc3\xff";
    let records: Vec<Vec<u8>> = (0..64)
        .map(|seq| gendata_record(seq % 5, seq, 1_764_540_000_000_000 + seq as i64))
        .collect();
    // splitmix64: a fixed sequence, the same on every run.
    let mut state = 0x5eed_u64;
    let mut next = |below: usize| {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) % below as u64) as usize
    };
    let (mut decoded, mut failed) = (0, 0);
    for _ in 0..100_000 {
        let mut record = records[next(records.len())].clone();
        let at = next(record.len());
        let byte = match next(4) {
            0 => next(256) as u8,
            _ => BYTES[next(BYTES.len())],
        };
        match next(3) {
            0 => record[at] = byte,
            1 => record.insert(at, byte),
            _ => {
                record.remove(at);
            }
        }
        if agrees(&record) {
            decoded += 1;
        } else {
            failed += 1;
        }
    }
    assert!(
        decoded > 10_000 && failed > 10_000,
        "{decoded} decoded, {failed} failed"
    );
}
