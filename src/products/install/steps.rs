//! The commands an install runs: Maven builds (the common module first,
//! where an app builds on it) and pip's virtualenvs.

use std::path::Path;
use std::process::Command;

use super::fingerprint::common_module;
use crate::config::Product;

/// A Maven app's install: the common module first when the app depends on
/// it, then the app.
pub(super) fn maven_steps(
    product: &Product,
    property: &str,
    version: &str,
    dir: &Path,
) -> Vec<Command> {
    let common = common_module(product).map(|module| maven_install_common(&module, dir));
    common
        .into_iter()
        .chain([maven_build(product.dir(), property, version, dir)])
        .collect()
}

/// `mvn install` of the common module into the local Maven repository, where
/// the app's build finds it; its own build output goes to `<dir>/common`.
fn maven_install_common(module: &Path, dir: &Path) -> Command {
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "-q", "-f"])
        .arg(module.join("pom.xml"))
        .arg(format!(
            "-Dsuite.build.dir={}",
            dir.join("common").display()
        ))
        .args(["-DskipTests", "install"]);
    mvn
}

/// `mvn package` of the product's pom, building into `<dir>/build`.
fn maven_build(product_dir: &Path, property: &str, version: &str, dir: &Path) -> Command {
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "-q", "-f"])
        .arg(product_dir.join("pom.xml"))
        .arg(format!("-D{property}={version}"))
        .arg(format!("-Dsuite.build.dir={}", dir.join("build").display()))
        .args(["-DskipTests", "package"]);
    mvn
}

/// `mvn dependency:copy-dependencies` of the product's pom: the jars it lists
/// and their runtime dependencies, into `<dir>/jars`.
pub(super) fn maven_jars(product_dir: &Path, property: &str, version: &str, dir: &Path) -> Command {
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "-q", "-f"])
        .arg(product_dir.join("pom.xml"))
        .arg(format!("-D{property}={version}"))
        .arg(format!("-DoutputDirectory={}", dir.join("jars").display()))
        .args(["-DincludeScope=runtime", "dependency:copy-dependencies"]);
    mvn
}

/// A virtualenv in `<dir>/venv`, then pip installs `packages` into it.
pub(super) fn pip_install(packages: &[String], version: &str, dir: &Path) -> Vec<Command> {
    let venv = dir.join("venv");
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(&venv);
    let mut pip = Command::new(venv.join("bin").join("pip"));
    pip.args(["install", "--disable-pip-version-check"])
        .args(packages.iter().map(|p| p.replace("{version}", version)));
    vec![create, pip]
}
