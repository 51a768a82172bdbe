//! A latency histogram as it travels in a JSON message or record: the
//! HdrHistogram V2 + deflate encoding, in standard base64.

use base64::Engine;
use hdrhistogram::serialization::{
    Deserializer, Serializer, V2DeflateSerializeError, V2DeflateSerializer,
};
use hdrhistogram::Histogram;

/// An empty latency histogram in microseconds: 1 µs to 1 h at 3
/// significant digits, the bounds every latency of the suite is kept at
/// (`saturating_record` keeps a longer one as 1 h rather than losing it).
pub fn latency_us() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("1 µs .. 1 h at 3 digits is valid")
}

/// `histogram` as base64 text.
pub fn encode(histogram: &Histogram<u64>) -> Result<String, V2DeflateSerializeError> {
    let mut bytes = Vec::new();
    V2DeflateSerializer::new().serialize(histogram, &mut bytes)?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// The histogram `text` encodes; none when it is not base64 or not a
/// histogram.
pub fn decode(text: &str) -> Option<Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    Deserializer::new().deserialize(&mut &bytes[..]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_histogram_round_trips() {
        let mut histogram = latency_us();
        for us in [1, 250, 1_000, 48_000, 3_600_000_000] {
            histogram.record(us).unwrap();
        }
        let back = decode(&encode(&histogram).unwrap()).unwrap();
        assert_eq!(back, histogram);
        assert_eq!(back.len(), 5);
        assert_eq!(back.max(), histogram.max());
    }

    #[test]
    fn text_that_is_not_a_histogram_decodes_to_none() {
        assert!(decode("not base64 !").is_none());
        assert!(decode("aGVsbG8=").is_none(), "base64 of `hello`");
    }
}
