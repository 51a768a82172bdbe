//! Where a result came from: the suite's own git commit, recorded with each
//! run so a page can say which code measured its figures.

use std::path::Path;
use std::process::Command;

/// The short commit of the git checkout at `root` (`git rev-parse --short
/// HEAD`), or None when git is missing or `root` is not in a repository.
pub fn suite_commit(root: &Path) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let commit = String::from_utf8(output.stdout).ok()?.trim().to_string();
    (!commit.is_empty()).then_some(commit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suites_checkout_has_a_commit_and_a_plain_folder_has_none() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        if root.join(".git").exists() {
            let commit = suite_commit(root).unwrap();
            assert!(commit.len() >= 7 && commit.chars().all(|c| c.is_ascii_hexdigit()));
        }
        let plain = tempfile::tempdir().unwrap();
        assert_eq!(suite_commit(plain.path()), None);
    }
}
