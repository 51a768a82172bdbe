//! Values stepped over: each checked against the grammar without building
//! anything, nesting held to a depth.

use anyhow::Result;

use super::scanner::Scanner;

/// How deep a skipped value may nest (serde_json's limit for a value it
/// decodes): deeper input is an error rather than a deep stack.
pub(super) const MAX_DEPTH: usize = 128;

impl Scanner<'_> {
    /// Checks a value of any kind and steps over it; `depth` is how many
    /// arrays and objects it is in.
    pub(super) fn skip_value(&mut self, depth: usize) -> Result<()> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'"') => self.skip_string(),
            Some(b'{') => self.skip_container(b'}', depth),
            Some(b'[') => self.skip_container(b']', depth),
            Some(b't') => self.literal(b"true"),
            Some(b'f') => self.literal(b"false"),
            Some(b'n') => self.literal(b"null"),
            Some(b'-' | b'0'..=b'9') => self.skip_number(),
            _ => Err(self.error("expected a value")),
        }
    }

    /// Steps over an object (`close` is `}`) or an array (`]`), at its
    /// opening bracket.
    fn skip_container(&mut self, close: u8, depth: usize) -> Result<()> {
        if depth == MAX_DEPTH {
            return Err(self.error(format_args!("nesting deeper than {MAX_DEPTH}")));
        }
        self.at += 1;
        if self.eat(close) {
            return Ok(());
        }
        loop {
            if close == b'}' {
                self.skip_whitespace();
                if self.peek() != Some(b'"') {
                    return Err(self.error("expected a key"));
                }
                self.skip_string()?;
                self.expect(b':')?;
            }
            self.skip_value(depth + 1)?;
            if self.eat(close) {
                return Ok(());
            }
            self.expect(b',')?;
        }
    }

    fn literal(&mut self, word: &[u8]) -> Result<()> {
        if !self.input[self.at..].starts_with(word) {
            return Err(self.error("expected `true`, `false` or `null`"));
        }
        self.at += word.len();
        Ok(())
    }

    /// Steps over a number: `-`, then `0` or digits not starting with `0`,
    /// then an optional fraction and exponent, each with a digit at least.
    fn skip_number(&mut self) -> Result<()> {
        self.eat_now(b'-');
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => self.skip_digits(),
            _ => return Err(self.error("expected a digit")),
        }
        if self.eat_now(b'.') {
            self.require_digits()?;
        }
        if self.eat_now(b'e') || self.eat_now(b'E') {
            if !self.eat_now(b'+') {
                self.eat_now(b'-');
            }
            self.require_digits()?;
        }
        Ok(())
    }

    fn skip_digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.at += 1;
        }
    }

    fn require_digits(&mut self) -> Result<()> {
        let start = self.at;
        self.skip_digits();
        if self.at == start {
            return Err(self.error("expected a digit"));
        }
        Ok(())
    }
}
