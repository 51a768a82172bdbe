//! What an install was made from, so that a changed source installs again:
//! the version, the install section, for a pip install its version's
//! constraints file and, for a Maven app, its sources and those of the
//! common module it builds on.

use std::fs;
use std::path::{Path, PathBuf};

use super::constraints::constraints_path;
use super::layout::MARKER;
use super::steps::{common_module, records};
use crate::config::{Install, Product};

/// What an install was made from: the version, the install section, for
/// pip the version's constraints file (if it has one: an install made
/// without it, or with an older one, is another install) and, for a Maven
/// build, every file of the app's source and of the common module it builds
/// on (for pip's jars, the pom). A change to any of them makes the next run
/// install again, so no run starts a stale build.
pub(super) fn fingerprint(product: &Product, version: &str) -> String {
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
            if let Some(common) = common_module(product) {
                files.push(common.join("pom.xml"));
                source_files(&common.join("src"), &mut files);
            }
        }
        Install::Pip { ref jars, .. } => {
            let constraints = constraints_path(product, version);
            if constraints.exists() {
                files.push(constraints);
            }
            if jars.is_some() {
                files.push(product.dir().join("pom.xml"));
            }
        }
        _ => {}
    }
    files.sort();
    // Paths relative to the product's folder, and the common module's to the
    // products' folder: the same sources in another checkout (or a test's
    // copy) are the same install.
    let products = product.dir().parent().unwrap_or(product.dir());
    for file in files {
        let name = file
            .strip_prefix(product.dir())
            .or_else(|_| file.strip_prefix(products))
            .unwrap_or(&file);
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

/// Whether `dir` holds a whole install of what `product` at `version` is now,
/// with the records of what it holds (an older suite's install has none).
pub(super) fn is_current(product: &Product, version: &str, dir: &Path) -> bool {
    fs::read_to_string(dir.join(MARKER)).is_ok_and(|made| made == fingerprint(product, version))
        && records(&product.install)
            .iter()
            .all(|record| dir.join(record).is_file())
}
