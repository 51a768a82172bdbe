//! The exact versions a pip install resolves to: one constraints file per
//! product version, `products/<name>/constraints/<version>.txt`, as
//! `pip freeze` writes it after a fresh install of that version. pip then
//! installs the same set every time (`pip install -c FILE`); without the
//! file, a version's dependencies float to whatever pip resolves that day.

use std::fs;
use std::io::ErrorKind;
use std::path::PathBuf;

use crate::config::Product;

/// The folder of a product's constraints files, in its product folder.
pub(super) const CONSTRAINTS_DIR: &str = "constraints";

/// A constraints file that cannot pin an install.
#[derive(Debug, thiserror::Error)]
pub enum ConstraintsError {
    #[error("reading {}: {source}", path.display())]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "{}:{line}: `{text}` is not `name==version` as `pip freeze` writes it; write the file again from `pip freeze` (docs/add-a-product.md, Pin a pip install)",
        path.display()
    )]
    NotPinned {
        path: PathBuf,
        /// 1-based.
        line: usize,
        text: String,
    },
}

/// Where the constraints of `product` at `version` are kept, whether or not
/// the file exists.
pub(super) fn constraints_path(product: &Product, version: &str) -> PathBuf {
    product
        .dir()
        .join(CONSTRAINTS_DIR)
        .join(format!("{version}.txt"))
}

/// The constraints file of `product` at `version`, every line of it an
/// exact pin; `None` when that version has no file.
pub(super) fn constraints_file(
    product: &Product,
    version: &str,
) -> Result<Option<PathBuf>, ConstraintsError> {
    let path = constraints_path(product, version);
    let text = match fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ConstraintsError::Unreadable { path, source }),
    };
    match first_unpinned(&text) {
        Some((line, text)) => Err(ConstraintsError::NotPinned {
            path,
            line,
            text: text.to_string(),
        }),
        None => Ok(Some(path)),
    }
}

/// The first line (1-based) that is neither blank, a comment nor a pin.
fn first_unpinned(text: &str) -> Option<(usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(at, line)| (at + 1, line.split('#').next().unwrap_or_default().trim()))
        .filter(|(_, line)| !line.is_empty())
        .find(|(_, line)| !is_pin(line))
}

/// `name==version`: a distribution and one exact version of it (a range,
/// an extra, a marker or a URL would let the install float).
fn is_pin(line: &str) -> bool {
    let Some((name, version)) = line.split_once("==") else {
        return false;
    };
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    let version_ok = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+!-".contains(c));
    name_ok && version_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_exact_pins_are_pins() {
        for pin in [
            "requests==2.32.3",
            "typing_extensions==4.12.2",
            "torch==2.5.1+cpu",
            "x==1!2.0",
        ] {
            assert!(is_pin(pin), "{pin}");
        }
        for loose in [
            "requests",
            "requests>=2",
            "requests==2.*",
            "requests===2.0",
            "requests[socks]==2.0",
            "requests==2.0; python_version<'3.12'",
            "requests @ https://example.org/requests.whl",
            "-e .",
            "==2.0",
            "requests==",
        ] {
            assert!(!is_pin(loose), "{loose}");
        }
    }

    #[test]
    fn comments_and_blank_lines_are_skipped_and_the_first_loose_line_found() {
        let text = "# pip freeze, Python 3.11\n\nidna==3.10  # a comment\nrequests>=2\nurllib3\n";
        assert_eq!(first_unpinned(text), Some((4, "requests>=2")));
        assert_eq!(first_unpinned("a==1\n\n# b\nc==2\n"), None);
    }
}
