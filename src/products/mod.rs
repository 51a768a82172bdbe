//! How the orchestrator installs, starts, readies and stops any product, knowing
//! it only through its product.yaml.
//!
//! Every product gets the run's settings as BENCH_* environment variables; its
//! standard output is watched for the readiness line and kept, with its
//! standard error, in the run's log folder.

mod cargo;
mod deployed;
mod install;
mod revision;

use anyhow::{Context, Result};
use std::collections::BTreeMap;

use crate::config::{ClientProfile, Delivery, EtlConfig, Product};
pub use cargo::compiled_dependencies;
pub use deployed::{Deployed, ProductRoots, StartPlan};
pub use install::{
    availability, build_companion, capability, ensure_installed, Availability, Installation,
};

/// The settings of one run, as a product receives them.
#[derive(Debug, Clone)]
pub struct LaunchSettings {
    pub bootstrap: String,
    pub input_topic: String,
    pub output_topic: String,
    pub group_id: String,
    pub transactional_id: String,
    pub delivery: Delivery,
    /// The interval of this line's delivery mode.
    pub commit_interval_ms: u64,
    pub parallelism: u32,
    /// The input topic's partitions, which bound how many consumers of one
    /// group get a share.
    pub input_partitions: u32,
    pub workload: String,
    pub client: ClientProfile,
    /// The product's own `settings` as this run has them (BENCH_SETTINGS).
    pub product_settings: BTreeMap<String, serde_json::Value>,
    /// An ETL workload's sink and arm.
    pub etl: Option<EtlLaunch>,
}

/// Where an ETL run's rows go and how they are made, for BENCH_SINK_* and
/// BENCH_ETL_*.
#[derive(Debug, Clone)]
pub struct EtlLaunch {
    pub sink_url: String,
    pub sink_user: Option<String>,
    pub sink_password: Option<String>,
    /// The run's own database, and its table.
    pub database: String,
    pub table: String,
    /// Where the product logs each acknowledged insert, one JSON line each.
    pub insert_log: std::path::PathBuf,
    pub config: EtlConfig,
}

/// `product`'s own settings with a run's `overrides` over them.
pub fn product_settings(
    product: &Product,
    overrides: &BTreeMap<String, serde_json::Value>,
) -> Result<BTreeMap<String, serde_json::Value>> {
    let mut settings = BTreeMap::new();
    for (key, value) in &product.settings {
        settings.insert(key.clone(), serde_json::to_value(value)?);
    }
    settings.extend(overrides.iter().map(|(k, v)| (k.clone(), v.clone())));
    Ok(settings)
}

impl LaunchSettings {
    /// The BENCH_* variables every product reads.
    pub fn environment(&self) -> Result<BTreeMap<&'static str, String>> {
        let mut environment = BTreeMap::from([
            ("BENCH_BOOTSTRAP", self.bootstrap.clone()),
            ("BENCH_INPUT_TOPIC", self.input_topic.clone()),
            ("BENCH_OUTPUT_TOPIC", self.output_topic.clone()),
            ("BENCH_GROUP_ID", self.group_id.clone()),
            // A static member's id: the same for the product restarted
            // after a kill, so it takes its partitions back at once.
            (
                "BENCH_GROUP_INSTANCE_ID",
                format!("{}-member", self.group_id),
            ),
            ("BENCH_TRANSACTIONAL_ID", self.transactional_id.clone()),
            ("BENCH_DELIVERY", self.delivery.as_str().to_string()),
            (
                "BENCH_COMMIT_INTERVAL_MS",
                self.commit_interval_ms.to_string(),
            ),
            ("BENCH_PARALLELISM", self.parallelism.to_string()),
            ("BENCH_INPUT_PARTITIONS", self.input_partitions.to_string()),
            ("BENCH_WORKLOAD", self.workload.clone()),
            (
                "BENCH_SETTINGS",
                serde_json::to_string(&self.product_settings)?,
            ),
        ]);
        environment.extend(self.client.environment());
        if let Some(etl) = &self.etl {
            let c = &etl.config;
            environment.extend([
                ("BENCH_SINK_URL", etl.sink_url.clone()),
                ("BENCH_SINK_DATABASE", etl.database.clone()),
                ("BENCH_SINK_TABLE", etl.table.clone()),
                (
                    "BENCH_SINK_INSERT_LOG",
                    etl.insert_log.to_string_lossy().into_owned(),
                ),
                ("BENCH_ETL_DECODER", c.decoder.as_str().to_string()),
                ("BENCH_ETL_FORMAT", c.format.as_str().to_string()),
                ("BENCH_ETL_EVENTS", c.events.to_string()),
                ("BENCH_ETL_BLOCK_ROWS", c.block_rows.to_string()),
                ("BENCH_ETL_FLUSH_MS", c.flush_ms.to_string()),
                ("BENCH_ETL_MAX_IN_FLIGHT", c.max_in_flight.to_string()),
            ]);
            if let Some(user) = &etl.sink_user {
                environment.insert("BENCH_SINK_USER", user.clone());
            }
            if let Some(password) = &etl.sink_password {
                environment.insert("BENCH_SINK_PASSWORD", password.clone());
            }
        }
        Ok(environment)
    }
}

/// Replaces the placeholders of a start command argument.
fn expand(arg: &str, product: &Product, installation: &Installation) -> Result<String> {
    let suite = std::env::current_exe().context("finding the suite's own executable")?;
    // Absolute, since the product starts inside its folder.
    let dir = std::path::absolute(product.dir())
        .with_context(|| format!("resolving {}", product.dir().display()))?;
    let mut arg = arg
        .replace("{suite}", &suite.to_string_lossy())
        .replace("{dir}", &dir.to_string_lossy())
        .replace("{version}", &installation.version);
    if let Some(dir) = &installation.dir {
        arg = arg.replace("{install}", &dir.to_string_lossy());
    }
    if let Some(bin) = &installation.bin {
        arg = arg.replace("{bin}", &bin.to_string_lossy());
    }
    Ok(arg)
}
