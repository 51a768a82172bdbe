//! The suite's statistics in one place, with one rule for a NaN: it is no
//! measurement, and is left out before anything is counted or sorted. The
//! analysis computes its figures with these; the report formats what they
//! give and computes nothing of its own.

pub mod histogram;
pub mod interval;
pub mod order;
pub mod sign_test;

pub use interval::{median_interval, median_interval_any_n, QuotedInterval};
pub use order::{mean, median, percentile, spread, Spread};
pub use sign_test::sign_test_p;
