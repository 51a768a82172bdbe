//! Steady state: when a warm-up may end, and whether a window stayed
//! steady. A JVM compiles its hot paths for tens of seconds, a micro-batch
//! engine may still be planning its first batch, a backlog may still be
//! draining: a window opened then measures start-up, not the product. The
//! warm-up therefore ends on the product's own evidence, and the window is
//! checked after the fact.

use crate::sampler;

use super::window::{self, OffsetRead, Sample};

/// What a warm-up must show before the window opens.
#[derive(Debug, Clone, Copy)]
pub struct SteadyRule {
    /// How far back the evidence is read, microseconds.
    pub span_us: i64,
    /// consumed/s within this share of offered/s.
    pub rate_tolerance: f64,
    /// CPU per record of the span's first and last thirds within this share.
    pub cpu_tolerance: f64,
    /// The lowest backlog in the span at most this many seconds of the
    /// offered rate: what arrives between two commits, no more.
    pub backlog_s: f64,
}

/// The fewest samples the look-back must hold.
const MIN_SAMPLES: usize = 5;

/// CPU seconds of the product's tree per input record over `rows`, with
/// each interval's CPU taken over its own read times; None when the input
/// did not grow.
pub fn cpu_per_record(rows: &[Sample], ticks_per_s: f64) -> Option<f64> {
    let (first, last) = (rows.first()?, rows.last()?);
    let records = (last.input_high - first.input_high) as f64;
    if records <= 0.0 {
        return None;
    }
    let cpu_s: f64 = rows
        .windows(2)
        .map(|pair| {
            let wall_s = (pair[1].procs_at_us - pair[0].procs_at_us) as f64 / 1e6;
            sampler::cpu_pct(
                &pair[0].product.ticks,
                &pair[1].product.ticks,
                wall_s,
                ticks_per_s,
            ) / 100.0
                * wall_s
        })
        .sum();
    Some(cpu_s / records)
}

/// |b / a - 1|; infinite when `a` is 0.
fn change(a: f64, b: f64) -> f64 {
    if a > 0.0 {
        (b / a - 1.0).abs()
    } else {
        f64::INFINITY
    }
}

/// Why the product is not steady yet, from the samples and offset polls of
/// its warm-up so far; None when it is: over the last `rule.span_us`,
/// consumed/s kept to `offered_per_s`, the backlog fell back to what one
/// commit interval leaves, and CPU per record held still.
pub fn not_steady_yet(
    rows: &[Sample],
    polls: &[OffsetRead],
    offered_per_s: f64,
    ticks_per_s: f64,
    rule: &SteadyRule,
) -> Option<String> {
    let (Some(first), Some(last)) = (rows.first(), rows.last()) else {
        return Some("no sample yet".to_string());
    };
    let (first, last) = (first.procs_at_us, last.procs_at_us);
    if last - first < rule.span_us {
        return Some(format!(
            "{:.0} s of samples so far, {:.0} s needed",
            (last - first) as f64 / 1e6,
            rule.span_us as f64 / 1e6
        ));
    }
    let from = rows.partition_point(|r| r.procs_at_us < last - rule.span_us);
    let span = &rows[from..];
    if span.len() < MIN_SAMPLES {
        return Some(format!(
            "{} sample(s) so far, {MIN_SAMPLES} needed",
            span.len()
        ));
    }
    let span_s = (last - span[0].procs_at_us) as f64 / 1e6;
    let reads = window::offset_reads(span, polls);
    if reads.iter().all(|r| r.committed < 0) {
        return Some("no input offset committed yet".to_string());
    }
    let Some(flow) = window::flow(&reads, span_s) else {
        return Some("too few offset reads to fit".to_string());
    };
    let rate_off = change(offered_per_s, flow.consumed_per_s);
    if rate_off > rule.rate_tolerance {
        return Some(format!(
            "consumed {:.0}/s against {offered_per_s:.0}/s offered",
            flow.consumed_per_s
        ));
    }
    let lowest = reads
        .iter()
        .filter(|r| r.committed >= 0)
        .map(|r| r.input_high - r.committed)
        .min()
        .unwrap_or(i64::MAX);
    let allowed = offered_per_s * rule.backlog_s;
    if lowest as f64 > allowed {
        return Some(format!(
            "a backlog of {lowest} records, more than {allowed:.0}"
        ));
    }
    match cpu_thirds(span, ticks_per_s) {
        Some(thirds) if !thirds.differ(rule.cpu_tolerance) => None,
        Some(thirds) => Some(format!(
            "CPU per record moved from {:.1} to {:.1} µs",
            thirds.first * 1e6,
            thirds.last * 1e6
        )),
        None => Some("the input did not grow".to_string()),
    }
}

/// CPU seconds per record in the first and the last third of some samples.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CpuThirds {
    pub first: f64,
    pub last: f64,
    /// What the CPU clock's granularity alone can move a third's figure by:
    /// two ticks over the fewer records of the two thirds. A product using
    /// a few percent of a core is read in few ticks.
    pub granularity: f64,
}

impl CpuThirds {
    /// Whether the two thirds differ by more than `tolerance` (a share of
    /// the larger) beyond the clock's granularity.
    pub fn differ(&self, tolerance: f64) -> bool {
        (self.last - self.first).abs() > tolerance * self.first.max(self.last) + self.granularity
    }
}

/// CPU per record in the first third of `samples` and in its last third;
/// None with fewer than 6 samples or no input growth in a third.
pub fn cpu_thirds(samples: &[Sample], ticks_per_s: f64) -> Option<CpuThirds> {
    if samples.len() < 6 {
        return None;
    }
    let third = (samples.len() - 1) / 3;
    let (early, late) = (&samples[..=third], &samples[samples.len() - 1 - third..]);
    let records = |rows: &[Sample]| rows[rows.len() - 1].input_high - rows[0].input_high;
    let fewer = records(early).min(records(late));
    Some(CpuThirds {
        first: cpu_per_record(early, ticks_per_s)?,
        last: cpu_per_record(late, ticks_per_s)?,
        granularity: 2.0 / ticks_per_s / fewer.max(1) as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::window::tests::row;

    /// A second-by-second warm-up at 1000/s, 100 ticks/s: the product uses
    /// `cpu_pct(t)` % of a core, has committed `committed(t)`.
    fn series(
        seconds: usize,
        cpu_pct: impl Fn(f64) -> f64,
        committed: impl Fn(f64) -> f64,
    ) -> Vec<Sample> {
        let mut ticks = 0.0;
        (0..=seconds)
            .map(|i| {
                let t = i as f64;
                if i > 0 {
                    ticks += cpu_pct(t);
                }
                row(
                    t,
                    committed(t) as i64,
                    (1000.0 * t) as i64,
                    ticks as u64,
                    10,
                )
            })
            .collect()
    }

    fn rule() -> SteadyRule {
        SteadyRule {
            span_us: 10_000_000,
            rate_tolerance: 0.05,
            cpu_tolerance: 0.15,
            backlog_s: 1.5,
        }
    }

    fn first_steady(rows: &[Sample]) -> Option<usize> {
        (1..=rows.len())
            .find(|&n| not_steady_yet(&rows[..n], &[], 1000.0, 100.0, &rule()).is_none())
    }

    #[test]
    fn a_product_that_keeps_up_at_a_flat_cpu_is_steady_after_the_look_back() {
        let rows = series(30, |_| 40.0, |t| 1000.0 * t - 100.0);
        assert_eq!(first_steady(&rows), Some(11), "10 s of samples first");
    }

    #[test]
    fn a_jit_like_cpu_decay_is_steady_only_once_it_flattens() {
        // 94 % decaying to 38 % with a 15 s time constant, as a JVM compiles
        let jit = |t: f64| 38.0 + 56.0 * (-t / 15.0).exp();
        let rows = series(120, jit, |t| 1000.0 * t - 100.0);
        let at = first_steady(&rows).expect("steady before 120 s");
        assert!(at > 15, "steady at {at} s while the CPU still fell");
        let why = not_steady_yet(&rows[..13], &[], 1000.0, 100.0, &rule()).unwrap();
        assert!(why.contains("CPU per record moved"), "{why}");
    }

    #[test]
    fn a_draining_backlog_is_not_steady_until_it_is_gone() {
        // 50,000 records behind at 0 s, eaten at 3000/s: gone at 25 s
        let committed = |t: f64| (3000.0 * t - 50_000.0).min(1000.0 * t - 100.0);
        let rows = series(60, |_| 40.0, committed);
        let why = not_steady_yet(&rows[..20], &[], 1000.0, 100.0, &rule()).unwrap();
        assert!(why.contains("consumed 3000/s"), "{why}");
        let at = first_steady(&rows).unwrap();
        assert!((35..=37).contains(&at), "steady at {at} s");
    }

    #[test]
    fn a_product_that_never_keeps_up_is_never_steady() {
        let rows = series(120, |_| 100.0, |t| 600.0 * t);
        assert_eq!(first_steady(&rows), None);
        let why = not_steady_yet(&rows, &[], 1000.0, 100.0, &rule()).unwrap();
        assert!(why.contains("consumed 600/s"), "{why}");
    }

    #[test]
    fn no_evidence_is_not_steady() {
        assert_eq!(
            not_steady_yet(&[], &[], 1000.0, 100.0, &rule()).as_deref(),
            Some("no sample yet")
        );
    }

    #[test]
    fn nothing_committed_is_not_steady() {
        let rows = series(20, |_| 10.0, |_| -1001.0);
        let why = not_steady_yet(&rows, &[], 1000.0, 100.0, &rule()).unwrap();
        assert_eq!(why, "no input offset committed yet");
    }

    #[test]
    fn thirds_compare_cpu_per_record_at_both_ends() {
        let flat = series(30, |_| 40.0, |t| 1000.0 * t);
        let thirds = cpu_thirds(&flat, 100.0).unwrap();
        assert!((thirds.first - 400e-6).abs() < 1e-9, "{thirds:?}");
        assert!((thirds.last - 400e-6).abs() < 1e-9, "{thirds:?}");
        assert!(!thirds.differ(0.25));
        let falling = series(30, |t| 90.0 - 1.5 * t, |t| 1000.0 * t);
        assert!(cpu_thirds(&falling, 100.0).unwrap().differ(0.25));
        assert_eq!(cpu_thirds(&flat[..5], 100.0), None);
    }

    #[test]
    fn a_product_read_in_few_ticks_is_not_unsteady_by_one_tick() {
        // 3 % of a core at 1000/s: 3 ticks a second, a third of 10 s holds
        // about 10; one tick more in the last third is 10 %.
        let mut rows = series(10, |_| 3.0, |t| 1000.0 * t);
        for row in &mut rows[8..] {
            for ticks in row.product.ticks.values_mut() {
                *ticks += 1;
            }
        }
        let thirds = cpu_thirds(&rows, 100.0).unwrap();
        assert!(
            (thirds.last / thirds.first - 1.0).abs() > 0.05,
            "{thirds:?}"
        );
        assert!(!thirds.differ(0.05), "{thirds:?}");
    }
}
