//! The Python side of the suite, with the system python3: the product apps'
//! shared helpers (products/common/python), their unittest suite run from
//! the repository root, and a real pip install held to a constraints file
//! (which fetches two small packages from PyPI).

use std::fs;
use std::path::Path;
use std::process::Command;

use streamsuite::cache::Cache;
use streamsuite::config::Product;
use streamsuite::interrupt::Interrupt;
use streamsuite::products::{availability, ensure_installed, Availability};

#[test]
fn the_python_apps_shared_helpers_pass_their_tests() {
    let output = Command::new("python3")
        .args([
            "-m",
            "unittest",
            "discover",
            "-s",
            "products/common/python",
            "-v",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        // Leaves no __pycache__ behind in the source tree.
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("python3 runs (it is needed for the Python apps' tests)");
    assert!(
        output.status.success(),
        "python3 -m unittest discover -s products/common/python failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
}

/// A pip product in a folder of its own: `packages` at `version`, pinned by
/// `constraints` (its version's constraints file) when given.
fn pip_product(dir: &Path, version: &str, constraints: Option<&str>) -> Product {
    let folder = dir.join("products").join("p");
    fs::create_dir_all(folder.join("constraints")).unwrap();
    if let Some(pins) = constraints {
        fs::write(
            folder.join("constraints").join(format!("{version}.txt")),
            pins,
        )
        .unwrap();
    }
    let path = folder.join("product.yaml");
    fs::write(
        &path,
        format!(
            "name: p\ndescription: d\nversion: \"{version}\"\n\
             install: {{kind: pip, packages: [\"python-dateutil=={{version}}\"]}}\n\
             start: [\"{{install}}/venv/bin/python\"]\nready: {{stdout_contains: ready}}\n\
             workloads: [stateless]\n\
             lines:\n  - {{name: p, delivery: at-least-once, delivery_detail: x}}\n\
             characteristics: {{processing: a, engine: b, scaling: c, decode: d}}\n"
        ),
    )
    .unwrap();
    Product::from_file(&path).unwrap()
}

#[test]
fn a_pinned_pip_install_holds_and_records_exactly_its_pins() {
    let dir = tempfile::tempdir().unwrap();
    // six is python-dateutil's dependency, pinned below its newest release:
    // only the constraints file keeps pip from taking the newest.
    let pins = "python-dateutil==2.9.0.post0\nsix==1.16.0\n";
    let product = pip_product(dir.path(), "2.9.0.post0", Some(pins));
    let cache = Cache::at(dir.path().join("cache"));
    let installed = ensure_installed(&product, None, &cache, &Interrupt::none()).unwrap();
    let folder = installed.dir.unwrap();
    let record = fs::read_to_string(folder.join("installed.txt")).unwrap();
    assert_eq!(record, pins, "pip freeze of the install");
    assert_eq!(
        availability(&product, None, &cache),
        Availability::Installed
    );
    // Another pin: the install no longer counts, and is redone to it.
    let repinned = "python-dateutil==2.9.0.post0\nsix==1.15.0\n";
    let product = pip_product(dir.path(), "2.9.0.post0", Some(repinned));
    assert_ne!(
        availability(&product, None, &cache),
        Availability::Installed
    );
    ensure_installed(&product, None, &cache, &Interrupt::none()).unwrap();
    let record = fs::read_to_string(folder.join("installed.txt")).unwrap();
    assert_eq!(record, repinned);
}

#[test]
fn a_pin_pip_cannot_keep_is_one_line_naming_the_constraints_file() {
    let dir = tempfile::tempdir().unwrap();
    let pins = "python-dateutil==2.8.2\n";
    let product = pip_product(dir.path(), "2.9.0.post0", Some(pins));
    let cache = Cache::at(dir.path().join("cache"));
    let err = ensure_installed(&product, None, &cache, &Interrupt::none())
        .unwrap_err()
        .to_string();
    let file = product.dir().join("constraints").join("2.9.0.post0.txt");
    assert!(
        err.starts_with(&format!(
            "installing p 2.9.0.post0 (pip -c {}) failed",
            file.display()
        )),
        "{err}"
    );
    assert!(
        err.contains("The user requested (constraint) python-dateutil==2.8.2"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
}
