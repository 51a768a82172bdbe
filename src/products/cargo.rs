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
}

#[derive(Deserialize)]
struct Target {
    name: String,
    kind: Vec<String>,
}

/// The binary `bin` a build made and its package's version, from cargo's
/// JSON messages.
pub fn built_binary(messages: &str, bin: &str) -> Result<Built> {
    for line in messages.lines().filter(|l| l.starts_with('{')) {
        let message: Message = serde_json::from_str(line)
            .with_context(|| format!("cargo: a build message is not JSON: {line}"))?;
        let Some(target) = &message.target else {
            continue;
        };
        if message.reason != "compiler-artifact"
            || target.name != bin
            || !target.kind.iter().any(|k| k == "bin")
        {
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
    fn the_manifest_is_found_above_a_folder() {
        let dir = tempfile::tempdir().unwrap();
        let inner = dir.path().join("products").join("pipe");
        std::fs::create_dir_all(&inner).unwrap();
        assert!(manifest_above(&inner).is_none_or(|m| !m.starts_with(dir.path())));
        std::fs::write(dir.path().join("Cargo.toml"), "").unwrap();
        assert_eq!(manifest_above(&inner), Some(dir.path().join("Cargo.toml")));
    }
}
