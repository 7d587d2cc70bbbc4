//! ctxlab: measures what context-compaction strategies for long-running AI agents keep and lose.
//!
//! Data flows one way: histories → costs → (noise → flags) → strategy → context → metrics →
//! tables, charts and reports. The layers, bottom to top: a file imports files of its own layer
//! or lower ones only, as `tests/suite/structure.rs` checks on every import (this list is
//! checked against its `LAYERS`; `lib.rs` itself sits on top):
//!
//! 1. base: `error`, `quote`, `text`, `rng`, `strict_json`, `links`, `output_file`, `stats`
//! 2. model calls: `llm`
//! 3. histories and their costs: `history`, `cost`
//! 4. spec syntax: `spec`
//! 5. context and view: `context`, `view`
//! 6. noise, strategies, summarisers: `noise`, `strategy`, `summariser`
//! 7. metrics and flags: `metrics`, `stale`, `flags`
//! 8. session: `session`
//! 9. table formats: `formats`
//! 10. experiment files: `experiment`
//! 11. the two kinds of sweep: `cells`, `sessions`
//! 12. tables: `tables`
//! 13. judged summaries: `summaries_judge`
//! 14. figures: `figures`
//! 15. sweep: `sweep`
//! 16. report: `report`
//! 17. calibration: `calibrate`, `calibrate_cache`, `calibrate_prefix`, `calibrate_rereads`, `calibrate_stale_tasks`, `calibrate_summaries`
//! 18. cli: `cli`
//!
//! The model is layers 3 to 8; [`experiment`] reads experiment files; [`cells`] and
//! [`sessions`] are the two kinds of sweep with their hot loops; [`tables`] declares each
//! table's columns once; [`sweep`] is the one runner (chunks, resume, shards, merge,
//! publishing); [`report`] draws charts and reports from published tables only; `cli` is the
//! command line (printing, progress, environment).

pub(crate) mod calibrate;
pub(crate) mod calibrate_cache;
pub(crate) mod calibrate_prefix;
pub(crate) mod calibrate_rereads;
pub(crate) mod calibrate_stale_tasks;
pub(crate) mod calibrate_summaries;
pub mod cells;
#[doc(hidden)]
pub mod cli;
pub mod context;
pub mod cost;
pub mod error;
pub mod experiment;
pub(crate) mod figures;
pub mod flags;
pub mod formats;
pub mod history;
mod links;
pub mod llm;
pub mod metrics;
pub mod noise;
pub mod output_file;
pub mod quote;
pub mod report;
mod rng;
pub mod session;
pub(crate) mod sessions;
pub mod spec;
pub mod stale;
pub mod stats;
pub mod strategy;
pub(crate) mod strict_json;
pub mod summaries_judge;
pub mod summariser;
pub mod sweep;
pub mod tables;
pub mod text;
pub mod view;

pub use context::{Context, Item, Outcome};
pub use cost::CostModel;
pub use error::InputError;
pub use history::import;
pub use history::{CostedHistory, History, Kind, Record};
pub use metrics::{score, Metrics};
pub use strategy::Strategy;
pub use view::View;

pub use error::{Error, ParseError};

/// The entry point for a notebook or another tool: see [`sweep::memory::run_in_memory`].
pub use sweep::memory::run_in_memory;
