//! The suite's modules stand in layers: each uses only modules below it,
//! and the model (what a record holds) uses none. A module that reaches up,
//! or two that reach each other, fail here with the path that does it; so do
//! two files of one folder (in the suite or a crate of the workspace) that
//! reach each other. Tests are left out: a module's checks may use what
//! builds on it. No Rust file, tests included, grows past
//! [`LONGEST_FILE`] lines: a long file is split by concept before it lands
//! (clippy's `too_many_lines` does the same for functions).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, tests left out.
fn sources(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.is_dir() {
            if name != "tests" && name != "testdata" {
                sources(&path, files);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            files.push(path);
        }
    }
}

/// The code of a file before its tests (which stand at its end), its
/// comment lines left out.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let code = match text.find("#[cfg(test)]") {
        Some(at) => &text[..at],
        None => &text,
    };
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The suite's modules crossed with the ones each uses (`crate::name`),
/// each use with the first file that makes it.
fn module_uses(src: &Path) -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let mut uses: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for entry in std::fs::read_dir(src).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().to_string();
        if name == "lib" || name == "main" || name == "testdata" {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            sources(&path, &mut files);
        } else {
            files.push(path.clone());
        }
        let used = uses.entry(name.clone()).or_default();
        for file in files {
            let code = code_of(&file);
            for (at, _) in code.match_indices("crate::") {
                let rest = &code[at + "crate::".len()..];
                let target: String = rest
                    .chars()
                    .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                    .collect();
                if !target.is_empty() && target != name {
                    used.entry(target).or_insert_with(|| file.clone());
                }
            }
        }
    }
    uses
}

/// A circle among `uses`, as the modules around it, if there is one.
fn circle(uses: &BTreeMap<String, BTreeMap<String, PathBuf>>) -> Option<Vec<String>> {
    fn visit(
        module: &str,
        uses: &BTreeMap<String, BTreeMap<String, PathBuf>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(start) = path.iter().position(|m| m == module) {
            let mut found = path[start..].to_vec();
            found.push(module.to_string());
            return Some(found);
        }
        if !done.insert(module.to_string()) {
            return None;
        }
        path.push(module.to_string());
        for target in uses.get(module).into_iter().flat_map(|u| u.keys()) {
            if let Some(found) = visit(target, uses, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    uses.keys()
        .find_map(|module| visit(module, uses, &mut Vec::new(), &mut done))
}

/// A file's module path below its crate root: `report/svg/mod.rs` is
/// `["report", "svg"]`, `report/cdf.rs` is `["report", "cdf"]`.
fn module_path(root: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(root).unwrap().with_extension("");
    let mut path: Vec<String> = relative
        .iter()
        .map(|part| part.to_string_lossy().to_string())
        .collect();
    if path.last().is_some_and(|last| last == "mod") {
        path.pop();
    }
    path
}

/// The module paths `code` (of the file at module path `at`) reaches with
/// `crate::`, `self::` and `super::` paths, braces of a `use` opened.
fn reached(code: &str, at: &[String]) -> Vec<Vec<String>> {
    let ident = |text: &str| -> String {
        text.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for start in 0..code.len() {
        let boundary = start == 0
            || !(bytes[start - 1].is_ascii_alphanumeric()
                || bytes[start - 1] == b'_'
                || bytes[start - 1] == b':');
        if !boundary || !code.is_char_boundary(start) {
            continue;
        }
        let rest = &code[start..];
        let (mut base, mut tail) = if let Some(tail) = rest.strip_prefix("crate::") {
            (Vec::new(), tail)
        } else if let Some(tail) = rest.strip_prefix("self::") {
            (at.to_vec(), tail)
        } else if rest.starts_with("super::") {
            (at.to_vec(), rest)
        } else {
            continue;
        };
        while let Some(after) = tail.strip_prefix("super::") {
            base.pop();
            tail = after;
        }
        let names: Vec<String> = match tail.strip_prefix('{') {
            Some(group) => braced_items(group)
                .iter()
                .map(|item| ident(item.trim_start()))
                .collect(),
            None => vec![ident(tail)],
        };
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            let mut target = base.clone();
            target.push(name);
            found.push(target);
        }
    }
    found
}

/// The items of a `use` group, `group` being what follows its `{`: split at
/// its own commas, up to its own `}`.
fn braced_items(group: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut item_start) = (0, 0);
    for (at, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(&group[item_start..at]);
                return items;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&group[item_start..at]);
                item_start = at + 1;
            }
            _ => {}
        }
    }
    items
}

/// Within each folder under `root` (a crate's src), which of its files and
/// subfolders uses which other, each use with the first file that makes it;
/// a folder's own mod.rs, which declares them, is left out.
fn folder_uses(root: &Path) -> BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, PathBuf>>> {
    let mut files = Vec::new();
    sources(root, &mut files);
    let mut folders: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, PathBuf>>> =
        BTreeMap::new();
    for file in &files {
        let at = module_path(root, file);
        for target in reached(&code_of(file), &at) {
            // The deepest folder both paths lie in, and the child of it on
            // each side: siblings when both children exist and differ.
            let shared = at.iter().zip(&target).take_while(|(a, b)| a == b).count();
            let (Some(from), Some(to)) = (at.get(shared), target.get(shared)) else {
                continue;
            };
            let folder = at[..shared].to_vec();
            let is_child = |name: &str| {
                let dir = root.join(folder.join("/"));
                dir.join(format!("{name}.rs")).is_file() || dir.join(name).join("mod.rs").is_file()
            };
            if from != to && is_child(to) {
                folders
                    .entry(folder)
                    .or_default()
                    .entry(from.clone())
                    .or_default()
                    .entry(to.clone())
                    .or_insert_with(|| file.clone());
            }
        }
    }
    folders
}

/// The source roots of the workspace: the suite's and each crate's.
fn crate_roots() -> Vec<PathBuf> {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut roots = vec![workspace.join("src")];
    for entry in std::fs::read_dir(workspace.join("crates"))
        .unwrap()
        .flatten()
    {
        let src = entry.path().join("src");
        if src.is_dir() {
            roots.push(src);
        }
    }
    roots
}

/// The most lines a Rust file of the workspace may have.
const LONGEST_FILE: usize = 600;

/// Every `.rs` file under `dir`, its tests included, with its line count.
fn line_counts(dir: &Path, counts: &mut Vec<(PathBuf, usize)>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            line_counts(&path, counts);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let lines = std::fs::read_to_string(&path).unwrap().lines().count();
            counts.push((path, lines));
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_model_uses_nothing_of_the_suite() {
    let uses = module_uses(&src());
    let model = &uses["model"];
    assert!(
        model.is_empty(),
        "the model uses {}",
        model
            .iter()
            .map(|(m, file)| format!("crate::{m} ({})", file.display()))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// A circle's steps, each with the file that makes it: `a -> b (a.rs); ...`.
fn circle_steps(found: &[String], uses: &BTreeMap<String, BTreeMap<String, PathBuf>>) -> String {
    found
        .windows(2)
        .map(|pair| {
            format!(
                "{} -> {} ({})",
                pair[0],
                pair[1],
                uses[&pair[0]][&pair[1]].display()
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn no_module_uses_one_that_uses_it() {
    let uses = module_uses(&src());
    if let Some(found) = circle(&uses) {
        panic!("a circle of modules: {}", circle_steps(&found, &uses));
    }
}

#[test]
fn no_two_files_of_a_folder_use_each_other() {
    let mut circles = Vec::new();
    for root in crate_roots() {
        for (folder, uses) in folder_uses(&root) {
            if let Some(found) = circle(&uses) {
                circles.push(format!(
                    "in {}/{}: {}",
                    root.display(),
                    folder.join("/"),
                    circle_steps(&found, &uses)
                ));
            }
        }
    }
    assert!(
        circles.is_empty(),
        "circles of files:\n{}",
        circles.join("\n")
    );
}

/// Two files of a folder that reach each other through `super::`, one of
/// them by a braced `use`, make a circle; a folder's mod.rs and a file of
/// another folder do not count.
#[test]
fn a_circle_inside_a_folder_is_found() {
    let root = tempfile::tempdir().unwrap();
    let write = |path: &str, text: &str| {
        let path = root.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod report;\npub mod model;\n");
    write("model.rs", "pub struct Record;\n");
    write(
        "report/mod.rs",
        "mod cdf;\nmod latency;\nuse cdf::chart;\npub struct Page;\n",
    );
    write(
        "report/cdf.rs",
        "use super::latency::runs;\nuse super::Page;\nuse crate::model::Record;\n",
    );
    write(
        "report/latency.rs",
        "use super::{Page, cdf::{chart, Axis}};\nstruct Run { data: u8 }\n",
    );
    write("report/data.rs", "pub struct Link;\n");
    let uses = &folder_uses(root.path())[&vec!["report".to_string()]];
    assert_eq!(circle(uses).unwrap(), ["cdf", "latency", "cdf"]);
    assert!(
        !uses["latency"].contains_key("data"),
        "a field named like a sibling after a use group is no use of it: {uses:?}"
    );
    write("report/latency.rs", "use super::Page;\n");
    let uses = folder_uses(root.path());
    assert!(uses.values().all(|u| circle(u).is_none()), "{uses:?}");
}

#[test]
fn a_circle_is_found_where_there_is_one() {
    let edge = |to: &str| (to.to_string(), PathBuf::from("x.rs"));
    let uses = BTreeMap::from([
        ("config".to_string(), BTreeMap::from([edge("model")])),
        ("model".to_string(), BTreeMap::new()),
        ("report".to_string(), BTreeMap::from([edge("runner")])),
        (
            "runner".to_string(),
            BTreeMap::from([edge("report"), edge("config")]),
        ),
    ]);
    assert_eq!(circle(&uses).unwrap(), ["report", "runner", "report"]);
    let mut layered = uses.clone();
    layered.get_mut("runner").unwrap().remove("report");
    assert_eq!(circle(&layered), None);
}

#[test]
fn no_rust_file_is_longer_than_the_longest_allowed() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut counts = Vec::new();
    for root in crate_roots() {
        line_counts(&root, &mut counts);
    }
    line_counts(&workspace.join("tests"), &mut counts);
    // The walk reached the suite, the crates and the tests.
    for file in [
        "src/main.rs",
        "crates/rustpipe/src/main.rs",
        "tests/layers.rs",
    ] {
        assert!(
            counts.iter().any(|(path, _)| path.ends_with(file)),
            "{file} was not counted"
        );
    }
    let long: Vec<String> = counts
        .iter()
        .filter(|(_, lines)| *lines > LONGEST_FILE)
        .map(|(path, lines)| {
            format!(
                "{} ({lines})",
                path.strip_prefix(workspace).unwrap().display()
            )
        })
        .collect();
    assert!(
        long.is_empty(),
        "over {LONGEST_FILE} lines, split by concept: {}",
        long.join(", ")
    );
}
