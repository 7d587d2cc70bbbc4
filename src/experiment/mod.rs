//! Experiment files: schema, validation, `--set` overrides and the hash of what an experiment
//! computes. Both kinds share one frame ([`frame`]: name, seed, replicates, histories, output,
//! comparison) and one engine ([`engine`]); a `[sweep]` table makes a cell sweep ([`cells`]), a
//! `[session]` table a session sweep ([`sessions`]).

mod any;
pub mod cells;
mod engine;
pub mod frame;
pub mod histories;
mod keys;
pub mod limits;
mod noise_axis;
pub mod outer;
mod output;
pub mod session_file;
pub mod sessions;
mod shape;
pub mod summary_axis;

pub use any::{from_resolved_any, load_any, parse_any, AnyExperiment};
pub use cells::{check_noise_budget, from_resolved, load, parse, Experiment, ExperimentFile};
pub use engine::apply_override;
pub use frame::{Frame, FrameFile};
pub use histories::{DEFAULT_TRANSCRIPT_FLAGS, DEFAULT_TRANSCRIPT_LABELS};
pub use sessions::SessionExperiment;
