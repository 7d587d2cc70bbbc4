//! Command-line arguments, one module per subcommand; each `run` does the work through the
//! library so `main.rs` is only dispatch.

pub mod args;
pub mod calibrate;
pub mod import;
pub mod table;

use clap::{Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "ctxlab",
    version,
    about = "Measure what context-compaction strategies keep and lose"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Every strategy at every budget on one history, as a table.
    Table(table::TableArgs),
    /// Turn real agent transcripts into ctxlab histories (JSONL), labelled by rules.
    Import(import::ImportArgs),
    /// Compare a cost model's context sizes with those the transcripts record.
    Calibrate(calibrate::CalibrateArgs),
}

impl Command {
    pub fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Table(a) => table::run(a),
            Command::Import(a) => import::run(a),
            Command::Calibrate(a) => calibrate::run(a),
        }
    }
}
