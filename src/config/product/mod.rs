//! `products/<name>/product.yaml`: how to install, start and ready a product,
//! its delivery lines and the characteristics the report shows.

mod deployment;
mod expert;
mod install;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{load_yaml, ConfigError, Delivery, CLIENT_KEYS};
use install::placeholders_in;

pub use crate::model::record::EMBEDDED;
pub use deployment::{DeployedProcess, Deployment, Readiness};
pub use expert::ExpertProfile;
pub use install::Install;

/// One product under test, as its product.yaml describes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    pub name: String,
    pub description: String,
    /// The version run by default; `builtin` means the suite's own version,
    /// and for a cargo build it names the source built (`workspace`: the
    /// workspace as it is; the run records the package's version).
    pub version: String,
    pub install: Install,
    /// The start command. Placeholders: `{suite}` (the suite's own executable),
    /// `{dir}` (the product's folder), `{version}` (the version run),
    /// `{install}` (its install folder, pip and maven) and `{bin}` (the binary
    /// found, binary, or built, cargo).
    pub start: Vec<String>,
    pub ready: Readiness,
    /// Workloads this product implements.
    pub workloads: Vec<String>,
    /// The least warm-up, in seconds, before a steady-state window may open
    /// (over bench.yaml's run.warmup_s): a JVM engine's CPU per record keeps
    /// falling for 30 to 40 s at the iso rate while its JIT compiles, and
    /// the look-back alone saw its plateau before the fall as steady.
    #[serde(default)]
    pub min_warmup_s: u64,
    /// Whether the product commits its input offsets to its consumer group.
    /// One that does not (it keeps its position in its own state) is settled
    /// by its output going quiet, and verified against the whole input.
    #[serde(default = "commits_offsets_by_default")]
    pub commits_offsets: bool,
    pub lines: Vec<Line>,
    pub characteristics: Characteristics,
    #[serde(default)]
    pub notes: String,
    /// Keys of bench.yaml's client profile (or `commit_interval_ms`) the
    /// product cannot apply, each with the reason; the page marks its lines
    /// "≠ config" there.
    #[serde(default)]
    pub client_exceptions: BTreeMap<String, String>,
    /// Settings only this product's app reads, handed over as BENCH_SETTINGS (JSON).
    #[serde(default)]
    pub settings: BTreeMap<String, yaml_serde::Value>,
    /// What this product's own experts set for low latency, run with
    /// `--profile expert`.
    #[serde(default)]
    pub expert: Option<ExpertProfile>,
    /// The forms the product runs in besides `embedded` (the `start`
    /// command, one process tree), by name: `cluster` is the engine's own
    /// cluster processes on this host. Chosen with `--deploy`.
    #[serde(default)]
    pub deployments: BTreeMap<String, Deployment>,
    /// The file this was read from.
    #[serde(skip)]
    pub path: PathBuf,
}

/// The key a product excuses in `client_exceptions` when it commits on a
/// cadence of its own rather than at BENCH_COMMIT_INTERVAL_MS.
pub const COMMIT_INTERVAL_KEY: &str = "commit_interval_ms";

fn commits_offsets_by_default() -> bool {
    true
}

/// A delivery line of a product, such as `rustpipe-eos`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub name: String,
    pub delivery: Delivery,
    /// How this line delivers, in words, for the characteristics table.
    pub delivery_detail: String,
    /// What its guarantee holds under, when less than its delivery mode
    /// promises ("exactly-once while a member lives"): shown beside the
    /// line's name wherever the page names it.
    #[serde(default)]
    pub qualifier: Option<String>,
}

/// What the report's characteristics table says of a product.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Characteristics {
    pub processing: String,
    pub engine: String,
    pub scaling: String,
    pub decode: String,
    /// Per workload that keeps state: where the product keeps it (memory,
    /// a store, a changelog, checkpoints) and what a crash leaves of it, so
    /// that lines doing unequal work are seen to.
    #[serde(default)]
    pub state: BTreeMap<String, String>,
}

impl Product {
    /// Reads and checks one product.yaml.
    pub fn from_file(path: &Path) -> Result<Product, ConfigError> {
        let mut product: Product = load_yaml(path)?;
        product.path = path.to_path_buf();
        let invalid = |message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        };
        if product.start.is_empty() {
            return Err(invalid("`start` must name a command".into()));
        }
        if product.lines.is_empty() {
            return Err(invalid("`lines` must list at least one line".into()));
        }
        let allowed = product.install.placeholders();
        for arg in &product.start {
            if let Some(unknown) = placeholders_in(arg).find(|p| !allowed.contains(p)) {
                return Err(invalid(format!(
                    "`start` uses {unknown}, which a `{}` install does not provide (it provides {})",
                    product.install.kind(),
                    allowed.join(", ")
                )));
            }
        }
        if let Install::Pip { packages, .. } = &product.install {
            if packages.is_empty() {
                return Err(invalid(
                    "`install.packages` must list at least one package".into(),
                ));
            }
        }
        if let Install::Cargo { package, .. } = &product.install {
            if package.is_empty() {
                return Err(invalid(
                    "`install.package` must name a Cargo package".into(),
                ));
            }
        }
        if let Some(key) = product
            .client_exceptions
            .keys()
            .find(|k| !CLIENT_KEYS.contains(&k.as_str()) && k.as_str() != COMMIT_INTERVAL_KEY)
        {
            return Err(invalid(format!(
                "`client_exceptions` names `{key}`, which is neither a client profile key ({}) nor {COMMIT_INTERVAL_KEY}",
                CLIENT_KEYS.join(", ")
            )));
        }
        if let Some(workload) = product
            .characteristics
            .state
            .keys()
            .find(|w| !product.workloads.contains(w))
        {
            return Err(invalid(format!(
                "`characteristics.state` describes `{workload}`, which is not one of the product's workloads"
            )));
        }
        if let Some(expert) = &product.expert {
            expert.check(&product.settings).map_err(invalid)?;
        }
        for (name, deployment) in &product.deployments {
            deployment
                .check(name, allowed, product.install.kind())
                .map_err(invalid)?;
        }
        for mode in [Delivery::AtLeastOnce, Delivery::ExactlyOnce] {
            if product.lines.iter().filter(|l| l.delivery == mode).count() > 1 {
                return Err(invalid(format!("more than one {mode} line")));
            }
        }
        Ok(product)
    }

    /// The folder holding product.yaml and the product's app.
    pub fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// The folder cargo builds a cargo install from: `install.workspace`
    /// against the product folder, else the product folder; cargo finds the
    /// workspace from there upward.
    pub fn cargo_source(&self) -> Option<PathBuf> {
        match &self.install {
            Install::Cargo { workspace, .. } => Some(match workspace {
                Some(path) => self.dir().join(path),
                None => self.dir().to_path_buf(),
            }),
            _ => None,
        }
    }

    /// The deployment called `name`: `embedded` (the `start` command, one
    /// process) or one of `deployments`; an error names those offered.
    pub fn deployment(&self, name: &str) -> Result<Deployment, String> {
        if name == EMBEDDED {
            return Ok(Deployment {
                summary: "one process tree".into(),
                processes: vec![DeployedProcess {
                    role: "product".into(),
                    count: 1,
                    start: None,
                    ready: None,
                    consumes: true,
                }],
                ports: Vec::new(),
            });
        }
        self.deployments.get(name).cloned().ok_or_else(|| {
            let offered: Vec<&str> = std::iter::once(EMBEDDED)
                .chain(self.deployments.keys().map(String::as_str))
                .collect();
            format!(
                "{} has no deployment `{name}`; it offers {}",
                self.name,
                offered.join(", ")
            )
        })
    }

    /// The version run by default, with `builtin` resolved to the suite's own.
    pub fn resolved_version(&self) -> String {
        match self.install {
            Install::Builtin if self.version == "builtin" => env!("CARGO_PKG_VERSION").to_string(),
            _ => self.version.clone(),
        }
    }
}

#[cfg(test)]
mod tests;
