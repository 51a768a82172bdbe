//! What an install folder holds beside the install itself: the marker that
//! makes it count, the note a failed one leaves, the tools' log and cargo's
//! messages.

/// Written last into an install folder, holding the install's fingerprint:
/// the install is whole, and current while the fingerprint still matches.
pub(super) const MARKER: &str = ".installed";
/// Written instead of the marker when an install fails: its fingerprint, then
/// why, so that `suite list` and `--all` say the product is not installed
/// here until an install of it succeeds.
pub(super) const FAILED: &str = ".install-failed";
/// The tools' output, kept in the install folder.
pub(super) const LOG: &str = "install.log";
/// cargo's JSON messages of the last build, kept beside its log.
pub(super) const CARGO_MESSAGES: &str = "cargo-messages.json";
