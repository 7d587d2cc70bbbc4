//! `ctxlab facts FILE... --format F [--labels R] [--min-gap N] [--explain]`: the facts of real
//! transcripts (`crate::history::facts`), how many of them a later record uses again (the needed ones,
//! what retention of information is scored on) and how many are never used again, directory
//! listings among them. With `--explain`, every needed fact of a required record with the
//! later record that uses it, so a reader can check the rule by hand.

use crate::history::batch::BadFiles;
use crate::history::facts::Facts;
use crate::history::import::{Format, LabelRules};
use crate::history::{History, Kind};
use crate::report::text_table::{self, Align};
use anyhow::{bail, Result};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct FactsArgs {
    /// Transcript files, one run each.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[arg(long, help = format!("Transcript format: {}", crate::history::import::Format::names_or()))]
    pub format: Format,
    /// Label rules that say which records are required, as `import --label` takes them.
    #[arg(long, default_value = "instructions,errors")]
    pub labels: LabelRules,
    /// A fact is needed when a model-written record more than this many records after the
    /// record that introduced it holds it again (a whole number ≥ 0; the `hindsight` rule's
    /// default).
    #[arg(long, default_value_t = crate::history::import::label::DEFAULT_MIN_GAP)]
    pub min_gap: usize,
    /// List every needed fact of a required record with the later record that uses it.
    #[arg(long)]
    pub explain: bool,
    /// The columns `--explain` prints, comma-separated (default: all of them).
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Leave each transcript that cannot be read out whole, naming it with its reason on
    /// stderr, instead of refusing (a refusal names every bad file).
    #[arg(long)]
    pub skip_bad: bool,
}

/// The columns of `--explain`, in order.
const COLUMNS: [&str; 6] = ["run", "id", "kind", "fact", "used_by", "use_kind"];

/// Fact counts over some records: all, needed, never used again, and of those the facts
/// that came from a directory listing.
#[derive(Debug, Default, Clone, Copy)]
struct FactCounts {
    facts: usize,
    needed: usize,
    unused: usize,
    unused_listing: usize,
    listing: usize,
}

impl FactCounts {
    fn row(&self, name: &str) -> Vec<String> {
        vec![
            name.to_string(),
            self.facts.to_string(),
            format!("{} ({})", self.needed, share(self.needed, self.facts)),
            format!("{} ({})", self.unused, share(self.unused, self.facts)),
            format!("{} ({})", self.listing, share(self.listing, self.facts)),
            format!(
                "{} ({})",
                self.unused_listing,
                share(self.unused_listing, self.listing)
            ),
        ]
    }
}

pub fn run(a: FactsArgs) -> Result<()> {
    let columns = chosen_columns(&a.columns)?;
    let runs = super::import::read_all(&a.files, a.format, BadFiles::skip_if(a.skip_bad))?;
    let (mut all, mut required) = (FactCounts::default(), FactCounts::default());
    let mut explained: Vec<Vec<String>> = Vec::new();
    let mut records = 0usize;
    for run in &runs {
        let truth = a.labels.marks(run);
        let h = &run.history;
        records += h.records.len();
        let facts = Facts::with_min_gap(h, a.min_gap);
        for (i, &is_required) in truth.iter().enumerate() {
            let listing = is_listing(h, i);
            for f in facts.owned(i) {
                let counts: &mut [&mut FactCounts] = if is_required {
                    &mut [&mut all, &mut required]
                } else {
                    &mut [&mut all]
                };
                for c in counts.iter_mut() {
                    c.facts += 1;
                    c.listing += usize::from(listing);
                    if facts.is_needed(f) {
                        c.needed += 1;
                    } else {
                        c.unused += 1;
                        c.unused_listing += usize::from(listing);
                    }
                }
                if a.explain && is_required {
                    if let Some(by) = facts.used_by(f) {
                        let later = &h.records[by as usize];
                        let row = [
                            h.name.clone(),
                            h.records[i].id.to_string(),
                            h.records[i].kind.as_str().to_string(),
                            facts.name(f).to_string(),
                            later.id.to_string(),
                            later.kind.as_str().to_string(),
                        ];
                        explained.push(columns.iter().map(|&c| row[c].clone()).collect());
                    }
                }
            }
        }
    }
    crate::sayln!(
        "{} runs, {records} records; required by {}; a fact is needed when a model-written record more than {} records later uses it again",
        runs.len(),
        a.labels,
        a.min_gap
    );
    crate::sayln!();
    crate::say!(
        "{}",
        text_table::render(
            &[
                "records",
                "facts",
                "needed",
                "never used again",
                "from listings",
                "listing facts never used"
            ],
            &[all.row("all"), required.row("required")],
            &[
                Align::Left,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right,
                Align::Right
            ]
        )
    );
    crate::sayln!(
        "Listings: tool results of an `ls`, `find` or `tree` command (the call before the result names it)."
    );
    if a.explain {
        crate::sayln!();
        let header: Vec<&str> = columns.iter().map(|&c| COLUMNS[c]).collect();
        let align: Vec<Align> = columns
            .iter()
            .map(|&c| match COLUMNS[c] {
                "id" | "used_by" => Align::Right,
                _ => Align::Left,
            })
            .collect();
        crate::say!("{}", text_table::render(&header, &explained, &align));
    }
    Ok(())
}

/// The positions in [`COLUMNS`] of the columns asked for, all when none is.
fn chosen_columns(asked: &[String]) -> Result<Vec<usize>> {
    if asked.is_empty() {
        return Ok((0..COLUMNS.len()).collect());
    }
    asked
        .iter()
        .map(|c| match COLUMNS.iter().position(|k| k == c) {
            Some(i) => Ok(i),
            None => bail!(
                "--columns: unknown column `{c}` of `facts --explain` (known: {})",
                COLUMNS.join(", ")
            ),
        })
        .collect()
}

/// Whether record `i` is a tool result listing a directory: the nearest call before it (an
/// `assistant` or `tool_call` record) runs `ls`, `find` or `tree` as its first command.
fn is_listing(h: &History, i: usize) -> bool {
    if h.records[i].kind != Kind::ToolResult {
        return false;
    }
    let Some(call) = h.records[..i]
        .iter()
        .rev()
        .find(|r| matches!(r.kind, Kind::Assistant | Kind::ToolCall))
    else {
        return false;
    };
    command_lines(&call.text).any(|cmd| {
        let cmd = cmd.rsplit("&&").next().unwrap_or(cmd).trim_start();
        let first = cmd.split_whitespace().next().unwrap_or("");
        matches!(first, "ls" | "find" | "tree")
    })
}

/// The lines of a call's text that can hold a command: every line of a fenced block, and a
/// JSON `"command": "..."` value.
fn command_lines(text: &str) -> impl Iterator<Item = &str> {
    let json = text
        .find("\"command\"")
        .and_then(|p| text[p + 9..].split_once('"'))
        .map(|(_, rest)| rest);
    text.lines().map(str::trim).chain(json)
}

fn share(n: usize, of: usize) -> String {
    if of == 0 {
        "–".into()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}
