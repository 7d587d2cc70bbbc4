//! `ctxlab generate EXPERIMENT --out FILE.jsonl`: writes an experiment's synthetic histories so
//! they can be loaded and shared.

use crate::experiment::{self, AnyExperiment};
use crate::history::source::Source;
use crate::history::{generate, write_jsonl};
use crate::output_file::Existing;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// An experiment file whose `[histories]` has a `generate` table.
    pub experiment: PathBuf,
    /// Where to write the JSONL histories; refused if it exists, unless --force.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace a plain file at --out (never a folder, FIFO, device node, socket or link).
    #[arg(long)]
    pub force: bool,
    /// Override any key of the experiment (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

pub fn run(a: GenerateArgs) -> Result<()> {
    let existing = Existing::forced(a.force);
    let tmp = crate::output_file::temporary_beside(&a.out);
    super::args::refuse_overwrite(&a.out, &tmp, &[&a.experiment])?;
    crate::output_file::check(&a.out, existing)?;
    let source = match experiment::load_any(&a.experiment, &a.overrides)? {
        AnyExperiment::Cells(exp) => exp.frame.source,
        AnyExperiment::Sessions(exp) => exp.frame.source,
    };
    let Source::Generate(cfg) = &source else {
        bail!(
            "{}: key `histories`: has no `generate` table, so there is nothing to generate",
            a.experiment.display()
        );
    };
    let histories = generate::generate(cfg);
    // Whole file to a temporary name, then put in place; a full disk leaves no temporary.
    crate::output_file::write(&a.out, existing, |w| write_jsonl(w, &histories))
        .with_context(|| format!("{}: cannot write", a.out.display()))?;
    let records: usize = histories.iter().map(|h| h.len()).sum();
    crate::sayln!(
        "{} histories, {} records → {}",
        histories.len(),
        records,
        a.out.display()
    );
    Ok(())
}
