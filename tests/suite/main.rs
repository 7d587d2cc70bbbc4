//! The integration tests, one binary (ripgrep's layout): each module is an area, and polars is
//! linked once. Tests that install a global allocator live in their own binaries beside this.

mod common;

mod article12;
mod cache_time;
mod caches;
mod calibrate_summaries;
mod charts;
mod claude_code_versions;
mod cli_import;
mod cli_inspect;
mod cli_session;
mod cli_table;
mod cost_ratio;
mod estimate;
mod facts;
mod flags_file;
mod fuzz;
mod goldens_2026;
mod harness_goldens;
mod help;
mod hostile;
mod import_formats;
mod invariants;
mod judge;
mod links_locks_limits;
mod llm_summaries;
mod llm_sweep;
mod losses;
mod memory;
mod noise_models;
mod presets_summary;
mod presets_view;
mod readme;
mod real_runs;
mod runner;
mod scale;
mod session;
mod session_sweep;
mod statistics;
mod strategies;
mod strategy_specs;
mod structure;
mod summarisers;
mod sweep;
