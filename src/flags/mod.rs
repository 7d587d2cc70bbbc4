//! A flagger measured against the truth: the flags strategies see (a history's flag base,
//! from `histories.flags_file`, `flag` fields or transcript flag rules) beside the `required`
//! labels scores are against.
//!
//! - [`confusion`]: true/false positives and negatives, overall and by record kind (what a
//!   sweep's manifest and report carry);
//! - [`audit`]: the error rates with 95 % intervals by history, by kind and by position, and
//!   the noise specs that would mimic them (`ctxlab flags audit`).

pub mod audit;
pub mod confusion;

pub use confusion::{Confusion, Counts};
