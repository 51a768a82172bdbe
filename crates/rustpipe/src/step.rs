//! The step a chunk goes through between the reader and delivery, chosen by
//! the workload: the reader, the shards and both delivery modes are the same
//! for every workload, and only this step differs.

use anyhow::{anyhow, bail, Result};

use crate::chunk::{InputChunk, OutputChunk};
use crate::settings::{PipelineOptions, Workload};
use crate::stage::Stage;
use crate::windows::Windows;

/// One workload's per-chunk transform.
pub enum Step {
    /// stateless: filter and derive over Arrow columns.
    Stateless(Box<Stage>),
    /// passthrough: every value forwarded as it was read.
    Passthrough,
    /// windowed-lowcard: tumbling windows, held in memory until they close.
    Windowed(Windows),
}

impl Step {
    /// The step of `workload`; avro-etl has a pipeline of its own.
    pub fn new(workload: Workload, options: &PipelineOptions) -> Result<Step> {
        match workload {
            Workload::Stateless => Ok(Step::Stateless(Box::new(Stage::new(options.clone())))),
            Workload::Passthrough => Ok(Step::Passthrough),
            Workload::WindowedLowcard => Ok(Step::Windowed(Windows::default())),
            Workload::AvroEtl => {
                bail!("rustpipe: avro-etl runs its own pipeline, not a chunk step")
            }
        }
    }

    /// Whether chunks may be dealt to several copies of the step: not when
    /// it keeps state that spans chunks.
    pub fn shardable(&self) -> bool {
        !matches!(self, Step::Windowed(_))
    }

    /// Processes `input` into `output` (cleared first), which takes the
    /// chunk's sequence number and the input offsets it covers.
    pub fn process(&mut self, input: &InputChunk, output: &mut OutputChunk) -> Result<()> {
        match self {
            Step::Stateless(stage) => stage.process(input, output),
            Step::Passthrough => pass_through(input, output),
            Step::Windowed(windows) => windows.process(input, output),
        }
    }
}

/// Writes every input record's value bytes, undecoded, with its key (the
/// input has none), in input order: one output per input.
fn pass_through(input: &InputChunk, output: &mut OutputChunk) -> Result<()> {
    output.start(input);
    for index in 0..input.len() {
        let record = input.record(index);
        let payload = record.payload.ok_or_else(|| {
            anyhow!(
                "rustpipe: the input record at offset {} has no value",
                input.resume_at(index).offset
            )
        })?;
        output.push(record.key, |bytes| {
            bytes.extend_from_slice(payload);
            Ok::<_, anyhow::Error>(())
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::NextOffset;

    #[test]
    fn passthrough_writes_each_value_as_it_was_read() {
        // Bytes no JSON encoder would write back the same way.
        let values: [&[u8]; 3] = [b"{ \"seq\" : 0 ,\"x\":1.50}", b"{\"seq\":1}\n", b"not json"];
        let mut input = InputChunk::default();
        input.reset(4);
        for (i, value) in values.iter().enumerate() {
            input.push(0, 40 + i as i64, None, Some(value));
        }
        let mut step = Step::new(Workload::Passthrough, &PipelineOptions::default()).unwrap();
        let mut output = OutputChunk::default();
        step.process(&input, &mut output).unwrap();
        let got: Vec<_> = output.records().collect();
        assert_eq!(got.len(), values.len());
        for (record, value) in got.iter().zip(values) {
            assert_eq!(record.payload, Some(value));
            assert_eq!(record.key, None);
        }
        assert_eq!(output.seq, 4);
        assert_eq!(
            output.next_offsets(),
            &[NextOffset {
                partition: 0,
                offset: 43
            }]
        );
    }

    #[test]
    fn avro_etl_is_not_a_chunk_step() {
        assert!(Step::new(Workload::AvroEtl, &PipelineOptions::default()).is_err());
    }

    #[test]
    fn only_a_step_without_state_across_chunks_is_sharded() {
        let options = PipelineOptions::default();
        for (workload, shardable) in [
            (Workload::Stateless, true),
            (Workload::Passthrough, true),
            (Workload::WindowedLowcard, false),
        ] {
            let sharded =
                crate::shards::run(2, workload, &options, |_: &OutputChunk| Ok(()), |_| Ok(()));
            assert_eq!(sharded.is_ok(), shardable, "{}", workload.as_str());
        }
    }
}
