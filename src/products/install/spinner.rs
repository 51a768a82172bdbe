//! What a terminal shows while an install or a build runs.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

/// A spinner on a terminal, else the same message as one line; cleared when
/// dropped, however the install ends.
pub(super) struct Spinner(ProgressBar);

impl Spinner {
    pub(super) fn start(message: &str) -> Spinner {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message.to_string());
        if bar.is_hidden() {
            eprintln!("{message}");
        } else {
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Spinner(bar)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
