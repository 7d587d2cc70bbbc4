//! `ctxlab table HISTORY`: the article's table for one history.

use super::args;
use crate::cost::CostModel;
use crate::history::{load_jsonl, CostedHistory};
use crate::report::table;
use crate::strategy::Strategy;
use anyhow::Result;
use clap::{Args, ValueEnum};
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct TableArgs {
    /// A JSONL history file.
    pub history: PathBuf,
    /// Budgets as percentages of the history's total cost.
    #[arg(long, default_value = "100,70,50,25", allow_hyphen_values = true)]
    pub budgets: String,
    /// Strategy specs, e.g. `recent,required,required(fill=skip)`.
    #[arg(long, default_value = "recent,required")]
    pub strategies: String,
    #[arg(long, default_value = "chars", help = format!(
        "Cost model: {} (e.g. `tokens(encoding=cl100k_base)`)",
        crate::quote::or_list(&CostModel::NAMES)
    ))]
    pub cost: CostModel,
    /// Which history of the file, when it holds several.
    #[arg(long)]
    pub history_name: Option<String>,
    /// How to print the table: aligned text, CSV or a Markdown table.
    #[arg(long, value_enum, default_value = "text")]
    pub format: PrintFormat,
    /// The experiment seed: a summary's draws are those of a sweep's first history with it.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum PrintFormat {
    Text,
    Csv,
    Markdown,
}

pub fn run(a: TableArgs) -> Result<()> {
    // Check every argument before reading anything.
    let budgets = args::budgets(&a.budgets).map_err(|e| anyhow::anyhow!("--budgets: {e}"))?;
    let strategies: Vec<Strategy> =
        args::strategies(&a.strategies).map_err(|e| anyhow::anyhow!("--strategies: {e}"))?;
    let histories = load_jsonl(&a.history)?;
    let history = args::choose_history(&a.history, &histories, a.history_name.as_deref())?;
    let costed = CostedHistory::new(history, a.cost);
    let (rows, failed) = crate::strategy::external::watch(|| {
        crate::cells::table_rows(&costed, &strategies, &budgets, a.seed)
    });
    if let Some(f) = failed {
        return Err(anyhow::anyhow!(
            f.message_at(&format!("history {:?}", costed.name))
        ));
    }
    let out = match a.format {
        PrintFormat::Text => table::to_text(&costed, &rows),
        PrintFormat::Csv => table::to_csv(&rows),
        PrintFormat::Markdown => table::to_markdown(&rows),
    };
    crate::say!("{out}");
    Ok(())
}
