//! Configuration: `bench.yaml`, `workloads/*.yaml` and `products/*/product.yaml`,
//! each parsed once into typed structs.
//!
//! Every file is read with unknown fields denied, and every error names the
//! file and, where the YAML parser knows it, the line.

mod bench;
mod chaos;
mod product;
mod setting;
mod workload;

pub use crate::model::broker::{BrokerShape, Replicas};
pub use crate::model::client::{Acks, ClientProfile, Compression, CLIENT_KEYS, TRANSACTION_KEYS};
pub use crate::model::settings::{
    CommitIntervals, Delivery, EtlConfig, EtlDecoder, InsertFormat, Profile,
};
pub use bench::{Bench, BrokerConfig, RunDefaults, SinkConfig, Tolerances, MIN_WINDOW_SAMPLES};
pub use chaos::{ChaosPlan, Spacing};
pub use product::{
    DeployedProcess, Deployment, ExpertProfile, Install, Line, Product, Readiness,
    COMMIT_INTERVAL_KEY, EMBEDDED,
};
pub use setting::{LineBench, LineSpec, Setting};
pub use workload::{Encoding, Workload};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

/// A configuration file that could not be read or understood.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// A value that parses but is out of range, at the line that sets it.
    #[error("{path}:{line}: {message}")]
    Value {
        path: PathBuf,
        line: usize,
        message: String,
    },
    /// A `--set` that names no setting or gives it a value it cannot take.
    #[error("--set {setting}: {message}")]
    Setting { setting: String, message: String },
    #[error("unknown {kind} `{name}`; known: {known}")]
    Unknown {
        kind: &'static str,
        name: String,
        known: String,
    },
}

impl ConfigError {
    /// A value of `path` that parses but does not hold, at the line of `key`
    /// (the first line when the key is not found).
    pub fn at_key(path: &Path, key: &str, message: String) -> ConfigError {
        let line = read_text(path)
            .ok()
            .and_then(|text| key_line(&text, key))
            .unwrap_or(1);
        ConfigError::Value {
            path: path.to_path_buf(),
            line,
            message,
        }
    }
}

/// Reads and parses one YAML file into `T`, naming the file and line on error.
pub(crate) fn load_yaml<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    parse_yaml(path, &read_text(path)?)
}

pub(crate) fn read_text(path: &Path) -> Result<String, ConfigError> {
    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The 1-based line of the first `key:` in `text` outside comments, for
/// errors about a value that parsed but is out of range.
pub(crate) fn key_line(text: &str, key: &str) -> Option<usize> {
    let sets_key = |line: &str| {
        let code = line.split('#').next().unwrap_or_default();
        code.match_indices(key).any(|(at, _)| {
            let before = code[..at].chars().next_back();
            let whole_word = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
            whole_word && code[at + key.len()..].trim_start().starts_with(':')
        })
    };
    text.lines().position(sets_key).map(|i| i + 1)
}

fn parse_yaml<T: DeserializeOwned>(path: &Path, text: &str) -> Result<T, ConfigError> {
    yaml_serde::from_str(text).map_err(|err| {
        let line = err.location().map(|l| l.line()).unwrap_or(0);
        // yaml_serde appends " at line L column C"; the prefix already says where.
        let message = err.to_string();
        let message = match message.find(" at line ") {
            Some(cut) => message[..cut].to_string(),
            None => message,
        };
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            message,
        }
    })
}

/// Everything the suite knows from its configuration folder.
#[derive(Debug)]
pub struct Suite {
    /// The folder holding bench.yaml, products/ and workloads/.
    pub root: PathBuf,
    pub bench: Bench,
    pub products: BTreeMap<String, Product>,
    pub workloads: BTreeMap<String, Workload>,
}

/// A product line resolved from a name given on the command line.
#[derive(Debug, Clone, Copy)]
pub struct LineRef<'a> {
    pub product: &'a Product,
    pub line: &'a Line,
}

impl Suite {
    /// Loads `bench.yaml` at `bench_path` and the products and workloads beside it.
    pub fn load(bench_path: &Path) -> Result<Suite, ConfigError> {
        let bench = Bench::from_file(bench_path)?;
        let root = bench_path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let mut products = BTreeMap::new();
        for path in yaml_files(&root.join("products"), "product.yaml")? {
            let product = Product::from_file(&path)?;
            products.insert(product.name.clone(), product);
        }
        let mut workloads = BTreeMap::new();
        for path in yaml_files(&root.join("workloads"), "")? {
            let workload = Workload::from_file(&path)?;
            workloads.insert(workload.name.clone(), workload);
        }
        let suite = Suite {
            root,
            bench,
            products,
            workloads,
        };
        suite.check_line_names()?;
        suite.check_product_workloads()?;
        Ok(suite)
    }

    /// A product may only claim workloads that exist.
    fn check_product_workloads(&self) -> Result<(), ConfigError> {
        for product in self.products.values() {
            if let Some(unknown) = product
                .workloads
                .iter()
                .find(|w| !self.workloads.contains_key(*w))
            {
                let line = read_text(&product.path)
                    .ok()
                    .and_then(|text| key_line(&text, "workloads"))
                    .unwrap_or(1);
                return Err(ConfigError::Value {
                    path: product.path.clone(),
                    line,
                    message: format!(
                        "workload `{unknown}` is not in workloads/ (known: {})",
                        self.workloads
                            .keys()
                            .cloned()
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
        }
        Ok(())
    }

    fn check_line_names(&self) -> Result<(), ConfigError> {
        let mut owner: BTreeMap<&str, &Product> = BTreeMap::new();
        for product in self.products.values() {
            for line in &product.lines {
                if let Some(other) = owner.insert(&line.name, product) {
                    return Err(ConfigError::Invalid {
                        path: product.path.clone(),
                        message: format!(
                            "line `{}` is also defined by {}",
                            line.name,
                            other.path.display()
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// Every line of every product, in name order.
    pub fn lines(&self) -> impl Iterator<Item = LineRef<'_>> {
        self.products.values().flat_map(|product| {
            product
                .lines
                .iter()
                .map(move |line| LineRef { product, line })
        })
    }

    /// Resolves `name` (a line such as `rustpipe-eos`, or a product name) and an
    /// optional delivery mode into one line.
    pub fn line(&self, name: &str, mode: Option<Delivery>) -> Result<LineRef<'_>, ConfigError> {
        let by_line = self.lines().find(|l| l.line.name == name);
        let found = match (by_line, mode) {
            (Some(l), None) => Some(l),
            (Some(l), Some(mode)) => self
                .lines()
                .find(|o| std::ptr::eq(o.product, l.product) && o.line.delivery == mode),
            (None, mode) => self.products.get(name).and_then(|product| {
                let mode = mode.unwrap_or(Delivery::AtLeastOnce);
                product
                    .lines
                    .iter()
                    .find(|line| line.delivery == mode)
                    .map(|line| LineRef { product, line })
            }),
        };
        found.ok_or_else(|| ConfigError::Unknown {
            kind: "product line",
            name: match mode {
                Some(mode) => format!("{name} --mode {}", mode.short()),
                None => name.to_string(),
            },
            known: self
                .lines()
                .map(|l| l.line.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        })
    }

    /// The workload called `name`.
    pub fn workload(&self, name: &str) -> Result<&Workload, ConfigError> {
        self.workloads
            .get(name)
            .ok_or_else(|| ConfigError::Unknown {
                kind: "workload",
                name: name.to_string(),
                known: self
                    .workloads
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

/// The YAML files of `dir`: `*/NAME` when `name` is given, else `*.yaml`.
fn yaml_files(dir: &Path, name: &str) -> Result<Vec<PathBuf>, ConfigError> {
    let entries = std::fs::read_dir(dir).map_err(|source| ConfigError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter_map(|p| {
            if name.is_empty() {
                (p.extension().is_some_and(|x| x == "yaml")).then_some(p)
            } else {
                let file = p.join(name);
                file.is_file().then_some(file)
            }
        })
        .collect();
    paths.sort();
    Ok(paths)
}

/// A copy of the repository's bench.yaml, workloads and rustpipe's
/// product.yaml, with `edit` applied to the folder, loaded; the folder lives
/// as long as the returned guard.
#[cfg(test)]
pub(crate) fn edited_suite(
    edit: impl FnOnce(&Path),
) -> Result<(Suite, tempfile::TempDir), ConfigError> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(repo.join("bench.yaml"), dir.path().join("bench.yaml")).unwrap();
    std::fs::create_dir_all(dir.path().join("workloads")).unwrap();
    for name in ["stateless", "passthrough", "windowed-lowcard", "avro-etl"] {
        let file = format!("workloads/{name}.yaml");
        std::fs::copy(repo.join(&file), dir.path().join(&file)).unwrap();
    }
    std::fs::create_dir_all(dir.path().join("products/rustpipe")).unwrap();
    std::fs::copy(
        repo.join("products/rustpipe/product.yaml"),
        dir.path().join("products/rustpipe/product.yaml"),
    )
    .unwrap();
    edit(dir.path());
    Ok((Suite::load(&dir.path().join("bench.yaml"))?, dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo_suite() -> Suite {
        Suite::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("bench.yaml")).unwrap()
    }

    #[test]
    fn the_repository_configuration_loads() {
        let suite = repo_suite();
        assert!(suite.workloads.contains_key("stateless"));
        let line = suite.line("rustpipe-eos", None).unwrap();
        assert_eq!(line.line.delivery, Delivery::ExactlyOnce);
        assert_eq!(line.product.name, "rustpipe");
    }

    #[test]
    fn a_product_name_and_mode_pick_a_line() {
        let suite = repo_suite();
        let alos = suite.line("rustpipe", None).unwrap();
        assert_eq!(alos.line.name, "rustpipe");
        let eos = suite.line("rustpipe", Some(Delivery::ExactlyOnce)).unwrap();
        assert_eq!(eos.line.name, "rustpipe-eos");
        let back = suite
            .line("rustpipe-eos", Some(Delivery::AtLeastOnce))
            .unwrap();
        assert_eq!(back.line.name, "rustpipe");
    }

    #[test]
    fn a_product_claims_only_known_workloads() {
        assert!(edited_suite(|_| {}).is_ok());
        let product = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("products/rustpipe/product.yaml"),
        )
        .unwrap();
        let line = product
            .lines()
            .position(|l| l.starts_with("workloads:"))
            .unwrap()
            + 1;
        let err = edited_suite(|dir| {
            let text = product.replacen("workloads: [", "workloads: [sessions, ", 1);
            std::fs::write(dir.join("products/rustpipe/product.yaml"), text).unwrap();
        })
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(&format!(
                "rustpipe/product.yaml:{line}: workload `sessions` is not in workloads/"
            )),
            "{err}"
        );
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let suite = repo_suite();
        let err = suite.line("nosuch", None).unwrap_err().to_string();
        assert!(err.contains("unknown product line `nosuch`"), "{err}");
        assert!(err.contains("rustpipe-eos"), "{err}");
        let err = suite.workload("nosuch").unwrap_err().to_string();
        assert!(err.contains("stateless"), "{err}");
    }

    #[test]
    fn a_key_is_found_by_its_whole_name_outside_comments() {
        let text = "# window_s: 9\nrun:\n  max_window_s: 1\n  window_s : 2\n";
        assert_eq!(key_line(text, "window_s"), Some(4));
        assert_eq!(
            key_line("run: {rate: 1, window_s: 2}\n", "window_s"),
            Some(1)
        );
        assert_eq!(key_line("run: {}\n", "window_s"), None);
    }

    #[test]
    fn a_syntax_error_names_file_and_line() {
        let err = parse_yaml::<Bench>(Path::new("x/bench.yaml"), "bench_version: 1\nbroker: [\n")
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("x/bench.yaml:"), "{err}");
        assert!(!err.contains(" at line "), "{err}");
    }
}
