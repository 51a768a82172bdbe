//! Cargo builds from source: the workspace as it is, at every start (cargo
//! knows whether the binary is up to date), or a git revision once per
//! commit in a folder of its own; and a companion binary of the same
//! package.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{anyhow, bail, Context, Result};

use super::install_lock::InstallLock;
use super::layout::{CARGO_MESSAGES, LOG, MARKER};
use super::spinner::Spinner;
use crate::cache::Cache;
use crate::config::{Install, Product};
use crate::interrupt::Interrupt;
use crate::process::{self, is_executable};
use crate::products::{cargo, revision};

/// The cargo to run and the folder to build in, or what is missing.
pub(super) fn cargo_ready(product: &Product) -> Result<(PathBuf, PathBuf), String> {
    let given = product.cargo_source().unwrap_or_default();
    // Resolved, for cargo's upward search and for the messages that name it.
    let Ok(source) = fs::canonicalize(&given) else {
        return Err(format!(
            "its source folder {} does not exist; set `install.workspace` in {}",
            given.display(),
            product.path.display()
        ));
    };
    let Some(cargo) = cargo::program() else {
        return Err("building it needs `cargo` on PATH (rustup.rs)".into());
    };
    if cargo::manifest_above(&source).is_none() {
        return Err(format!(
            "no Cargo workspace at or above {}; set `install.workspace` in {}",
            source.display(),
            product.path.display()
        ));
    }
    Ok((cargo, source))
}

/// Builds `package` of cargo-built `product`: the workspace as it is, or
/// its git revision `rev`.
pub(super) fn build_package(
    product: &Product,
    package: &str,
    rev: Option<&str>,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<cargo::Built> {
    let name = &product.name;
    match (cargo_ready(product), rev) {
        (Ok((cargo, source)), None) => {
            build_with_cargo(product, package, &cargo, &source, cache, interrupt)
        }
        (Ok((cargo, source)), Some(rev)) => {
            build_revision(product, package, &cargo, &source, rev, cache, interrupt)
        }
        (Err(hint), _) => bail!("{name} cannot be built here: {hint}"),
    }
}

/// Builds `package` with cargo in `source` (a no-op when it is up to date)
/// and finds its binary. Builds from one cache take turns: cargo would make
/// builds into one target directory wait anyway, and two at once would share
/// the machine's cores and the log.
fn build_with_cargo(
    product: &Product,
    package: &str,
    cargo: &Path,
    source: &Path,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<cargo::Built> {
    let name = &product.name;
    let dir = cache.product_dir(name, &product.resolved_version());
    let _lock = InstallLock::acquire(&dir, interrupt)?;
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let step = cargo::build_command(cargo, source, package);
    let message = format!("building {name} with cargo in {} ...", source.display());
    let built = run_cargo(name, step, cargo, &dir, package, &message, interrupt)?;
    let workspace = workspace_of(source);
    let version = revision::working_tree_version(&workspace, &built.bin, &built.version)
        .with_context(|| format!("{name}: naming the version of the build"))?;
    Ok(cargo::Built { version, ..built })
}

/// The folder of the Cargo workspace that holds `source`.
fn workspace_of(source: &Path) -> PathBuf {
    cargo::manifest_above(source)
        .and_then(|m| m.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| source.to_path_buf())
}

/// Builds `package` at the git revision `rev` of the repository holding its
/// workspace, once per commit (see [`revision`]), and finds its binary.
fn build_revision(
    product: &Product,
    package: &str,
    cargo: &Path,
    source: &Path,
    rev: &str,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<cargo::Built> {
    let name = &product.name;
    let workspace = workspace_of(source);
    let revision = revision::resolve(name, &workspace, rev)?;
    let dir = cache.product_dir(name, &revision.commit);
    let installed = |built: cargo::Built| cargo::Built {
        version: revision::build_version(&built.version, &revision.commit, false),
        bin: built.bin,
    };
    if let Some(built) = built_revision(&dir, package) {
        return Ok(installed(built));
    }
    revision::check_package(name, &revision, package)?;
    let _lock = InstallLock::acquire(&dir, interrupt)?;
    // Another suite may have built it while we waited.
    if let Some(built) = built_revision(&dir, package) {
        return Ok(installed(built));
    }
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let tree = dir.join("src");
    revision::add_worktree(&revision, &tree)?;
    let mut step = cargo::build_command(
        cargo,
        &revision::workspace_in(&revision, &workspace, &tree),
        package,
    );
    // Its own target folder, kept: later runs of this commit start at once.
    let target = dir.join("target");
    seed_target_folder(name, cargo, &workspace, &target);
    step.env("CARGO_TARGET_DIR", &target);
    let message = format!(
        "building {name} at {} in {} (the first build of a commit takes minutes) ...",
        revision.label(),
        tree.display()
    );
    let built = run_cargo(name, step, cargo, &dir, package, &message, interrupt)?;
    fs::write(dir.join(MARKER), built.bin.to_string_lossy().as_bytes())
        .with_context(|| format!("writing {}", dir.join(MARKER).display()))?;
    Ok(installed(built))
}

/// Seeds a revision's new target folder with a release build that a commit
/// of the same workspace mostly shares: the working tree's, else the one the
/// suite itself was built in (the workspace may be a clone with no build).
/// On any failure the revision is built from nothing, and the line says why.
fn seed_target_folder(name: &str, cargo: &Path, workspace: &Path, target: &Path) {
    if target.exists() {
        return;
    }
    let working_tree = cargo::target_dir(cargo, workspace)
        .ok()
        .map(|dir| dir.join("release"));
    let suite_build = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf));
    let Some(release) = [working_tree, suite_build]
        .into_iter()
        .flatten()
        .find(|release| cargo::is_release_build(release))
    else {
        return;
    };
    match cargo::seed_target(&release, target) {
        Ok(()) => eprintln!(
            "{name}: reusing the compiled dependencies of {}",
            release.display()
        ),
        Err(e) => {
            eprintln!(
                "{name}: building every crate, {} could not be reused: {e:#}",
                release.display()
            );
            // A half copy would only be rebuilt; start clean.
            let _ = fs::remove_dir_all(target);
        }
    }
}

/// The binary `bin` of a whole build of one revision in `dir` and its
/// package's version: its marker names the binary, cargo's messages kept
/// beside it the version.
fn built_revision(dir: &Path, bin: &str) -> Option<cargo::Built> {
    let text = fs::read_to_string(dir.join(MARKER)).ok()?;
    let path = PathBuf::from(text.trim());
    let messages = fs::read_to_string(dir.join(CARGO_MESSAGES)).ok()?;
    let built = cargo::built_binary(&messages, bin).ok()?;
    (is_executable(&path) && built.bin == path).then_some(built)
}

/// Builds `bin`, another binary of cargo-built `product`'s package (the
/// CPU rig beside rustpipe), from the working tree; returns its path and
/// version, commit and all.
pub fn build_companion(
    product: &Product,
    bin: &str,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<cargo::Built> {
    let name = &product.name;
    if !matches!(product.install, Install::Cargo { .. }) {
        bail!("{name} is not built with cargo, so it has no {bin}");
    }
    let (cargo, source) =
        cargo_ready(product).map_err(|hint| anyhow!("{bin} cannot be built here: {hint}"))?;
    let dir = cache.product_dir(name, &format!("{}-{bin}", product.resolved_version()));
    let _lock = InstallLock::acquire(&dir, interrupt)?;
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let step = cargo::build_command(&cargo, &source, bin);
    let message = format!("building {bin} with cargo in {} ...", source.display());
    let built = run_cargo(name, step, &cargo, &dir, bin, &message, interrupt)?;
    let version =
        revision::working_tree_version(&workspace_of(&source), &built.bin, &built.version)
            .with_context(|| format!("{bin}: naming the version of the build"))?;
    Ok(cargo::Built { version, ..built })
}

/// Runs the cargo build `step`, its log and messages kept in `dir`, and
/// finds the binary `bin` it made.
fn run_cargo(
    name: &str,
    mut step: Command,
    cargo: &Path,
    dir: &Path,
    bin: &str,
    message: &str,
    interrupt: &Interrupt,
) -> Result<cargo::Built> {
    let (log, messages) = (dir.join(LOG), dir.join(CARGO_MESSAGES));
    let mut out = File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    writeln!(out, "{step:?}")?;
    let json =
        File::create(&messages).with_context(|| format!("creating {}", messages.display()))?;
    step.stdin(Stdio::null()).stdout(json).stderr(out);
    let _spinner = Spinner::start(message);
    let cannot_start = format!("building {name}: could not run `{}`", cargo.display());
    let status = process::run_tool(&mut step, interrupt, &cannot_start)?;
    if !status.success() {
        bail!(
            "building {name} with cargo failed: `cargo build` {status}; its output is in {}",
            log.display()
        );
    }
    let text =
        fs::read_to_string(&messages).with_context(|| format!("reading {}", messages.display()))?;
    cargo::built_binary(&text, bin).with_context(|| format!("building {name}"))
}
