//! `ctxlab merge RESULTS_DIR`: the shards of a sweep into one summary and manifest.

use crate::sweep::merge;
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The results folder the shards wrote into.
    pub results: PathBuf,
}

pub fn run(a: MergeArgs) -> Result<()> {
    let report = merge::merge(&a.results)?;
    println!("merged {} shards: {} cells", report.shards, report.cells);
    for f in &report.files {
        println!("  {}", f.display());
    }
    Ok(())
}
