//! The suite's modules stand in layers: each uses only modules below it,
//! and the model (what a record holds) uses none. A module that reaches up,
//! or two that reach each other, fail here with the path that does it.
//! Tests are left out: a module's checks may use what builds on it.

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

#[test]
fn no_module_uses_one_that_uses_it() {
    let uses = module_uses(&src());
    if let Some(found) = circle(&uses) {
        let steps: Vec<String> = found
            .windows(2)
            .map(|pair| {
                format!(
                    "{} -> {} ({})",
                    pair[0],
                    pair[1],
                    uses[&pair[0]][&pair[1]].display()
                )
            })
            .collect();
        panic!("a circle of modules: {}", steps.join("; "));
    }
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
