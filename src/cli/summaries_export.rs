//! `ctxlab summaries export EXPERIMENT --out requests.jsonl`: the summary requests the
//! experiment's `llm` summarisers need and their cache lacks, as an OpenAI Batch input file.
//! Every history is evaluated, nothing else is written. In a session a compaction whose input
//! holds an unanswered summary is not asked yet: answer, import and export again until none is
//! missing.

use crate::experiment::{self, AnyExperiment};
use crate::llm::batch::{self, Existing};
use crate::sweep::run::missing_summaries;
use anyhow::{anyhow, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The experiment file (TOML) whose `llm` summarisers need answers.
    pub experiment: PathBuf,
    /// Override any key of the experiment, as `sweep --set` does (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// The Batch input file to write (refused if it exists).
    #[arg(long)]
    pub out: PathBuf,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

pub fn export(a: ExportArgs) -> Result<()> {
    let exp = experiment::load_any(&a.experiment, &a.overrides)?;
    let missing = match &exp {
        AnyExperiment::Cells(e) => missing_summaries(e, a.threads)?,
        AnyExperiment::Sessions(e) => missing_summaries(e, a.threads)?,
    };
    if let Some(f) = &missing.failure {
        return Err(anyhow!(
            "the `llm` summariser could not read its summaries: {f}"
        ));
    }
    // A compaction waits only on an answer the cache lacks, which is then among the requests.
    if missing.requests.is_empty() {
        crate::sayln!(
            "{}: every summary the `llm` summarisers need is in their cache; nothing to export (no file written)",
            a.experiment.display()
        );
        return Ok(());
    }
    let written = batch::write_requests(&a.out, &missing.requests, Existing::Refuse)?;
    crate::sayln!(
        "{}: {written} summary requests → {} ({} more compactions wait on their answers: import them and export again)",
        a.experiment.display(),
        a.out.display(),
        missing.waiting
    );
    Ok(())
}
