//! Getting a product onto this machine: a virtualenv (pip, with the jars a
//! Python API over a JVM engine loads) or a Maven build per version in
//! `<cache>/products/<name>/<version>/`, a cargo build from source, or a
//! binary the machine already has.
//!
//! An install counts only once its marker file exists; the marker is written
//! last, so an install that failed or was interrupted is redone from scratch.
//! A cargo build of the workspace as it is has no marker: cargo runs at
//! every start and knows itself whether the binary is up to date. A cargo
//! build at a git revision (`--version REV`) is one install per commit, with
//! its marker (see [`revision`]). The tools' output goes to `install.log`
//! in the install folder, never to the console.

use std::fs::{self, File};
use std::io::Write;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

use super::{cargo, revision};
use crate::cache::Cache;
use crate::config::{Install, Product};
use crate::interrupt::{Interrupt, Interrupted};
use crate::process::{self, find_on_path, is_executable};

/// Written last into an install folder, holding the install's fingerprint:
/// the install is whole, and current while the fingerprint still matches.
const MARKER: &str = ".installed";
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

/// The line of an install's log that says why it failed: pip's and Maven's
/// last `ERROR` line, else the last line.
fn failure_reason(log: &str) -> String {
    let mut lines = log.lines().map(str::trim).filter(|l| !l.is_empty());
    let reason = lines
        .clone()
        .rfind(|l| l.starts_with("ERROR") || l.starts_with("[ERROR]"))
        .or_else(|| lines.next_back())
        .unwrap_or("no output");
    let mut reason = reason.to_string();
    if reason.chars().count() > 240 {
        reason = reason.chars().take(240).collect::<String>() + " ...";
    }
    reason
}

/// What an install was made from: the version, the install section and, for
/// a Maven build, every file of the app's source (for pip's jars, the pom). A change to any of them
/// makes the next run install again, so no run starts a stale build.
fn fingerprint(product: &Product, version: &str) -> String {
    // FNV-1a: stable across builds of the suite, unlike std's hasher.
    fn mix(hash: &mut u64, bytes: &[u8]) {
        for byte in bytes {
            *hash ^= u64::from(*byte);
            *hash = hash.wrapping_mul(0x0100_0000_01b3);
        }
    }
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    mix(&mut hash, version.as_bytes());
    mix(&mut hash, format!("{:?}", product.install).as_bytes());
    let mut files = Vec::new();
    match product.install {
        Install::Maven { .. } => {
            files.push(product.dir().join("pom.xml"));
            source_files(&product.dir().join("src"), &mut files);
        }
        Install::Pip { jars: Some(_), .. } => files.push(product.dir().join("pom.xml")),
        _ => {}
    }
    files.sort();
    // Paths relative to the product's folder: the same sources in another
    // checkout (or a test's copy) are the same install.
    for file in files {
        let name = file.strip_prefix(product.dir()).unwrap_or(&file);
        mix(&mut hash, name.to_string_lossy().as_bytes());
        mix(&mut hash, &fs::read(&file).unwrap_or_default());
    }
    format!("{version} {hash:016x}")
}

/// Every file under `dir`, recursively.
fn source_files(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            source_files(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// Whether `dir` holds a whole install of what `product` at `version` is now.
fn is_current(product: &Product, version: &str, dir: &Path) -> bool {
    fs::read_to_string(dir.join(MARKER)).is_ok_and(|made| made == fingerprint(product, version))
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
            "{name} is part of the suite and runs its version ({}); --version applies to pip, maven and cargo installs",
            product.resolved_version()
        ),
        Install::Binary { .. } if version.is_some() => bail!(
            "{name} runs the binary this machine has; --version applies to pip, maven and cargo installs"
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
    let kind = product.install.kind();
    if dir.exists() {
        fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let log = dir.join(LOG);
    let _spinner = Spinner::start(&format!(
        "installing {name} {version} ({kind}) into {} ...",
        dir.display()
    ));
    let steps = match &product.install {
        Install::Maven { version_property } => {
            vec![maven_build(product.dir(), version_property, version, dir)]
        }
        Install::Pip { packages, jars } => {
            let mut steps = pip_install(packages, version, dir);
            if let Some(property) = jars {
                steps.push(maven_jars(product.dir(), property, version, dir));
            }
            steps
        }
        Install::Builtin | Install::Cargo { .. } | Install::Binary { .. } => Vec::new(),
    };
    for mut step in steps {
        let program = Path::new(step.get_program())
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        let out = File::options().create(true).append(true).open(&log)?;
        step.stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out);
        let cannot_start = format!("installing {name} {version}: could not run `{program}`");
        let status = process::run_tool(&mut step, interrupt, &cannot_start);
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
    let step = cargo::build_command(cargo, source, package, package);
    let message = format!("building {name} with cargo in {} ...", source.display());
    let built = run_cargo(name, step, cargo, &dir, package, &message, interrupt)?;
    Ok(Installation {
        version: built.version,
        dir: None,
        bin: Some(built.bin),
    })
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
    let workspace = cargo::manifest_above(source)
        .and_then(|m| m.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| source.to_path_buf());
    let revision = revision::resolve(name, &workspace, rev)?;
    let dir = cache.product_dir(name, &revision.commit);
    let installed = |bin: PathBuf| Installation {
        version: revision.version(),
        dir: None,
        bin: Some(bin),
    };
    if let Some(bin) = built_revision(&dir) {
        return Ok(installed(bin));
    }
    revision::check_package(name, &revision, package)?;
    let _lock = InstallLock::acquire(&dir, interrupt)?;
    // Another suite may have built it while we waited.
    if let Some(bin) = built_revision(&dir) {
        return Ok(installed(bin));
    }
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let tree = dir.join("src");
    revision::add_worktree(&revision, &tree)?;
    let mut step = cargo::build_command(
        cargo,
        &revision::workspace_in(&revision, &workspace, &tree),
        package,
        package,
    );
    // Its own target folder, kept: later runs of this commit start at once.
    step.env("CARGO_TARGET_DIR", dir.join("target"));
    let message = format!(
        "building {name} at {} in {} (the first build of a commit takes minutes) ...",
        revision.version(),
        tree.display()
    );
    let built = run_cargo(name, step, cargo, &dir, package, &message, interrupt)?;
    fs::write(dir.join(MARKER), built.bin.to_string_lossy().as_bytes())
        .with_context(|| format!("writing {}", dir.join(MARKER).display()))?;
    Ok(installed(built.bin))
}

/// The binary of a whole build of one revision in `dir`: its marker names it.
fn built_revision(dir: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(dir.join(MARKER)).ok()?;
    let bin = PathBuf::from(text.trim());
    is_executable(&bin).then_some(bin)
}

/// Builds `bin`, another binary of cargo-built `product`'s package (the
/// CPU rig beside rustpipe), from the working tree; returns its path.
pub fn build_companion(
    product: &Product,
    bin: &str,
    cache: &Cache,
    interrupt: &Interrupt,
) -> Result<cargo::Built> {
    let name = &product.name;
    let Install::Cargo { package, .. } = &product.install else {
        bail!("{name} is not built with cargo, so it has no {bin}");
    };
    let (cargo, source) =
        cargo_ready(product).map_err(|hint| anyhow!("{bin} cannot be built here: {hint}"))?;
    let dir = cache.product_dir(name, &format!("{}-{bin}", product.resolved_version()));
    let _lock = InstallLock::acquire(&dir, interrupt)?;
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let step = cargo::build_command(&cargo, &source, package, bin);
    let message = format!("building {bin} with cargo in {} ...", source.display());
    run_cargo(name, step, &cargo, &dir, bin, &message, interrupt)
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

/// `mvn package` of the product's pom, building into `<dir>/build`.
fn maven_build(product_dir: &Path, property: &str, version: &str, dir: &Path) -> Command {
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "-q", "-f"])
        .arg(product_dir.join("pom.xml"))
        .arg(format!("-D{property}={version}"))
        .arg(format!("-Dsuite.build.dir={}", dir.join("build").display()))
        .args(["-DskipTests", "package"]);
    mvn
}

/// `mvn dependency:copy-dependencies` of the product's pom: the jars it lists
/// and their runtime dependencies, into `<dir>/jars`.
fn maven_jars(product_dir: &Path, property: &str, version: &str, dir: &Path) -> Command {
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "-q", "-f"])
        .arg(product_dir.join("pom.xml"))
        .arg(format!("-D{property}={version}"))
        .arg(format!("-DoutputDirectory={}", dir.join("jars").display()))
        .args(["-DincludeScope=runtime", "dependency:copy-dependencies"]);
    mvn
}

/// A virtualenv in `<dir>/venv`, then pip installs `packages` into it.
fn pip_install(packages: &[String], version: &str, dir: &Path) -> Vec<Command> {
    let venv = dir.join("venv");
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(&venv);
    let mut pip = Command::new(venv.join("bin").join("pip"));
    pip.args(["install", "--disable-pip-version-check"])
        .args(packages.iter().map(|p| p.replace("{version}", version)));
    vec![create, pip]
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
mod tests {
    use super::*;
    use crate::config::Product;

    fn product(dir: &Path, install: &str, start: &str) -> Product {
        let path = dir.join("p").join("product.yaml");
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(
            &path,
            format!(
                "name: p\ndescription: d\nversion: \"1.0\"\ninstall: {install}\nstart: {start}\n\
                 ready: {{stdout_contains: ready}}\nworkloads: [stateless]\n\
                 lines:\n  - {{name: p, delivery: at-least-once, delivery_detail: x}}\n\
                 characteristics: {{processing: a, engine: b, scaling: c, decode: d}}\n"
            ),
        )
        .unwrap();
        Product::from_file(&path).unwrap()
    }

    fn cache(dir: &Path) -> Cache {
        Cache::at(dir.join("cache"))
    }

    #[test]
    fn a_missing_binary_is_not_installed_with_its_hint() {
        let dir = tempfile::tempdir().unwrap();
        let p = product(
            dir.path(),
            "{kind: binary, env: SS_TEST_NO_SUCH_BIN, command: ss-no-such-command, hint: get it}",
            "[\"{bin}\"]",
        );
        let cache = cache(dir.path());
        assert_eq!(
            availability(&p, None, &cache),
            Availability::NotInstalled {
                hint: "get it".into()
            }
        );
        let err = ensure_installed(&p, None, &cache, &Interrupt::none())
            .unwrap_err()
            .to_string();
        assert_eq!(err, "p is not installed here: get it");
    }

    #[test]
    fn a_binary_on_path_is_runnable() {
        let dir = tempfile::tempdir().unwrap();
        let p = product(
            dir.path(),
            "{kind: binary, env: SS_TEST_NO_SUCH_BIN, command: sh, hint: h}",
            "[\"{bin}\"]",
        );
        let cache = cache(dir.path());
        assert_eq!(availability(&p, None, &cache), Availability::Runnable);
        let found = ensure_installed(&p, None, &cache, &Interrupt::none()).unwrap();
        assert!(found.bin.unwrap().ends_with("sh"));
        assert_eq!(found.version, "1.0");
    }

    #[test]
    fn an_install_counts_only_with_its_marker() {
        let dir = tempfile::tempdir().unwrap();
        let p = product(
            dir.path(),
            "{kind: pip, packages: [x]}",
            "[\"{install}/x\"]",
        );
        let cache = cache(dir.path());
        let folder = cache.product_dir("p", "2.0");
        fs::create_dir_all(folder.join("venv")).unwrap();
        assert_ne!(
            availability(&p, Some("2.0"), &cache),
            Availability::Installed
        );
        fs::write(folder.join(MARKER), fingerprint(&p, "2.0")).unwrap();
        assert_eq!(
            availability(&p, Some("2.0"), &cache),
            Availability::Installed
        );
        let installed = ensure_installed(&p, Some("2.0"), &cache, &Interrupt::none()).unwrap();
        assert_eq!(installed.version, "2.0");
        assert_eq!(installed.dir.unwrap(), folder);
        // An install made from other packages is not this one.
        fs::write(folder.join(MARKER), "2.0").unwrap();
        assert_ne!(
            availability(&p, Some("2.0"), &cache),
            Availability::Installed
        );
    }

    #[test]
    fn a_changed_app_source_is_another_install() {
        let dir = tempfile::tempdir().unwrap();
        let p = product(
            dir.path(),
            "{kind: maven, version_property: x.version}",
            "[java, -jar, \"{install}/build/app.jar\"]",
        );
        let app = p.dir().join("src/main/java/App.java");
        fs::create_dir_all(app.parent().unwrap()).unwrap();
        fs::write(&app, "class App {}").unwrap();
        let before = fingerprint(&p, "1.0");
        assert_eq!(before, fingerprint(&p, "1.0"));
        assert_ne!(before, fingerprint(&p, "1.1"));
        fs::write(&app, "class App { int x; }").unwrap();
        assert_ne!(before, fingerprint(&p, "1.0"));
        let pip = product(dir.path(), "{kind: pip, packages: [x]}", "[x]");
        let other = product(dir.path(), "{kind: pip, packages: [x, orjson]}", "[x]");
        assert_ne!(fingerprint(&pip, "1.0"), fingerprint(&other, "1.0"));
    }

    #[test]
    fn a_changed_pom_of_pip_jars_is_another_install() {
        let dir = tempfile::tempdir().unwrap();
        let p = product(
            dir.path(),
            "{kind: pip, packages: [x], jars: x.version}",
            "[x]",
        );
        let pom = p.dir().join("pom.xml");
        fs::write(&pom, "<project/>").unwrap();
        let before = fingerprint(&p, "1.0");
        fs::write(&pom, "<project><!-- another jar --></project>").unwrap();
        assert_ne!(before, fingerprint(&p, "1.0"));
        // Without jars the pom is no part of a pip install.
        let plain = product(dir.path(), "{kind: pip, packages: [x]}", "[x]");
        let unchanged = fingerprint(&plain, "1.0");
        fs::write(&pom, "<project/>").unwrap();
        assert_eq!(unchanged, fingerprint(&plain, "1.0"));
        assert_eq!(tools_needed(&p.install), ["python3", "mvn", "java"]);
    }

    #[test]
    fn the_same_sources_in_another_checkout_are_the_same_install() {
        let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let [a, b] = [one.path(), two.path()].map(|dir| {
            let p = product(
                dir,
                "{kind: maven, version_property: x.version}",
                "[java, -jar, \"{install}/build/app.jar\"]",
            );
            let app = p.dir().join("src/main/java/App.java");
            fs::create_dir_all(app.parent().unwrap()).unwrap();
            fs::write(&app, "class App {}").unwrap();
            p
        });
        assert_ne!(a.dir(), b.dir());
        assert_eq!(fingerprint(&a, "1.0"), fingerprint(&b, "1.0"));
    }

    #[test]
    fn a_failed_install_names_the_product_and_its_log() {
        let dir = tempfile::tempdir().unwrap();
        // No pom.xml in the product folder: Maven fails at once.
        let p = product(
            dir.path(),
            "{kind: maven, version_property: x.version}",
            "[java, -jar, \"{install}/build/app.jar\"]",
        );
        if find_on_path("mvn").is_none() {
            return;
        }
        let cache = cache(dir.path());
        let err = ensure_installed(&p, None, &cache, &Interrupt::none())
            .unwrap_err()
            .to_string();
        let log = cache.product_dir("p", "1.0").join(LOG);
        assert!(err.starts_with("installing p 1.0 (maven) failed"), "{err}");
        assert!(err.contains(&log.display().to_string()), "{err}");
        assert!(!err.contains('\n'), "{err}");
        assert!(!cache.product_dir("p", "1.0").join(MARKER).exists());
        // Listed as not installed here, with Maven's reason, until it installs.
        let Availability::NotInstalled { hint } = availability(&p, None, &cache) else {
            panic!("a failed install must list the product as not installed here");
        };
        assert!(hint.starts_with("installing 1.0 failed: [ERROR]"), "{hint}");
        assert!(hint.ends_with("`suite install p` tries again"), "{hint}");
        assert!(
            err.contains(
                hint.split(" (the whole")
                    .next()
                    .unwrap()
                    .trim_start_matches("installing 1.0 failed: ")
            ),
            "{err} / {hint}"
        );
        // Another install section is another install, not the failed one.
        let other = product(
            dir.path(),
            "{kind: maven, version_property: y.version}",
            "[java, -jar, \"{install}/build/app.jar\"]",
        );
        assert_eq!(
            availability(&other, None, &cache),
            Availability::Installable
        );
    }

    #[test]
    fn the_reason_of_a_failed_install_is_its_last_error_line() {
        let pip = "Collecting x\nERROR: Could not find a version that satisfies the requirement x==9 (from versions: 1.0)\nERROR: No matching distribution found for x==9\n\n";
        assert_eq!(
            failure_reason(pip),
            "ERROR: No matching distribution found for x==9"
        );
        assert_eq!(failure_reason("one\ntwo\n  \n"), "two");
        assert_eq!(failure_reason(""), "no output");
        assert!(failure_reason(&"x".repeat(500)).ends_with("x ..."));
    }

    #[test]
    fn builtin_and_binary_refuse_another_version() {
        let dir = tempfile::tempdir().unwrap();
        let p = product(dir.path(), "{kind: builtin}", "[x]");
        let err = ensure_installed(&p, Some("9"), &cache(dir.path()), &Interrupt::none())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("--version applies to pip, maven and cargo"),
            "{err}"
        );
    }

    /// A workspace in `dir` holding one package, `hello`, whose main is `main`.
    fn hello_workspace(dir: &Path, main: &str) {
        fs::create_dir_all(dir.join("hello/src")).unwrap();
        fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"hello\"]\nresolver = \"2\"\n",
        )
        .unwrap();
        fs::write(
            dir.join("hello/Cargo.toml"),
            "[package]\nname = \"hello\"\nversion = \"0.2.0\"\nedition = \"2021\"\n",
        )
        .unwrap();
        fs::write(dir.join("hello/src/main.rs"), main).unwrap();
    }

    #[test]
    fn a_cargo_product_outside_a_workspace_is_not_buildable() {
        let dir = tempfile::tempdir().unwrap();
        let p = product(dir.path(), "{kind: cargo, package: hello}", "[\"{bin}\"]");
        let cache = cache(dir.path());
        let Availability::NotInstalled { hint } = availability(&p, None, &cache) else {
            // A Cargo.toml above the temporary folder: nothing to check here.
            return;
        };
        assert!(hint.contains("install.workspace"), "{hint}");
        let err = ensure_installed(&p, Some("9"), &cache, &Interrupt::none())
            .unwrap_err()
            .to_string();
        assert!(err.contains("p cannot be built here"), "{err}");
    }

    #[test]
    fn a_cargo_product_is_built_and_its_binary_found() {
        if cargo::program().is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        hello_workspace(&dir.path().join("src"), "fn main() {}\n");
        let p = product(
            dir.path(),
            "{kind: cargo, package: hello, workspace: ../src}",
            "[\"{bin}\"]",
        );
        let cache = cache(dir.path());
        assert_eq!(availability(&p, None, &cache), Availability::Buildable);
        let built = ensure_installed(&p, None, &cache, &Interrupt::none()).unwrap();
        assert_eq!(built.version, "0.2.0");
        let bin = built.bin.unwrap();
        assert!(is_executable(&bin), "{}", bin.display());
        assert!(bin.ends_with("release/hello"), "{}", bin.display());
        // Up to date: the same binary again.
        let again = ensure_installed(&p, None, &cache, &Interrupt::none()).unwrap();
        assert_eq!(again.bin.unwrap(), bin);
    }

    #[test]
    fn a_failed_cargo_build_names_the_product_and_its_log() {
        if cargo::program().is_none() {
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        hello_workspace(&dir.path().join("src"), "fn main() { not rust }\n");
        let p = product(
            dir.path(),
            "{kind: cargo, package: hello, workspace: ../src}",
            "[\"{bin}\"]",
        );
        let cache = cache(dir.path());
        let err = ensure_installed(&p, None, &cache, &Interrupt::none())
            .unwrap_err()
            .to_string();
        let log = cache.product_dir("p", "1.0").join(LOG);
        assert!(err.starts_with("building p with cargo failed"), "{err}");
        assert!(err.contains(&log.display().to_string()), "{err}");
        assert!(!err.contains('\n'), "{err}");
        let text = fs::read_to_string(&log).unwrap();
        assert!(text.contains("error"), "{text}");
    }
}
