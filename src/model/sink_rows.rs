//! The rows of the ETL workload's ClickHouse tables, as verification reads
//! them back: defined with the event itself, in the event-model crate.

pub use event_model::{EventRow, RawRow};
