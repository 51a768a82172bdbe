//! The measurements rustpipe-rig prints, one JSON line each, which the
//! suite's `suite rig` turns into records.

use serde::{Deserialize, Serialize};

/// Which arm a measurement is of, by name: the stage (`decode` or
/// `pipeline`), the decoder, and the insert format of a pipeline arm.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Arm {
    pub stage: String,
    pub decoder: String,
    pub format: Option<String>,
}

/// The stage of an arm that times decoding alone.
pub const DECODE: &str = "decode";
/// The stage of an arm that times the whole pipeline, inserts included.
pub const PIPELINE: &str = "pipeline";

/// One arm's repetition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    pub arm: Arm,
    /// 0-based.
    pub repetition: usize,
    /// Events through the stage in the timed pass.
    pub events: u64,
    pub seconds: f64,
    /// Rows the pipeline kept (0 for decode arms).
    pub rows: u64,
    /// Events in the counted pass, and what it allocated.
    pub counted_events: u64,
    pub allocations: u64,
    pub allocated_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_measurement_round_trips_as_one_json_line() {
        for format in [None, Some("rowbinary".to_string())] {
            let measurement = Measurement {
                arm: Arm {
                    stage: if format.is_some() { PIPELINE } else { DECODE }.to_string(),
                    decoder: "fast-borrowed".to_string(),
                    format,
                },
                repetition: 3,
                events: 200_000,
                seconds: 0.4125,
                rows: 190_000,
                counted_events: 20_000,
                allocations: 40_001,
                allocated_bytes: 5_242_880,
            };
            let line = serde_json::to_string(&measurement).unwrap();
            assert!(!line.contains('\n'));
            let back: Measurement = serde_json::from_str(&line).unwrap();
            assert_eq!(back, measurement);
        }
    }
}
