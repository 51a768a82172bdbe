//! The JVM product apps' common module (products/common/java): its JUnit
//! suite, run by Maven from the repository root. It checks the stateless
//! workload's decode and enrich against the suite's fixed cases
//! (products/common/stateless-cases.json) and the parsing of the BENCH_*
//! settings and client profile. And a real Maven install, which records
//! the dependency tree it resolved.

use std::fs;
use std::process::Command;

use streamsuite::cache::Cache;
use streamsuite::config::Product;
use streamsuite::interrupt::Interrupt;
use streamsuite::products::ensure_installed;

#[test]
fn the_jvm_apps_common_module_passes_its_tests() {
    // The build output goes to cargo's scratch folder, not the source tree.
    let build = concat!(env!("CARGO_TARGET_TMPDIR"), "/bench-common");
    let output = Command::new("mvn")
        .args(["-B", "-q", "-f", "products/common/java/pom.xml"])
        .arg(format!("-Dsuite.build.dir={build}"))
        .arg("test")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("mvn runs (Maven and a JDK are needed for the JVM apps' tests)");
    assert!(
        output.status.success(),
        "mvn -f products/common/java/pom.xml test failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}

#[test]
fn a_maven_install_records_the_dependency_tree_it_resolved() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("products").join("p");
    fs::create_dir_all(&folder).unwrap();
    // One dependency, at the version the install is asked for; nothing to
    // compile, so the build needs only what the JVM apps' builds fetched.
    fs::write(
        folder.join("pom.xml"),
        "<project xmlns=\"http://maven.apache.org/POM/4.0.0\">\n\
         <modelVersion>4.0.0</modelVersion>\n\
         <groupId>streamsuite</groupId><artifactId>p</artifactId><version>1</version>\n\
         <packaging>pom</packaging>\n\
         <properties><slf4j.version>1.7.36</slf4j.version></properties>\n\
         <dependencies><dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId>\
         <version>${slf4j.version}</version></dependency></dependencies>\n\
         </project>\n",
    )
    .unwrap();
    let path = folder.join("product.yaml");
    fs::write(
        &path,
        "name: p\ndescription: d\nversion: 2.0.17\n\
         install: {kind: maven, version_property: slf4j.version}\n\
         start: [java]\nready: {stdout_contains: ready}\nworkloads: [stateless]\n\
         lines:\n  - {name: p, delivery: at-least-once, delivery_detail: x}\n\
         characteristics: {processing: a, engine: b, scaling: c, decode: d}\n",
    )
    .unwrap();
    let product = Product::from_file(&path).unwrap();
    let cache = Cache::at(dir.path().join("cache"));
    let installed = ensure_installed(&product, None, &cache, &Interrupt::none()).unwrap();
    let tree = fs::read_to_string(installed.dir.unwrap().join("dependency-tree.txt")).unwrap();
    assert!(tree.starts_with("streamsuite:p:pom:1"), "{tree}");
    assert!(
        tree.contains("org.slf4j:slf4j-api:jar:2.0.17:compile"),
        "{tree}"
    );
}
