//! The median of repeated measurements and its 95 % confidence interval, as
//! a record keeps them; `stats::interval` computes them.

use serde::{Deserialize, Serialize};

/// Repetitions summarised.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MedianInterval {
    pub median: f64,
    /// At least 95 % coverage; `None` with fewer than 6 values, where no
    /// pair of order statistics reaches it.
    pub ci95: Option<[f64; 2]>,
    pub n: usize,
}
