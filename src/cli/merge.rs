//! `ctxlab merge RESULTS_DIR`: the shards of a sweep into one summary and manifest.

use crate::sweep::merge;
use crate::sweep::run::RunOptions;
use anyhow::Result;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The results folder the shards wrote into.
    pub results: PathBuf,
}

pub fn run(a: MergeArgs) -> Result<()> {
    let stage = |dir: &Path| crate::report::draw(dir);
    let opts = RunOptions {
        stage: Some(&stage),
        fault: super::sweep::fault_from_env()?,
        ..RunOptions::default()
    };
    let report = merge::merge(&a.results, &opts)?;
    crate::sayln!(
        "merged {} shards: {} {}",
        report.shards,
        report.rows,
        super::sweep::unit(report.kind)
    );
    for f in &report.files {
        crate::sayln!("  {}", f.display());
    }
    Ok(())
}
