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
    let fault = super::sweep::fault_from_env()?;
    let c = compare::compare_with_fault(
        &a.results,
        &a.baseline,
        a.measure.as_deref(),
        fault.as_ref(),
    )?;
    crate::say!("{}", compare::to_text(&c));
    for f in &c.written {
        crate::sayln!("  {}", f.display());
    }
    Ok(())
}
