//! `ctxlab import FILE... --format F --out OUT.jsonl`: real transcripts as ctxlab histories,
//! one history per run, labelled by `--label` rules.

use crate::history::batch::{left_out_lines, BadFiles};
use crate::history::import::{self, Format, LabelRules, Run, Tally};
use crate::history::write_jsonl;
use crate::history::Kind;
use crate::output_file::Existing;
use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct ImportArgs {
    /// Transcript files, one run each.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[arg(long, help = format!("Transcript format: {}", crate::history::import::Format::names_or()))]
    pub format: Format,
    /// Where to write the histories (JSON Lines); refused if it exists, unless --force.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace a plain file at --out (never a folder, FIFO, device node, socket or link).
    #[arg(long)]
    pub force: bool,
    #[arg(long, default_value = "none", help = format!(
        "Label rules setting `required`, comma-separated: {} (or all, none)",
        LabelRules::NAMES.join(", ")
    ))]
    pub label: LabelRules,
    /// Leave each file that cannot be read out whole, naming it with its reason on stderr,
    /// instead of refusing (a refusal names every bad file).
    #[arg(long)]
    pub skip_bad: bool,
}

pub fn run(a: ImportArgs) -> Result<()> {
    let existing = Existing::forced(a.force);
    let inputs: Vec<&std::path::Path> = a.files.iter().map(PathBuf::as_path).collect();
    let tmp = crate::output_file::temporary_beside(&a.out);
    super::args::refuse_overwrite(&a.out, &tmp, &inputs)?;
    // Before anything is read: a path that is not to be replaced is refused at once.
    crate::output_file::check(&a.out, existing)?;
    let mut tally = Tally::default();
    let runs = read_all_tallied(
        &a.files,
        a.format,
        BadFiles::skip_if(a.skip_bad),
        &mut tally,
    )?;
    let histories: Vec<_> = runs.into_iter().map(|r| a.label.apply(r)).collect();
    // Whole file to a temporary name, then put in place: a reader never sees half an import.
    crate::output_file::write(&a.out, existing, |w| write_jsonl(w, &histories))
        .with_context(|| format!("{}: cannot write", a.out.display()))?;
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

/// Reads every file as a batch ([`crate::history::batch`]): any bad file refuses, naming
/// every one, or with [`BadFiles::Skip`] each is left out whole and named on stderr. Also used
/// by `labels`, `facts`, `calibrate` and `summaries judge`.
pub fn read_all(files: &[PathBuf], format: Format, bad: BadFiles) -> Result<Vec<Run>> {
    read_all_tallied(files, format, bad, &mut Tally::default())
}

/// [`read_all`], adding what each line of the files read became to `tally`.
pub fn read_all_tallied(
    files: &[PathBuf],
    format: Format,
    bad: BadFiles,
    tally: &mut Tally,
) -> Result<Vec<Run>> {
    let (runs, left_out) = import::read_batch(files, format, bad, tally)?;
    for line in left_out_lines(&left_out) {
        crate::warnln!("{line}");
    }
    Ok(runs)
}
