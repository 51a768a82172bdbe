//! Ctrl-C: the orchestrator notes it and every waiting loop checks the note,
//! so a run always tears down what it started and writes no partial result.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Result;

/// Set once SIGINT or SIGTERM arrives.
#[derive(Clone)]
pub struct Interrupt(Arc<AtomicBool>);

impl Interrupt {
    /// Catches SIGINT and SIGTERM from now on.
    pub fn install() -> Result<Interrupt> {
        let flag = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(signal_hook::consts::SIGINT, flag.clone())?;
        signal_hook::flag::register(signal_hook::consts::SIGTERM, flag.clone())?;
        Ok(Interrupt(flag))
    }

    /// A flag that is never set, for calls outside a run.
    pub fn none() -> Interrupt {
        Interrupt(Arc::new(AtomicBool::new(false)))
    }

    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// The error a run returns when it was interrupted; main exits 130 on it.
#[derive(Debug, thiserror::Error)]
#[error("interrupted: everything the run started was stopped, no result was written")]
pub struct Interrupted;
