//! `products/<name>/product.yaml`: how to install, start and ready a product,
//! its delivery lines and the characteristics the report shows.

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{load_yaml, ConfigError};

/// One product under test, as its product.yaml describes it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Product {
    pub name: String,
    pub description: String,
    /// The version run by default; `builtin` means the suite's own version.
    pub version: String,
    pub install: Install,
    /// The start command; `{suite}` is replaced by the suite's own executable
    /// and `{dir}` by the product's folder.
    pub start: Vec<String>,
    pub ready: Readiness,
    /// Workloads this product implements.
    pub workloads: Vec<String>,
    pub lines: Vec<Line>,
    pub characteristics: Characteristics,
    #[serde(default)]
    pub notes: String,
    /// Settings only this product's app reads, handed over as BENCH_SETTINGS (JSON).
    #[serde(default)]
    pub settings: BTreeMap<String, serde_yaml::Value>,
    /// The file this was read from.
    #[serde(skip)]
    pub path: PathBuf,
}

/// How a product gets onto this machine.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Install {
    /// Part of the suite's own binary: always runnable.
    Builtin,
}

/// How the orchestrator knows a started product is ready for input.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Readiness {
    /// A line on the product's standard output containing this text.
    pub stdout_contains: String,
}

/// A delivery line of a product, such as `rustpipe-eos`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Line {
    pub name: String,
    pub delivery: Delivery,
    /// How this line delivers, in words, for the characteristics table.
    pub delivery_detail: String,
}

/// The delivery guarantee of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Delivery {
    AtLeastOnce,
    ExactlyOnce,
}

impl Delivery {
    /// The `--mode` spelling.
    pub fn short(self) -> &'static str {
        match self {
            Delivery::AtLeastOnce => "alos",
            Delivery::ExactlyOnce => "eos",
        }
    }

    /// The spelling in results and in BENCH_DELIVERY.
    pub fn as_str(self) -> &'static str {
        match self {
            Delivery::AtLeastOnce => "at-least-once",
            Delivery::ExactlyOnce => "exactly-once",
        }
    }

    /// Parses either spelling.
    pub fn parse(text: &str) -> Option<Delivery> {
        match text {
            "alos" | "at-least-once" => Some(Delivery::AtLeastOnce),
            "eos" | "exactly-once" => Some(Delivery::ExactlyOnce),
            _ => None,
        }
    }
}

impl fmt::Display for Delivery {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the report's characteristics table says of a product.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Characteristics {
    pub processing: String,
    pub engine: String,
    pub scaling: String,
    pub decode: String,
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

    /// The version that runs, with `builtin` resolved to the suite's own.
    pub fn resolved_version(&self) -> String {
        match self.install {
            Install::Builtin if self.version == "builtin" => env!("CARGO_PKG_VERSION").to_string(),
            _ => self.version.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse_yaml;
    use super::*;

    const PRODUCT: &str = "name: p\ndescription: d\nversion: builtin\ninstall: {kind: builtin}\n\
        start: [x]\nready: {stdout_contains: ready}\nworkloads: [stateless]\n\
        characteristics: {processing: a, engine: b, scaling: c, decode: d}\n";

    #[test]
    fn two_lines_of_one_delivery_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("product.yaml");
        let lines = "lines:\n  - {name: a, delivery: exactly-once, delivery_detail: x}\n  - {name: b, delivery: exactly-once, delivery_detail: y}\n";
        std::fs::write(&path, format!("{PRODUCT}{lines}")).unwrap();
        let err = Product::from_file(&path).unwrap_err().to_string();
        assert!(err.contains("more than one exactly-once line"), "{err}");
    }

    #[test]
    fn an_unknown_delivery_names_the_line() {
        let lines = "lines:\n  - {name: a, delivery: maybe-once, delivery_detail: x}\n";
        let err = parse_yaml::<Product>(Path::new("p.yaml"), &format!("{PRODUCT}{lines}"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("p.yaml:10:"), "{err}");
        assert!(err.contains("maybe-once"), "{err}");
    }

    #[test]
    fn builtin_version_is_the_suites() {
        let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
        let product: Product =
            parse_yaml(Path::new("p.yaml"), &format!("{PRODUCT}{lines}")).unwrap();
        assert_eq!(product.resolved_version(), env!("CARGO_PKG_VERSION"));
    }
}
