//! `workloads/*.yaml`: what a workload does, named by what it does, for
//! people and the report. What the suite runs and checks is the workload's
//! implementation (`crate::workloads`), found by the same name when the
//! suite is loaded. Workloads know nothing of products.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{load_yaml, ConfigError, Setting};

/// The prefix of the `--set` keys a run applies to its workload rather
/// than to bench.yaml.
pub const WORKLOAD_PREFIX: &str = "workload.";

/// One workload: its topics and the operators every product implements.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Workload {
    pub name: String,
    pub description: String,
    pub input: TopicSpec,
    /// Where the product writes: an output topic ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<TopicSpec>,
    /// ... or a table in the ClickHouse of bench.yaml's `sink:` (`events`,
    /// one row per event; `raw_messages` on the raw arm, one per message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink: Option<TableSink>,
    /// The operator chain, in order: drawn in the report, implemented by products.
    pub operators: Vec<Operator>,
    /// The file it was read from, for errors about it.
    #[serde(skip)]
    pub path: PathBuf,
}

/// A workload whose output lands in ClickHouse, in a table of each run's
/// fresh database.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSink {
    /// Only `clickhouse`.
    pub kind: SinkKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkKind {
    Clickhouse,
}

/// How gendata encodes the input's records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Encoding {
    /// One JSON event per record.
    #[default]
    Json,
    /// One Avro batch datum per record (workloads/avro/event-batch.avsc),
    /// bench.yaml's `etl.events` events each.
    Avro,
}

/// How a per-run topic is created.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopicSpec {
    pub partitions: i32,
    #[serde(default = "default_compression")]
    pub compression: String,
    #[serde(default, skip_serializing_if = "is_json")]
    pub encoding: Encoding,
}

impl TopicSpec {
    /// The topic's partitions as a count: at least one.
    pub fn partition_count(&self) -> u32 {
        self.partitions.max(1) as u32
    }
}

impl Encoding {
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Json => "json",
            Encoding::Avro => "avro",
        }
    }
}

fn is_json(encoding: &Encoding) -> bool {
    *encoding == Encoding::Json
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
    /// Reads and checks one workload file: its name must match the file
    /// name, and it gives an output topic or a sink table. Whether the suite
    /// implements it is checked where the suite is loaded
    /// (`workloads::check_suite`).
    pub fn from_file(path: &Path) -> Result<Workload, ConfigError> {
        let mut workload: Workload = load_yaml(path)?;
        workload.path = path.to_path_buf();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if workload.name != stem {
            return Err(workload.error_at(
                "name",
                format!("name `{}` must match the file name `{stem}`", workload.name),
            ));
        }
        match (&workload.output, &workload.sink) {
            (Some(_), Some(_)) => {
                return Err(workload.error_at("sink", "give `output` or `sink`, not both".into()))
            }
            (None, None) => {
                return Err(workload.error_at(
                    "name",
                    "give `output` (a topic) or `sink` (a ClickHouse table)".into(),
                ))
            }
            _ => {}
        }
        let output_partitions = workload.output.as_ref().map_or(1, |o| o.partitions);
        if workload.input.partitions < 1 || output_partitions < 1 {
            return Err(workload.error_at(
                "partitions",
                "topics need at least one partition".to_string(),
            ));
        }
        Ok(workload)
    }

    /// This workload with the `workload.*` settings of `settings` applied
    /// (`--set workload.partitions=4`: the input's partitions); the others
    /// are bench.yaml's.
    pub fn with_settings(&self, settings: &[Setting]) -> Result<Workload, ConfigError> {
        let mut workload = self.clone();
        for setting in settings {
            let Some(key) = setting.key.strip_prefix(WORKLOAD_PREFIX) else {
                continue;
            };
            let invalid = |message: String| ConfigError::Setting {
                setting: setting.to_string(),
                message,
            };
            match key {
                "partitions" => {
                    workload.input.partitions = setting
                        .value
                        .parse()
                        .ok()
                        .filter(|&n: &i32| n >= 1)
                        .ok_or_else(|| invalid("the input needs at least 1 partition".into()))?;
                }
                other => {
                    return Err(invalid(format!(
                        "workload.{other} cannot be set; a run sets workload.partitions only"
                    )))
                }
            }
        }
        Ok(workload)
    }

    /// An error about this workload's value of `key`, at the line that sets it.
    pub fn error_at(&self, key: &str, message: String) -> ConfigError {
        ConfigError::at_key(&self.path, key, message)
    }

    /// The output topic's spec; a sink workload has none.
    pub fn output_topic(&self) -> Option<&TopicSpec> {
        self.output.as_ref()
    }

    /// Whether the output lands in ClickHouse rather than on a topic.
    pub fn is_etl(&self) -> bool {
        self.sink.is_some()
    }
}
