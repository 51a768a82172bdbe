//! Pure analysis of what a run measured: the window's flow and regime,
//! efficiency figures, percentiles, sanity, exact verification, and the
//! judgement that turns them into a record's figures and flags. No I/O here,
//! so all of it is unit-tested.

pub mod etl;
pub mod flow_checks;
pub mod judge;
pub mod latency_over_time;
pub mod noise;
pub mod paired;
pub mod rig_multiples;
pub mod sanity;
pub mod steady;
pub mod sweep;
pub mod window;

use crate::results::Regime;

/// keep-up within `tolerance`, saturated above it, draining below it.
pub fn classify(drift: f64, tolerance: f64) -> Regime {
    if drift > tolerance {
        Regime::Saturated
    } else if drift < -tolerance {
        Regime::Draining
    } else {
        Regime::KeepUp
    }
}

/// consumed/s per core busy: consumed/s / (cpu_avg / 100).
pub fn rows_per_s_per_core(consumed_per_s: f64, cpu_avg_pct: f64) -> Option<f64> {
    (cpu_avg_pct > 0.0).then(|| consumed_per_s / (cpu_avg_pct / 100.0))
}

/// Microseconds of CPU per record consumed: the inverse of rows/s per core.
pub fn us_cpu_per_record(consumed_per_s: f64, cpu_avg_pct: f64) -> Option<f64> {
    (consumed_per_s > 0.0).then(|| cpu_avg_pct / 100.0 * 1e6 / consumed_per_s)
}

/// consumed/s per GB of memory (PSS or RSS, as sampled).
pub fn rows_per_s_per_gb(consumed_per_s: f64, mem_avg_mb: f64) -> Option<f64> {
    (mem_avg_mb > 0.0).then(|| consumed_per_s / (mem_avg_mb / 1024.0))
}

/// product - floor; None ("does not apply") where the product is below the floor.
pub fn added_over_floor(product_ms: f64, floor_ms: f64) -> Option<f64> {
    (product_ms >= floor_ms).then_some(product_ms - floor_ms)
}

/// The nearest-rank percentile `q` (0..=1) of `values`; None when empty.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = (q * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

/// The arithmetic mean; None when empty.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// The median of repeated runs, with the spread it hides.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// The middle value (the mean of the two middle ones for an even count).
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

/// The median, min and max of `values`; None when empty.
pub fn spread(values: &[f64]) -> Option<Spread> {
    if values.is_empty() {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    Some(Spread {
        median,
        min: sorted[0],
        max: sorted[n - 1],
        count: n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_takes_the_middle_of_repeats() {
        assert_eq!(spread(&[]), None);
        let odd = spread(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (odd.median, odd.min, odd.max, odd.count),
            (2.0, 1.0, 3.0, 3)
        );
        assert_eq!(spread(&[4.0, 1.0, 2.0, 3.0]).unwrap().median, 2.5);
    }

    #[test]
    fn regime_follows_the_drift_and_tolerance() {
        assert_eq!(classify(0.0, 0.02), Regime::KeepUp);
        assert_eq!(classify(0.02, 0.02), Regime::KeepUp);
        assert_eq!(classify(-0.02, 0.02), Regime::KeepUp);
        assert_eq!(classify(0.021, 0.02), Regime::Saturated);
        assert_eq!(classify(-0.3, 0.02), Regime::Draining);
        assert_eq!(classify(500.0, 0.02), Regime::Saturated);
        assert_eq!(
            serde_json::to_string(&Regime::KeepUp).unwrap(),
            "\"keep-up\""
        );
    }

    #[test]
    fn efficiency_figures_are_inverse_of_each_other() {
        let per_core = rows_per_s_per_core(20_000.0, 50.0).unwrap();
        assert_eq!(per_core, 40_000.0);
        let us = us_cpu_per_record(20_000.0, 50.0).unwrap();
        assert!((us - 25.0).abs() < 1e-9);
        assert!((1e6 / us - per_core).abs() < 1e-6);
        assert_eq!(rows_per_s_per_gb(20_000.0, 512.0), Some(40_000.0));
    }

    #[test]
    fn efficiency_is_undefined_without_cpu_records_or_memory() {
        assert_eq!(rows_per_s_per_core(1000.0, 0.0), None);
        assert_eq!(us_cpu_per_record(0.0, 30.0), None);
        assert_eq!(rows_per_s_per_gb(1000.0, 0.0), None);
    }

    #[test]
    fn added_does_not_apply_below_the_floor() {
        assert_eq!(added_over_floor(25.0, 5.0), Some(20.0));
        assert_eq!(added_over_floor(5.0, 5.0), Some(0.0));
        assert_eq!(added_over_floor(4.0, 5.0), None);
    }

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let v: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.95), Some(19.0));
        assert_eq!(percentile(&v, 1.0), Some(20.0));
        assert_eq!(percentile(&v, 0.0), Some(1.0));
        assert_eq!(percentile(&[7.0], 0.95), Some(7.0));
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
    }
}
