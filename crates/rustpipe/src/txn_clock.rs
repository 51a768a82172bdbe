//! How long the exactly-once transactions' broker round trips take: their
//! phases, logged when the committer returns, and the one under way, watched
//! for a client call that never returns.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

/// Durations of the transactions' phases, in microseconds.
pub(crate) struct CommitTimes {
    /// From the first record produced to the commit's start.
    pub open: Histogram<u64>,
    /// Adding the input offsets (AddOffsetsToTxn and TxnOffsetCommit).
    pub offsets: Histogram<u64>,
    /// Committing (the outstanding records acknowledged, then EndTxn).
    pub commit: Histogram<u64>,
}

impl CommitTimes {
    pub fn new() -> CommitTimes {
        let histogram = || Histogram::new_with_bounds(1, 600_000_000, 2).expect("valid bounds");
        CommitTimes {
            open: histogram(),
            offsets: histogram(),
            commit: histogram(),
        }
    }

    pub fn record(histogram: &mut Histogram<u64>, took: Duration) {
        histogram.saturating_record(took.as_micros().max(1) as u64);
    }

    /// One line: each phase's p50, p99 and max in milliseconds.
    pub fn summary(&self) -> String {
        let phase = |name: &str, h: &Histogram<u64>| {
            let ms = |q: f64| h.value_at_quantile(q) as f64 / 1000.0;
            format!(
                "{name} p50 {:.1} p99 {:.1} max {:.1} ms",
                ms(0.5),
                ms(0.99),
                ms(1.0)
            )
        };
        format!(
            "rustpipe: {} transactions; {}; {}; {}",
            self.commit.len(),
            phase("open", &self.open),
            phase("offsets", &self.offsets),
            phase("commit", &self.commit)
        )
    }
}

/// The transaction step under way, and when it began.
#[derive(Default)]
pub struct StepWatch {
    current: Mutex<Option<(&'static str, Instant)>>,
}

/// A step under way until dropped.
pub struct StepUnderWay<'a> {
    watch: &'a StepWatch,
}

impl StepWatch {
    /// Marks `step` begun, until the returned guard is dropped.
    pub fn begin(&self, step: &'static str) -> StepUnderWay<'_> {
        *self.current.lock().unwrap_or_else(|p| p.into_inner()) = Some((step, Instant::now()));
        StepUnderWay { watch: self }
    }

    /// The step under way and how long it has run, if longer than `limit`.
    pub fn overdue(&self, limit: Duration) -> Option<(&'static str, Duration)> {
        let current = *self.current.lock().unwrap_or_else(|p| p.into_inner());
        current
            .map(|(step, began)| (step, began.elapsed()))
            .filter(|(_, took)| *took > limit)
    }
}

impl Drop for StepUnderWay<'_> {
    fn drop(&mut self) {
        *self.watch.current.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_overdue_only_while_under_way_and_past_the_limit() {
        let watch = StepWatch::default();
        assert_eq!(watch.overdue(Duration::ZERO), None);
        let step = watch.begin("committing");
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(watch.overdue(Duration::from_secs(60)), None);
        let (name, took) = watch.overdue(Duration::from_millis(1)).unwrap();
        assert_eq!(name, "committing");
        assert!(took >= Duration::from_millis(5));
        drop(step);
        assert_eq!(watch.overdue(Duration::ZERO), None);
    }
}
