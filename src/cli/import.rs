//! `ctxlab import FILE... --format F --out OUT.jsonl`: real transcripts as ctxlab histories,
//! one history per run, labelled by `--label` rules.

use crate::history::write_jsonl;
use crate::import::{self, Format, LabelRules, Names, Problems, Run};
use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Transcript files, one run each.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Transcript format: mini-swe-agent, claude-code, swe-agent or openai-chat.
    #[arg(long)]
    pub format: Format,
    /// Where to write the histories (JSON Lines).
    #[arg(long)]
    pub out: PathBuf,
    /// Label rules setting `required`, comma-separated: instructions, errors, hindsight
    /// (or all, none).
    #[arg(long, default_value = "none")]
    pub label: LabelRules,
    /// Report each malformed line or file on stderr and leave it out, instead of stopping.
    #[arg(long)]
    pub skip_bad: bool,
}

pub fn run(a: ImportArgs) -> Result<()> {
    let tmp = a.out.with_extension("jsonl.partial");
    let inputs: Vec<&std::path::Path> = a.files.iter().map(PathBuf::as_path).collect();
    super::args::refuse_overwrite(&a.out, &tmp, &inputs)?;
    let runs = read_all(&a.files, a.format, a.skip_bad)?;
    let histories: Vec<_> = runs.into_iter().map(|r| a.label.apply(r)).collect();
    // Whole file to a temporary name, then a rename: a reader never sees half an import.
    let tmp = a.out.with_extension("jsonl.partial");
    let write = || -> Result<()> {
        let mut w = BufWriter::new(crate::links::create(&tmp)?);
        write_jsonl(&mut w, &histories)?;
        w.flush()?;
        Ok(())
    };
    if let Err(e) = write() {
        crate::links::remove_file(&tmp);
        return Err(e.context(format!("{}: cannot write", tmp.display())));
    }
    std::fs::rename(&tmp, &a.out).with_context(|| format!("{}: cannot write", a.out.display()))?;
    let records: usize = histories.iter().map(|h| h.len()).sum();
    let required: usize = histories
        .iter()
        .map(|h| h.records.iter().filter(|r| r.required).count())
        .sum();
    crate::sayln!(
        "{} runs, {records} records ({required} required by labels: {}) → {}",
        histories.len(),
        a.label,
        a.out.display()
    );
    Ok(())
}

/// Reads every file; with `skip_bad`, each malformed line or file is reported on stderr and
/// left out. Also used by `ctxlab calibrate`.
pub fn read_all(files: &[PathBuf], format: Format, skip_bad: bool) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    let mut names = Names::default();
    let mut skipped = 0usize;
    for path in files {
        let mut problems = if skip_bad {
            Problems::skipping()
        } else {
            Problems::strict()
        };
        let read = import::read(path, format, &mut problems).and_then(|file_runs| {
            for r in &file_runs {
                names.claim(&r.history.name, path)?;
            }
            Ok(file_runs)
        });
        for p in &problems.skipped {
            crate::warnln!("skipped: {p}");
        }
        skipped += problems.skipped.len();
        match read {
            Ok(file_runs) => runs.extend(file_runs),
            Err(e) if skip_bad => {
                crate::warnln!("skipped: {e}");
                skipped += 1;
            }
            Err(e) => return Err(e.into()),
        }
    }
    if runs.is_empty() {
        bail!(
            "no run could be read from the {} file(s) given as {format}",
            files.len()
        );
    }
    if skipped > 0 {
        crate::warnln!("{skipped} bad line(s) or file(s) skipped");
    }
    Ok(runs)
}
