//! Turning metrics into things people read: tables now; charts and reports build on these.

pub mod inspect;
pub mod numbers;
pub mod session;
pub mod table;
