//! The commands an install runs: Maven builds (the common module first,
//! where an app builds on it) and pip's virtualenvs, each followed by the
//! command that records what the install holds.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::config::{Install, Product};

/// `pip freeze` of a pip install's virtualenv, taken once pip installed it.
pub(super) const INSTALLED_PACKAGES: &str = "installed.txt";
/// The dependency tree Maven resolved for a build (or for pip's jars).
pub(super) const DEPENDENCY_TREE: &str = "dependency-tree.txt";
/// The dependency plugin that writes [`DEPENDENCY_TREE`]: named in full, so
/// Maven resolves no plugin prefix and, once the plugin is in the local
/// repository, needs no network (the build has resolved the artifacts).
const DEPENDENCY_PLUGIN: &str = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1";

/// One command of an install. Its output goes to the install's log, except
/// a record's, whose standard output is the record.
pub(super) struct Step {
    pub command: Command,
    /// The file its standard output is written to instead of the log.
    pub stdout: Option<PathBuf>,
}

impl From<Command> for Step {
    fn from(command: Command) -> Step {
        Step {
            command,
            stdout: None,
        }
    }
}

/// The Maven module of classes the JVM apps share, beside their folders.
pub(super) const COMMON_MODULE: &str = "common/java";
/// How an app's pom names the common module among its dependencies.
pub(super) const COMMON_ARTIFACT: &str = "<artifactId>bench-common</artifactId>";

/// The common module's folder, for a Maven app whose pom depends on it.
pub(super) fn common_module(product: &Product) -> Option<PathBuf> {
    if !matches!(product.install, Install::Maven { .. }) {
        return None;
    }
    let pom = std::fs::read_to_string(product.dir().join("pom.xml")).ok()?;
    let products = product.dir().parent()?;
    pom.contains(COMMON_ARTIFACT)
        .then(|| products.join(COMMON_MODULE))
}

/// The records an install of this kind leaves in its folder: a whole
/// install has each of them.
pub(super) fn records(install: &Install) -> &'static [&'static str] {
    match install {
        Install::Maven { .. } => &[DEPENDENCY_TREE],
        Install::Pip { jars: Some(_), .. } => &[INSTALLED_PACKAGES, DEPENDENCY_TREE],
        Install::Pip { .. } => &[INSTALLED_PACKAGES],
        Install::Builtin | Install::Cargo { .. } | Install::Binary { .. } => &[],
    }
}

/// A Maven app's install: the common module first when the app depends on
/// it, then the app, then its dependency tree.
pub(super) fn maven_steps(
    product: &Product,
    property: &str,
    version: &str,
    dir: &Path,
) -> Vec<Step> {
    let common = common_module(product).map(|module| maven_install_common(&module, dir));
    common
        .into_iter()
        .chain([
            maven_build(product.dir(), property, version, dir),
            maven_tree(product.dir(), property, version, dir),
        ])
        .map(Step::from)
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

/// `mvn dependency:tree` of the product's pom at `version`, into
/// `<dir>/dependency-tree.txt`.
fn maven_tree(product_dir: &Path, property: &str, version: &str, dir: &Path) -> Command {
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "-q", "-f"])
        .arg(product_dir.join("pom.xml"))
        .arg(format!("-D{property}={version}"))
        .arg(format!(
            "-DoutputFile={}",
            dir.join(DEPENDENCY_TREE).display()
        ))
        .arg(format!("{DEPENDENCY_PLUGIN}:tree"));
    mvn
}

/// The jars a Python API over a JVM engine loads: `mvn
/// dependency:copy-dependencies` of the product's pom, the jars it lists and
/// their runtime dependencies into `<dir>/jars`, then their tree.
pub(super) fn maven_jars(
    product_dir: &Path,
    property: &str,
    version: &str,
    dir: &Path,
) -> Vec<Step> {
    let mut mvn = Command::new("mvn");
    mvn.args(["-B", "-q", "-f"])
        .arg(product_dir.join("pom.xml"))
        .arg(format!("-D{property}={version}"))
        .arg(format!("-DoutputDirectory={}", dir.join("jars").display()))
        .args(["-DincludeScope=runtime", "dependency:copy-dependencies"]);
    [mvn, maven_tree(product_dir, property, version, dir)]
        .into_iter()
        .map(Step::from)
        .collect()
}

/// A virtualenv in `<dir>/venv`, then pip installs `packages` into it, held
/// to the pins of `constraints` when there are some, then `pip freeze` into
/// `<dir>/installed.txt`.
pub(super) fn pip_install(
    packages: &[String],
    version: &str,
    constraints: Option<&Path>,
    dir: &Path,
) -> Vec<Step> {
    let venv = dir.join("venv");
    let pip_program = venv.join("bin").join("pip");
    let mut create = Command::new("python3");
    create.args(["-m", "venv"]).arg(&venv);
    let mut pip = Command::new(&pip_program);
    pip.args(["install", "--disable-pip-version-check"]);
    if let Some(file) = constraints {
        pip.arg("-c").arg(file);
    }
    pip.args(packages.iter().map(|p| p.replace("{version}", version)));
    let mut freeze = Command::new(&pip_program);
    freeze.args(["freeze", "--disable-pip-version-check"]);
    vec![
        create.into(),
        pip.into(),
        Step {
            command: freeze,
            stdout: Some(dir.join(INSTALLED_PACKAGES)),
        },
    ]
}
