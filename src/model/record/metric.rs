//! A record's figures: each with its unit and the way it is better.

use serde::{Deserialize, Serialize};

use crate::model::interval::MedianInterval;

/// Which way a figure is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Higher,
    Lower,
}

/// One figure with its unit and direction; a figure of repetitions (the
/// CPU rig's) is their median, with its 95 % confidence interval and n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    pub value: f64,
    pub unit: String,
    pub better: Better,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n: Option<usize>,
}

impl Metric {
    pub fn new(value: f64, unit: &str, better: Better) -> Metric {
        Metric {
            value,
            unit: unit.to_string(),
            better,
            ci95: None,
            n: None,
        }
    }

    /// The median of repetitions, with its interval and n.
    pub fn of_repetitions(summary: MedianInterval, unit: &str, better: Better) -> Metric {
        Metric {
            ci95: summary.ci95,
            n: Some(summary.n),
            ..Metric::new(summary.median, unit, better)
        }
    }
}
