//! `ctxlab calibrate FILE... --format F`: estimated against recorded context size of every
//! model call the transcripts record, per run and overall.

use super::import::read_all;
use crate::calibrate::{calls_csv, sizes, to_csv, to_text, RunSizes};
use crate::cost::CostModel;
use crate::import::Format;
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct CalibrateArgs {
    /// Transcript files, one run each.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Transcript format: mini-swe-agent, claude-code, swe-agent or openai-chat.
    #[arg(long)]
    pub format: Format,
    /// Cost model to check, e.g. `tokens`, `tokens(encoding=cl100k_base, overhead=4)`,
    /// `approx-tokens`.
    #[arg(long, default_value = "tokens")]
    pub cost: CostModel,
    /// Print CSV instead of a text table.
    #[arg(long)]
    pub csv: bool,
    /// Print every model call as CSV (`run,call,estimated,recorded`) instead of the summary.
    #[arg(long)]
    pub per_call: bool,
    /// Report each malformed line or file on stderr and leave it out, instead of stopping.
    #[arg(long)]
    pub skip_bad: bool,
}

pub fn run(a: CalibrateArgs) -> Result<()> {
    let runs = read_all(&a.files, a.format, a.skip_bad)?;
    let sized: Vec<RunSizes> = runs.iter().map(|r| sizes(r, a.cost)).collect();
    if sized.iter().all(|r| r.calls.is_empty()) {
        bail!(
            "none of the {} run(s) records the input size of a model call (mini-swe-agent's `prompt_tokens` and Claude Code's `usage` do; SWE-agent trajectories do not), so there is nothing to compare",
            sized.len()
        );
    }
    let out = if a.per_call {
        calls_csv(&sized)
    } else if a.csv {
        to_csv(&sized)
    } else {
        to_text(&sized, a.cost)
    };
    crate::say!("{out}");
    Ok(())
}
