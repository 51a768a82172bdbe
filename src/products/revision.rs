//! A cargo product at a git revision of its own repository: the revision
//! resolved to a commit, a git worktree of that commit in the cache, and a
//! build there with its own target directory, once per commit.
//!
//! Layout: `<cache>/products/<name>/<commit>/` holds `src/` (the worktree),
//! `target/` (cargo's), `install.log`, `cargo-messages.json` and, written
//! last, `.installed` (the binary's path): a build without it is redone.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{anyhow, bail, Context, Result};

/// A revision resolved in the repository that holds the product's workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    /// The repository's top folder.
    pub top: PathBuf,
    /// The full commit hash.
    pub commit: String,
    /// The tag the revision named, when it was a tag.
    pub tag: Option<String>,
}

impl Revision {
    /// The commit's first 10 hex digits.
    pub fn short(&self) -> &str {
        &self.commit[..self.commit.len().min(10)]
    }

    /// The revision in words: the short commit, and the tag.
    pub fn label(&self) -> String {
        match &self.tag {
            Some(tag) => format!("{} ({tag})", self.short()),
            None => self.short().to_string(),
        }
    }
}

/// The version a build records: the package's version, `+` and the
/// commit's first 7 hex digits, then `-dirty` when a file the binary was
/// built from differs from that commit (`0.1.0+84e5455-dirty`), so that
/// two designs never share one version.
pub fn build_version(package_version: &str, commit: &str, dirty: bool) -> String {
    let short = &commit[..commit.len().min(7)];
    let mark = if dirty { "-dirty" } else { "" };
    format!("{package_version}+{short}{mark}")
}

/// The version of the binary `bin`, built from the working tree of the
/// repository holding `workspace`: see [`build_version`]. Its files are the
/// ones cargo's dep-info beside the binary lists (with the workspace's
/// manifest and lock file), so a changed file the binary does not use
/// leaves it clean. Outside a git repository, the package's version alone.
pub fn working_tree_version(workspace: &Path, bin: &Path, package_version: &str) -> Result<String> {
    let Some(top) = git(workspace, &["rev-parse", "--show-toplevel"])? else {
        return Ok(package_version.to_string());
    };
    let top = PathBuf::from(top);
    let commit = git(&top, &["rev-parse", "HEAD"])?
        .ok_or_else(|| anyhow!("the repository at {} has no commit yet", top.display()))?;
    let mut dep_info = bin.as_os_str().to_owned();
    dep_info.push(".d");
    let mut inputs: Vec<PathBuf> = match std::fs::read_to_string(&dep_info) {
        Ok(text) => dep_info_sources(&text),
        // No dep-info: the whole workspace counts.
        Err(_) => vec![workspace.to_path_buf()],
    };
    inputs.extend(["Cargo.toml", "Cargo.lock"].map(|f| workspace.join(f)));
    let top_real = std::fs::canonicalize(&top).unwrap_or_else(|_| top.clone());
    let inside: Vec<String> = inputs
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .filter(|p| p.starts_with(&top_real))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let mut args = vec!["status", "--porcelain", "--untracked-files=all", "--"];
    args.extend(inside.iter().map(String::as_str));
    let status =
        git(&top, &args)?.ok_or_else(|| anyhow!("`git status` failed in {}", top.display()))?;
    Ok(build_version(package_version, &commit, !status.is_empty()))
}

/// The source files a make-style dep-info file (`out: a.rs b\ c.rs`) names
/// for its first target; an escaped space stays in its path.
fn dep_info_sources(text: &str) -> Vec<PathBuf> {
    let Some((_, sources)) = text.lines().next().and_then(|l| l.split_once(": ")) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    let mut current = String::new();
    let mut chars = sources.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.extend(chars.next()),
            ' ' => {
                if !current.is_empty() {
                    paths.push(PathBuf::from(std::mem::take(&mut current)));
                }
            }
            c => current.push(c),
        }
    }
    if !current.is_empty() {
        paths.push(PathBuf::from(current));
    }
    paths
}

/// `git -C dir ARGS...`: its trimmed standard output, or None when it fails.
fn git(dir: &Path, args: &[&str]) -> Result<Option<String>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("running `git`; building a product at a revision needs git on PATH")?;
    Ok(out
        .status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string()))
}

/// Resolves `rev` (a tag, a branch, a commit) in the git repository that
/// holds `workspace`, for the product `name`.
pub fn resolve(name: &str, workspace: &Path, rev: &str) -> Result<Revision> {
    let top = git(workspace, &["rev-parse", "--show-toplevel"])?.ok_or_else(|| {
        anyhow!(
            "{name}: --product-version {rev} needs a git repository, and {} is in none",
            workspace.display()
        )
    })?;
    let spec = format!("{rev}^{{commit}}");
    let commit = git(workspace, &["rev-parse", "--verify", "--quiet", &spec])?
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            anyhow!("{name}: `{rev}` is no revision of the repository at {top}; give a tag, a branch or a commit")
        })?;
    let tag_ref = format!("refs/tags/{rev}");
    let tag = git(workspace, &["rev-parse", "--verify", "--quiet", &tag_ref])?
        .filter(|t| !t.is_empty())
        .map(|_| rev.to_string());
    Ok(Revision {
        top: PathBuf::from(top),
        commit,
        tag,
    })
}

/// Fails unless the commit holds a Cargo package named `package`.
pub fn check_package(name: &str, revision: &Revision, package: &str) -> Result<()> {
    let pattern = format!("^name *= *\"{package}\"");
    let found = git(
        &revision.top,
        &[
            "grep",
            "-l",
            "-E",
            &pattern,
            &revision.commit,
            "--",
            "*Cargo.toml",
        ],
    )?;
    if found.is_none_or(|f| f.is_empty()) {
        bail!(
            "{name}: commit {} has no Cargo package `{package}` (it predates it); choose a later revision",
            revision.short()
        );
    }
    Ok(())
}

/// A fresh detached worktree of the commit at `path` (an old one, left by an
/// interrupted build, is removed first).
pub fn add_worktree(revision: &Revision, path: &Path) -> Result<()> {
    if path.exists() {
        let path_arg = path.to_string_lossy();
        git(
            &revision.top,
            &["worktree", "remove", "--force", path_arg.as_ref()],
        )?;
        if path.exists() {
            std::fs::remove_dir_all(path)
                .with_context(|| format!("removing {}", path.display()))?;
        }
    }
    git(&revision.top, &["worktree", "prune"])?;
    let out = Command::new("git")
        .arg("-C")
        .arg(&revision.top)
        .args(["worktree", "add", "--detach"])
        .arg(path)
        .arg(&revision.commit)
        .output()
        .context("running `git worktree add`")?;
    if !out.status.success() {
        bail!(
            "git worktree add of {} into {} failed: {}",
            revision.short(),
            path.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// Where the workspace lies in a worktree at `worktree`: at the same place
/// relative to the repository's top as `workspace` does now.
pub fn workspace_in(revision: &Revision, workspace: &Path, worktree: &Path) -> PathBuf {
    match workspace.strip_prefix(&revision.top) {
        Ok(relative) => worktree.join(relative),
        Err(_) => worktree.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    }

    /// A repository with a commit without the package, then one with it
    /// (tagged v1); None when git is missing.
    fn repository() -> Option<tempfile::TempDir> {
        Command::new("git").arg("--version").output().ok()?;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        run(d, &["init", "-q"]);
        run(d, &["config", "user.email", "t@example.com"]);
        run(d, &["config", "user.name", "t"]);
        std::fs::write(d.join("README"), "x").unwrap();
        run(d, &["add", "."]);
        run(d, &["commit", "-q", "-m", "first"]);
        std::fs::create_dir_all(d.join("crates/pipe")).unwrap();
        std::fs::write(
            d.join("crates/pipe/Cargo.toml"),
            "[package]\nname = \"pipe\"\nversion = \"0.1.0\"\n",
        )
        .unwrap();
        run(d, &["add", "."]);
        run(d, &["commit", "-q", "-m", "second"]);
        run(d, &["tag", "v1"]);
        Some(dir)
    }

    #[test]
    fn an_unknown_revision_is_a_one_line_error() {
        let Some(repo) = repository() else { return };
        let err = resolve("pipe", repo.path(), "no-such-rev")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("pipe: `no-such-rev` is no revision"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
    }

    #[test]
    fn a_tag_resolves_to_its_commit_and_keeps_its_name() {
        let Some(repo) = repository() else { return };
        let tagged = resolve("pipe", repo.path(), "v1").unwrap();
        let head = resolve("pipe", repo.path(), "HEAD").unwrap();
        assert_eq!(tagged.commit, head.commit);
        assert_eq!(tagged.commit.len(), 40);
        assert_eq!(tagged.tag.as_deref(), Some("v1"));
        assert_eq!(head.tag, None);
        assert_eq!(tagged.label(), format!("{} (v1)", &head.commit[..10]));
        assert_eq!(head.label(), &head.commit[..10]);
    }

    #[test]
    fn a_build_version_names_the_commit_and_a_changed_tree() {
        let commit = "84e5455c0ffee0000000000000000000000000000";
        assert_eq!(build_version("0.1.0", commit, false), "0.1.0+84e5455");
        assert_eq!(build_version("0.1.0", commit, true), "0.1.0+84e5455-dirty");
    }

    #[test]
    fn dep_info_lists_the_first_targets_sources() {
        let text = "/t/release/pipe: /w/src/main.rs /w/my\\ dir/lib.rs\n\n/w/src/main.rs:\n";
        assert_eq!(
            dep_info_sources(text),
            [
                PathBuf::from("/w/src/main.rs"),
                PathBuf::from("/w/my dir/lib.rs")
            ]
        );
        assert!(dep_info_sources("").is_empty());
    }

    #[test]
    fn only_a_change_to_the_binarys_own_files_makes_it_dirty() {
        let Some(repo) = repository() else { return };
        let d = repo.path();
        let source = d.join("crates/pipe/main.rs");
        std::fs::write(&source, "fn main() {}").unwrap();
        run(d, &["add", "."]);
        run(d, &["commit", "-q", "-m", "third"]);
        let head = resolve("pipe", d, "HEAD").unwrap();
        let bin = d.join("pipe-bin");
        std::fs::write(
            d.join("pipe-bin.d"),
            format!("{}: {}\n", bin.display(), source.display()),
        )
        .unwrap();
        let clean = build_version("0.1.0", &head.commit, false);
        let version = |dir: &Path| working_tree_version(dir, &bin, "0.1.0").unwrap();
        // the binary and its dep-info are untracked, but no input of it
        assert_eq!(version(d), clean);
        std::fs::write(d.join("README"), "changed, but not built from").unwrap();
        assert_eq!(version(d), clean);
        std::fs::write(&source, "fn main() { println!(); }").unwrap();
        assert_eq!(version(d), format!("{clean}-dirty"));
        let outside = tempfile::tempdir().unwrap();
        assert_eq!(version(outside.path()), "0.1.0");
    }

    #[test]
    fn a_commit_before_the_package_is_a_clear_error() {
        let Some(repo) = repository() else { return };
        let old = resolve("pipe", repo.path(), "HEAD~1").unwrap();
        let err = check_package("pipe", &old, "pipe").unwrap_err().to_string();
        assert!(err.contains("has no Cargo package `pipe`"), "{err}");
        assert!(err.contains(old.short()), "{err}");
        let new = resolve("pipe", repo.path(), "v1").unwrap();
        check_package("pipe", &new, "pipe").unwrap();
    }

    #[test]
    fn a_worktree_holds_the_commit_and_the_workspace_is_found_in_it() {
        let Some(repo) = repository() else { return };
        let rev = resolve("pipe", repo.path(), "v1").unwrap();
        let cache = tempfile::tempdir().unwrap();
        let tree = cache.path().join("src");
        add_worktree(&rev, &tree).unwrap();
        assert!(tree.join("crates/pipe/Cargo.toml").is_file());
        // again, over a leftover
        add_worktree(&rev, &tree).unwrap();
        assert!(tree.join("crates/pipe/Cargo.toml").is_file());
        let top = PathBuf::from(&rev.top);
        assert_eq!(
            workspace_in(&rev, &top.join("crates"), &tree),
            tree.join("crates")
        );
    }
}
