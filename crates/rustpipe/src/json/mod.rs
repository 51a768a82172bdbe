//! A JSON decoder for the few fields a step reads from an input record.
//!
//! A step reads 4 or 6 of an event's 19 fields; decoding them with serde_json
//! was the largest share of a drain's profile. This scanner reads one JSON
//! object (RFC 8259) in a single pass, hands each projected field's value to
//! the caller as it meets it, and skips every other value without building
//! anything, still checking it against the grammar. Strings without escapes
//! are borrowed from the input and integers are read from their digits, so a
//! record of gendata's costs no allocation.
//!
//! It decodes a record as serde_json's derive decodes the same fields, and
//! is stricter in three ways: every string, skipped or not, must be valid
//! UTF-8 with paired surrogates (serde_json checks only the strings it
//! decodes); a skipped value nests 128 deep at most; and the record must be
//! an object (serde_json also takes a struct as an array of its fields).

mod projection;
mod scanner;
mod skip;
mod strings;

pub use projection::{decode, Projection, Value};

#[cfg(test)]
mod tests;
