//! The suite's cache directory: installs, the local broker's jars and data,
//! the local ClickHouse's data, per-run logs and the host's run lock. Never
//! inside the repository.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// Where the cache lives and what goes where inside it.
#[derive(Debug, Clone)]
pub struct Cache {
    root: PathBuf,
}

impl Cache {
    /// `STREAMSUITE_CACHE`, else bench.yaml's `cache_dir`, else `~/.cache/streamsuite`.
    pub fn from_settings(cache_dir: Option<&str>) -> Result<Cache> {
        let chosen = std::env::var("STREAMSUITE_CACHE")
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| cache_dir.map(str::to_string))
            .unwrap_or_else(|| "~/.cache/streamsuite".to_string());
        // Absolute: its paths are handed to products and tools run elsewhere.
        let root = std::path::absolute(expand_home(&chosen)?)
            .with_context(|| format!("resolving the cache directory {chosen}"))?;
        std::fs::create_dir_all(&root)
            .with_context(|| format!("creating the cache directory {}", root.display()))?;
        Ok(Cache::at(root))
    }

    /// The cache at `root`, whatever the environment says.
    pub fn at(root: PathBuf) -> Cache {
        Cache { root }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Jars of Apache Kafka `version`.
    pub fn kafka_dir(&self, version: &str) -> PathBuf {
        self.root.join("kafka").join(version)
    }

    /// The local broker's config, data, log and pid file.
    pub fn broker_dir(&self) -> PathBuf {
        self.root.join("broker")
    }

    /// The local ClickHouse's config, data, logs and pid file.
    pub fn clickhouse_dir(&self) -> PathBuf {
        self.root.join("clickhouse")
    }

    /// One version of an installed product (a virtualenv, a Maven build).
    pub fn product_dir(&self, name: &str, version: &str) -> PathBuf {
        self.root.join("products").join(name).join(version)
    }

    /// Logs and hand-off files of one run.
    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.root.join("runs").join(run_id)
    }

    /// The file the host's run lock is taken on (see [`crate::lock`]).
    pub fn run_lock_file(&self) -> PathBuf {
        self.root.join("run.lock")
    }
}

fn expand_home(path: &str) -> Result<PathBuf> {
    match path.strip_prefix("~/") {
        Some(rest) => {
            let home = std::env::var("HOME").context("HOME is not set; set STREAMSUITE_CACHE")?;
            Ok(Path::new(&home).join(rest))
        }
        None => Ok(PathBuf::from(path)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn home_is_expanded() {
        let home = std::env::var("HOME").unwrap();
        assert_eq!(expand_home("~/x/y").unwrap(), Path::new(&home).join("x/y"));
        assert_eq!(expand_home("/abs").unwrap(), PathBuf::from("/abs"));
    }
}
