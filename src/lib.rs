//! ctxlab: measures what context-compaction strategies for long-running AI agents keep and lose.
//!
//! Data flows one way: histories → costs → (noise → flags) → strategy → context → metrics →
//! tables, charts and reports. The layers, each importing only those before it:
//!
//! - [`history`], [`cost`], [`noise`], [`strategy`], [`metrics`], [`session`]: the model;
//! - [`flags`]: a flagger's flags measured against the truth (confusion, audit);
//! - [`experiment`]: experiment files (schema, validation, overrides, hash);
//! - [`cells`], [`sessions`]: the two kinds of sweep, their grids and hot loops;
//! - [`tables`]: each table's columns, declared once; [`stats`]: the summaries' statistics;
//! - [`llm`]: summaries written by a model (prompts, Batch files, the answer cache, an endpoint);
//! - [`sweep`]: one runner for every kind of sweep (chunks, resume, shards, merge, publishing);
//! - [`report`]: charts and the report, from published tables only;
//! - [`cli`]: the command line (printing, progress, environment).

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
pub mod facts;
pub mod flags;
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
pub use experiment::{load_any, parse_any, AnyExperiment};
pub use sweep::memory::Tables;

/// Runs an experiment of either kind in memory and returns its tables (see
/// [`sweep::memory`]): the entry point for a notebook or another tool.
///
/// ```no_run
/// let exp = ctxlab::load_any("experiments/noise.toml".as_ref(), &[]).unwrap();
/// let tables = ctxlab::run_in_memory(&exp, None).unwrap();
/// println!("{}", tables.summary.height());
/// ```
pub fn run_in_memory(exp: &AnyExperiment, threads: Option<usize>) -> Result<Tables, Error> {
    match exp {
        AnyExperiment::Cells(e) => sweep::memory::tables(e, threads),
        AnyExperiment::Sessions(e) => sweep::memory::tables(e, threads),
    }
}
