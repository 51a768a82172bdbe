//! `products/<name>/product.yaml`: how to install, start and ready a product,
//! its delivery lines and the characteristics the report shows.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{load_yaml, ConfigError, Delivery, CLIENT_KEYS};

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

/// A product's `expert:` section: the client profile keys and the keys of
/// its own `settings` that its experts set otherwise for low latency, each
/// with the documentation that recommends it. Only keys the uniform
/// profile has can change, so the two views differ exactly by these; a
/// product whose experts' documentation asks for nothing else says why.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExpertProfile {
    #[serde(default)]
    pub client: BTreeMap<String, yaml_serde::Value>,
    #[serde(default)]
    pub settings: BTreeMap<String, yaml_serde::Value>,
    /// For each key changed above, where its engine's documentation says so.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
    /// Why the experts' settings are the uniform profile's, when they are.
    #[serde(default)]
    pub unchanged: Option<String>,
}

pub use crate::model::record::EMBEDDED;

/// A form the product runs in: processes started in order, each ready
/// before the next starts, and stopped in the reverse order.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Deployment {
    /// What runs, in words, for the characteristics table.
    pub summary: String,
    pub processes: Vec<DeployedProcess>,
    /// Loopback ports the processes share, by name: the suite picks free
    /// ones for each run and hands each as BENCH_PORT_<NAME> to every
    /// process, so two deployments never collide.
    #[serde(default)]
    pub ports: Vec<String>,
}

/// One role of a deployment (a JobManager, a TaskManager, an instance),
/// started `count` times. Each process gets BENCH_MEMBER_ROLE,
/// BENCH_MEMBER_INDEX (0, 1, ... within its role) and BENCH_MEMBER_COUNT,
/// BENCH_COUNT_<ROLE> for every role of the deployment, BENCH_LOG_DIR (the
/// run's log folder), and its own static member id and transactional id.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeployedProcess {
    pub role: String,
    #[serde(default = "one")]
    pub count: u32,
    /// The command; the product's `start` when absent. Placeholders as in
    /// `start`.
    #[serde(default)]
    pub start: Option<Vec<String>>,
    /// The product's `ready` when absent.
    #[serde(default)]
    pub ready: Option<Readiness>,
    /// Whether each process reads the input (an instance of the product's
    /// consumer group, a member running the job's sources): then the input
    /// needs a partition for each, as one more would wait idle for a share.
    #[serde(default)]
    pub consumes: bool,
}

fn one() -> u32 {
    1
}

/// Whether `name` may be part of an environment variable's name (a role
/// in BENCH_COUNT_<ROLE>, a port in BENCH_PORT_<NAME>).
fn is_variable_part(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The key a product excuses in `client_exceptions` when it commits on a
/// cadence of its own rather than at BENCH_COMMIT_INTERVAL_MS.
pub const COMMIT_INTERVAL_KEY: &str = "commit_interval_ms";

fn commits_offsets_by_default() -> bool {
    true
}

/// How a product gets onto this machine.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Install {
    /// Part of the suite's own binary: always runnable.
    Builtin,
    /// Built from the product folder's pom.xml with Maven, per version, into
    /// `{install}/build`; the version is passed as `-D<version_property>`.
    Maven { version_property: String },
    /// Installed with pip into a virtualenv per version, `{install}/venv`;
    /// `{version}` in a package is the version being installed. With `jars`,
    /// the product folder's pom.xml also lists jars the app loads (a JVM
    /// engine's connectors): Maven copies them and their runtime dependencies
    /// into `{install}/jars`, the version passed as `-D<jars>`.
    Pip {
        packages: Vec<String>,
        #[serde(default)]
        jars: Option<String>,
    },
    /// Built from source with `cargo build --release --workspace --bin
    /// <package>` in the Cargo workspace holding `workspace` (relative to the
    /// product folder, default: the product folder itself), each time a run
    /// needs it; cargo makes that a no-op when the binary is up to date. `{bin}` is the
    /// package's binary of the same name.
    Cargo {
        package: String,
        #[serde(default)]
        workspace: Option<PathBuf>,
    },
    /// A program this machine may already have: `$<env>` if it names an
    /// executable, else `command` on PATH. The suite never installs it.
    Binary {
        env: String,
        command: String,
        /// How to get the program, shown wherever it is missing.
        hint: String,
    },
}

impl Install {
    /// The kind's name, as product.yaml spells it.
    pub fn kind(&self) -> &'static str {
        match self {
            Install::Builtin => "builtin",
            Install::Maven { .. } => "maven",
            Install::Pip { .. } => "pip",
            Install::Cargo { .. } => "cargo",
            Install::Binary { .. } => "binary",
        }
    }

    /// Placeholders a start command may use with this kind of install.
    fn placeholders(&self) -> &'static [&'static str] {
        match self {
            Install::Builtin => &["{suite}", "{dir}", "{version}"],
            Install::Maven { .. } | Install::Pip { .. } => {
                &["{suite}", "{dir}", "{version}", "{install}"]
            }
            Install::Cargo { .. } | Install::Binary { .. } => {
                &["{suite}", "{dir}", "{version}", "{bin}"]
            }
        }
    }
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

impl Deployment {
    /// Roles named and distinct, counts at least 1, every start command's
    /// placeholders provided by the install, port names usable in a
    /// variable's name.
    fn check(&self, name: &str, allowed: &[&str], install: &str) -> Result<(), String> {
        let at = format!("`deployments.{name}`");
        if name == EMBEDDED {
            return Err(format!(
                "{at}: `{EMBEDDED}` is the product's own `start`; name the deployment otherwise"
            ));
        }
        if self.processes.is_empty() {
            return Err(format!("{at} must list at least one process"));
        }
        let mut roles = std::collections::BTreeSet::new();
        for process in &self.processes {
            if !is_variable_part(&process.role) || !roles.insert(process.role.as_str()) {
                return Err(format!(
                    "{at}: every process needs a role of its own, in letters, digits and _ \
                     (`{}` is empty, repeated or has other characters)",
                    process.role
                ));
            }
            if process.count == 0 {
                return Err(format!("{at}: role `{}` has count 0", process.role));
            }
            for arg in process.start.iter().flatten() {
                if let Some(unknown) = placeholders_in(arg).find(|p| !allowed.contains(p)) {
                    return Err(format!(
                        "{at}: role `{}` uses {unknown}, which a `{install}` install does not provide",
                        process.role
                    ));
                }
            }
            if process.start.as_ref().is_some_and(|s| s.is_empty()) {
                return Err(format!(
                    "{at}: role `{}` has an empty `start`",
                    process.role
                ));
            }
        }
        if let Some(port) = self.ports.iter().find(|p| !is_variable_part(p)) {
            return Err(format!(
                "{at}: port name `{port}` must be letters, digits and _ (it becomes BENCH_PORT_<NAME>)"
            ));
        }
        Ok(())
    }

    /// How many processes read the input.
    pub fn consumers(&self) -> u32 {
        self.processes
            .iter()
            .filter(|p| p.consumes)
            .map(|p| p.count)
            .sum()
    }
}

impl ExpertProfile {
    /// Every key is the uniform profile's (a client key, or one of the
    /// product's `settings`), and every key changed names its source; or
    /// nothing changes, for the reason `unchanged` gives.
    pub(super) fn check(
        &self,
        settings: &BTreeMap<String, yaml_serde::Value>,
    ) -> Result<(), String> {
        if let Some(why) = &self.unchanged {
            if why.trim().is_empty() {
                return Err(
                    "`expert.unchanged` is empty: say why the experts set nothing else".into(),
                );
            }
            if !self.client.is_empty() || !self.settings.is_empty() || !self.sources.is_empty() {
                return Err(
                    "`expert.unchanged` says the experts set nothing else, yet `client`, `settings` \
                     or `sources` has keys"
                        .into(),
                );
            }
            return Ok(());
        }
        if let Some(key) = self
            .client
            .keys()
            .find(|k| !CLIENT_KEYS.contains(&k.as_str()))
        {
            return Err(format!(
                "`expert.client` names `{key}`, which is not a client profile key ({})",
                CLIENT_KEYS.join(", ")
            ));
        }
        if let Some(key) = self.settings.keys().find(|k| !settings.contains_key(*k)) {
            return Err(format!(
                "`expert.settings` names `{key}`, which is not one of this product's `settings` \
                 (an expert changes a setting the uniform profile has)"
            ));
        }
        let changed: Vec<&String> = self.client.keys().chain(self.settings.keys()).collect();
        if changed.is_empty() {
            return Err(
                "`expert` changes nothing; give `client` or `settings` keys, or `unchanged` with the reason"
                    .into(),
            );
        }
        if let Some(key) = changed
            .iter()
            .find(|k| !self.sources.contains_key(k.as_str()))
        {
            return Err(format!(
                "`expert.sources` gives no source for `{key}`: cite the documentation that recommends it"
            ));
        }
        if let Some(key) = self.sources.keys().find(|k| !changed.contains(k)) {
            return Err(format!(
                "`expert.sources` cites `{key}`, which the expert profile does not change"
            ));
        }
        Ok(())
    }

    /// The profile as bench.yaml settings (`client.KEY=VALUE`), checked
    /// and typed the way `--set` is.
    pub fn client_settings(&self) -> Vec<super::Setting> {
        self.client
            .iter()
            .map(|(key, value)| super::Setting {
                key: format!("client.{key}"),
                value: yaml_text(value),
            })
            .collect()
    }

    /// The product settings it changes, as `product.KEY=VALUE` gives them.
    pub fn settings_changes(&self) -> Vec<(String, String)> {
        self.settings
            .iter()
            .map(|(key, value)| (key.clone(), yaml_text(value)))
            .collect()
    }
}

/// A YAML scalar as `--set` would take it.
fn yaml_text(value: &yaml_serde::Value) -> String {
    match value {
        yaml_serde::Value::String(text) => text.clone(),
        other => yaml_serde::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

/// The `{name}` placeholders in a start argument.
fn placeholders_in(arg: &str) -> impl Iterator<Item = &str> {
    arg.match_indices('{').filter_map(move |(at, _)| {
        let end = arg[at..].find('}')?;
        let candidate = &arg[at..=at + end];
        candidate[1..candidate.len() - 1]
            .chars()
            .all(|c| c.is_ascii_lowercase())
            .then_some(candidate)
    })
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

    fn write_product(install: &str, start: &str) -> Result<Product, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("product.yaml");
        let text = PRODUCT
            .replace("install: {kind: builtin}", install)
            .replace("start: [x]", start);
        let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
        std::fs::write(&path, format!("{text}{lines}")).unwrap();
        Product::from_file(&path)
    }

    #[test]
    fn each_install_kind_parses() {
        let pip = write_product(
            "install: {kind: pip, packages: [\"q=={version}\"]}",
            "start: [\"{install}/venv/bin/python\", \"{dir}/app.py\"]",
        )
        .unwrap();
        assert!(
            matches!(pip.install, Install::Pip { ref packages, .. } if packages[0] == "q=={version}")
        );
        let maven = write_product(
            "install: {kind: maven, version_property: flink.version}",
            "start: [java, -jar, \"{install}/build/app.jar\"]",
        )
        .unwrap();
        assert_eq!(maven.install.kind(), "maven");
        let cargo = write_product(
            "install: {kind: cargo, package: pipe, workspace: ../..}",
            "start: [\"{bin}\"]",
        )
        .unwrap();
        assert!(matches!(cargo.install, Install::Cargo { ref package, .. } if package == "pipe"));
        assert_eq!(cargo.cargo_source().unwrap(), cargo.dir().join("../.."));
        let binary = write_product(
            "install: {kind: binary, env: X_BIN, command: x, hint: get x}",
            "start: [sh, \"{dir}/run.sh\", \"{bin}\"]",
        )
        .unwrap();
        assert_eq!(binary.install.kind(), "binary");
    }

    #[test]
    fn a_placeholder_the_install_lacks_is_refused() {
        let err = write_product("install: {kind: builtin}", "start: [\"{install}/x\"]")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("{install}") && err.contains("builtin"),
            "{err}"
        );
        let err = write_product(
            "install: {kind: pip, packages: [q]}",
            "start: [\"{bin}\", \"{dir}\"]",
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("{bin}"), "{err}");
        // JSON braces in an argument are not placeholders.
        write_product("install: {kind: builtin}", "start: [echo, '{\"a\": 1}']").unwrap();
    }

    #[test]
    fn builtin_version_is_the_suites() {
        let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
        let product: Product =
            parse_yaml(Path::new("p.yaml"), &format!("{PRODUCT}{lines}")).unwrap();
        assert_eq!(product.resolved_version(), env!("CARGO_PKG_VERSION"));
    }

    fn with_deployments(deployments: &str) -> Result<Product, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("product.yaml");
        let lines = "lines:\n  - {name: a, delivery: at-least-once, delivery_detail: x}\n";
        std::fs::write(
            &path,
            format!("{PRODUCT}{lines}deployments:\n{deployments}"),
        )
        .unwrap();
        Product::from_file(&path)
    }

    #[test]
    fn a_deployment_parses_with_its_roles_and_defaults() {
        let product = with_deployments(
            "  cluster:\n    summary: two members and a job\n    ports: [rest]\n    processes:\n      \
             - {role: member, count: 2, start: [m, \"{dir}\"], ready: {stdout_contains: up}}\n      \
             - {role: job, consumes: true}\n",
        )
        .unwrap();
        let cluster = product.deployment("cluster").unwrap();
        assert_eq!(cluster.processes.iter().map(|p| p.count).sum::<u32>(), 3);
        assert_eq!(cluster.consumers(), 1);
        assert_eq!(cluster.ports, ["rest"]);
        assert_eq!(
            cluster.processes[0].ready.as_ref().unwrap().stdout_contains,
            "up"
        );
        assert!(cluster.processes[1].start.is_none());
        let embedded = product.deployment(EMBEDDED).unwrap();
        assert_eq!(embedded.consumers(), 1);
        let err = product.deployment("swarm").unwrap_err();
        assert_eq!(
            err,
            "p has no deployment `swarm`; it offers embedded, cluster"
        );
    }

    #[test]
    fn a_bad_deployment_is_refused_with_its_name() {
        let cases = [
            (
                "  embedded: {summary: s, processes: [{role: a}]}\n",
                "is the product's own `start`",
            ),
            (
                "  cluster: {summary: s, processes: []}\n",
                "must list at least one process",
            ),
            (
                "  cluster: {summary: s, processes: [{role: a}, {role: a}]}\n",
                "role of its own",
            ),
            (
                "  cluster: {summary: s, processes: [{role: task-manager}]}\n",
                "(`task-manager` is",
            ),
            (
                "  cluster: {summary: s, processes: [{role: a, count: 0}]}\n",
                "role `a` has count 0",
            ),
            (
                "  cluster: {summary: s, processes: [{role: a, start: [\"{install}\"]}]}\n",
                "uses {install}",
            ),
            (
                "  cluster: {summary: s, processes: [{role: a, start: []}]}\n",
                "empty `start`",
            ),
            (
                "  cluster: {summary: s, ports: [re-st], processes: [{role: a}]}\n",
                "port name `re-st`",
            ),
        ];
        for (yaml, expected) in cases {
            let err = with_deployments(yaml).unwrap_err().to_string();
            assert!(err.contains("`deployments."), "{err}");
            assert!(err.contains(expected), "{yaml}: {err}");
        }
        let err = with_deployments("  cluster: {summary: s, processes: [{role: a, size: 2}]}\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("product.yaml:") && err.contains("size"),
            "{err}"
        );
    }
}
