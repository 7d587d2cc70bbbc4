//! One runner for every kind of sweep: chunks with checkpoints, `--resume`, shards and
//! `merge`, the output folder's lock, staging and publishing. What differs between cell and
//! session sweeps is behind [`kind::SweepGrid`].

mod checkpoint;
mod chunks;
pub mod estimate;
mod evaluate;
mod external;
pub mod fault;
mod finish;
pub(crate) mod folder;
mod json_file;
pub mod kind;
pub mod machine;
pub mod memory;
pub mod merge;
pub mod options;
pub mod plan;
mod prepare;
mod publish;
mod rows_writer;
pub mod run;
pub mod shard;
mod verify;

pub use folder::LOCK;
pub use run::{run, CellsOutput, Progress, RunOptions, RunReport, Silent, SweepExperiment};
