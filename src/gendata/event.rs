//! The event model, shared with rustpipe (crates/event-model): every event
//! of a run is a pure function of its seed and sequence number, so gendata
//! writes it and verification regenerates it, in any order.

pub use event_model::generate;
pub use event_model::generator::{eu_share, sla_status, Core, REGIONS, SERVICES};

/// One generated event: the 19 fields JSON-encoded on the input topic.
pub type Event = event_model::Generated;
