//! Sanity: are we benching the same thing? Selectivity against the value
//! gendata's determinism implies, the breach rate, and the enrichment check.

use crate::results::{Sanity, SanityVerdict};

/// Fewer recomputed records than this is too small a sample to vouch for the
/// enrichment.
pub const MIN_ENRICHMENT_SAMPLE: u64 = 500;

/// What the sanity checks are judged from.
#[derive(Debug, Clone, Copy)]
pub struct SanityInputs {
    /// Output records that arrived in the window.
    pub output: u64,
    /// Input records consumed (committed) in the window.
    pub consumed: u64,
    /// The kept share of the consumed range; `None` when it was empty.
    pub expected_selectivity: Option<f64>,
    /// bench.yaml's tolerance on selectivity, a share (0.25 = 25 %).
    pub tolerance: f64,
    pub breach_rate: Option<f64>,
    /// (records whose derived fields were recomputed, of which wrong).
    pub enrichment: (u64, u64),
}

/// The verdict: `warning` when selectivity is off by more than the tolerance,
/// a derived field was wrong, or too little output was there to check.
pub fn judge_sanity(inputs: &SanityInputs) -> Sanity {
    let selectivity = (inputs.consumed > 0).then(|| inputs.output as f64 / inputs.consumed as f64);
    let deviation = match (selectivity, inputs.expected_selectivity) {
        (Some(s), Some(e)) if e > 0.0 => Some((s / e - 1.0).abs()),
        _ => None,
    };
    let selectivity_ok = deviation.is_some_and(|d| d <= inputs.tolerance);
    let (checked, mismatched) = inputs.enrichment;
    let mut problems = Vec::new();
    match (selectivity, inputs.expected_selectivity, deviation) {
        (Some(s), Some(e), Some(d)) if !selectivity_ok => problems.push(format!(
            "selectivity {s:.4} is {:.1} % off the expected {e:.4} (tolerance {:.0} %)",
            d * 100.0,
            inputs.tolerance * 100.0
        )),
        (None, ..) => problems.push("nothing was consumed in the window".to_string()),
        (Some(_), ..) if !selectivity_ok => {
            problems.push("the expected selectivity is unknown".to_string())
        }
        _ => {}
    }
    if mismatched > 0 {
        problems.push(format!(
            "{mismatched} of {checked} records have wrong derived fields"
        ));
    } else if checked < MIN_ENRICHMENT_SAMPLE {
        problems.push(format!(
            "only {checked} records to check the enrichment on (at least {MIN_ENRICHMENT_SAMPLE} needed)"
        ));
    }
    let message = if problems.is_empty() {
        format!(
            "selectivity {:.4} vs expected {:.4} (within {:.0} %); derived fields right on all {checked} records",
            selectivity.unwrap_or_default(),
            inputs.expected_selectivity.unwrap_or_default(),
            inputs.tolerance * 100.0
        )
    } else {
        problems.join("; ")
    };
    Sanity {
        selectivity,
        expected_selectivity: inputs.expected_selectivity,
        selectivity_deviation: deviation,
        tolerance: inputs.tolerance,
        selectivity_ok,
        breach_rate: inputs.breach_rate,
        enrichment_checked: checked,
        enrichment_mismatched: mismatched,
        verdict: if problems.is_empty() {
            SanityVerdict::Ok
        } else {
            SanityVerdict::Warning
        },
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs(output: u64, consumed: u64, enrichment: (u64, u64)) -> SanityInputs {
        SanityInputs {
            output,
            consumed,
            expected_selectivity: Some(0.29),
            tolerance: 0.25,
            breach_rate: Some(0.2),
            enrichment,
        }
    }

    #[test]
    fn the_expected_share_and_right_fields_are_ok() {
        let s = judge_sanity(&inputs(2_900, 10_000, (3_000, 0)));
        assert_eq!(s.verdict, SanityVerdict::Ok, "{}", s.message);
        assert!(s.selectivity_ok);
        assert!(s.selectivity_deviation.unwrap() < 1e-9);
    }

    #[test]
    fn a_wrong_ratio_beyond_the_tolerance_warns() {
        let s = judge_sanity(&inputs(2_000, 10_000, (3_000, 0)));
        assert_eq!(s.verdict, SanityVerdict::Warning);
        assert!(!s.selectivity_ok);
        assert!(s.message.contains("31.0 % off"), "{}", s.message);
        // Inside the tolerance is fine.
        assert_eq!(
            judge_sanity(&inputs(2_300, 10_000, (3_000, 0))).verdict,
            SanityVerdict::Ok
        );
    }

    #[test]
    fn wrong_derived_fields_or_too_small_a_sample_warn() {
        let s = judge_sanity(&inputs(2_900, 10_000, (3_000, 4)));
        assert_eq!(s.verdict, SanityVerdict::Warning);
        assert!(s.message.contains("4 of 3000"), "{}", s.message);
        let small = judge_sanity(&inputs(2_900, 10_000, (499, 0)));
        assert_eq!(small.verdict, SanityVerdict::Warning);
        assert!(small.message.contains("only 499"), "{}", small.message);
    }

    #[test]
    fn nothing_consumed_is_a_warning_not_a_division() {
        let s = judge_sanity(&inputs(0, 0, (0, 0)));
        assert_eq!(s.verdict, SanityVerdict::Warning);
        assert_eq!(s.selectivity, None);
        assert!(s.message.contains("nothing was consumed"), "{}", s.message);
    }
}
