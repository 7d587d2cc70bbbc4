//! `ctxlab compare RESULTS --baseline SPEC [--measure NAME]`: every strategy of a run against
//! one, cell by cell, with intervals by history.

use crate::report::compare;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A results folder written by `ctxlab sweep` (or `merge`).
    pub results: PathBuf,
    /// The strategy to compare against, one of the run's (e.g. `recent`).
    #[arg(long)]
    pub baseline: String,
    /// One paired measure (default: every one, e.g. `required_retention_all` and `reduction`).
    #[arg(long)]
    pub measure: Option<String>,
}

pub fn run(a: CompareArgs) -> Result<()> {
    let c = compare::compare(&a.results, &a.baseline, a.measure.as_deref())?;
    crate::say!("{}", compare::to_text(&c));
    for f in &c.written {
        crate::sayln!("  {}", f.display());
    }
    Ok(())
}
