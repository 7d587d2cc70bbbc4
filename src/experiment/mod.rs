//! Experiment files: schema, validation, `--set` overrides and the hash of what an experiment
//! computes. A `[sweep]` table is a cell sweep ([`cells`]), a `[session]` table a session
//! sweep ([`sessions`]).

pub mod cells;
pub mod limits;
mod noise_axis;
pub mod sessions;
mod shape;

pub use cells::{
    apply_override, check_noise_budget, from_resolved, load, load_any, parse, parse_any,
    AnyExperiment, Experiment, ExperimentFile, DEFAULT_TRANSCRIPT_FLAGS, DEFAULT_TRANSCRIPT_LABELS,
};
pub use sessions::SessionExperiment;
