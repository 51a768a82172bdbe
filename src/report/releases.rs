//! The releases section: one line measured on several of its releases,
//! each against the one before. No record says which release of a line
//! it measured yet, so the section only says that it has nothing to show.

/// What the releases section says while no release records exist.
pub(super) fn releases_text() -> String {
    "no recorded data yet: no record names a release of a line, so no release is compared with another."
        .to_string()
}
