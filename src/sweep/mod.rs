//! Sweeps: experiment files, the grid of cells, the parallel runner and its tables.

pub mod cell;
pub mod config;
pub mod grid;
pub mod run;
pub mod shard;
pub mod summary;
pub mod tables;
