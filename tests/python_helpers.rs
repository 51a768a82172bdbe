//! The Python product apps' shared helpers (products/common/python): their
//! unittest suite, run by the system python3 from the repository root.

use std::process::Command;

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
