//! Strings: read borrowed from the input unless they have escapes, or
//! stepped over; every one checked as UTF-8 with paired surrogates. Runs of
//! plain ASCII are passed over eight bytes at a time.

use std::borrow::Cow;

use anyhow::Result;

use super::scanner::Scanner;

/// The bytes a run of a string's characters stops at: a quote, a backslash,
/// a control character (an error), and the first byte of a non-ASCII
/// character (checked as UTF-8).
pub(super) const STRING_STOPS: [bool; 256] = {
    let mut stops = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        stops[byte] =
            byte < 0x20 || byte >= 0x80 || byte == b'"' as usize || byte == b'\\' as usize;
        byte += 1;
    }
    stops
};

/// How many bytes `bytes` starts with that a string's run does not stop at
/// (see [`STRING_STOPS`]): eight at a time while it can, as serde_json
/// does, then one at a time.
#[inline(always)]
pub(super) fn plain_ascii(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let mut chunks = bytes.chunks_exact(8);
    let mut passed = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        // The high bit of a byte is set for a byte of 0x80 or more, one
        // under 0x20, a quote or a backslash (each the zero byte of a
        // word); bytes above the first may be flagged wrongly, never it.
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        let stops = (word
            | (word.wrapping_sub(ONES * 0x20) & !word)
            | (quote.wrapping_sub(ONES) & !quote)
            | (backslash.wrapping_sub(ONES) & !backslash))
            & HIGH;
        if stops != 0 {
            return passed + (stops.trailing_zeros() / 8) as usize;
        }
        passed += 8;
    }
    passed
        + chunks
            .remainder()
            .iter()
            .position(|&byte| STRING_STOPS[usize::from(byte)])
            .unwrap_or(chunks.remainder().len())
}

impl<'a> Scanner<'a> {
    /// Reads a string, at its opening quote: borrowed from the input if it
    /// has no escape, decoded into a new one if it has.
    pub(super) fn string(&mut self) -> Result<Cow<'a, str>> {
        // Checked as UTF-8 by `string_bytes` already; converting checks again
        // rather than trusting it unchecked, for the few strings decoded.
        Ok(match self.string_bytes()? {
            Cow::Borrowed(bytes) => Cow::Borrowed(std::str::from_utf8(bytes)?),
            Cow::Owned(bytes) => Cow::Owned(String::from_utf8(bytes)?),
        })
    }

    /// Reads a string, at its opening quote, as its UTF-8 bytes: what a key
    /// is compared as.
    pub(super) fn string_bytes(&mut self) -> Result<Cow<'a, [u8]>> {
        self.at += 1;
        let run = self.unescaped_run()?;
        if self.eat_now(b'"') {
            return Ok(Cow::Borrowed(run));
        }
        let mut text = run.to_vec();
        loop {
            self.at += 1;
            let character = self.escape()?;
            text.extend_from_slice(character.encode_utf8(&mut [0; 4]).as_bytes());
            text.extend_from_slice(self.unescaped_run()?);
            if self.eat_now(b'"') {
                return Ok(Cow::Owned(text));
            }
        }
    }

    /// Checks a string and steps over it, at its opening quote.
    pub(super) fn skip_string(&mut self) -> Result<()> {
        self.at += 1;
        loop {
            self.unescaped_run()?;
            if self.eat_now(b'"') {
                return Ok(());
            }
            self.at += 1;
            self.escape()?;
        }
    }

    /// The characters up to the next quote or backslash, which it stops at.
    /// The end of the input, a control character or invalid UTF-8 before
    /// one is an error. ASCII, all of gendata's text, is passed over with
    /// no further check.
    // Inlined into each caller, as `plain_ascii` is: every string goes
    // through it, and the stage's decode measured 13 % faster so.
    #[inline(always)]
    fn unescaped_run(&mut self) -> Result<&'a [u8]> {
        let input: &'a [u8] = self.input;
        let start = self.at;
        loop {
            self.at += plain_ascii(&input[self.at..]);
            let Some(&stop) = input.get(self.at) else {
                return Err(self.error("unterminated string"));
            };
            match stop {
                b'"' | b'\\' => return Ok(&input[start..self.at]),
                0x80.. => self.at += self.utf8_character()?,
                _ => return Err(self.error("control character in a string")),
            }
        }
    }

    /// The length of the non-ASCII UTF-8 character starting here; invalid
    /// UTF-8 (a stray continuation byte, an overlong form, a surrogate, a
    /// truncated sequence) is an error.
    fn utf8_character(&self) -> Result<usize> {
        let length = match self.input[self.at] {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => 0,
        };
        match self
            .input
            .get(self.at..self.at + length)
            .map(std::str::from_utf8)
        {
            Some(Ok(_)) if length > 0 => Ok(length),
            _ => Err(self.error("invalid UTF-8 in a string")),
        }
    }

    /// Decodes an escape, past its backslash. A `\u` escape of a UTF-16
    /// surrogate must be a high one followed by a `\u` escape of a low one.
    fn escape(&mut self) -> Result<char> {
        let Some(byte) = self.peek() else {
            return Err(self.error("unterminated string"));
        };
        self.at += 1;
        let unit = match byte {
            b'"' => return Ok('"'),
            b'\\' => return Ok('\\'),
            b'/' => return Ok('/'),
            b'b' => return Ok('\u{8}'),
            b'f' => return Ok('\u{c}'),
            b'n' => return Ok('\n'),
            b'r' => return Ok('\r'),
            b't' => return Ok('\t'),
            b'u' => self.hex_unit()?,
            _ => {
                self.at -= 1;
                return Err(self.error("invalid escape"));
            }
        };
        let code = match unit {
            0xD800..=0xDBFF if self.input[self.at..].starts_with(b"\\u") => {
                self.at += 2;
                match self.hex_unit()? {
                    low @ 0xDC00..=0xDFFF => 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00),
                    _ => return Err(self.error("unpaired UTF-16 surrogate in a `\\u` escape")),
                }
            }
            _ => unit,
        };
        char::from_u32(code)
            .ok_or_else(|| self.error("unpaired UTF-16 surrogate in a `\\u` escape"))
    }

    /// The four hex digits of a `\u` escape.
    fn hex_unit(&mut self) -> Result<u32> {
        let digits = self.input.get(self.at..self.at + 4);
        let unit = digits.and_then(|digits| {
            digits.iter().try_fold(0, |unit, &digit| {
                Some(unit << 4 | char::from(digit).to_digit(16)?)
            })
        });
        let Some(unit) = unit else {
            return Err(self.error("expected four hex digits in a `\\u` escape"));
        };
        self.at += 4;
        Ok(unit)
    }
}
