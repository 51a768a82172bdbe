//! Sanity: are we benching the same thing? Selectivity against what the
//! workload owes for the input consumed, its content check, and the
//! workload's own figures.

use std::collections::BTreeMap;

use crate::results::{Sanity, SanityVerdict};
use crate::workloads::SanitySpec;

/// What the sanity checks are judged from.
#[derive(Debug, Clone)]
pub struct SanityInputs<'a> {
    pub spec: &'a SanitySpec,
    /// Outputs that arrived in the window.
    pub output: u64,
    /// Input records consumed (committed) in the window.
    pub consumed: u64,
    /// Outputs owed per input over the consumed range; `None` when unknown.
    pub expected_selectivity: Option<f64>,
    /// bench.yaml's tolerance on selectivity, a share (0.25 = 25 %).
    pub tolerance: f64,
    /// (outputs whose content was recomputed, of which wrong).
    pub content: (u64, u64),
    pub figures: BTreeMap<String, f64>,
}

/// The verdict: `warning` when selectivity is off by more than the tolerance,
/// some content was wrong, or too little output was there to check.
pub fn judge_sanity(inputs: SanityInputs<'_>) -> Sanity {
    let spec = inputs.spec;
    let selectivity = (inputs.consumed > 0).then(|| inputs.output as f64 / inputs.consumed as f64);
    let deviation = match (selectivity, inputs.expected_selectivity) {
        (Some(s), Some(e)) if e > 0.0 => Some((s / e - 1.0).abs()),
        _ => None,
    };
    let selectivity_ok = deviation.is_some_and(|d| d <= inputs.tolerance);
    let (checked, mismatched) = inputs.content;
    let (unit, content) = (spec.unit, spec.content);
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
            "{mismatched} of {checked} {unit} have wrong {content}"
        ));
    } else if checked < spec.min_content_sample {
        problems.push(format!(
            "only {checked} {unit} to check the {content} on (at least {} needed)",
            spec.min_content_sample
        ));
    }
    let message = if problems.is_empty() {
        format!(
            "selectivity {:.4} vs expected {:.4} (within {:.0} %); {content} right on all {checked} {unit}",
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
        figures: inputs.figures,
        content_checked: checked,
        content_mismatched: mismatched,
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

    static SPEC: SanitySpec = SanitySpec {
        unit: "records",
        content: "derived fields",
        min_content_sample: 500,
        figures: &[("breach_rate", "breach rate")],
    };

    fn inputs(output: u64, consumed: u64, content: (u64, u64)) -> SanityInputs<'static> {
        SanityInputs {
            spec: &SPEC,
            output,
            consumed,
            expected_selectivity: Some(0.29),
            tolerance: 0.25,
            content,
            figures: BTreeMap::from([("breach_rate".to_string(), 0.2)]),
        }
    }

    #[test]
    fn the_expected_share_and_right_fields_are_ok() {
        let s = judge_sanity(inputs(2_900, 10_000, (3_000, 0)));
        assert_eq!(s.verdict, SanityVerdict::Ok, "{}", s.message);
        assert!(s.selectivity_ok);
        assert!(s.selectivity_deviation.unwrap() < 1e-9);
        assert_eq!(s.figures["breach_rate"], 0.2);
    }

    #[test]
    fn a_wrong_ratio_beyond_the_tolerance_warns() {
        let s = judge_sanity(inputs(2_000, 10_000, (3_000, 0)));
        assert_eq!(s.verdict, SanityVerdict::Warning);
        assert!(!s.selectivity_ok);
        assert!(s.message.contains("31.0 % off"), "{}", s.message);
        // Inside the tolerance is fine.
        assert_eq!(
            judge_sanity(inputs(2_300, 10_000, (3_000, 0))).verdict,
            SanityVerdict::Ok
        );
    }

    #[test]
    fn wrong_derived_fields_or_too_small_a_sample_warn() {
        let s = judge_sanity(inputs(2_900, 10_000, (3_000, 4)));
        assert_eq!(s.verdict, SanityVerdict::Warning);
        assert!(
            s.message
                .contains("4 of 3000 records have wrong derived fields"),
            "{}",
            s.message
        );
        let small = judge_sanity(inputs(2_900, 10_000, (499, 0)));
        assert_eq!(small.verdict, SanityVerdict::Warning);
        assert!(small.message.contains("only 499"), "{}", small.message);
    }

    #[test]
    fn nothing_consumed_is_a_warning_not_a_division() {
        let s = judge_sanity(inputs(0, 0, (0, 0)));
        assert_eq!(s.verdict, SanityVerdict::Warning);
        assert_eq!(s.selectivity, None);
        assert!(s.message.contains("nothing was consumed"), "{}", s.message);
    }
}
