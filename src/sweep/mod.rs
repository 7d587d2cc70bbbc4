//! Sweeps: experiment files, the grid of cells, the parallel runner and its tables; session
//! sweeps (`[session]`) in [`sessions`].

pub mod cell;
pub mod config;
pub mod grid;
pub mod merge;
pub mod run;
pub mod sessions;
pub mod shard;
pub mod summary;
pub mod tables;
