//! The JVM product apps' common module (products/common/java): its JUnit
//! suite, run by Maven from the repository root. It checks the stateless
//! workload's decode and enrich against the suite's fixed cases
//! (products/common/stateless-cases.json) and the parsing of the BENCH_*
//! settings and client profile.

use std::process::Command;

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
