//! ctxlab: measures what context-compaction strategies for long-running AI agents keep and lose.
//!
//! Data flows one way: histories → costs → (noise → flags) → strategy → context → metrics →
//! tables, charts and reports.

pub mod calibrate;
pub mod cli;
pub mod cost;
pub mod error;
pub mod history;
pub mod import;
pub mod metrics;
pub mod noise;
pub mod report;
pub mod rng;
pub mod session;
pub mod strategy;
pub mod summariser;
pub mod sweep;

pub use cost::CostModel;
pub use error::InputError;
pub use history::{CostedHistory, History, Kind, Record};
pub use metrics::{score, Metrics};
pub use strategy::{Context, Item, Outcome, Strategy, View};
