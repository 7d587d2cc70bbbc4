//! `ctxlab merge`: shards back into one run.
//!
//! Each shard left `shards/shard=i.json` (its summary state, the resolved experiment and its
//! hash) beside its cells in `cells/shard=i/part.parquet`. Merging checks that every shard
//! 0..n is there, that all come from the same experiment and together cover every history
//! once, then adds the summaries (exact integer sums, so the result equals a single-machine
//! run bit for bit) and writes the summary tables and the manifest.

use super::config;
use super::grid::Grid;
use super::run::{write_summary_and_manifest, ShardState};
use super::summary::Summary;
use anyhow::{bail, Context as _, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug)]
pub struct MergeReport {
    pub shards: usize,
    pub cells: u64,
    pub files: Vec<PathBuf>,
}

/// Reads every shard state of `dir`, checks them, and writes the merged summary and manifest.
pub fn merge(dir: &Path) -> Result<MergeReport> {
    let states = read_states(dir)?;
    let first = &states[0].1;
    let count = first.shard.1;
    for (path, s) in &states {
        if s.shard.1 != count {
            bail!(
                "{}: shard {}/{} belongs to a split into {} shards, but {} is {}/{}; all shards must come from one split",
                path.display(), s.shard.0, s.shard.1, s.shard.1, states[0].0.display(), first.shard.0, count
            );
        }
        if s.config_hash != first.config_hash {
            bail!(
                "{}: shard {} comes from another experiment (config hash {}, shard {} has {}); re-run it with the same experiment file",
                path.display(), s.shard.0, s.config_hash, first.shard.0, first.config_hash
            );
        }
    }
    let mut by_index: Vec<Option<&ShardState>> = vec![None; count];
    for (path, s) in &states {
        if by_index[s.shard.0].replace(s).is_some() {
            bail!("{}: shard {} appears twice", path.display(), s.shard.0);
        }
    }
    let missing: Vec<String> = (0..count)
        .filter(|&i| by_index[i].is_none())
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        bail!(
            "{}: shards {} are missing (found {} of {}); run them with `ctxlab sweep EXPERIMENT --shard i/{count} --out {}`",
            dir.join("shards").display(), missing.join(", "), states.len(), count, dir.display()
        );
    }
    let shards: Vec<&ShardState> = by_index.into_iter().flatten().collect();
    let mut next = 0;
    for s in &shards {
        if s.histories.0 != next {
            bail!("shard {} starts at history {} where {} was expected: the shards do not tile the histories", s.shard.0, s.histories.0, next);
        }
        next = s.histories.1;
    }
    let origin = format!("{}", states[0].0.display());
    let exp = config::from_resolved(&origin, &first.config)?;
    if exp.config_hash() != first.config_hash {
        bail!("{origin}: the recorded experiment does not match its hash; the shard states were edited or come from another ctxlab version");
    }
    let grid = Grid::new(&exp, next);
    let mut summary = Summary::new(&grid);
    for s in &shards {
        if s.summary.groups.len() != summary.groups.len() {
            bail!(
                "shard {}: its summary has {} groups where the grid has {}",
                s.shard.0,
                s.summary.groups.len(),
                summary.groups.len()
            );
        }
        summary.merge(&s.summary);
    }
    let staging = dir.join(".partial-merge");
    if staging.exists() {
        std::fs::remove_dir_all(&staging)?;
    }
    std::fs::create_dir_all(&staging)
        .with_context(|| format!("{}: cannot create", staging.display()))?;
    let wall = Duration::from_secs_f64(shards.iter().map(|s| s.wall_seconds).sum());
    let mut exp = exp;
    exp.output_dir = dir.to_path_buf();
    write_summary_and_manifest(&staging, &exp, &grid, &summary, wall, Some(count))?;
    let mut files = Vec::new();
    for name in ["summary.parquet", "summary.csv", "manifest.json"] {
        let from = staging.join(name);
        if from.exists() {
            let to = dir.join(name);
            std::fs::rename(&from, &to)
                .with_context(|| format!("{}: cannot move into place", to.display()))?;
            files.push(to);
        }
    }
    std::fs::remove_dir_all(&staging).ok();
    files.extend(super::run::draw_charts(&exp, dir)?);
    Ok(MergeReport {
        shards: count,
        cells: grid.cells(),
        files,
    })
}

fn read_states(dir: &Path) -> Result<Vec<(PathBuf, ShardState)>> {
    let folder = dir.join("shards");
    let entries = std::fs::read_dir(&folder).with_context(|| {
        format!("{}: no shard states here; run `ctxlab sweep EXPERIMENT --shard i/n --out {}` for every shard first", folder.display(), dir.display())
    })?;
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        bail!("{}: no shard states (shard=i.json) found", folder.display());
    }
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p)
                .with_context(|| format!("{}: cannot read", p.display()))?;
            let state: ShardState = serde_json::from_str(&text)
                .with_context(|| format!("{}: not a ctxlab shard state", p.display()))?;
            Ok((p, state))
        })
        .collect()
}
