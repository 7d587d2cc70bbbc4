//! `ctxlab flags audit HISTORIES --flags FILE`: a flagger's error rates against the truth
//! labels, overall, by kind and by position, with intervals by history, and the noise specs
//! that would mimic it.

use crate::experiment::{DEFAULT_TRANSCRIPT_FLAGS, DEFAULT_TRANSCRIPT_LABELS};
use crate::history::batch::{left_out_lines, BadFiles};
use crate::history::source::{HistorySource, Source};
use anyhow::{anyhow, bail, Result};
use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FlagsArgs {
    #[command(subcommand)]
    pub command: FlagsCommand,
}

#[derive(Subcommand, Debug)]
pub enum FlagsCommand {
    /// A flagger's false-negative and false-positive rates (overall, by kind, by quarter of
    /// the history, 95 % intervals by history) and the noise specs that would mimic it.
    Audit(AuditArgs),
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// History files, as `histories.files` loads them (ctxlab JSONL, or transcripts with
    /// `--format`).
    #[arg(required = true)]
    pub histories: Vec<PathBuf>,
    #[arg(long, help = format!(
        "The flags file (`{{\"history\", \"id\", \"flag\"}}` per line), as `histories.flags_file` takes it. Absent: the histories' own flags (the `flag` field of JSONL records, or the transcripts' flag rules `{}`)",
        DEFAULT_TRANSCRIPT_FLAGS
    ))]
    pub flags: Option<PathBuf>,
    #[arg(long, default_value = "jsonl", help = format!(
        "What the files are: jsonl (the default) or a transcript format ({}), as `histories.format`",
        crate::history::import::Format::names()
    ))]
    pub format: String,
    #[arg(long, help = format!(
        "Label rules giving the truth of transcripts, as `histories.labels` (default `{}`)",
        DEFAULT_TRANSCRIPT_LABELS
    ))]
    pub labels: Option<String>,
    /// Leave each history or transcript file that cannot be read out whole, naming it with
    /// its reason on stderr, instead of refusing (a refusal names every bad file).
    #[arg(long)]
    pub skip_bad: bool,
}

pub fn run(a: FlagsArgs) -> Result<()> {
    match a.command {
        FlagsCommand::Audit(a) => audit(a),
    }
}

fn audit(a: AuditArgs) -> Result<()> {
    let source = match a.format.as_str() {
        "jsonl" => {
            if a.labels.is_some() {
                bail!("--labels: label rules apply to transcripts (give --format); JSONL histories carry their own `required`");
            }
            Source::Files(a.histories.clone())
        }
        f => Source::Transcripts {
            paths: a.histories.clone(),
            format: f.parse().map_err(|m: String| {
                anyhow!("--format: {m} (or \"jsonl\" for ctxlab histories)")
            })?,
            labels: a
                .labels
                .as_deref()
                .unwrap_or(DEFAULT_TRANSCRIPT_LABELS)
                .parse()
                .map_err(|m: String| anyhow!("--labels: {m}"))?,
            flags: DEFAULT_TRANSCRIPT_FLAGS
                .parse()
                .map_err(|m: String| anyhow!("{m}"))?,
        },
    };
    let (opened, left_out) =
        HistorySource::open_batch(&source, a.flags.as_deref(), BadFiles::skip_if(a.skip_bad))?;
    for line in left_out_lines(&left_out) {
        crate::warnln!("{line}");
    }
    let all = opened.all()?;
    if all.iter().all(|h| h.flags.is_none()) {
        bail!(
            "{}: the histories carry no flags of their own: pass --flags FILE, or give their records a `flag` field",
            a.histories[0].display()
        );
    }
    let flags_from = match (&a.flags, a.format.as_str()) {
        (Some(f), _) => f.display().to_string(),
        (None, "jsonl") => "the records' `flag` fields".to_string(),
        (None, _) => format!("the flag rules `{DEFAULT_TRANSCRIPT_FLAGS}`"),
    };
    let audit = crate::flags::audit::audit(all.iter().map(|h| &**h));
    crate::say!(
        "{}",
        crate::report::flagger::audit_text(&audit, &flags_from)
    );
    Ok(())
}
