//! streamsuite: a cross-engine streaming latency suite.
//!
//! The `suite` binary orchestrates runs; this library holds every part of it,
//! one module per concept, so tests and tools can use the same code.

pub mod analysis;
pub mod broker;
pub mod cache;
pub mod cli;
pub mod clickhouse;
pub mod clock;
pub mod commands;
pub mod config;
pub mod exit;
pub mod gendata;
pub mod handoff;
pub mod interrupt;
pub mod isolation;
pub mod lock;
pub mod model;
pub mod probe;
pub mod process;
pub mod products;
pub mod provenance;
pub mod remote;
pub mod report;
pub mod results;
pub mod rig;
pub mod runner;
pub mod sampler;
pub mod stats;
pub mod stdout;
pub mod workloads;
