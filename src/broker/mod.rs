//! The broker every run uses: Apache Kafka started by the suite on 127.0.0.1
//! (`local`), or any Kafka-compatible cluster (`external`); plus the admin
//! calls a run makes on it.

pub mod admin;
mod local;

use anyhow::Result;

use crate::cache::Cache;
use crate::config::BrokerConfig;
use crate::interrupt::Interrupt;
pub use crate::model::broker::BrokerInfo;
pub use local::{LocalBroker, NodeId};

/// A broker ready for a run; stops the local broker on drop if it started it.
pub struct BrokerSession {
    pub info: BrokerInfo,
    /// The local broker, which a chaos run may kill and start again; None
    /// for an external one.
    local: Option<LocalBroker>,
    started: Option<LocalBroker>,
}

impl BrokerSession {
    /// Uses the configured broker, starting the local one if none is running.
    pub fn open(
        config: &BrokerConfig,
        cache: &Cache,
        interrupt: &Interrupt,
    ) -> Result<BrokerSession> {
        match config {
            BrokerConfig::External { bootstrap, .. } => {
                let external =
                    |e: anyhow::Error| anyhow::anyhow!("external broker {bootstrap}: {e:#}");
                admin::wait_until_reachable(
                    bootstrap,
                    std::time::Duration::from_secs(15),
                    interrupt,
                )
                .map_err(external)?;
                let nodes = admin::broker_ids(bootstrap).map_err(external)?.len() as u32;
                let replicas = config.replicas();
                if replicas.replication > nodes {
                    anyhow::bail!(
                        "external broker {bootstrap}: broker.replication {} needs as many \
                         brokers; the cluster lists {nodes}",
                        replicas.replication
                    );
                }
                Ok(BrokerSession {
                    info: BrokerInfo {
                        kind: "external".into(),
                        version: config.recorded_version(),
                        bootstrap: bootstrap.clone(),
                        started_for_batch: false,
                        warmed_s: None,
                        uptime_s: None,
                        nodes,
                        replication: replicas.replication,
                        min_insync_replicas: replicas.min_insync_replicas,
                        abandoned_transaction_check_ms: admin::abandoned_transaction_check_ms(
                            bootstrap,
                        ),
                    },
                    local: None,
                    started: None,
                })
            }
            BrokerConfig::Local { .. } => {
                let local = LocalBroker::from_config(config, cache)?;
                let started = if local.is_running() {
                    None
                } else {
                    local.start(interrupt)?;
                    Some(local.clone())
                };
                local.check_shape()?;
                let replicas = config.replicas();
                let info = BrokerInfo {
                    kind: "local".into(),
                    version: config.recorded_version(),
                    bootstrap: local.bootstrap(),
                    started_for_batch: started.is_some(),
                    warmed_s: local.warmed_s(),
                    uptime_s: local.uptime_s(),
                    nodes: local.nodes(),
                    replication: replicas.replication,
                    min_insync_replicas: replicas.min_insync_replicas,
                    abandoned_transaction_check_ms: admin::abandoned_transaction_check_ms(
                        &local.bootstrap(),
                    ),
                };
                Ok(BrokerSession {
                    info,
                    local: Some(local),
                    started,
                })
            }
        }
    }

    /// The local broker, for a run that restarts it; None for an external one.
    pub fn local(&self) -> Option<&LocalBroker> {
        self.local.as_ref()
    }

    /// Stops the broker if this session started it.
    pub fn close(mut self) -> Result<()> {
        match self.started.take() {
            Some(local) => local.stop(),
            None => Ok(()),
        }
    }
}

impl Drop for BrokerSession {
    fn drop(&mut self) {
        if let Some(local) = self.started.take() {
            if let Err(err) = local.stop() {
                eprintln!("warning: stopping the local broker: {err:#}");
            }
        }
    }
}
