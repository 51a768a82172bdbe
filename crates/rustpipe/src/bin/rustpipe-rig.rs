//! The CPU rig's executable (see `rustpipe::rig`): `suite rig cpu` writes
//! the datums, starts this, and turns its measurements into records.
//!
//! rustpipe-rig --datums FILE --timed N --warmup N --counted N
//!              --repetitions N --block-rows N --shards N
//!
//! FILE holds the datums, each a little-endian u32 length then its bytes.
//! One JSON measurement per line goes to standard output.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{anyhow, bail, Context, Result};
use rustpipe::alloc_count::CountingAllocator;
use rustpipe::rig::{self, RigPlan};

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator::new();

fn main() {
    if let Err(err) = run() {
        eprintln!("error: rustpipe-rig: {err:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let mut datums_file = None;
    let mut plan = RigPlan {
        datums: Vec::new(),
        warmup_datums: 0,
        timed_datums: 0,
        counted_datums: 0,
        repetitions: 0,
        block_rows: 0,
        shards: 0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| anyhow!("{flag} needs a value"))?;
        let number = || -> Result<usize> {
            value
                .parse()
                .with_context(|| format!("{flag} {value}: not a count"))
        };
        match flag.as_str() {
            "--datums" => datums_file = Some(PathBuf::from(&value)),
            "--timed" => plan.timed_datums = number()?,
            "--warmup" => plan.warmup_datums = number()?,
            "--counted" => plan.counted_datums = number()?,
            "--repetitions" => plan.repetitions = number()?,
            "--block-rows" => plan.block_rows = number()?,
            "--shards" => plan.shards = number()?,
            _ => bail!("unknown argument {flag}"),
        }
    }
    let file = datums_file.ok_or_else(|| anyhow!("--datums FILE is required"))?;
    plan.datums = read_datums(&file)?;
    let stdout = std::io::stdout();
    rig::run(&plan, &ALLOCATOR, |measurement| {
        let mut out = stdout.lock();
        serde_json::to_writer(&mut out, measurement)?;
        writeln!(out)?;
        out.flush()?;
        Ok(())
    })
}

/// The datums of `path`: each a little-endian u32 length, then its bytes.
fn read_datums(path: &std::path::Path) -> Result<Vec<Vec<u8>>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut datums = Vec::new();
    let mut rest = &bytes[..];
    while !rest.is_empty() {
        let (length, tail) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| anyhow!("{}: a length is cut short", path.display()))?;
        let length = u32::from_le_bytes(*length) as usize;
        if tail.len() < length {
            bail!("{}: a datum is cut short", path.display());
        }
        datums.push(tail[..length].to_vec());
        rest = &tail[length..];
    }
    Ok(datums)
}
