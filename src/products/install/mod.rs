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
//! its marker (see [`revision`]). The tools' output goes to `install.log`
//! in the install folder, never to the console. A pip install is held to
//! its version's constraints file when it has one (see [`constraints`]);
//! every pip and Maven install records what it holds beside it (`pip
//! freeze`, Maven's dependency tree).

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use super::{cargo, revision};
use constraints::{constraints_file, constraints_path};
use fingerprint::{fingerprint, is_current};
use steps::{maven_jars, maven_steps, pip_install, Step};

mod constraints;
mod fingerprint;
mod steps;
use crate::cache::Cache;
use crate::config::{Install, Product};
use crate::interrupt::{Interrupt, Interrupted};
use crate::process::{self, find_on_path, is_executable};

/// Written last into an install folder, holding the install's fingerprint:
/// the install is whole, and current while the fingerprint still matches.
pub(super) const MARKER: &str = ".installed";
/// Written instead of the marker when an install fails: its fingerprint, then
/// why, so that `suite list` and `--all` say the product is not installed
/// here until an install of it succeeds.
const FAILED: &str = ".install-failed";
/// The tools' output, kept in the install folder.
const LOG: &str = "install.log";
/// cargo's JSON messages of the last build, kept beside its log.
const CARGO_MESSAGES: &str = "cargo-messages.json";

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

/// Why the last install of what `product` at `version` is now failed, if it did.
fn failed_install(product: &Product, version: &str, dir: &Path) -> Option<String> {
    let text = fs::read_to_string(dir.join(FAILED)).ok()?;
    let (made, reason) = text.split_once('\n')?;
    (made == fingerprint(product, version)).then(|| reason.trim().to_string())
}

/// The line of an install's log that says why it failed: Maven's failed
/// goal (which names an artifact the registry does not have, or is a
/// compilation failure, then followed by its first error), pip's conflict
/// with the requirements that conflict (a constraint among them), else
/// pip's and Maven's last `ERROR` line with some text, else the last line.
fn failure_reason(log: &str) -> String {
    let mut lines = log.lines().map(str::trim).filter(|l| !l.is_empty());
    let conflict = lines
        .clone()
        .position(|l| l.starts_with("ERROR: Cannot install"))
        .map(|at| {
            let mut after = lines.clone().skip(at);
            let head = after.next().unwrap_or_default().trim_end_matches('.');
            let causes: Vec<&str> = after
                .skip_while(|l| *l != "The conflict is caused by:")
                .skip(1)
                .take_while(|l| !l.starts_with("To fix") && !l.starts_with("ERROR"))
                .collect();
            format!("{head}: {}", causes.join("; "))
        });
    let goal = lines
        .clone()
        .position(|l| l.starts_with("[ERROR] Failed to execute goal"));
    let failed_goal = goal.and_then(|at| {
        let mut after = lines.clone().skip(at);
        let goal = after.next()?.trim_end_matches(" -> [Help 1]");
        Some(
            match (goal.ends_with("Compilation failure"), after.next()) {
                (true, Some(first)) => format!("{goal}: {}", first.trim_start_matches("[ERROR] ")),
                _ => goal.to_string(),
            },
        )
    });
    let reason = failed_goal
        .as_deref()
        .or(conflict.as_deref())
        .or_else(|| {
            lines.clone().rfind(|l| {
                (l.starts_with("ERROR") || l.starts_with("[ERROR]"))
                    && !l
                        .trim_start_matches(['[', 'E', 'R', 'O', ']', ':'])
                        .trim()
                        .is_empty()
            })
        })
        .or_else(|| lines.next_back())
        .unwrap_or("no output");
    let mut reason = reason.to_string();
    if reason.chars().count() > 400 {
        reason = reason.chars().take(400).collect::<String>() + " ...";
    }
    reason
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

/// The cargo to run and the folder to build in, or what is missing.
fn cargo_ready(product: &Product) -> Result<(PathBuf, PathBuf), String> {
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
        Install::Cargo { package, .. } => match (cargo_ready(product), version) {
            (Ok((cargo, source)), None) => {
                build_with_cargo(product, package, &cargo, &source, cache, interrupt)
            }
            (Ok((cargo, source)), Some(rev)) => {
                build_revision(product, package, &cargo, &source, rev, cache, interrupt)
            }
            (Err(hint), _) => bail!("{name} cannot be built here: {hint}"),
        },
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

/// Installs from scratch into `dir`, then writes the marker.
fn install(product: &Product, version: &str, dir: &Path, interrupt: &Interrupt) -> Result<()> {
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
fn install_steps(
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
) -> Result<Installation> {
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
    Ok(Installation {
        version,
        dir: None,
        bin: Some(built.bin),
    })
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
) -> Result<Installation> {
    let name = &product.name;
    let workspace = workspace_of(source);
    let revision = revision::resolve(name, &workspace, rev)?;
    let dir = cache.product_dir(name, &revision.commit);
    let installed = |built: cargo::Built| Installation {
        version: revision::build_version(&built.version, &revision.commit, false),
        dir: None,
        bin: Some(built.bin),
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

/// An exclusive lock on one install folder, so two suites never install the
/// same version at once; released when dropped.
struct InstallLock {
    _file: File,
}

impl InstallLock {
    fn acquire(dir: &Path, interrupt: &Interrupt) -> Result<InstallLock> {
        let parent = dir.parent().unwrap_or(dir);
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
        let mut name = dir.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let path = parent.join(name);
        let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let mut told = false;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(InstallLock { _file: file });
            }
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            if !told {
                eprintln!("waiting for another install into {} ...", dir.display());
                told = true;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

/// A spinner on a terminal, else the same message as one line; cleared when
/// dropped, however the install ends.
struct Spinner(ProgressBar);

impl Spinner {
    fn start(message: &str) -> Spinner {
        let bar = ProgressBar::new_spinner();
        bar.set_style(
            ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar.set_message(message.to_string());
        if bar.is_hidden() {
            eprintln!("{message}");
        } else {
            bar.enable_steady_tick(Duration::from_millis(120));
        }
        Spinner(bar)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

#[cfg(test)]
mod tests;
