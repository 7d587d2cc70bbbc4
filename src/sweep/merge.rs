//! `ctxlab merge`: the shards of a sweep (of either kind) back into one run.
//!
//! Each shard left `shards/shard=i.json` (its summary state, the resolved experiment and its
//! hash) beside its rows in `<table>/shard=i/part.parquet`. Merging checks that every shard
//! 0..n is there, that all come from the same experiment and together cover every history
//! once, that each shard's rows files hold the rows its state says and the very bytes it wrote
//! (a checksum over the experiment's hash, the shard and the file, kept in its state), then adds the summaries
//! (exact integer sums, so the result equals a single-machine run bit for bit) and publishes
//! the summary tables, the report stage's files and the manifest, under the folder's lock.

use super::checkpoint::ShardState;
use super::finish::Finish;
use super::folder::Folder;
use super::kind::SweepExperiment;
use super::kind::SweepGrid;
use super::options::RunOptions;
use super::verify;
use crate::error::refuse;
use crate::error::{At, Result};
use crate::experiment::{self, AnyExperiment};
use crate::formats::TableFormat;
use crate::stats::Summary;
use crate::tables::manifest::MANIFEST;
use crate::tables::summary;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug)]
pub struct MergeReport {
    pub kind: crate::tables::manifest::SweepKind,
    pub shards: usize,
    pub rows: u64,
    pub files: Vec<PathBuf>,
}

/// Reads every shard state of `dir`, checks them, and publishes the merged summary and
/// manifest (`opts.stage` draws the charts and report; the other options do not apply).
pub fn merge(dir: &Path, opts: &RunOptions) -> Result<MergeReport> {
    if !dir.is_dir() {
        // Names the missing shard states.
        read_states(dir)?;
    }
    let folder = Folder::existing(dir)?;
    let states = read_states(dir)?;
    let first = &states[0].1;
    let count = first.shard.1;
    for (path, s) in &states {
        if s.shard.1 != count || s.shard.1 == 0 || s.shard.0 >= s.shard.1 {
            refuse!(
                "{}: shard {}/{} does not belong to the split into {count} shards of {}; all shards must come from one split",
                path.display(), s.shard.0, s.shard.1, states[0].0.display()
            );
        }
        if s.config_hash != first.config_hash || s.kind != first.kind {
            refuse!(
                "{}: shard {} comes from another experiment (config hash {}, shard {} has {}); re-run it with the same experiment file",
                path.display(), s.shard.0, s.config_hash, first.shard.0, first.config_hash
            );
        }
    }
    // The indices present, so that a corrupt count (2^64 − 1) allocates nothing.
    let present: std::collections::HashSet<usize> = states.iter().map(|(_, s)| s.shard.0).collect();
    let missing: Vec<String> = (0..count)
        .filter(|i| !present.contains(i))
        .take(20)
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        let more = if count - present.len() > missing.len() {
            ", ..."
        } else {
            ""
        };
        refuse!(
            "{}: shards {}{more} are missing (found {} of {}); run them with `ctxlab sweep EXPERIMENT --shard i/{count} --out {}`",
            dir.join("shards").display(), missing.join(", "), present.len(), count, dir.display()
        );
    }
    let mut by_index: Vec<Option<(&Path, &ShardState)>> = vec![None; count];
    for (path, s) in &states {
        if by_index[s.shard.0].replace((path, s)).is_some() {
            refuse!("{}: shard {} appears twice", path.display(), s.shard.0);
        }
    }
    let shards: Vec<(&Path, &ShardState)> = by_index.into_iter().flatten().collect();
    let mut next = 0;
    for (_, s) in &shards {
        if s.histories.0 != next || s.histories.1 < s.histories.0 {
            refuse!("shard {} starts at history {} where {} was expected: the shards do not tile the histories", s.shard.0, s.histories.0, next);
        }
        next = s.histories.1;
    }
    let origin = format!("{}", states[0].0.display());
    let mut exp = experiment::from_resolved_any(&origin, &first.config)?;
    exp.set_output_dir(dir);
    let hash = match &exp {
        AnyExperiment::Cells(e) => SweepExperiment::config_hash(e),
        AnyExperiment::Sessions(e) => SweepExperiment::config_hash(e),
    };
    if hash != first.config_hash {
        refuse!("{origin}: the recorded experiment does not match its hash; the shard states were edited or come from another ctxlab version");
    }
    let generated = match &exp {
        AnyExperiment::Cells(e) => SweepExperiment::source(e),
        AnyExperiment::Sessions(e) => SweepExperiment::source(e),
    };
    if let crate::history::source::Source::Generate(g) = generated {
        if next != g.count as usize {
            refuse!(
                "{origin}: the shards cover {next} histories where the experiment generates {}",
                g.count
            );
        }
    }
    match &exp {
        AnyExperiment::Cells(e) => merge_kind(e, &folder, &shards, next, opts),
        AnyExperiment::Sessions(e) => merge_kind(e, &folder, &shards, next, opts),
    }
}

/// Merges the checked shards of one kind of sweep: their summaries added, then the summary
/// tables, the report stage and the manifest published beside the shards' rows.
fn merge_kind<E: SweepExperiment>(
    exp: &E,
    folder: &Folder,
    shards: &[(&Path, &ShardState)],
    histories: usize,
    opts: &RunOptions,
) -> Result<MergeReport> {
    let dir = &folder.dir;
    let grid = exp.grid(histories);
    if opts.stage.is_some() && exp.formats().has(TableFormat::Parquet) {
        super::estimate::check_report(&grid, opts.limits.memory)?;
    }
    let rows_table = E::Grid::rows_table();
    let mut total: Summary = summary::empty(&rows_table, &grid);
    let mut shard_files = Vec::new();
    for &(path, s) in shards {
        check_agrees(path, s, shards[0].1, &total)?;
        check_files(exp, dir, &grid, rows_table.stem, path, s)?;
        shard_files.extend(s.files.iter().cloned());
        shard_files.push(format!("shards/shard={}.json", s.shard.0));
        total.merge(&s.summary);
    }
    let staging = folder.fresh_staging(".partial-merge")?;
    // Each figure was checked finite and at most a century.
    let wall = Duration::from_secs_f64(shards.iter().map(|(_, s)| s.wall_seconds).sum());
    let mut staged = Vec::new();
    Finish {
        staging: &staging,
        grid: &grid,
        rows_table: &rows_table,
        formats: exp.formats(),
        stage: opts.stage,
        fault: opts.fault.as_ref(),
        flagger: shards[0].1.flagger.clone(),
        left_out: shards[0].1.left_out.clone(),
        programs: &shards[0].1.programs,
    }
    .summary_and_manifest(
        exp,
        &total,
        wall,
        Some(shards.len()),
        &mut staged,
        &shard_files,
    )?;
    let places: Vec<(String, String)> = staged.iter().map(|f| (f.clone(), f.clone())).collect();
    let files = folder.publish(
        &staging,
        &places,
        (MANIFEST, MANIFEST),
        &shard_files,
        &[],
        opts.fault.as_ref(),
    )?;
    Ok(MergeReport {
        kind: E::Grid::KIND,
        shards: shards.len(),
        rows: grid.rows(),
        files,
    })
}

/// Checks that a shard's state can be added to the others: a summary of this ctxlab's format
/// and of the grid's shape, made from the same histories, flags and programs as the first
/// shard's.
fn check_agrees(path: &Path, s: &ShardState, first: &ShardState, total: &Summary) -> Result<()> {
    if let Err(e) = s.summary.check_format() {
        refuse!("{}: shard {}: {e}", path.display(), s.shard.0);
    }
    if !s.summary.same_shape(total) {
        refuse!(
            "{}: shard {}: its summary has {} groups where the grid has {}",
            path.display(),
            s.shard.0,
            s.summary.groups.len(),
            total.groups.len()
        );
    }
    // What every shard must share with the first: the histories and programs they ran on.
    for (differs, what) in [
        (s.flagger != first.flagger, "its flags' confusion matrix differs from shard {0}'s: the shards were run on different histories or flags"),
        (s.left_out != first.left_out, "it left out other files than shard {0} (--skip-bad): the shards were run on different histories"),
        (s.programs != first.programs, "its external strategies ran other programs than shard {0}'s (a program file changed between shards)"),
    ] {
        if differs {
            refuse!(
                "{}: shard {}: {}",
                path.display(),
                s.shard.0,
                what.replace("{0}", &first.shard.0.to_string())
            );
        }
    }
    Ok(())
}

/// Checks a shard's own figures against the grid, and its rows files (and the events files
/// beside them) against the rows and bytes its state records.
fn check_files<E: SweepExperiment>(
    exp: &E,
    dir: &Path,
    grid: &E::Grid,
    rows_stem: &str,
    path: &Path,
    s: &ShardState,
) -> Result<()> {
    verify::numbers(path, s, grid)?;
    let mut expected: Vec<(String, u64)> = verify::expected_files(rows_stem, s, exp.rows_formats())
        .into_iter()
        .map(|f| (f, s.rows_written))
        .collect();
    if let Some(t) = E::Grid::events_table() {
        // Written beside the rows table, for the same histories.
        if s.rows_written > 0 {
            expected.extend(
                verify::expected_files(t.stem, s, exp.rows_formats())
                    .into_iter()
                    .map(|f| (f, s.events_written)),
            );
        }
    }
    verify::files(dir, path, s, &expected)
}

fn read_states(dir: &Path) -> Result<Vec<(PathBuf, ShardState)>> {
    let folder = dir.join("shards");
    let Ok(entries) = std::fs::read_dir(&folder) else {
        refuse!("{}: no shard states here; run `ctxlab sweep EXPERIMENT --shard i/n --out {}` for every shard first", folder.display(), dir.display());
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    paths.sort();
    if paths.is_empty() {
        refuse!("{}: no shard states (shard=i.json) found", folder.display());
    }
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).at(&p, "read")?;
            let state: ShardState =
                crate::strict_json::from_str(&text).at(&p, "read as a ctxlab shard state")?;
            Ok((p, state))
        })
        .collect()
}
