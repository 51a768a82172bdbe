//! `workloads/*.yaml`: what a workload does, named by what it does.
//! Workloads know nothing of products.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{load_yaml, ConfigError};

/// One workload: its topics and the operators every product implements.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub input: TopicSpec,
    pub output: TopicSpec,
    /// The operator chain, in order: drawn in the report, implemented by products.
    pub operators: Vec<Operator>,
}

/// How a per-run topic is created.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicSpec {
    pub partitions: i32,
    #[serde(default = "default_compression")]
    pub compression: String,
}

fn default_compression() -> String {
    "producer".to_string()
}

/// One step of a workload's flow.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operator {
    /// filter, map, ...
    pub kind: String,
    /// What it does, in a few words (`region = eu-*`).
    pub does: String,
}

impl Workload {
    /// Reads and checks one workload file; its name must match the file name.
    pub fn from_file(path: &Path) -> Result<Workload, ConfigError> {
        let workload: Workload = load_yaml(path)?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if workload.name != stem {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message: format!("name `{}` must match the file name `{stem}`", workload.name),
            });
        }
        if workload.input.partitions < 1 || workload.output.partitions < 1 {
            return Err(ConfigError::Invalid {
                path: path.to_path_buf(),
                message: "topics need at least one partition".into(),
            });
        }
        Ok(workload)
    }
}
