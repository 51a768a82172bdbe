//! What passes between the orchestrator and its helper processes (gendata,
//! the probe) through files: each helper's summary, one JSON document
//! written once it is done, and a measurement window the suite announces at
//! run time (`--window-file`), once its warm-up has found the product steady.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Writes `summary` as JSON to `path`, or to standard output when none is given.
/// The file is written under a temporary name and renamed, so a reader never
/// sees half of it.
pub fn write<T: Serialize>(path: Option<&Path>, summary: &T) -> Result<()> {
    let json = serde_json::to_string_pretty(summary)?;
    match path {
        None => crate::outln!("{json}"),
        Some(path) => {
            let partial = path.with_extension("partial");
            std::fs::write(&partial, json)
                .with_context(|| format!("writing {}", partial.display()))?;
            std::fs::rename(&partial, path)
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    Ok(())
}

/// Reads a summary written by [`write`].
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// A measurement window announced at run time, as the suite writes it to a
/// helper's `--window-file`: `{"start_us": <epoch µs>, "end_us": <epoch µs>}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WindowAnnouncement {
    /// Where the window starts, epoch microseconds.
    pub start_us: i64,
    /// Where it ends, epoch microseconds.
    pub end_us: i64,
}

/// Writes `window` to `path` atomically: a temporary file in the same
/// folder, renamed over `path`, so a helper polling for it reads all of it
/// or nothing. The suite writes it at least about a second before
/// `start_us`, so the helpers, which look every [`WINDOW_POLL_US`], know the
/// window before it opens.
pub fn announce(path: &Path, window: &WindowAnnouncement) -> Result<()> {
    if window.end_us <= window.start_us {
        bail!(
            "announcing a window that ends ({}) before it starts ({})",
            window.end_us,
            window.start_us
        );
    }
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?;
    let partial = path.with_file_name(format!(
        ".{}.{}.partial",
        name.to_string_lossy(),
        std::process::id()
    ));
    std::fs::write(&partial, serde_json::to_string(window)?)
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
}

/// The window announced at `path`; `None` while the file does not exist.
pub fn read_announcement(path: &Path) -> Result<Option<WindowAnnouncement>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(err).with_context(|| format!("reading {}", path.display())),
    };
    let window: WindowAnnouncement = serde_json::from_str(&text).with_context(|| {
        format!(
            "parsing {}: a window is {{\"start_us\": <epoch µs>, \"end_us\": <epoch µs>}}",
            path.display()
        )
    })?;
    if window.end_us <= window.start_us {
        bail!(
            "{}: the window ends ({}) before it starts ({})",
            path.display(),
            window.end_us,
            window.start_us
        );
    }
    Ok(Some(window))
}

/// How often a helper looks for its window file until it appears.
pub const WINDOW_POLL_US: i64 = 25_000;

/// Where a helper learns its measurement window.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WindowSource {
    /// Known at start, from the command line.
    Fixed(WindowAnnouncement),
    /// Announced at run time in this file ([`announce`]); until it appears,
    /// nothing is in the window.
    Announced(PathBuf),
}

/// A helper's view of its window: fixed, or looked for in the window file
/// at most every [`WINDOW_POLL_US`] until it appears, then kept.
#[derive(Debug, Clone)]
pub struct WindowWatch {
    source: WindowSource,
    known: Option<WindowAnnouncement>,
    next_look_us: i64,
}

impl WindowWatch {
    pub fn new(source: WindowSource) -> WindowWatch {
        let known = match &source {
            WindowSource::Fixed(window) => Some(*window),
            WindowSource::Announced(_) => None,
        };
        WindowWatch {
            source,
            known,
            next_look_us: i64::MIN,
        }
    }

    /// The window, once known; at `now_us`, reads the file if it is time to
    /// look again (a failed read or a malformed file is an error).
    pub fn poll(&mut self, now_us: i64) -> Result<Option<WindowAnnouncement>> {
        if self.known.is_some() || now_us < self.next_look_us {
            return Ok(self.known);
        }
        if let WindowSource::Announced(path) = &self.source {
            self.known = read_announcement(path)?;
        }
        self.next_look_us = now_us + WINDOW_POLL_US;
        Ok(self.known)
    }

    /// The window if it is already known, without looking.
    pub fn known(&self) -> Option<WindowAnnouncement> {
        self.known
    }

    /// When it is next worth calling [`WindowWatch::poll`]: never again once
    /// the window is known (`i64::MAX`).
    pub fn next_look_us(&self) -> i64 {
        if self.known.is_some() {
            i64::MAX
        } else {
            self.next_look_us
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absent_window_file_is_not_yet_and_an_announced_one_gives_its_bounds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("window.json");
        assert_eq!(read_announcement(&path).unwrap(), None);
        let mut watch = WindowWatch::new(WindowSource::Announced(path.clone()));
        assert_eq!(watch.poll(1_000).unwrap(), None);
        let window = WindowAnnouncement {
            start_us: 1_700_000_010_000_000,
            end_us: 1_700_000_020_000_000,
        };
        announce(&path, &window).unwrap();
        // Written whole under its own name, no temporary file left beside it.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("window.json")]);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            r#"{"start_us":1700000010000000,"end_us":1700000020000000}"#
        );
        assert_eq!(read_announcement(&path).unwrap(), Some(window));
        // The watch looks again only once its poll period has passed.
        assert_eq!(watch.poll(1_000 + WINDOW_POLL_US - 1).unwrap(), None);
        assert_eq!(watch.poll(1_000 + WINDOW_POLL_US).unwrap(), Some(window));
        // Known, it is kept: the file is not read again.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(watch.poll(i64::MAX - 1).unwrap(), Some(window));
        assert_eq!(watch.next_look_us(), i64::MAX);
    }

    #[test]
    fn a_fixed_window_is_known_from_the_start() {
        let window = WindowAnnouncement {
            start_us: 5,
            end_us: 10,
        };
        let mut watch = WindowWatch::new(WindowSource::Fixed(window));
        assert_eq!(watch.known(), Some(window));
        assert_eq!(watch.poll(0).unwrap(), Some(window));
    }

    #[test]
    fn a_malformed_or_backward_window_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("window.json");
        std::fs::write(&path, r#"{"start_us": 10}"#).unwrap();
        assert!(read_announcement(&path).is_err());
        std::fs::write(&path, r#"{"start_us": 10, "end_us": 10}"#).unwrap();
        assert!(read_announcement(&path).is_err());
        let backward = WindowAnnouncement {
            start_us: 10,
            end_us: 5,
        };
        assert!(announce(&path, &backward).is_err());
    }
}
