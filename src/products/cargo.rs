//! Building a product from source with cargo: `cargo build --release` of one
//! package of a Cargo workspace, and the binary and version the build reports.
//!
//! The binary is found in cargo's own messages (`--message-format=json`), so
//! CARGO_TARGET_DIR and any target directory the workspace configures are
//! respected. The suite runs this while it may itself be running under
//! `cargo run` or `cargo test`: those release the build directory's lock
//! before they start the program, so the nested build does not wait on it.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, Context, Result};
use serde::Deserialize;

/// What a build made: the package's binary and the package's version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Built {
    pub bin: PathBuf,
    pub version: String,
}

/// The cargo to run: `$CARGO` (set by cargo for the programs it runs, so the
/// same toolchain builds), else `cargo` on PATH.
pub fn program() -> Option<PathBuf> {
    std::env::var_os("CARGO")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| crate::process::find_on_path("cargo"))
}

/// The Cargo.toml nearest to `source` (an absolute path), in it or above it:
/// where cargo will look for the workspace.
pub fn manifest_above(source: &Path) -> Option<PathBuf> {
    source
        .ancestors()
        .map(|dir| dir.join("Cargo.toml"))
        .find(|manifest| manifest.is_file())
}

/// `cargo build --release` of the binary `bin` of the workspace around
/// `source`; JSON messages on standard output, cargo's own progress and the
/// compiler's diagnostics on standard error. The dependencies' features are
/// the whole workspace's (`--workspace`, not `-p`): the build shares them
/// with `cargo build --workspace` instead of compiling them again with the
/// package's own.
pub fn build_command(cargo: &Path, source: &Path, bin: &str) -> Command {
    let mut command = Command::new(cargo);
    command
        .args(["build", "--release", "--workspace", "--bin", bin])
        .arg("--message-format=json-render-diagnostics")
        .current_dir(source);
    command
}

/// The folders of a release build that cargo reuses: compiled crates, build
/// scripts' outputs and the fingerprints that say they are fresh.
const REUSABLE: [&str; 3] = ["deps", "build", ".fingerprint"];

/// The target folder of the workspace around `source`, as cargo reports it
/// (CARGO_TARGET_DIR and the workspace's own configuration respected).
pub fn target_dir(cargo: &Path, source: &Path) -> Result<PathBuf> {
    #[derive(Deserialize)]
    struct Metadata {
        target_directory: PathBuf,
    }
    let output = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(source)
        .stderr(std::process::Stdio::null())
        .output()
        .with_context(|| format!("running `{} metadata`", cargo.display()))?;
    if !output.status.success() {
        return Err(anyhow!(
            "`cargo metadata` in {} {}",
            source.display(),
            output.status
        ));
    }
    let metadata: Metadata =
        serde_json::from_slice(&output.stdout).context("reading `cargo metadata`")?;
    Ok(metadata.target_directory)
}

/// Whether `release` (a target folder's `release`) holds a build to reuse.
pub fn is_release_build(release: &Path) -> bool {
    REUSABLE.iter().all(|dir| release.join(dir).is_dir())
}

/// Copies the release build `release` (a target folder's `release`) into
/// the new target folder `to`, so that a build of another commit of the
/// same workspace compiles only what differs: the dependencies it shares
/// (most of the build's time) are found fresh. A copy, not links: a crate
/// the new build compiles again must not change the one it was copied from.
pub fn seed_target(release: &Path, to: &Path) -> Result<()> {
    let seeded = to.join("release");
    std::fs::create_dir_all(&seeded).with_context(|| format!("creating {}", seeded.display()))?;
    for dir in REUSABLE {
        copy_tree(&release.join(dir), &seeded.join(dir))?;
    }
    Ok(())
}

/// `source`'s bytes and modification time (cargo judges freshness by the
/// times of a build's outputs) into `target`.
fn copy_file(source: &Path, target: &Path) -> Result<()> {
    let copying = || format!("copying {} to {}", source.display(), target.display());
    std::fs::copy(source, target).with_context(copying)?;
    let modified = std::fs::metadata(source)
        .and_then(|m| m.modified())
        .with_context(copying)?;
    std::fs::File::options()
        .write(true)
        .open(target)
        .and_then(|f| f.set_modified(modified))
        .with_context(copying)
}

/// `from`'s files and folders, recursively, into `to`; symbolic links are
/// copied as links.
fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry.with_context(|| format!("reading {}", from.display()))?;
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type()?;
        if kind.is_dir() {
            copy_tree(&source, &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&source)?, &target)
                .with_context(|| format!("linking {}", target.display()))?;
        } else {
            copy_file(&source, &target)?;
        }
    }
    Ok(())
}

/// One line of cargo's JSON messages; only compiler artifacts matter here.
#[derive(Deserialize)]
struct Message {
    reason: String,
    #[serde(default)]
    package_id: String,
    #[serde(default)]
    target: Option<Target>,
    #[serde(default)]
    executable: Option<PathBuf>,
    /// False when the build compiled it, true when it found it up to date.
    #[serde(default)]
    fresh: bool,
}

#[derive(Deserialize)]
struct Target {
    name: String,
    kind: Vec<String>,
}

/// The binary `bin` a build made and its package's version, from cargo's
/// JSON messages.
pub fn built_binary(messages: &str, bin: &str) -> Result<Built> {
    for message in artifacts(messages)? {
        let Some(target) = &message.target else {
            continue;
        };
        if target.name != bin || !target.kind.iter().any(|k| k == "bin") {
            continue;
        }
        let bin = message
            .executable
            .ok_or_else(|| anyhow!("cargo: the build of {bin} names no executable"))?;
        let version = package_version(&message.package_id).ok_or_else(|| {
            anyhow!(
                "cargo: no version in the package id `{}`",
                message.package_id
            )
        })?;
        return Ok(Built { bin, version });
    }
    Err(anyhow!("cargo: the build reported no binary named {bin}"))
}

/// The registry crates a build compiled rather than found up to date, each
/// once as `name@version` (the whole id in the older spelling), from cargo's
/// JSON messages: what a build seeded with another target folder
/// ([`seed_target`]) could not reuse.
pub fn compiled_dependencies(messages: &str) -> Result<Vec<String>> {
    let mut compiled: Vec<String> = artifacts(messages)?
        .into_iter()
        .filter(|m| !m.fresh && is_registry(&m.package_id))
        .map(|m| {
            let id = &m.package_id;
            id.rsplit_once('#')
                .map_or(id.clone(), |(_, fragment)| fragment.to_string())
        })
        .collect();
    compiled.sort();
    compiled.dedup();
    Ok(compiled)
}

/// The compiler-artifact messages among cargo's JSON messages.
fn artifacts(messages: &str) -> Result<Vec<Message>> {
    let mut artifacts = Vec::new();
    for line in messages.lines().filter(|l| l.starts_with('{')) {
        let message: Message = serde_json::from_str(line)
            .with_context(|| format!("cargo: a build message is not JSON: {line}"))?;
        if message.reason == "compiler-artifact" {
            artifacts.push(message);
        }
    }
    Ok(artifacts)
}

/// Whether a package id names a registry crate, in either spelling
/// (`registry+URL#name@version`, or `name version (registry+URL)`).
fn is_registry(id: &str) -> bool {
    id.starts_with("registry+") || id.contains("(registry+")
}

/// The version in a package id: `path+file:///p/crates/x#0.1.0`,
/// `path+file:///p/y#x@0.1.0` (cargo 1.77 on) or `x 0.1.0 (path+file:///p)`.
fn package_version(id: &str) -> Option<String> {
    let version = match id.rsplit_once('#') {
        Some((_, fragment)) => fragment.rsplit_once('@').map_or(fragment, |(_, v)| v),
        None => id.split_whitespace().nth(1)?,
    };
    (!version.is_empty()).then(|| version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    const MESSAGES: &str = r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#libc@0.2.191","manifest_path":"/r/libc/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"libc","src_path":"/r/libc/src/lib.rs"},"filenames":["/t/release/deps/liblibc.rlib"],"executable":null,"fresh":true}
{"reason":"compiler-artifact","package_id":"path+file:///w/crates/pipe#0.3.1","manifest_path":"/w/crates/pipe/Cargo.toml","target":{"kind":["bin"],"crate_types":["bin"],"name":"pipe","src_path":"/w/crates/pipe/src/main.rs"},"filenames":["/t/release/pipe"],"executable":"/t/release/pipe","fresh":false}
{"reason":"build-finished","success":true}
"#;

    #[test]
    fn the_binary_and_version_come_from_the_artifact_message() {
        let built = built_binary(MESSAGES, "pipe").unwrap();
        assert_eq!(
            built,
            Built {
                bin: PathBuf::from("/t/release/pipe"),
                version: "0.3.1".into()
            }
        );
        let err = built_binary(MESSAGES, "other").unwrap_err().to_string();
        assert_eq!(err, "cargo: the build reported no binary named other");
    }

    #[test]
    fn a_build_names_the_registry_crates_it_compiled_once_each() {
        assert!(compiled_dependencies(MESSAGES).unwrap().is_empty());
        let compiled = r#"{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#serde@1.0.229","fresh":false}
{"reason":"compiler-artifact","package_id":"registry+https://github.com/rust-lang/crates.io-index#serde@1.0.229","fresh":false}
{"reason":"compiler-artifact","package_id":"arrow 57.3.2 (registry+https://github.com/rust-lang/crates.io-index)","fresh":false}"#;
        assert_eq!(
            compiled_dependencies(&format!("{MESSAGES}{compiled}")).unwrap(),
            [
                "arrow 57.3.2 (registry+https://github.com/rust-lang/crates.io-index)",
                "serde@1.0.229"
            ]
        );
    }

    #[test]
    fn every_package_id_spelling_gives_its_version() {
        assert_eq!(
            package_version("path+file:///w/crates/pipe#0.1.0").as_deref(),
            Some("0.1.0")
        );
        assert_eq!(
            package_version("path+file:///w/src#pipe@1.2.3").as_deref(),
            Some("1.2.3")
        );
        assert_eq!(
            package_version("pipe 0.4.0 (path+file:///w/crates/pipe)").as_deref(),
            Some("0.4.0")
        );
        assert_eq!(package_version("pipe"), None);
    }

    #[test]
    fn a_seeded_target_holds_a_copy_of_the_release_build() {
        let dir = tempfile::tempdir().unwrap();
        let (release, to) = (
            dir.path().join("from").join("release"),
            dir.path().join("to"),
        );
        assert!(!is_release_build(&release));
        for sub in REUSABLE {
            std::fs::create_dir_all(release.join(sub).join("inner")).unwrap();
            let file = release.join(sub).join("inner").join("file");
            std::fs::write(&file, sub).unwrap();
            let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
            let file = std::fs::File::options().write(true).open(&file).unwrap();
            file.set_modified(an_hour_ago).unwrap();
        }
        std::fs::write(release.join("suite"), "not reused").unwrap();
        assert!(is_release_build(&release));
        seed_target(&release, &to).unwrap();
        for sub in REUSABLE {
            let copied = to.join("release").join(sub).join("inner").join("file");
            assert_eq!(std::fs::read_to_string(&copied).unwrap(), sub);
            let original = release.join(sub).join("inner").join("file");
            let modified = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
            assert_eq!(
                modified(&copied),
                modified(&original),
                "cargo judges by times"
            );
            std::fs::write(&copied, "rebuilt").unwrap();
            assert_eq!(std::fs::read_to_string(original).unwrap(), sub);
        }
        assert!(!to.join("release").join("suite").exists());
    }

    #[test]
    fn the_manifest_is_found_above_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("products").join("pipe");
        std::fs::create_dir_all(&inner).unwrap();
        assert!(manifest_above(&inner).is_none_or(|m| !m.starts_with(dir.path())));
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(manifest_above(&inner), Some(dir.path().join("Cargo.toml")));
    }
}
