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
    /// The memory the charts may take: `machine` (the smallest of what is available, the
    /// cgroup's limit and the address-space limit), a size (`8G`) or `off`.
    #[arg(long, value_name = "SIZE", default_value = "machine", value_parser = super::sweep::parse_limit)]
    pub max_memory: crate::sweep::estimate::Limit,
}

pub fn run(a: MergeArgs) -> Result<()> {
    let stage = |dir: &Path| crate::report::draw(dir);
    let opts = RunOptions {
        stage: Some(&stage),
        limits: crate::sweep::estimate::Limits {
            memory: a.max_memory,
            ..Default::default()
        },
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
