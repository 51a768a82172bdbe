//! The progress bar of one run: phase and time left, on standard error.

use indicatif::{ProgressBar, ProgressStyle};

use crate::clock::now_us;
use crate::results::RunConfig;

/// One run's bar, in seconds of warm-up plus window.
pub struct Progress {
    bar: ProgressBar,
    total_s: u64,
    started_us: Option<i64>,
}

impl Progress {
    pub fn new(line: &str, workload: &str, config: &RunConfig) -> Progress {
        let total_s = config.warmup_s + config.window_s;
        let bar = ProgressBar::new(total_s);
        bar.set_style(
            ProgressStyle::with_template("{prefix} [{bar:30}] {pos:>3}/{len}s  {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        bar.set_prefix(format!("{line} · {workload}"));
        Progress {
            bar,
            total_s,
            started_us: None,
        }
    }

    /// Names the phase the run is in.
    pub fn phase(&mut self, phase: &str) {
        if self.started_us.is_none() && matches!(phase, "warm-up") {
            self.started_us = Some(now_us());
        }
        self.bar.set_message(phase.to_string());
        if self.bar.is_hidden() {
            eprintln!("{}: {phase}", self.bar.prefix());
        }
    }

    /// Shows `detail` beside the phase, on the bar alone: it changes too
    /// often for a log line each time.
    pub fn detail(&mut self, phase: &str, detail: &str) {
        self.bar.set_message(format!("{phase}: {detail}"));
    }

    /// The run now lasts `total_s` seconds of warm-up plus window: a
    /// steady-state warm-up has found its end.
    pub fn set_total(&mut self, total_s: u64) {
        self.total_s = total_s;
        self.bar.set_length(total_s);
    }

    /// Moves the bar to `now_us` and shows the time left.
    pub fn tick(&mut self, now_us: i64) {
        if let Some(start) = self.started_us {
            let done = ((now_us - start).max(0) / 1_000_000) as u64;
            self.bar.set_position(done.min(self.total_s));
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
