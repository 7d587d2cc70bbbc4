//! `ctxlab sweep EXPERIMENT`: the main job. A `[sweep]` table runs cells, a `[session]` table
//! runs sessions; both go through the one runner.

use crate::experiment::{self, AnyExperiment};
use crate::history::batch::{left_out_lines, BadFiles};
use crate::sweep::estimate::{Estimate, Limit, Limits};
use crate::sweep::fault::Fault;
use crate::sweep::run::{self, CellsOutput, Progress, RunOptions, DEFAULT_CHUNK_CELLS};
use crate::sweep::shard::Shard;
use anyhow::{anyhow, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// The experiment file (TOML).
    pub experiment: PathBuf,
    /// Override any key of the experiment, e.g. `--set sweep.budgets=[25,50]` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub overrides: Vec<String>,
    /// Output folder (overrides `output.dir`).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads (default: one per core). The tables are the same at any count.
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Which cells (or sessions) to write: all, a sample (every 100th history), or none
    /// (summary only).
    #[arg(long, value_enum, default_value = "all")]
    pub cells: CellsOutput,
    #[command(flatten)]
    pub shard: ShardArgs,
    /// Finish a run that was interrupted, keeping its finished chunks.
    #[arg(long)]
    pub resume: bool,
    /// Cells (or sessions) evaluated between checkpoints (bounds memory).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_CHUNK_CELLS)]
    pub chunk_cells: usize,
    /// Write into a non-empty folder that ctxlab did not write (it removes only its own files).
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub checks: BeforeRunArgs,
    /// Leave each history or transcript file that cannot be read out whole (named on stderr
    /// and in the manifest), instead of refusing (a refusal names every bad file).
    #[arg(long)]
    pub skip_bad: bool,
    /// Seconds between the plain progress lines printed when stderr is not a terminal.
    #[arg(long, value_name = "SECONDS", default_value_t = 10.0)]
    pub progress_every: f64,
}

/// Which shard of the sweep this run is (`--shard`, `--shard-count`).
#[derive(Args, Debug)]
pub struct ShardArgs {
    /// Run shard i of n (by history), e.g. `--shard 3/8`; default from SLURM_ARRAY_TASK_ID /
    /// SLURM_ARRAY_TASK_COUNT or JOB_COMPLETION_INDEX with --shard-count.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<String>,
    /// The shard count for Kubernetes indexed Jobs (JOB_COMPLETION_INDEX gives the index).
    #[arg(long, value_name = "N")]
    pub shard_count: Option<usize>,
}

/// What is checked before anything runs: the sweep's size, its estimated memory and disk
/// (`--max-cells`, `--max-memory`, `--max-disk`), and whether to stop there (`--dry-run`).
#[derive(Args, Debug)]
pub struct BeforeRunArgs {
    /// Refuse a sweep of more cells (or sessions) than this, before anything runs.
    #[arg(long, value_name = "N", default_value_t = crate::experiment::limits::DEFAULT_MAX_CELLS)]
    pub max_cells: u64,
    /// Print the estimate (cells, rows, bytes per format, peak memory), check it, and stop:
    /// nothing is written and no folder is created.
    #[arg(long)]
    pub dry_run: bool,
    /// Refuse a sweep whose estimated peak memory exceeds SIZE (e.g. 512M, 8G; `off`: never).
    /// Default: the memory available (MemAvailable in /proc/meminfo).
    #[arg(long, value_name = "SIZE", default_value = "machine", value_parser = parse_limit)]
    pub max_memory: Limit,
    /// Refuse a sweep whose estimated tables exceed SIZE on disk (e.g. 20G; `off`: never).
    /// Default: the free space of the output folder's filesystem.
    #[arg(long, value_name = "SIZE", default_value = "machine", value_parser = parse_limit)]
    pub max_disk: Limit,
}

/// A `--max-memory` / `--max-disk` value: `machine` (the default), `off` or a size.
pub(crate) fn parse_limit(s: &str) -> std::result::Result<Limit, String> {
    match s {
        "machine" => Ok(Limit::Machine),
        _ => s.parse(),
    }
}

pub fn run(a: SweepArgs) -> Result<()> {
    let shard = Shard::resolve(a.shard.shard.as_deref(), a.shard.shard_count, |k| {
        std::env::var(k).ok()
    })
    .map_err(anyhow::Error::msg)?;
    let mut exp = experiment::load_any(&a.experiment, &a.overrides)?;
    if let Some(out) = &a.out {
        exp.set_output_dir(out);
    }
    if !(a.progress_every.is_finite() && a.progress_every >= 0.0) {
        return Err(anyhow!(
            "--progress-every must be a number of seconds, 0 or more; found {}",
            a.progress_every
        ));
    }
    let bar = Bar::new(
        a.quiet,
        a.checks.dry_run,
        Duration::from_secs_f64(a.progress_every),
    );
    let stage = |dir: &Path| crate::report::draw(dir);
    let opts = RunOptions {
        threads: a.threads,
        cells: a.cells,
        shard,
        resume: a.resume,
        force: a.force,
        chunk_cells: a.chunk_cells,
        max_cells: a.checks.max_cells,
        limits: Limits {
            memory: a.checks.max_memory,
            disk: a.checks.max_disk,
        },
        dry_run: a.checks.dry_run,
        progress: &bar,
        bad_files: BadFiles::skip_if(a.skip_bad),
        stage: Some(&stage),
        fault: fault_from_env()?,
    };
    let histories = match &exp {
        AnyExperiment::Cells(e) => &e.file.histories,
        AnyExperiment::Sessions(e) => &e.file.histories,
    };
    if histories
        .flags
        .as_deref()
        .is_some_and(|f| f.contains("hindsight"))
    {
        // Said before the run as well as in the report: a session sweep writes no report.
        crate::warnln!(
            "warning: histories.flags includes `hindsight`, defined by what the agent used later: the strategies are told the future"
        );
    }
    let (name, report) = match &exp {
        AnyExperiment::Cells(e) => (&e.file.name, run::run(e, &opts)?),
        AnyExperiment::Sessions(e) => (&e.file.name, run::run(e, &opts)?),
    };
    for line in left_out_lines(&report.left_out) {
        crate::warnln!("{line}");
    }
    if a.checks.dry_run {
        crate::warnln!("dry run: nothing was written");
        return Ok(());
    }
    let what = match shard {
        Some(s) => format!("{name} shard {s}"),
        None => name.clone(),
    };
    let resumed = if report.resumed_chunks > 0 {
        format!(" (resumed after {} finished chunks)", report.resumed_chunks)
    } else {
        String::new()
    };
    let unit = unit(report.kind);
    crate::sayln!(
        "{what}: {} {unit} over {} histories in {:.2} s{resumed} → {}",
        report.rows,
        report.histories,
        report.wall.as_secs_f64(),
        report.dir.display()
    );
    for f in &report.files {
        crate::sayln!("  {}", f.display());
    }
    // Said here as well as in report.md (which a session sweep does not write).
    if let Some(confusion) = &report.flagger {
        crate::sayln!();
        crate::say!("{}", crate::report::flagger::text(confusion));
    }
    Ok(())
}

/// What the rows of a kind of sweep are called.
pub(crate) fn unit(kind: crate::tables::manifest::SweepKind) -> &'static str {
    match kind {
        crate::tables::manifest::SweepKind::Cells => "cells",
        crate::tables::manifest::SweepKind::Sessions => "sessions",
    }
}

/// `CTXLAB_FAULT` set to a fault's spelling (`chunks:K`, `publish`: see [`Fault`]'s parser)
/// makes the run abort there: how the tests interrupt a sweep at a known point.
pub(crate) fn fault_from_env() -> Result<Option<Fault>> {
    match std::env::var("CTXLAB_FAULT") {
        Ok(v) => v
            .parse()
            .map(Some)
            .map_err(|e: crate::error::ParseError| anyhow!("CTXLAB_FAULT: {e}")),
        Err(_) => Ok(None),
    }
}

/// Progress on stderr: a bar on a terminal, a plain line every `--progress-every` seconds
/// otherwise (a batch job's log), nothing when quiet; the estimate before the run unless quiet (always in
/// a dry run).
pub(crate) struct Bar {
    bar: ProgressBar,
    quiet: bool,
    dry_run: bool,
    lines: Option<Lines>,
}

/// The plain progress lines of a batch run.
struct Lines {
    every: Duration,
    started: Instant,
    total: AtomicU64,
    done: AtomicU64,
    unit: Mutex<String>,
    /// When the last line was printed (ms since `started`).
    last: AtomicU64,
}

impl Bar {
    pub(crate) fn new(quiet: bool, dry_run: bool, every: Duration) -> Bar {
        let terminal = std::io::stderr().is_terminal();
        let bar = if quiet || !terminal {
            ProgressBar::hidden()
        } else {
            ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr())
        };
        Bar {
            bar,
            quiet,
            dry_run,
            lines: (!quiet && !terminal).then(|| Lines {
                every,
                started: Instant::now(),
                total: AtomicU64::new(0),
                done: AtomicU64::new(0),
                unit: Mutex::new(String::new()),
                last: AtomicU64::new(0),
            }),
        }
    }
}

impl Lines {
    fn advance(&self, rows: u64) {
        let done = self.done.fetch_add(rows, Ordering::Relaxed) + rows;
        let now = self.started.elapsed().as_millis() as u64;
        let last = self.last.load(Ordering::Relaxed);
        let every = self.every.as_millis() as u64;
        // One thread wins the interval and prints.
        if now >= last + every
            && self
                .last
                .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.print(done, now);
        }
    }

    fn print(&self, done: u64, now_ms: u64) {
        let total = self.total.load(Ordering::Relaxed);
        let unit = self.unit.lock().map(|u| u.clone()).unwrap_or_default();
        crate::warnln!(
            "{}",
            progress_line(done, total, now_ms as f64 / 1000.0, &unit)
        );
    }
}

/// `progress: 1200000/19200000 cells (6.2 %), 240000 cells/s, 1m 15s elapsed, ETA 1m 15s`
pub(crate) fn progress_line(done: u64, total: u64, seconds: f64, unit: &str) -> String {
    let rate = if seconds > 0.0 {
        done as f64 / seconds
    } else {
        0.0
    };
    let share = if total > 0 {
        100.0 * done as f64 / total as f64
    } else {
        100.0
    };
    let eta = if rate > 0.0 {
        duration(total.saturating_sub(done) as f64 / rate)
    } else {
        "unknown".to_string()
    };
    format!(
        "progress: {done}/{total} {unit} ({share:.1} %), {rate:.0} {unit}/s, {} elapsed, ETA {eta}",
        duration(seconds)
    )
}

/// `42s`, `3m 05s`, `2h 10m`.
fn duration(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s / 60 % 60),
    }
}

impl Progress for Bar {
    fn estimate(&self, estimate: &Estimate, notes: &[String]) {
        if self.quiet && !self.dry_run {
            return;
        }
        for line in estimate.lines().iter().chain(notes) {
            crate::warnln!("{line}");
        }
    }
    fn start(&self, total: u64, unit: &str) {
        if let Some(l) = &self.lines {
            l.total.store(total, Ordering::Relaxed);
            if let Ok(mut u) = l.unit.lock() {
                *u = unit.to_string();
            }
        }
        self.bar.set_length(total);
        self.bar.set_style(
            ProgressStyle::with_template(&format!(
                "{{spinner}} [{{elapsed_precise}}] {{wide_bar}} {{human_pos}}/{{human_len}} {unit} ({{per_sec:0}}, ETA {{eta}})"
            ))
            .expect("valid template"),
        );
    }
    fn advance(&self, rows: u64) {
        if let Some(l) = &self.lines {
            l.advance(rows);
        }
        self.bar.inc(rows);
    }
    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}
