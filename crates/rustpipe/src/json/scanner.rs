//! A position in the input being read, and the steps every part of the
//! grammar takes: peeking, whitespace, punctuation, and errors that say
//! where.

use anyhow::{anyhow, Error, Result};

/// A position in the input being read.
pub(super) struct Scanner<'a> {
    pub(super) input: &'a [u8],
    pub(super) at: usize,
}

impl<'a> Scanner<'a> {
    pub(super) fn error(&self, what: impl std::fmt::Display) -> Error {
        match self.peek() {
            Some(_) => anyhow!("JSON: {what} at byte {}", self.at),
            None => anyhow!("JSON: {what} at the end of the input (byte {})", self.at),
        }
    }

    pub(super) fn peek(&self) -> Option<u8> {
        self.input.get(self.at).copied()
    }

    pub(super) fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.at += 1;
        }
    }

    /// Steps over `byte` if it is next, without skipping whitespace.
    pub(super) fn eat_now(&mut self, byte: u8) -> bool {
        let next = self.peek() == Some(byte);
        self.at += usize::from(next);
        next
    }

    /// Steps over whitespace, then over `byte` if it is next.
    pub(super) fn eat(&mut self, byte: u8) -> bool {
        self.skip_whitespace();
        self.eat_now(byte)
    }

    pub(super) fn expect(&mut self, byte: u8) -> Result<()> {
        if self.eat(byte) {
            Ok(())
        } else {
            Err(self.error(format_args!("expected `{}`", char::from(byte))))
        }
    }
}
