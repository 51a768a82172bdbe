//! The suite's version line, `0.1.0 (commit 1a2b3c4)`, for `suite --version`:
//! the package's version and the checkout's commit when it was built
//! from one (the version alone otherwise).

use std::process::Command;

/// `git ARGS`'s output, trimmed; none outside a checkout or on an error.
fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|text| !text.is_empty())
}

fn main() {
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let line = match git(&["rev-parse", "--short", "HEAD"]) {
        Some(commit) => format!("{version} (commit {commit})"),
        None => version,
    };
    println!("cargo:rustc-env=SUITE_VERSION={line}");
    // A checkout moves HEAD, a commit the branch's ref file (or packed-refs
    // after a gc). Each is named as a file: git finds them in a linked
    // worktree too, and a file's change is what cargo sees for certain.
    let branch = git(&["symbolic-ref", "-q", "HEAD"]);
    let files = ["HEAD", branch.as_deref().unwrap_or("HEAD"), "packed-refs"]
        .map(|name| git(&["rev-parse", "--git-path", name]));
    for path in files.into_iter().flatten() {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
