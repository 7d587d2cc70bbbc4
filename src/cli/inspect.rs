//! `ctxlab inspect HISTORY --strategy SPEC --budget P`: one cell, record by record.

use super::args;
use crate::cost::CostModel;
use crate::history::{load_jsonl, CostedHistory};
use crate::noise::{NoiseLevel, NoiseModel};
use crate::report::inspect::{inspect, render, CellSpec};
use crate::strategy::Strategy;
use anyhow::{anyhow, Result};
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct InspectArgs {
    /// A JSONL history file.
    pub history: PathBuf,
    /// One strategy spec, e.g. `mask(keep_recent=10, min_chars=100)`.
    #[arg(long)]
    pub strategy: String,
    /// The budget as a percentage of the history's total cost.
    #[arg(long, allow_hyphen_values = true)]
    pub budget: String,
    /// False-negative rate of the flags: P(flag off | required).
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub noise_fn: String,
    /// False-positive rate of the flags: P(flag on | not required).
    #[arg(long, default_value = "0", allow_hyphen_values = true)]
    pub noise_fp: String,
    /// A noise model, as `sweep.noise` spells it (`by_kind(fn=0.1, fn_tool_result=0.4)`),
    /// instead of `--noise-fn` / `--noise-fp`.
    #[arg(long)]
    pub noise: Option<String>,
    /// The experiment seed (flags and summary draws are those of the sweep's first history).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The noise replicate.
    #[arg(long, default_value_t = 0)]
    pub replicate: u64,
    #[arg(long, default_value = "chars", help = format!("Cost model: {}", crate::quote::or_list(&CostModel::NAMES)))]
    pub cost: CostModel,
    /// Which history of the file, when it holds several.
    #[arg(long)]
    pub history_name: Option<String>,
    /// Colour the fates: auto (when stdout is a terminal and NO_COLOR is unset), always, never.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

pub fn run(a: InspectArgs) -> Result<()> {
    // Check every argument before reading anything.
    let strategy = Strategy::parse(&a.strategy).map_err(|e| anyhow!("--strategy: {e}"))?;
    let budget = match args::budgets(&a.budget).map_err(|e| anyhow!("--budget: {e}"))?[..] {
        [b] => b,
        _ => {
            return Err(anyhow!(
                "--budget: expected one percentage, found {:?}",
                a.budget
            ))
        }
    };
    let false_negative = args::rate(&a.noise_fn).map_err(|e| anyhow!("--noise-fn: {e}"))?;
    let false_positive = args::rate(&a.noise_fp).map_err(|e| anyhow!("--noise-fp: {e}"))?;
    let noise = match &a.noise {
        None => NoiseModel::uniform(NoiseLevel::new(false_negative, false_positive)),
        Some(_) if false_negative != 0.0 || false_positive != 0.0 => {
            return Err(anyhow!(
                "--noise: give a noise model or the rates --noise-fn / --noise-fp, not both"
            ))
        }
        Some(spec) => NoiseModel::parse(spec).map_err(|e| anyhow!("--noise: {e}"))?,
    };
    let histories = load_jsonl(&a.history)?;
    let history = args::choose_history(&a.history, &histories, a.history_name.as_deref())?;
    let costed = CostedHistory::new(history, a.cost);
    let cell = CellSpec {
        budget_percent: budget,
        noise,
        seed: a.seed,
        replicate: a.replicate,
    };
    let colour = match a.color {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
        }
    };
    let (evaluated, failed) = crate::strategy::external::watch(|| {
        crate::cells::inspect_cell(
            &costed,
            &strategy,
            cell.budget_percent,
            cell.noise.clone(),
            cell.seed,
            cell.replicate,
        )
    });
    if let Some(f) = failed {
        return Err(anyhow!(f.message_at(&format!("history {:?}", costed.name))));
    }
    crate::say!(
        "{}",
        render(
            &costed,
            &inspect(&costed, &strategy, cell, evaluated),
            colour
        )
    );
    Ok(())
}
