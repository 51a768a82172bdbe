//! Getting a product onto this machine: a virtualenv (pip, with the jars a
//! Python API over a JVM engine loads) or a Maven build per version in
//! `<cache>/products/<name>/<version>/`, a cargo build from source, or a
//! binary the machine already has.
//!
//! An install counts only once its marker file exists; the marker is written
//! last, so an install that failed or was interrupted is redone from scratch.
//! A cargo build of the workspace as it is has no marker: cargo runs at
//! every start and knows itself whether the binary is up to date. A cargo
//! build at a git revision (`--product-version REV`) is one install per commit, with
//! its marker (see [`revision`](super::revision)). The tools' output goes to `install.log`
//! in the install folder, never to the console. A pip install is held to
//! its version's constraints file when it has one (see [`constraints`]);
//! every pip and Maven install records what it holds beside it (`pip
//! freeze`, Maven's dependency tree).

mod cargo_build;
mod constraints;
mod failure;
mod fingerprint;
mod folder_install;
mod install_lock;
mod layout;
mod spinner;
mod steps;

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

use crate::cache::Cache;
use crate::config::{Install, Product};
use crate::interrupt::Interrupt;
use crate::process::{find_on_path, is_executable};
use cargo_build::{build_package, cargo_ready};
use failure::failed_install;
use fingerprint::is_current;
use folder_install::install;
use install_lock::InstallLock;
use layout::LOG;

pub use cargo_build::build_companion;

/// Whether a product can run on this machine, and if not, how to fix that.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    /// Part of the suite, or a binary found on this machine.
    Runnable,
    /// Installed in the cache for the version asked.
    Installed,
    /// Not installed yet; the tools to install it are here, and the first
    /// run installs it.
    Installable,
    /// Built from source by cargo as each run starts, at once when the binary
    /// is up to date.
    Buildable,
    NotInstalled {
        hint: String,
    },
}

/// A product ready to start: the version that runs and where it is.
#[derive(Debug, Clone)]
pub struct Installation {
    pub version: String,
    /// `{install}`: the install folder (pip and maven).
    pub dir: Option<PathBuf>,
    /// `{bin}`: the binary found (binary) or built (cargo).
    pub bin: Option<PathBuf>,
}

/// `version` if given, else the product's default.
fn chosen_version(product: &Product, version: Option<&str>) -> String {
    version.map_or_else(|| product.resolved_version(), str::to_string)
}

/// Whether `product` at `version` (default: its own) can run here, and
/// whether that version is installed yet.
pub fn availability(product: &Product, version: Option<&str>, cache: &Cache) -> Availability {
    let installable = matches!(product.install, Install::Maven { .. } | Install::Pip { .. });
    let version = chosen_version(product, version);
    if installable {
        let dir = cache.product_dir(&product.name, &version);
        if is_current(product, &version, &dir) {
            return Availability::Installed;
        }
        if let Some(reason) = failed_install(product, &version, &dir) {
            return Availability::NotInstalled {
                hint: format!(
                    "installing {version} failed: {reason} (the whole output is in {}); `suite install {}` tries again",
                    dir.join(LOG).display(),
                    product.name
                ),
            };
        }
    }
    capability(product)
}

/// Whether `product` can run on this machine at all, whatever the cache holds:
/// a built-in or a binary found is runnable, an install kind whose tools are
/// here is installable.
pub fn capability(product: &Product) -> Availability {
    match &product.install {
        Install::Builtin => Availability::Runnable,
        Install::Binary { env, command, hint } => match find_binary(env, command, hint) {
            Ok(_) => Availability::Runnable,
            Err(hint) => Availability::NotInstalled { hint },
        },
        Install::Cargo { .. } => match cargo_ready(product) {
            Ok(_) => Availability::Buildable,
            Err(hint) => Availability::NotInstalled { hint },
        },
        Install::Maven { .. } | Install::Pip { .. } => {
            let missing: Vec<&str> = tools_needed(&product.install)
                .iter()
                .copied()
                .filter(|tool| find_on_path(tool).is_none())
                .collect();
            if missing.is_empty() {
                Availability::Installable
            } else {
                Availability::NotInstalled {
                    hint: format!(
                        "installing it needs {} on PATH",
                        missing
                            .iter()
                            .map(|t| format!("`{t}`"))
                            .collect::<Vec<_>>()
                            .join(" and ")
                    ),
                }
            }
        }
    }
}

/// The programs an install kind runs.
fn tools_needed(install: &Install) -> &'static [&'static str] {
    match install {
        Install::Maven { .. } => &["mvn", "java"],
        Install::Pip { jars: Some(_), .. } => &["python3", "mvn", "java"],
        Install::Pip { .. } => &["python3"],
        Install::Builtin | Install::Cargo { .. } | Install::Binary { .. } => &[],
    }
}

/// Makes `product` at `version` (default: its own) ready to start, installing
/// it first if needed. A binary that is missing is an error carrying its hint.
pub fn ensure_installed(
    product: &Product,
    version: Option<&str>,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<Installation> {
    let name = &product.name;
    match &product.install {
        Install::Builtin if version.is_some() => bail!(
            "{name} is part of the suite and runs its version ({}); --product-version applies to pip, maven and cargo installs",
            product.resolved_version()
        ),
        Install::Binary { .. } if version.is_some() => bail!(
            "{name} runs the binary this machine has; --product-version applies to pip, maven and cargo installs"
        ),
        Install::Builtin => Ok(Installation {
            version: product.resolved_version(),
            dir: None,
            bin: None,
        }),
        Install::Binary { env, command, hint } => match find_binary(env, command, hint) {
            Ok(bin) => Ok(Installation {
                version: product.resolved_version(),
                dir: None,
                bin: Some(bin),
            }),
            Err(hint) => bail!("{name} is not installed here: {hint}"),
        },
        Install::Cargo { package, .. } => {
            let built = build_package(product, package, version, cache, interrupt)?;
            Ok(Installation {
                version: built.version,
                dir: None,
                bin: Some(built.bin),
            })
        }
        Install::Maven { .. } | Install::Pip { .. } => {
            let version = chosen_version(product, version);
            let dir = cache.product_dir(name, &version);
            if !is_current(product, &version, &dir) {
                let _lock = InstallLock::acquire(&dir, interrupt)?;
                // Another suite may have installed it while we waited.
                if !is_current(product, &version, &dir) {
                    install(product, &version, &dir, interrupt)?;
                }
            }
            Ok(Installation {
                version,
                dir: Some(dir),
                bin: None,
            })
        }
    }
}

/// `$env` if it is set, else `command` on PATH; when neither gives an
/// executable, the hint to show, saying what was wrong with `$env`.
fn find_binary(env: &str, command: &str, hint: &str) -> Result<PathBuf, String> {
    match std::env::var_os(env).filter(|v| !v.is_empty()) {
        Some(path) if is_executable(Path::new(&path)) => Ok(PathBuf::from(path)),
        Some(path) => Err(format!(
            "{env}={} is not an executable file; {hint}",
            Path::new(&path).display()
        )),
        None => find_on_path(command).ok_or_else(|| hint.to_string()),
    }
}

#[cfg(test)]
mod tests;
