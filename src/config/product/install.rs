//! How a product gets onto this machine (product.yaml's `install:`), and
//! the placeholders each kind of install gives a start command.

use std::path::PathBuf;

use serde::Deserialize;

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
    pub(super) fn placeholders(&self) -> &'static [&'static str] {
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

/// The `{name}` placeholders in a start argument.
pub(super) fn placeholders_in(arg: &str) -> impl Iterator<Item = &str> {
    arg.match_indices('{').filter_map(move |(at, _)| {
        let end = arg[at..].find('}')?;
        let candidate = &arg[at..=at + end];
        candidate[1..candidate.len() - 1]
            .chars()
            .all(|c| c.is_ascii_lowercase())
            .then_some(candidate)
    })
}
