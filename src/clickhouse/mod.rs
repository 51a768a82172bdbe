//! The ClickHouse the ETL workloads write to: Debian's clickhouse-server
//! started by the suite on 127.0.0.1 (`local`), or any server reached over
//! HTTP (`external`); plus the client calls a run makes on it.

pub mod client;
mod local;

use anyhow::Result;

use crate::cache::Cache;
use crate::config::SinkConfig;
use crate::interrupt::Interrupt;
pub use client::{ClickHouseClient, EventRow};
pub use local::LocalClickHouse;

/// A ClickHouse ready for a run; stops the local server on drop if it started it.
pub struct SinkSession {
    config: SinkConfig,
    url: String,
    pid: Option<u32>,
    started: Option<LocalClickHouse>,
}

impl SinkSession {
    /// Uses the configured ClickHouse, starting the local one if none answers.
    pub fn open(config: &SinkConfig, cache: &Cache, interrupt: &Interrupt) -> Result<SinkSession> {
        let (pid, started) = match config {
            SinkConfig::External { .. } => {
                ClickHouseClient::from_config(config)?.ping()?;
                (None, None)
            }
            SinkConfig::Local { .. } => {
                let local = LocalClickHouse::from_config(config, cache)?;
                let started = if local.is_running() {
                    None
                } else {
                    local.start(interrupt)?;
                    Some(local.clone())
                };
                (local.running_pid(), started)
            }
        };
        Ok(SinkSession {
            config: config.clone(),
            url: config.url(),
            pid,
            started,
        })
    }

    /// The server's HTTP address.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The local server's process, sampled like the harness's own; None for
    /// an external server, or a local one the suite did not start.
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// A client of this server.
    pub fn client(&self) -> Result<ClickHouseClient> {
        ClickHouseClient::from_config(&self.config)
    }

    /// Stops the local server if this session started it.
    pub fn close(mut self) -> Result<()> {
        match self.started.take() {
            Some(local) => local.stop(),
            None => Ok(()),
        }
    }
}

impl Drop for SinkSession {
    fn drop(&mut self) {
        if let Some(local) = self.started.take() {
            if let Err(err) = local.stop() {
                eprintln!("warning: stopping the local ClickHouse: {err:#}");
            }
        }
    }
}
