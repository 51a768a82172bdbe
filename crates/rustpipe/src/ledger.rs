//! Which output chunks are wholly acknowledged: at-least-once stores their
//! input offsets, in order, for librdkafka's auto-commit; exactly-once
//! learns from it that a record was not delivered.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use rdkafka::error::KafkaError;

use crate::chunk::{NextOffset, OutputChunk};

/// Chunks produced and not yet wholly acknowledged, in order.
#[derive(Default)]
pub struct Ledger {
    state: Mutex<LedgerState>,
    settled: Condvar,
}

#[derive(Default)]
struct LedgerState {
    chunks: VecDeque<Unsettled>,
    /// Offset lists of settled chunks, kept for the next ones.
    spare: Vec<Vec<NextOffset>>,
    failed: Option<String>,
}

struct Unsettled {
    seq: u64,
    outstanding: usize,
    next_offsets: Vec<NextOffset>,
}

impl Ledger {
    fn lock(&self) -> MutexGuard<'_, LedgerState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records that `chunk` is about to be sent: chunks open in their order.
    pub(crate) fn open(&self, chunk: &OutputChunk) {
        let mut state = self.lock();
        let mut next_offsets = state.spare.pop().unwrap_or_default();
        next_offsets.clear();
        next_offsets.extend_from_slice(chunk.next_offsets());
        state.chunks.push_back(Unsettled {
            seq: chunk.seq,
            outstanding: chunk.len(),
            next_offsets,
        });
    }

    /// One record of chunk `seq` is acknowledged, or failed with `error`.
    pub(crate) fn acknowledged(&self, seq: u64, error: Option<&KafkaError>) {
        let mut state = self.lock();
        if let Some(err) = error {
            state.failed.get_or_insert_with(|| err.to_string());
        }
        // Chunks open in rising order, though not every number opens (a
        // transaction's waiting output goes out as one chunk).
        let at = state.chunks.partition_point(|c| c.seq < seq);
        if let Some(chunk) = state.chunks.get_mut(at).filter(|c| c.seq == seq) {
            chunk.outstanding -= 1;
        }
        if state.chunks.front().is_some_and(|c| c.outstanding == 0) {
            self.settled.notify_all();
        }
    }

    /// Moves the offsets of the settled chunks at the front into `into`;
    /// true when there were any. Fails once a delivery has failed.
    pub fn take_settled(&self, into: &mut Vec<NextOffset>) -> Result<bool> {
        let mut state = self.lock();
        if let Some(err) = &state.failed {
            bail!("rustpipe: a record was not delivered: {err}");
        }
        let mut any = false;
        while state.chunks.front().is_some_and(|c| c.outstanding == 0) {
            let Some(chunk) = state.chunks.pop_front() else {
                break;
            };
            for next in &chunk.next_offsets {
                crate::chunk::advance(into, next.partition, next.offset);
            }
            state.spare.push(chunk.next_offsets);
            any = true;
        }
        Ok(any)
    }

    /// Waits until every chunk opened so far is settled.
    pub fn wait_settled(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut state = self.lock();
        while state.chunks.iter().any(|c| c.outstanding > 0) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                bail!(
                    "rustpipe: records unacknowledged after {}s",
                    timeout.as_secs()
                );
            }
            state = self
                .settled
                .wait_timeout(state, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        Ok(())
    }

    pub(crate) fn failure(&self) -> Option<String> {
        self.lock().failed.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::InputChunk;

    fn at(offset: i64) -> NextOffset {
        NextOffset {
            partition: 0,
            offset,
        }
    }

    /// An output chunk `seq` of `records` records covering input up to `next`.
    fn output(seq: u64, records: usize, next: i64) -> OutputChunk {
        let mut input = InputChunk::default();
        input.reset(seq);
        let mut chunk = OutputChunk::default();
        chunk.start(&input);
        for _ in 0..records {
            chunk
                .push(None, |bytes| {
                    bytes.push(b'x');
                    Ok::<_, ()>(())
                })
                .unwrap();
        }
        chunk.cover_up_to(at(next));
        chunk
    }

    /// At-least-once with a window open: the offset of the open window's
    /// first record is stored only once the closed window's panes are
    /// acknowledged, even with later chunks (no output) settled behind them.
    #[test]
    fn a_windows_offset_waits_for_its_panes() {
        let ledger = Ledger::default();
        ledger.open(&output(0, 0, 10));
        ledger.open(&output(1, 2, 14));
        ledger.open(&output(2, 0, 14));
        let mut taken = Vec::new();
        assert!(ledger.take_settled(&mut taken).unwrap());
        assert_eq!(taken, [at(10)]);
        ledger.acknowledged(1, None);
        taken.clear();
        assert!(!ledger.take_settled(&mut taken).unwrap());
        ledger.acknowledged(1, None);
        assert!(ledger.take_settled(&mut taken).unwrap());
        assert_eq!(taken, [at(14)]);
    }
}
