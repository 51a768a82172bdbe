//! rustpipe, the in-house pipeline: consume, run the workload's step on each
//! chunk (stateless: filter `eu-*`, derive `latency_ratio` and `sla_status`;
//! passthrough: forward the bytes; windowed-lowcard: tumbling windows per
//! region and service), produce. avro-etl is a pipeline of its own, from
//! Kafka to ClickHouse.
//!
//! It runs like any other product: a program of its own, which the suite
//! starts with BENCH_* variables and knows only through its product.yaml.
//! The reader never waits on delivery: records go through the step (inline
//! or, for a step without state across chunks, on `parallelism` workers)
//! and out as they arrive, while acknowledgements (at-least-once) or the commit of the last
//! transaction (exactly-once) complete beside them.

pub mod alloc_count;
pub mod avro;
pub mod chunk;
pub mod delivery;
pub mod etl;
pub mod json;
pub mod ledger;
pub mod pipeline;
pub mod resume;
pub mod rig;
pub mod rows;
pub mod settings;
pub mod shards;
pub mod stage;
pub mod step;
pub mod txn_clock;
pub mod windows;
