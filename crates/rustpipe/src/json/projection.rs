//! The fields a step reads from a record, each read as the type it has,
//! and the decoder that hands them over in one pass over the object.

use std::borrow::Cow;

use anyhow::{anyhow, Error, Result};

use super::scanner::Scanner;

/// The fields a step reads from a record, and where each one goes.
pub trait Projection<'a>: Default {
    /// The names of the fields read; [`Projection::set`] gets a field's
    /// index in this list. Each must be present once; at most 64.
    const FIELDS: &'static [&'static str];

    /// Reads field `FIELDS[field]` from `value`, with one of its methods.
    fn set(&mut self, field: usize, value: Value<'_, 'a>) -> Result<()>;
}

/// A projected field's value, read as the type its field has.
pub struct Value<'s, 'a> {
    scanner: &'s mut Scanner<'a>,
    field: &'static str,
}

// Each reads the value as its field's type and fails, naming the field, on
// a value of another type or out of its range: what serde_json does for a
// field of that type.
impl<'a> Value<'_, 'a> {
    pub fn u64(mut self) -> Result<u64> {
        match self.integer()? {
            (false, magnitude) => Ok(magnitude),
            (true, _) => Err(self.out_of_range("u64")),
        }
    }

    pub fn u32(mut self) -> Result<u32> {
        match self.integer()? {
            (false, magnitude) => u32::try_from(magnitude).map_err(|_| self.out_of_range("u32")),
            (true, _) => Err(self.out_of_range("u32")),
        }
    }

    pub fn i64(mut self) -> Result<i64> {
        match self.integer()? {
            (false, magnitude) => i64::try_from(magnitude).map_err(|_| self.out_of_range("i64")),
            // -0 is a float to serde_json, and rejected as one.
            (true, magnitude @ 1..=0x8000_0000_0000_0000) => Ok((magnitude as i64).wrapping_neg()),
            (true, _) => Err(self.out_of_range("i64")),
        }
    }

    /// The string, borrowed from the input unless it has escapes.
    pub fn str(self) -> Result<Cow<'a, str>> {
        if self.scanner.peek() != Some(b'"') {
            return Err(self
                .scanner
                .error(format_args!("`{}`: expected a string", self.field)));
        }
        self.scanner.string()
    }

    /// An integer's sign and magnitude. A number with a fraction or an
    /// exponent, or beyond u64, is an error, as serde_json has it for an
    /// integer field.
    fn integer(&mut self) -> Result<(bool, u64)> {
        let scanner = &mut *self.scanner;
        let negative = scanner.eat_now(b'-');
        let magnitude = match scanner.peek() {
            Some(b'0') => {
                scanner.at += 1;
                0
            }
            Some(b'1'..=b'9') => {
                let mut magnitude = 0u64;
                while let Some(digit @ b'0'..=b'9') = scanner.peek() {
                    magnitude = magnitude
                        .checked_mul(10)
                        .and_then(|m| m.checked_add(u64::from(digit - b'0')))
                        .ok_or_else(|| {
                            scanner.error(format_args!("`{}`: integer out of range", self.field))
                        })?;
                    scanner.at += 1;
                }
                magnitude
            }
            _ => return Err(scanner.error(format_args!("`{}`: expected an integer", self.field))),
        };
        match scanner.peek() {
            Some(b'0'..=b'9') => Err(scanner.error("a number with a leading zero")),
            Some(b'.' | b'e' | b'E') => Err(scanner.error(format_args!(
                "`{}`: expected an integer, found a fraction or an exponent",
                self.field
            ))),
            _ => Ok((negative, magnitude)),
        }
    }

    fn out_of_range(&self, target: &str) -> Error {
        self.scanner.error(format_args!(
            "`{}`: integer out of range for {target}",
            self.field
        ))
    }
}

/// Decodes the projected fields of the one JSON object in `input`, skipping
/// the others. A projected field missing or present twice is an error.
pub fn decode<'a, P: Projection<'a>>(input: &'a [u8]) -> Result<P> {
    const { assert!(P::FIELDS.len() <= 64, "at most 64 projected fields") };
    let mut scanner = Scanner { input, at: 0 };
    let mut projection = P::default();
    let mut seen = 0u64;
    scanner.expect(b'{')?;
    if !scanner.eat(b'}') {
        loop {
            scanner.skip_whitespace();
            if scanner.peek() != Some(b'"') {
                return Err(scanner.error("expected a key"));
            }
            let key = scanner.string_bytes()?;
            scanner.expect(b':')?;
            scanner.skip_whitespace();
            match P::FIELDS.iter().position(|name| name.as_bytes() == &*key) {
                Some(field) if seen & (1u64 << field) != 0 => {
                    let name = P::FIELDS[field];
                    return Err(scanner.error(format_args!("duplicate field `{name}`")));
                }
                Some(field) => {
                    seen |= 1u64 << field;
                    let value = Value {
                        scanner: &mut scanner,
                        field: P::FIELDS[field],
                    };
                    projection.set(field, value)?;
                }
                None => scanner.skip_value(0)?,
            }
            if scanner.eat(b'}') {
                break;
            }
            scanner.expect(b',')?;
        }
    }
    scanner.skip_whitespace();
    if scanner.at != input.len() {
        return Err(scanner.error("trailing characters after the object"));
    }
    if let Some(missing) = (0..P::FIELDS.len()).find(|field| seen & (1u64 << field) == 0) {
        return Err(anyhow!("missing field `{}`", P::FIELDS[missing]));
    }
    Ok(projection)
}
