//! The messages between rustpipe and the suite, one type each, so that a
//! change on one side that the other does not read fails to compile rather
//! than to parse. The suite's probe uses the same histogram encoding for
//! the latency its records keep.

pub mod histogram;
pub mod insert;
pub mod rig;
