//! Command-line arguments, one module per subcommand; each `run` does the work through the
//! library so `main.rs` is only dispatch.

pub mod allocator;
pub mod args;
pub mod calibrate;
pub mod compare;
pub mod facts;
pub mod flags;
pub mod generate;
#[cfg(test)]
mod help_names;
pub mod import;
pub mod inspect;
pub mod labels;
pub mod merge;
pub mod out;
pub mod plot;
pub mod session;
pub mod summaries;
pub mod summaries_export;
pub mod summaries_judge;
pub mod sweep;
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
    /// Run an experiment: every cell of its grid, in parallel, into Parquet/CSV tables.
    Sweep(sweep::SweepArgs),
    /// Write an experiment's synthetic histories as JSONL.
    Generate(generate::GenerateArgs),
    /// Join the shards of a sweep (`sweep --shard i/n`) into one summary and manifest.
    Merge(merge::MergeArgs),
    /// One strategy at one budget on one history, record by record: what became of each.
    Inspect(inspect::InspectArgs),
    /// A session turn by turn: a scripted usage trace, or a history replayed with compaction.
    Session(Box<session::SessionArgs>),
    /// Redraw the charts and report.md of a sweep's results folder from its tables.
    Plot(plot::PlotArgs),
    /// Turn real agent transcripts into ctxlab histories (JSONL), labelled by rules.
    Import(import::ImportArgs),
    /// What the label rules mark on real transcripts, rule by rule (`--explain`: each mark's reason).
    Labels(labels::LabelsArgs),
    /// The facts of real transcripts: how many a later record uses again (needed) and how many
    /// never (listings among them); `--explain`: each needed fact with the record that uses it.
    Facts(facts::FactsArgs),
    /// A flagger's flags against the truth (`flags audit`: its error rates and the noise specs
    /// that would mimic it).
    Flags(flags::FlagsArgs),
    /// Compare a cost model's context sizes with those the transcripts record; with
    /// `--summaries`, measure what their compaction summaries keep of the facts they replaced.
    Calibrate(calibrate::CalibrateArgs),
    /// Every strategy of a run against a baseline, cell by cell, with intervals by history.
    Compare(compare::CompareArgs),
    /// Summaries written by a model: Batch answers or an endpoint's into a cache folder;
    /// `summaries judge`: offline summarisers against the real summaries of transcripts.
    Summaries(summaries::SummariesArgs),
}

impl Command {
    pub fn run(self) -> anyhow::Result<()> {
        match self {
            Command::Table(a) => table::run(a),
            Command::Sweep(a) => sweep::run(a),
            Command::Generate(a) => generate::run(a),
            Command::Inspect(a) => inspect::run(a),
            Command::Merge(a) => merge::run(a),
            Command::Session(a) => session::run(*a),
            Command::Plot(a) => plot::run(a),
            Command::Import(a) => import::run(a),
            Command::Labels(a) => labels::run(a),
            Command::Facts(a) => facts::run(a),
            Command::Flags(a) => flags::run(a),
            Command::Calibrate(a) => calibrate::run(a),
            Command::Compare(a) => compare::run(a),
            Command::Summaries(a) => summaries::run(a),
        }
    }
}
