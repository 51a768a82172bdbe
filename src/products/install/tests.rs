//! The checks of install.

use super::fingerprint::{common_module, COMMON_ARTIFACT, COMMON_MODULE};
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
    assert_eq!(maven_steps(&p, "x.version", "1.0", dir.path()).len(), 1);
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
    let args: Vec<Vec<String>> = steps
        .iter()
        .map(|s| {
            s.get_args()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
        .collect();
    assert_eq!(args.len(), 2);
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
