//! Session sweeps: an experiment file with a `[session]` table runs a whole session (see
//! [`crate::session`]) for every history × replicate × noise level × strategy × window ×
//! ratio × note rate, in parallel, into a sessions table, its summary, charts and a manifest.

pub mod config;
pub mod eval;
pub mod grid;
pub mod run;
pub mod summary;
pub mod tables;

pub use config::SessionExperiment;
pub use grid::SessionGrid;
pub use run::{run, SessionRunOptions, SessionRunReport};
