//! ctxlab: measures what context-compaction strategies for long-running AI agents keep and lose.
//!
//! Data flows one way: histories → costs → (noise → flags) → strategy → context → metrics →
//! tables, charts and reports. The layers, each importing only those before it:
//!
//! - [`history`], [`cost`], [`noise`], [`strategy`], [`metrics`], [`session`]: the model;
//! - [`experiment`]: experiment files (schema, validation, overrides, hash);
//! - [`cells`], [`sessions`]: the two kinds of sweep, their grids and hot loops;
//! - [`tables`]: each table's columns, declared once; [`stats`]: the summaries' statistics;
//! - [`sweep`]: one runner for every kind of sweep (chunks, resume, shards, merge, publishing);
//! - [`report`]: charts and the report, from published tables only;
//! - [`cli`]: the command line (printing, progress, environment).

pub mod calibrate;
pub mod cells;
pub mod cli;
pub mod cost;
pub mod error;
pub mod experiment;
pub mod history;
pub mod metrics;
pub mod noise;
pub mod report;
pub mod rng;
pub mod session;
pub mod sessions;
pub mod stats;
pub mod strategy;
pub mod summariser;
pub mod sweep;
pub mod tables;

pub use cost::CostModel;
pub use error::InputError;
pub use history::import;
pub use history::{CostedHistory, History, Kind, Record};
pub use metrics::{score, Metrics};
pub use strategy::{Context, Item, Outcome, Strategy, View};
