//! Command-line arguments, one module per subcommand; each `run` does the work through the
//! library so `main.rs` is only dispatch.

pub mod args;
pub mod plot;
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
    /// Redraw the charts and report.md of a sweep's results folder from its tables.
    Plot(plot::PlotArgs),
}

impl Command {
    pub fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Table(a) => table::run(a),
            Command::Plot(a) => plot::run(a),
        }
    }
}
