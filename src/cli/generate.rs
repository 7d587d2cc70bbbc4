//! `ctxlab generate EXPERIMENT --out FILE.jsonl`: writes an experiment's synthetic histories so
//! they can be loaded and shared.

use crate::experiment::{self, AnyExperiment};
use crate::history::source::Source;
use crate::history::{generate, write_jsonl};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct GenerateArgs {
    /// An experiment file whose `[histories]` has a `generate` table.
    pub experiment: PathBuf,
    /// Where to write the JSONL histories.
    #[arg(long)]
    pub out: PathBuf,
    /// Override any key of the experiment (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
}

pub fn run(a: GenerateArgs) -> Result<()> {
    let tmp = a.out.with_extension("jsonl.partial");
    super::args::refuse_overwrite(&a.out, &tmp, &[&a.experiment])?;
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
    let write = || -> Result<()> {
        // Created exclusively: a link at the temporary name is refused, not followed.
        let file = crate::links::create(&tmp)?;
        let mut w = BufWriter::new(file);
        write_jsonl(&mut w, &histories)?;
        w.flush()?;
        Ok(())
    };
    if let Err(e) = write() {
        // A full disk leaves no half-written temporary behind.
        crate::links::remove_file(&tmp);
        return Err(e.context(format!("{}: cannot write", tmp.display())));
    }
    std::fs::rename(&tmp, &a.out).with_context(|| format!("{}: cannot write", a.out.display()))?;
    let records: usize = histories.iter().map(|h| h.len()).sum();
    crate::sayln!(
        "{} histories, {} records → {}",
        histories.len(),
        records,
        a.out.display()
    );
    Ok(())
}
