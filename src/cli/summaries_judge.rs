//! `ctxlab summaries judge FILE... [--format claude-code] [--summariser SPEC]... [--csv]
//! [--chart DIR]`: every offline summariser against the real compaction summaries of
//! transcripts, on the very spans they replaced, at their size (see [`crate::summaries_judge`]).

use crate::history::batch::BadFiles;
use crate::history::import::{Format, LabelRules};
use crate::output_file::Existing;
use crate::report::text_table::{self, Align};
use crate::spec::Spec;
use crate::summaries_judge::{judge_run, verdicts, Candidate, Judgement};
use crate::summariser::Summariser;
use crate::tables::judge::{self, CandidateVerdict};
use anyhow::{bail, Context as _, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct JudgeArgs {
    /// Transcript files holding compaction summaries (Claude Code sessions).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Transcript format (only Claude Code records its compaction summaries).
    #[arg(long, default_value = "claude-code")]
    pub format: Format,
    /// A summariser to judge, as a strategy's `summariser=` takes it with its parameters:
    /// `simulated`, `extractive(flagged_first=false)`, `llm(cache=DIR, model=M)` (repeatable;
    /// default: `simulated` at its defaults and `extractive`). An `llm` summariser is judged on
    /// the summaries whose answers its cache holds.
    #[arg(long = "summariser")]
    pub summarisers: Vec<String>,
    /// The flag rules the summarisers see (as `histories.flags` takes them).
    #[arg(long, default_value = crate::experiment::DEFAULT_TRANSCRIPT_FLAGS)]
    pub flags: LabelRules,
    /// A fact is needed when a model-written record after the summary, and more than this many
    /// records after the record that introduced it, uses it again.
    #[arg(long, default_value_t = crate::history::import::label::DEFAULT_MIN_GAP)]
    pub min_gap: usize,
    /// Draws of the simulated summariser averaged per summary.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub draws: u32,
    /// Print one CSV row per summariser instead of the text report.
    #[arg(long)]
    pub csv: bool,
    /// Also draw `charts/judge.png` and `charts/judge.svg` (each summariser's share against
    /// the real summary's, one point per summary) into this folder; refused if either exists,
    /// unless --force.
    #[arg(long)]
    pub chart: Option<PathBuf>,
    /// Replace plain files at the chart's paths (never a folder, FIFO, device node, socket or
    /// link).
    #[arg(long)]
    pub force: bool,
    /// Leave each transcript that cannot be read out whole, naming it with its reason on
    /// stderr, instead of refusing (a refusal names every bad file).
    #[arg(long)]
    pub skip_bad: bool,
}

fn candidate(text: &str, draws: u32) -> Result<Candidate> {
    let (name, rest) = match text.split_once('(') {
        Some((name, rest)) => (
            name.trim(),
            rest.strip_suffix(')')
                .with_context(|| format!("--summariser {text:?}: no closing `)`"))?,
        ),
        None => (text.trim(), ""),
    };
    let params = if rest.trim().is_empty() {
        format!("judge(summariser={name})")
    } else {
        format!("judge(summariser={name}, {rest})")
    };
    let spec = Spec::parse(&params).map_err(|e| anyhow::anyhow!("--summariser {text:?}: {e}"))?;
    let mut p = spec.reader();
    let summariser = Summariser::from_params(&mut p)
        .map_err(|e| anyhow::anyhow!("--summariser {text:?}: {e}"))?;
    p.finish()
        .map_err(|e| anyhow::anyhow!("--summariser {text:?}: {e}"))?;
    let draws = if summariser.writes_text() { 1 } else { draws };
    Ok(Candidate {
        label: text.to_string(),
        summariser,
        draws,
    })
}

pub fn run(a: JudgeArgs) -> Result<()> {
    let asked = if a.summarisers.is_empty() {
        vec!["simulated".to_string(), "extractive".to_string()]
    } else {
        a.summarisers.clone()
    };
    let candidates = asked
        .iter()
        .map(|s| candidate(s, a.draws))
        .collect::<Result<Vec<_>>>()?;
    // The chart's paths are checked before anything is read: nothing of the user's there is
    // replaced unless --force says so (then only plain files).
    if let Some(dir) = &a.chart {
        for ext in ["png", "svg"] {
            let path = dir
                .join(crate::report::publish::CHARTS_DIR)
                .join(format!("judge.{ext}"));
            crate::output_file::check(&path, Existing::forced(a.force))?;
        }
    }
    let runs = super::import::read_all(&a.files, a.format, BadFiles::skip_if(a.skip_bad))?;
    let mut judgement = Judgement::default();
    // A transcript without a compaction summary is counted, not refused: a batch of sessions
    // mixes both.
    for (i, run) in runs.iter().enumerate() {
        judge_run(run, i, &a.flags, a.min_gap, &candidates, &mut judgement);
    }
    if judgement.summaries.is_empty() {
        bail!(
            "no summary to judge in {} transcript(s): {} of them hold no compaction summary (Claude Code writes one as a `user` line with `isCompactSummary: true`); of the summaries, {} replaced a span the file does not hold, {} a span without needed facts",
            runs.len(),
            judgement.without_summary,
            judgement.partial,
            judgement.without_needs
        );
    }
    let verdicts = verdicts(&judgement, &candidates);
    if let Some(dir) = &a.chart {
        let written = crate::report::judge_chart::render(
            dir,
            &judgement,
            &verdicts,
            Existing::forced(a.force),
        )?;
        for path in written {
            crate::sayln!("wrote {}", path.display());
        }
    }
    if a.csv {
        crate::say!("{}", to_csv(&verdicts));
    } else {
        crate::say!("{}", to_text(&judgement, &verdicts, &a, runs.len()));
    }
    Ok(())
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| format!("{v:.3}")).unwrap_or_default()
}

/// One row per summariser, through the table's declaration (`tables::judge`).
fn to_csv(verdicts: &[CandidateVerdict]) -> String {
    judge::table().csv_text(&(), verdicts)
}

fn to_text(j: &Judgement, verdicts: &[CandidateVerdict], a: &JudgeArgs, runs: usize) -> String {
    let mut out = format!(
        "{} compaction summaries judged ({} left out: the span they replaced is not in the file; {} left out: no needed fact in their span); flags {}, min_gap {}\n",
        j.summaries.len(),
        j.partial,
        j.without_needs,
        a.flags,
        a.min_gap
    );
    if j.without_summary > 0 {
        out += &format!(
            "{} of the {runs} transcripts hold no compaction summary: counted, nothing to judge in them\n",
            j.without_summary
        );
    }
    out += "needed facts: those the replaced records introduced that a model-written record after the summary uses again; kept: the share a summary's text holds (the simulated summariser: the facts of the records it keeps, mean of its draws)\n\n";
    let rows: Vec<Vec<String>> = verdicts
        .iter()
        .map(|v| {
            vec![
                v.label.clone(),
                v.summaries.to_string(),
                format!("{:.3}", v.real_kept),
                format!("{:.3}", v.kept),
                format!("{:+.3}", v.diff_mean),
                v.diff_ci
                    .map(|(l, h)| format!("{l:+.3}..{h:+.3}"))
                    .unwrap_or_default(),
                opt(v.correlation),
                format!("{:.3}", v.jaccard),
            ]
        })
        .collect();
    out += &text_table::render(
        &[
            "summariser",
            "summaries",
            "real kept",
            "kept",
            "difference",
            "95 % by summary",
            "correlation",
            "jaccard",
        ],
        &rows,
        &[
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ],
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CSV's bytes: labels quoted where they hold a comma or a quote, shares with six
    /// decimals (1/3 → 0.333333, 2/3 → 0.666667), an interval and a correlation empty where
    /// there is none.
    #[test]
    fn csv_bytes_are_pinned() {
        let verdict = |label: &str, summaries, real_kept, kept, jaccard| CandidateVerdict {
            label: label.to_string(),
            summaries,
            real_kept,
            kept,
            diff_mean: kept - real_kept,
            diff_ci: None,
            correlation: None,
            jaccard,
        };
        let simulated = CandidateVerdict {
            diff_ci: Some((-0.25, 0.916_666_6)),
            correlation: Some(-1.0),
            ..verdict(
                "simulated(recall_user=1, recall_assistant=0)",
                3,
                1.0 / 3.0,
                2.0 / 3.0,
                0.5,
            )
        };
        let verdicts = [
            simulated,
            verdict("extractive", 1, 0.5, 0.0, 0.0),
            verdict("a\"b", 0, 1.0, 1.0, 1.0),
        ];
        assert_eq!(
            to_csv(&verdicts),
            "summariser,summaries,real_kept,kept,diff_mean,diff_ci_low,diff_ci_high,correlation,jaccard\n\
             \"simulated(recall_user=1, recall_assistant=0)\",3,0.333333,0.666667,0.333333,-0.250000,0.916667,-1.000000,0.500000\n\
             extractive,1,0.500000,0.000000,-0.500000,,,,0.000000\n\
             \"a\"\"b\",0,1.000000,1.000000,0.000000,,,,1.000000\n"
        );
    }
}
