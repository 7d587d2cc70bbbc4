//! `ctxlab import FILE... --format F --out OUT.jsonl`: real transcripts as ctxlab histories,
//! one history per run, labelled by `--label` rules.

use crate::history::write_jsonl;
use crate::import::{self, Format, LabelRules, Problems, Run, RunNames, Tally};
use crate::Kind;
use anyhow::{bail, Context, Result};
use clap::Args;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Transcript files, one run each.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[arg(long, help = format!("Transcript format: {}", crate::import::Format::names_or()))]
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
    let mut tally = Tally::default();
    let runs = read_all_tallied(&a.files, a.format, a.skip_bad, &mut tally)?;
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
    crate::say!("{}", tally_text(&tally));
    crate::sayln!(
        "{} runs, {records} records ({required} required by labels: {}) → {}",
        histories.len(),
        a.label,
        a.out.display()
    );
    Ok(())
}

/// What every line type became, one line per type: `TYPE: N lines: L gave R records (by
/// kind)`, then the lines that gave none, by reason (whole-file formats: the records by kind).
pub fn tally_text(tally: &Tally) -> String {
    let mut out = String::new();
    for (name, t) in &tally.types {
        let records: u64 = t.records.iter().sum();
        let by_kind: Vec<String> = Kind::ALL
            .iter()
            .zip(t.records)
            .filter(|(_, n)| *n > 0)
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        if tally.whole_file {
            out += &format!("{name}: {records} records ({})\n", by_kind.join(", "));
            continue;
        }
        out += &format!("{name}: {} lines", t.lines);
        if t.gave > 0 {
            out += &format!(
                ": {} gave {records} records ({})",
                t.gave,
                by_kind.join(", ")
            );
        }
        for (reason, n) in &t.skipped {
            out += &format!("; {n} {reason}");
        }
        out.push('\n');
    }
    out += &format!("model responses: {}\n", tally.responses);
    out
}

/// Reads every file; with `skip_bad`, each malformed line or file is reported on stderr and
/// left out. Also used by `ctxlab calibrate`.
pub fn read_all(files: &[PathBuf], format: Format, skip_bad: bool) -> Result<Vec<Run>> {
    read_all_tallied(files, format, skip_bad, &mut Tally::default())
}

/// [`read_all`], adding what each line became to `tally`.
pub fn read_all_tallied(
    files: &[PathBuf],
    format: Format,
    skip_bad: bool,
    tally: &mut Tally,
) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    let mut names = RunNames::default();
    let mut skipped = 0usize;
    for path in files {
        let mut problems = if skip_bad {
            Problems::skipping()
        } else {
            Problems::strict()
        };
        let read = import::read_tallied(path, format, &mut problems, tally).and_then(|file_runs| {
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
