//! `workloads/*.yaml`: what a workload does, named by what it does, for
//! people and the report. What the suite runs and checks is the workload's
//! implementation (`crate::workloads`), found by the same name. Workloads
//! know nothing of products.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{key_line, load_yaml, read_text, ConfigError};
use crate::workloads::{self, Implementation, Output, TopicOutput};

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
    /// name and have an implementation, whose input and output it must
    /// describe.
    pub fn from_file(path: &Path) -> Result<Workload, ConfigError> {
        let workload: Workload = load_yaml(path)?;
        let at = |key: &str, message: String| -> ConfigError {
            let line = read_text(path)
                .ok()
                .and_then(|text| key_line(&text, key))
                .unwrap_or(1);
            ConfigError::Value {
                path: path.to_path_buf(),
                line,
                message,
            }
        };
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        if workload.name != stem {
            return Err(at(
                "name",
                format!("name `{}` must match the file name `{stem}`", workload.name),
            ));
        }
        let Some(implementation) = workloads::find(&workload.name) else {
            return Err(at(
                "name",
                format!(
                    "workload `{}` has no implementation in the suite (implemented: {}); \
                     add one in src/workloads/ (docs/workloads.md)",
                    workload.name,
                    workloads::names().join(", ")
                ),
            ));
        };
        if workload.input.encoding != implementation.input() {
            return Err(at(
                "input",
                format!(
                    "the implementation of `{}` writes {} input, not {}",
                    workload.name,
                    implementation.input().as_str(),
                    workload.input.encoding.as_str()
                ),
            ));
        }
        match (&workload.output, &workload.sink, implementation.output()) {
            (Some(_), Some(_), _) => {
                return Err(at("sink", "give `output` or `sink`, not both".to_string()))
            }
            (None, None, _) => {
                return Err(at(
                    "name",
                    "give `output` (a topic) or `sink` (a ClickHouse table)".to_string(),
                ))
            }
            (Some(_), None, Output::Table) => {
                return Err(at(
                    "output",
                    format!(
                        "`{}` writes a table: give `sink`, not `output`",
                        workload.name
                    ),
                ))
            }
            (None, Some(_), Output::Topic(_)) => {
                return Err(at(
                    "sink",
                    format!(
                        "`{}` writes a topic: give `output`, not `sink`",
                        workload.name
                    ),
                ))
            }
            _ => {}
        }
        let output_partitions = workload.output.as_ref().map_or(1, |o| o.partitions);
        if workload.input.partitions < 1 || output_partitions < 1 {
            return Err(at(
                "partitions",
                "topics need at least one partition".to_string(),
            ));
        }
        Ok(workload)
    }

    /// The code that runs and checks this workload. Every loaded workload has
    /// one ([`Workload::from_file`] refuses the others).
    pub fn implementation(&self) -> &'static dyn Implementation {
        workloads::find(&self.name).expect("Workload::from_file checks the implementation")
    }

    /// What a topic-writing workload owes and how it is checked; `None` for
    /// a workload that writes a table.
    pub fn topic_output(&self) -> Option<&'static dyn TopicOutput> {
        match self.implementation().output() {
            Output::Topic(output) => Some(output),
            Output::Table => None,
        }
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
