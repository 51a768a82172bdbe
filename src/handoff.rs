//! How the helper processes (gendata, probe) hand their summaries to the
//! orchestrator: one JSON document, written to a file once they are done.

use std::path::Path;

use anyhow::{Context, Result};
use serde::de::DeserializeOwned;
use serde::Serialize;

/// Writes `summary` as JSON to `path`, or to standard output when none is given.
/// The file is written under a temporary name and renamed, so a reader never
/// sees half of it.
pub fn write<T: Serialize>(path: Option<&Path>, summary: &T) -> Result<()> {
    let json = serde_json::to_string_pretty(summary)?;
    match path {
        None => println!("{json}"),
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
