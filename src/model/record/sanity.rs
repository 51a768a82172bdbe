//! A record's sanity block: did the product do the workload's work? Read
//! in this version's form or an older one.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Sanity of one run: did the product do the workload's work?
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredSanity")]
pub struct Sanity {
    /// Output records / consumed records in the window; absent when nothing
    /// was consumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selectivity: Option<f64>,
    /// What the workload owes per input record over exactly the input range
    /// consumed in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_selectivity: Option<f64>,
    /// |selectivity / expected - 1|.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selectivity_deviation: Option<f64>,
    /// bench.yaml's `tolerances.selectivity`.
    pub tolerance: f64,
    pub selectivity_ok: bool,
    /// The workload's own figures (stateless: `breach_rate`, the share of
    /// output records with `sla_status` breach; windowed-lowcard: panes per
    /// window, seen and expected).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, f64>,
    /// Outputs whose content the workload recomputed (stateless: the derived
    /// fields; passthrough: every byte; windowed-lowcard: the aggregates).
    pub content_checked: u64,
    /// Of those, the ones that were wrong.
    pub content_mismatched: u64,
    pub verdict: SanityVerdict,
    pub message: String,
}

/// A sanity block as stored, in this version's form or an older one, where
/// the stateless figures were fields of their own.
#[derive(Deserialize)]
struct StoredSanity {
    #[serde(default)]
    selectivity: Option<f64>,
    #[serde(default)]
    expected_selectivity: Option<f64>,
    #[serde(default)]
    selectivity_deviation: Option<f64>,
    tolerance: f64,
    selectivity_ok: bool,
    #[serde(default)]
    figures: BTreeMap<String, f64>,
    #[serde(default)]
    breach_rate: Option<f64>,
    #[serde(alias = "enrichment_checked")]
    content_checked: u64,
    #[serde(alias = "enrichment_mismatched")]
    content_mismatched: u64,
    verdict: SanityVerdict,
    message: String,
}

impl From<StoredSanity> for Sanity {
    fn from(s: StoredSanity) -> Sanity {
        let mut figures = s.figures;
        if let Some(rate) = s.breach_rate {
            figures.entry("breach_rate".to_string()).or_insert(rate);
        }
        Sanity {
            selectivity: s.selectivity,
            expected_selectivity: s.expected_selectivity,
            selectivity_deviation: s.selectivity_deviation,
            tolerance: s.tolerance,
            selectivity_ok: s.selectivity_ok,
            figures,
            content_checked: s.content_checked,
            content_mismatched: s.content_mismatched,
            verdict: s.verdict,
            message: s.message,
        }
    }
}

/// The sanity checks' verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SanityVerdict {
    Ok,
    Warning,
}
