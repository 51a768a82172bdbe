//! Pure analysis of what a run measured: the window's flow and regime,
//! efficiency figures, sanity, exact verification, and the
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
