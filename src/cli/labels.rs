//! `ctxlab labels FILE... --format F --rules R [--explain]`: what the label rules mark on real
//! transcripts, rule by rule, and with `--explain` every marked record with the rule that
//! decided (with the parameter that let it, where one had to) and the reason (the sign of
//! failure, or the token and the later record that used it), then the records the `errors`
//! rule saw a sign of failure in and left out, with the parameter that would mark them, so a
//! reader can check the marks by hand.

use crate::history::batch::BadFiles;
use crate::history::import::label::{Reason, Verdict};
use crate::history::import::{Format, LabelRules};
use crate::report::text_table::{self, Align};
use anyhow::Result;
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug)]
pub struct LabelsArgs {
    /// Transcript files, one run each.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[arg(long, help = format!("Transcript format: {}", crate::history::import::Format::names_or()))]
    pub format: Format,
    /// Label rules, as `import --label` takes them, e.g.
    /// `instructions,errors,hindsight(min_gap=2)`.
    #[arg(long, default_value = "all")]
    pub rules: LabelRules,
    /// Print every marked record with why each rule marked it.
    #[arg(long)]
    pub explain: bool,
    /// Leave each transcript that cannot be read out whole, naming it with its reason on
    /// stderr, instead of refusing (a refusal names every bad file).
    #[arg(long)]
    pub skip_bad: bool,
}

pub fn run(a: LabelsArgs) -> Result<()> {
    let runs = super::import::read_all(&a.files, a.format, BadFiles::skip_if(a.skip_bad))?;
    // Marks per rule: each rule counted on its own, then their union.
    let mut per_rule = [0usize; 3];
    let mut union = 0usize;
    let mut records = 0usize;
    let mut explained = Vec::new();
    let mut left_out = Vec::new();
    for run in &runs {
        if a.explain && a.rules.errors {
            for (i, v) in a.rules.error_verdicts(run).into_iter().enumerate() {
                if let Some(Verdict::LeftOut { sign, parameter }) = v {
                    let record = &run.history.records[i];
                    left_out.push(vec![
                        run.history.name.clone(),
                        record.id.to_string(),
                        record.kind.as_str().to_string(),
                        sign.to_string(),
                        format!("errors({parameter}=true)"),
                    ]);
                }
            }
        }
        let reasons = a.rules.reasons(run);
        records += reasons.len();
        for (i, why) in reasons.iter().enumerate() {
            union += usize::from(!why.is_empty());
            for r in why {
                per_rule[rule_index(r)] += 1;
                if a.explain {
                    let record = &run.history.records[i];
                    explained.push(vec![
                        run.history.name.clone(),
                        record.id.to_string(),
                        record.kind.as_str().to_string(),
                        rule_name(r),
                        describe(r, run),
                    ]);
                }
            }
        }
    }
    crate::sayln!("{} runs, {records} records; rules: {}", runs.len(), a.rules);
    crate::sayln!();
    let mut rows: Vec<Vec<String>> = LabelRules::NAMES
        .iter()
        .zip(per_rule)
        .map(|(name, n)| vec![name.to_string(), n.to_string(), share(n, records)])
        .collect();
    rows.push(vec!["any".into(), union.to_string(), share(union, records)]);
    crate::say!(
        "{}",
        text_table::render(
            &["rule", "marks", "of records"],
            &rows,
            &[Align::Left, Align::Right, Align::Right]
        )
    );
    if a.explain {
        crate::sayln!();
        crate::say!(
            "{}",
            text_table::render(
                &["run", "id", "kind", "rule", "why"],
                &explained,
                &[
                    Align::Left,
                    Align::Right,
                    Align::Left,
                    Align::Left,
                    Align::Left
                ]
            )
        );
        if !left_out.is_empty() {
            crate::sayln!();
            crate::sayln!(
                "{} records with a sign of failure that `errors` leaves out:",
                left_out.len()
            );
            crate::sayln!();
            crate::say!(
                "{}",
                text_table::render(
                    &["run", "id", "kind", "sign", "marked by"],
                    &left_out,
                    &[
                        Align::Left,
                        Align::Right,
                        Align::Left,
                        Align::Left,
                        Align::Left
                    ]
                )
            );
        }
    }
    Ok(())
}

/// The rule that decided, with the parameter that let it where the sign counts only when
/// asked for: `errors(file_views=true)`.
fn rule_name(r: &Reason) -> String {
    match r {
        Reason::Failure {
            parameter: Some(p), ..
        } => format!("errors({p}=true)"),
        _ => LabelRules::NAMES[rule_index(r)].to_string(),
    }
}

fn rule_index(r: &Reason) -> usize {
    match r {
        Reason::Instruction(_) => 0,
        Reason::Failure { .. } => 1,
        Reason::Reused { .. } => 2,
    }
}

fn describe(r: &Reason, run: &crate::history::import::Run) -> String {
    match r {
        Reason::Instruction(kind) => format!("a {} record", kind.as_str()),
        Reason::Failure { sign, .. } => (*sign).to_string(),
        Reason::Reused { token, by } => {
            let later = &run.history.records[*by];
            format!("{token} (used by {}, {})", later.id, later.kind.as_str())
        }
    }
}

fn share(n: usize, of: usize) -> String {
    if of == 0 {
        String::new()
    } else {
        format!("{:.1}%", 100.0 * n as f64 / of as f64)
    }
}
