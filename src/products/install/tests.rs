//! The checks of install.

use std::fs;
use std::process::Command;

use super::constraints::CONSTRAINTS_DIR;
use super::failure::failure_reason;
use super::fingerprint::fingerprint;
use super::folder_install::install_steps;
use super::layout::MARKER;
use super::steps::{common_module, maven_steps, COMMON_ARTIFACT, COMMON_MODULE};
use super::steps::{DEPENDENCY_TREE, INSTALLED_PACKAGES};
use super::*;
use crate::config::Product;
use crate::products::cargo;

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
    // An install an older suite made records nothing of what it holds.
    assert_ne!(
        availability(&p, Some("2.0"), &cache),
        Availability::Installed
    );
    fs::write(folder.join(INSTALLED_PACKAGES), "x==2.0\n").unwrap();
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
fn a_changed_common_source_is_another_install() {
    let dir = tempfile::tempdir().unwrap();
    let p = product(
        dir.path(),
        "{kind: maven, version_property: x.version}",
        "[java, -jar, \"{install}/build/app.jar\"]",
    );
    let common = dir.path().join(COMMON_MODULE);
    let shared = common.join("src/main/java/Shared.java");
    fs::create_dir_all(shared.parent().unwrap()).unwrap();
    fs::write(common.join("pom.xml"), "<project/>").unwrap();
    fs::write(&shared, "class Shared {}").unwrap();
    // An app whose pom does not depend on the module neither builds nor
    // fingerprints it.
    fs::write(p.dir().join("pom.xml"), "<project/>").unwrap();
    assert_eq!(common_module(&p), None);
    let alone = fingerprint(&p, "1.0");
    fs::write(&shared, "class Shared { int x; }").unwrap();
    assert_eq!(alone, fingerprint(&p, "1.0"));
    assert_eq!(maven_steps(&p, "x.version", "1.0", dir.path()).len(), 2);
    // One that does: built first, and each of its files is part of the install.
    fs::write(
        p.dir().join("pom.xml"),
        format!("<project><dependencies><dependency><groupId>streamsuite</groupId>{COMMON_ARTIFACT}<version>1</version></dependency></dependencies></project>"),
    )
    .unwrap();
    assert_eq!(common_module(&p), Some(common.clone()));
    let before = fingerprint(&p, "1.0");
    fs::write(&shared, "class Shared { int y; }").unwrap();
    let changed = fingerprint(&p, "1.0");
    assert_ne!(before, changed);
    fs::write(
        common.join("pom.xml"),
        "<project><!-- another --></project>",
    )
    .unwrap();
    assert_ne!(changed, fingerprint(&p, "1.0"));
    // Its build output is not.
    let built = fingerprint(&p, "1.0");
    fs::create_dir_all(common.join("target")).unwrap();
    fs::write(common.join("target/Shared.class"), "x").unwrap();
    assert_eq!(built, fingerprint(&p, "1.0"));
    let steps = maven_steps(&p, "x.version", "1.0", dir.path());
    let args: Vec<Vec<String>> = steps.iter().map(|s| args_of(&s.command)).collect();
    assert_eq!(args.len(), 3);
    assert!(
        args[0].contains(&common.join("pom.xml").display().to_string()),
        "{args:?}"
    );
    assert_eq!(
        args[0].last().map(String::as_str),
        Some("install"),
        "{args:?}"
    );
    assert!(
        args[1].contains(&p.dir().join("pom.xml").display().to_string()),
        "{args:?}"
    );
    assert_eq!(
        args[1].last().map(String::as_str),
        Some("package"),
        "{args:?}"
    );
    // Then the tree the build resolved, beside the install.
    let tree = format!(
        "-DoutputFile={}",
        dir.path().join(DEPENDENCY_TREE).display()
    );
    assert!(args[2].contains(&tree), "{args:?}");
    assert!(
        args[2].last().is_some_and(|goal| goal.ends_with(":tree")),
        "{args:?}"
    );
}

fn args_of(command: &Command) -> Vec<String> {
    command
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

/// Writes `text` as the constraints file of `p` at `version`.
fn write_constraints(p: &Product, version: &str, text: &str) -> PathBuf {
    let file = p.dir().join(CONSTRAINTS_DIR).join(format!("{version}.txt"));
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_pip_install_is_held_to_its_versions_constraints_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = product(
        dir.path(),
        "{kind: pip, packages: [\"x=={version}\"]}",
        "[x]",
    );
    let file = write_constraints(&p, "1.0", "x==1.0\ny==2.1\n");
    let into = dir.path().join("install");
    let (steps, constraints) = install_steps(&p, "1.0", &into).unwrap();
    assert_eq!(constraints.as_deref(), Some(file.as_path()));
    let pip = args_of(&steps[1].command);
    let at = pip.iter().position(|a| a == "-c").expect("pip install -c");
    assert_eq!(pip[0], "install", "{pip:?}");
    assert_eq!(pip[at + 1], file.display().to_string(), "{pip:?}");
    assert_eq!(pip.last().map(String::as_str), Some("x==1.0"), "{pip:?}");
    // Then pip freeze, into the install's record.
    let freeze = steps.last().unwrap();
    assert_eq!(args_of(&freeze.command)[0], "freeze");
    assert_eq!(freeze.stdout, Some(into.join(INSTALLED_PACKAGES)));
    // Another version has no file: pip resolves it unpinned.
    let (steps, constraints) = install_steps(&p, "1.1", &into).unwrap();
    assert_eq!(constraints, None);
    let pip = args_of(&steps[1].command);
    assert!(!pip.contains(&"-c".to_string()), "{pip:?}");
    assert_eq!(pip.last().map(String::as_str), Some("x==1.1"), "{pip:?}");
    assert_eq!(
        steps.last().unwrap().stdout,
        Some(into.join(INSTALLED_PACKAGES))
    );
}

#[test]
fn pip_jars_record_their_tree_beside_the_packages() {
    let dir = tempfile::tempdir().unwrap();
    let p = product(
        dir.path(),
        "{kind: pip, packages: [x], jars: x.version}",
        "[x]",
    );
    let into = dir.path().join("install");
    let (steps, _) = install_steps(&p, "1.0", &into).unwrap();
    let tree = format!("-DoutputFile={}", into.join(DEPENDENCY_TREE).display());
    assert!(args_of(&steps.last().unwrap().command).contains(&tree));
    assert!(steps
        .iter()
        .any(|s| s.stdout == Some(into.join(INSTALLED_PACKAGES))));
}

#[test]
fn a_changed_constraints_file_is_another_install() {
    let dir = tempfile::tempdir().unwrap();
    let p = product(dir.path(), "{kind: pip, packages: [x]}", "[x]");
    let cache = cache(dir.path());
    let folder = cache.product_dir("p", "1.0");
    fs::create_dir_all(&folder).unwrap();
    fs::write(folder.join(INSTALLED_PACKAGES), "x==1.0\n").unwrap();
    let unpinned = fingerprint(&p, "1.0");
    fs::write(folder.join(MARKER), &unpinned).unwrap();
    assert_eq!(availability(&p, None, &cache), Availability::Installed);
    // A file added for the version: the unpinned install is redone.
    let file = write_constraints(&p, "1.0", "x==1.0\ny==2.0\n");
    let pinned = fingerprint(&p, "1.0");
    assert_ne!(unpinned, pinned);
    assert_ne!(availability(&p, None, &cache), Availability::Installed);
    // The file changed: so is the install.
    fs::write(&file, "x==1.0\ny==2.1\n").unwrap();
    assert_ne!(pinned, fingerprint(&p, "1.0"));
    // Another version's file is no part of this one.
    let this = fingerprint(&p, "1.0");
    write_constraints(&p, "1.1", "x==1.1\n");
    assert_eq!(this, fingerprint(&p, "1.0"));
}

#[test]
fn a_malformed_constraints_file_is_one_line_naming_product_version_and_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = product(dir.path(), "{kind: pip, packages: [x]}", "[x]");
    let file = write_constraints(&p, "1.0", "# pinned\nx==1.0\ny>=2\n");
    let cache = cache(dir.path());
    let err = ensure_installed(&p, None, &cache, &Interrupt::none()).unwrap_err();
    let err = format!("{err:#}");
    assert!(err.starts_with("installing p 1.0: "), "{err}");
    assert!(
        err.contains(&format!("{}:3: `y>=2`", file.display())),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
    // Nothing was installed.
    assert!(!cache.product_dir("p", "1.0").exists());
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
fn the_reason_of_a_failed_install_is_its_failed_goal_or_last_error_line() {
    let pip = "Collecting x\nERROR: Could not find a version that satisfies the requirement x==9 (from versions: 1.0)\nERROR: No matching distribution found for x==9\n\n";
    assert_eq!(
        failure_reason(pip),
        "ERROR: No matching distribution found for x==9"
    );
    let maven = "[INFO] BUILD FAILURE\n[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project s:app:jar:1: The following artifacts could not be resolved: org.apache.kafka:kafka-streams:jar:9.9.9 (absent) -> [Help 1]\n[ERROR] \n[ERROR] Re-run Maven using the -X switch to enable full debug logging.\n[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/DependencyResolutionException\n";
    assert_eq!(
        failure_reason(maven),
        "[ERROR] Failed to execute goal on project app: Could not resolve dependencies for project s:app:jar:1: The following artifacts could not be resolved: org.apache.kafka:kafka-streams:jar:9.9.9 (absent)"
    );
    let compile = "[ERROR] COMPILATION ERROR :\n[ERROR] Failed to execute goal compile on project app: Compilation failure\n[ERROR] /p/Clients.java:[97,41] cannot find symbol\n[ERROR]   symbol: variable X\n[ERROR] -> [Help 1]\n";
    assert_eq!(
        failure_reason(compile),
        "[ERROR] Failed to execute goal compile on project app: Compilation failure: /p/Clients.java:[97,41] cannot find symbol"
    );
    let conflict = "Looking in links: /opt/wheels\nERROR: Cannot install quixstreams==3.28.1 because these package versions have conflicting dependencies.\n\nThe conflict is caused by:\n    The user requested quixstreams==3.28.1\n    The user requested (constraint) quixstreams==3.28.0\n\nTo fix this you could try to:\n1. loosen the range of package versions you've specified\n\nERROR: ResolutionImpossible: for help visit https://pip.pypa.io/en/latest/topics/dependency-resolution/#dealing-with-dependency-conflicts\n";
    assert_eq!(
        failure_reason(conflict),
        "ERROR: Cannot install quixstreams==3.28.1 because these package versions have conflicting dependencies: The user requested quixstreams==3.28.1; The user requested (constraint) quixstreams==3.28.0"
    );
    assert_eq!(failure_reason("ERROR: real\n[ERROR]\n"), "ERROR: real");
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
        err.contains("--product-version applies to pip, maven and cargo"),
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
