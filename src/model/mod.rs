//! The model: what a run record holds and the settings it carries, from the
//! record itself down to the summaries of its parts. It imports nothing of
//! the rest of the suite, so that everything else (the configuration, the
//! measurement, the analysis, the pages) builds on it and none of it builds
//! on another through it.

pub mod broker;
pub mod client;
#[cfg(test)]
mod examples;
pub mod figure;
pub mod gendata;
pub mod host;
pub mod interval;
pub mod isolation;
pub mod latency_series;
pub mod probe;
pub mod record;
pub mod resources;
pub mod settings;
pub mod sink_rows;
pub mod ssh;
