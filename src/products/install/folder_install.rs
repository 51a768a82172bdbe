//! A pip or Maven install into its folder of the cache: the folder made
//! afresh, each step run with its output in the log, and the marker
//! written last; a failed step leaves its reason instead.

use std::fs::{self, File};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{bail, Context, Result};

use super::constraints::{constraints_file, constraints_path};
use super::failure::failure_reason;
use super::fingerprint::fingerprint;
use super::layout::{FAILED, LOG, MARKER};
use super::spinner::Spinner;
use super::steps::{maven_jars, maven_steps, pip_install, Step};
use crate::config::{Install, Product};
use crate::interrupt::Interrupt;
use crate::process;

/// Installs from scratch into `dir`, then writes the marker.
pub(super) fn install(
    product: &Product,
    version: &str,
    dir: &Path,
    interrupt: &Interrupt,
) -> Result<()> {
    let name = &product.name;
    let (steps, constraints) = install_steps(product, version, dir)?;
    let kind = match &constraints {
        Some(file) => format!("{} -c {}", product.install.kind(), file.display()),
        None => product.install.kind().to_string(),
    };
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let log = dir.join(LOG);
    let _spinner = Spinner::start(&format!(
        "installing {name} {version} ({kind}) into {} ...",
        dir.display()
    ));
    for mut step in steps {
        let program = Path::new(step.command.get_program())
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let out = File::options().create(true).append(true).open(&log)?;
        let stdout = match &step.stdout {
            Some(record) => {
                File::create(record).with_context(|| format!("creating {}", record.display()))?
            }
            None => out.try_clone()?,
        };
        step.command.stdin(Stdio::null()).stdout(stdout).stderr(out);
        let cannot_start = format!("installing {name} {version}: could not run `{program}`");
        let status = process::run_tool(&mut step.command, interrupt, &cannot_start);
        match status {
            Ok(status) if status.success() => {}
            Ok(status) => {
                let reason = failure_reason(&fs::read_to_string(&log).unwrap_or_default());
                fs::write(
                    dir.join(FAILED),
                    format!("{}\n{reason}\n", fingerprint(product, version)),
                )?;
                bail!(
                    "installing {name} {version} ({kind}) failed: `{program}` {status}: {reason}; its output is in {}",
                    log.display()
                )
            }
            Err(err) => return Err(err),
        }
    }
    fs::write(dir.join(MARKER), fingerprint(product, version))?;
    Ok(())
}

/// The commands that install `product` at `version` into `dir`, and the
/// constraints file a pip install is held to, if its version has one.
pub(super) fn install_steps(
    product: &Product,
    version: &str,
    dir: &Path,
) -> Result<(Vec<Step>, Option<PathBuf>)> {
    Ok(match &product.install {
        Install::Maven { version_property } => {
            (maven_steps(product, version_property, version, dir), None)
        }
        Install::Pip { packages, jars } => {
            let constraints = pip_constraints(product, version)?;
            let mut steps = pip_install(packages, version, constraints.as_deref(), dir);
            if let Some(property) = jars {
                steps.extend(maven_jars(product.dir(), property, version, dir));
            }
            (steps, constraints)
        }
        Install::Builtin | Install::Cargo { .. } | Install::Binary { .. } => (Vec::new(), None),
    })
}

/// The constraints file a pip install of `product` at `version` is held to,
/// if that version has one; without one, the install goes on unpinned and
/// one line says so.
fn pip_constraints(product: &Product, version: &str) -> Result<Option<PathBuf>> {
    let name = &product.name;
    let file = constraints_file(product, version)
        .with_context(|| format!("installing {name} {version}"))?;
    if file.is_none() {
        eprintln!(
            "{name} {version}: no constraints file {}, so its dependencies are not pinned (docs/add-a-product.md, Pin a pip install)",
            constraints_path(product, version).display()
        );
    }
    Ok(file)
}
