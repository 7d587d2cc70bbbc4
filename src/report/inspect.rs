//! `ctxlab inspect`: one cell laid out record by record — what each record is, whether it is
//! required and flagged, and what the strategy made of it — so a user sees *why* a strategy
//! scored as it did.
//!
//! The cell is evaluated by the sweep's own code ([`crate::cells::evaluate_cell`]) as the
//! sweep's first history (index 0) at the given seed and replicate, so an inspected cell shows
//! the same mistakes and the same summary draws as the sweep's row for that history.

use super::text_table::{self, Align};
use crate::context::{Context, Item, Outcome};
use crate::history::CostedHistory;
use crate::metrics::Metrics;
use crate::noise::NoiseModel;
use crate::strategy::{Rule, Strategy};
use crate::tables::numbers::{budget, percent};
use std::fmt::Write as _;

/// What became of one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Kept,
    /// Replaced by the strategy's own stand-in (`masked`, `cleared`, `truncated`, …: its
    /// [`Rule::stand_in`]) of the given cost, as the context costed it.
    StandIn {
        called: &'static str,
        cost: u64,
    },
    /// Replaced by a summary, which still carries its information (`kept`) or lost it.
    Summarised {
        kept: bool,
    },
    Dropped,
}

impl Fate {
    pub fn describe(self) -> String {
        match self {
            Fate::Kept => "kept".into(),
            Fate::StandIn { called, cost } => format!("{called} → {cost}"),
            Fate::Summarised { kept: true } => "summarised, kept".into(),
            Fate::Summarised { kept: false } => "summarised, lost".into(),
            Fate::Dropped => "dropped".into(),
        }
    }

    /// The ANSI colour of the fate: green kept, yellow replaced by a placeholder, cyan carried
    /// by a summary, magenta lost in a summary, red dropped.
    fn colour(self) -> &'static str {
        match self {
            Fate::Kept => "32",
            Fate::StandIn { .. } => "33",
            Fate::Summarised { kept: true } => "36",
            Fate::Summarised { kept: false } => "35",
            Fate::Dropped => "31",
        }
    }
}

/// The inputs that make a cell, besides the history.
#[derive(Debug, Clone, PartialEq)]
pub struct CellSpec {
    pub budget_percent: f64,
    pub noise: NoiseModel,
    pub seed: u64,
    pub replicate: u64,
}

/// One evaluated cell with everything needed to show it.
#[derive(Debug, Clone)]
pub struct Inspection {
    pub strategy: Strategy,
    pub cell: CellSpec,
    pub capacity: u64,
    pub keep_recent: usize,
    pub flags: Vec<bool>,
    pub outcome: Outcome,
    pub context: Context,
    pub metrics: Metrics,
    /// Per record; `None` for every record of an infeasible cell (there is no context).
    pub fates: Vec<Option<Fate>>,
}

/// Lays out a cell evaluated by [`crate::cells::inspect_cell`] (the sweep's own code).
pub fn inspect(
    history: &CostedHistory,
    strategy: &Strategy,
    cell: CellSpec,
    evaluated: crate::cells::EvaluatedCell,
) -> Inspection {
    let (row, flags, outcome, context) = evaluated;
    let fates = fates(history, strategy, outcome, &context);
    Inspection {
        strategy: strategy.clone(),
        cell,
        capacity: row.capacity,
        keep_recent: row.keep_recent as usize,
        flags,
        outcome,
        context,
        metrics: row.metrics,
        fates,
    }
}

/// What became of each record of `history` in `context`.
pub fn fates(
    history: &CostedHistory,
    strategy: &Strategy,
    outcome: Outcome,
    context: &Context,
) -> Vec<Option<Fate>> {
    if outcome == Outcome::Infeasible {
        return vec![None; history.len()];
    }
    let mut fates = vec![Some(Fate::Dropped); history.len()];
    // The context holds each placeholder's cost, in order: only the rule that wrote a stand-in
    // knows what it costs (a masked output's head and tail, a truncated message, a marker).
    let mut stand_in_costs = context.placeholder_costs.iter();
    // Summaries first: a record that also stands in the context on its own (Codex keeps a
    // truncated user message beside the summary of everything) shows how it stands there.
    for &item in &context.items {
        if let Item::Summary { first, end, .. } = item {
            for (i, fate) in fates.iter_mut().enumerate().take(end).skip(first) {
                *fate = Some(Fate::Summarised {
                    kept: context.summary_kept[i],
                });
            }
        }
    }
    for &item in &context.items {
        match item {
            Item::Verbatim(i) => fates[i] = Some(Fate::Kept),
            Item::Placeholder(i) => {
                fates[i] = Some(Fate::StandIn {
                    called: strategy.rule.stand_in(),
                    cost: stand_in_costs.next().copied().unwrap_or(0),
                });
            }
            Item::Summary { .. } => {}
        }
    }
    fates
}

/// The cell laid out one line per record, then its summaries and metrics; ANSI colours when
/// `colour` is set.
pub fn render(history: &CostedHistory, x: &Inspection, colour: bool) -> String {
    let mut out = cell_head(history, x);
    out.push('\n');
    out += &records_table(history, x, colour);
    out.push('\n');
    out += &summaries(history, x);
    out += &metrics_line(&x.metrics, x.capacity);
    out
}

/// The cell's setup: the history, the strategy and its capacity, and the flags it saw.
fn cell_head(history: &CostedHistory, x: &Inspection) -> String {
    let mut out = format!(
        "history {:?}: {} records, total {} {}, {} required\n",
        history.name,
        history.len(),
        history.total,
        history.model,
        history.required_total()
    );
    let _ = write!(
        out,
        "strategy {} at {}% → capacity {}",
        x.strategy.label(),
        budget(x.cell.budget_percent),
        x.capacity,
    );
    if !matches!(x.strategy.rule, Rule::Oracle(_)) {
        let _ = write!(out, "; keep_recent {}", x.keep_recent);
    }
    out.push('\n');
    if x.strategy.sees_truth() {
        out += "flags: the true labels (the oracle sees the truth)\n";
    } else if x.cell.noise.is_uniform() {
        let rates = x.cell.noise.nominal();
        let _ = writeln!(
            out,
            "flags: false negatives {}, false positives {}, seed {}, replicate {} (as the sweep's first history)",
            rates.false_negative, rates.false_positive, x.cell.seed, x.cell.replicate
        );
    } else {
        let _ = writeln!(
            out,
            "flags: noise {}, seed {}, replicate {} (as the sweep's first history)",
            x.cell.noise, x.cell.seed, x.cell.replicate
        );
    }
    out
}

/// One row per record: what it is, whether it is required and flagged, and its fate, the
/// required marks and fates coloured when `colour` is on.
fn records_table(history: &CostedHistory, x: &Inspection, colour: bool) -> String {
    let paint = |code: &str, text: &str| {
        if colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    };
    let headings = ["id", "kind", "tool", "cost", "truth", "flag", "fate"];
    let rows: Vec<[String; 7]> = (0..history.len())
        .map(|i| {
            [
                history.ids[i].to_string(),
                history.kinds[i].to_string(),
                history.tools[i].clone().unwrap_or_else(|| "-".into()),
                history.costs[i].to_string(),
                if history.truth[i] { "required" } else { "-" }.into(),
                if x.flags[i] { "flagged" } else { "-" }.into(),
                x.fates[i].map(Fate::describe).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    // Numbers right, words left.
    let mut align = [Align::Left; 7];
    align[0] = Align::Right;
    align[3] = Align::Right;
    let widths = text_table::widths(&headings, &rows);
    let mut out = text_table::head(&headings, &widths, &align);
    for (i, row) in rows.iter().enumerate() {
        out += &text_table::painted_line(row, &widths, &align, |c, text| match c {
            4 if history.truth[i] => paint("1", &text),
            6 => match x.fates[i] {
                Some(f) => paint(f.colour(), &text),
                None => text,
            },
            _ => text,
        });
    }
    out
}

/// One line per summary in the context: which records it stands for and what it carries.
fn summaries(history: &CostedHistory, x: &Inspection) -> String {
    let mut out = String::new();
    for &item in &x.context.items {
        if let Item::Summary { first, end, cost } = item {
            if first == end {
                // Gemini CLI can compress only its own environment message, which a replayed
                // transcript does not hold: a summary of no record of the history.
                let _ = writeln!(
                    out,
                    "summary of no record of the history (the harness's own messages): cost {cost}"
                );
                continue;
            }
            let carried = (first..end).filter(|&i| x.context.summary_kept[i]).count();
            let required = (first..end).filter(|&i| history.truth[i]).count();
            let required_carried = (first..end)
                .filter(|&i| history.truth[i] && x.context.summary_kept[i])
                .count();
            let _ = writeln!(
                out,
                "summary of ids {}–{}: cost {cost}; carries {carried} of {} records ({required_carried} of {required} required)",
                history.ids[first],
                history.ids[end - 1],
                end - first
            );
        }
    }
    out
}

/// The metrics of the cell on one line.
pub fn metrics_line(m: &Metrics, capacity: u64) -> String {
    if !m.feasible {
        return "metrics: INFEASIBLE: what the strategy must keep does not fit the capacity\n"
            .into();
    }
    let share = |part: f64, of: Option<f64>| match of {
        Some(x) => format!("{part}/{} ({})", m.required_total, percent(x)),
        None => "no required records".into(),
    };
    format!(
        "metrics: used {} of {capacity}, reduction {}, required kept {}, any form {}, exact {}, placeholders {}, summarised {}\n",
        m.used,
        m.reduction().map(percent).unwrap_or_default(),
        share(f64::from(m.required_kept), m.required_retention()),
        share(m.required_any, m.retention_any()),
        m.exact().map(percent).unwrap_or_default(),
        m.placeholders,
        m.summarised
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::CostModel;
    use crate::history::{History, Record};

    fn history() -> CostedHistory {
        let records = (0..40)
            .map(|i| Record::new(i + 1, "x".repeat(10)).required(i % 2 == 0))
            .collect();
        CostedHistory::new(&History::new("h", records), CostModel::Chars)
    }

    /// Evaluates and lays out a cell, as `ctxlab inspect` does.
    fn inspect(h: &CostedHistory, s: &Strategy, cell: CellSpec) -> Inspection {
        let evaluated = crate::cells::inspect_cell(
            h,
            s,
            cell.budget_percent,
            cell.noise.clone(),
            cell.seed,
            cell.replicate,
        );
        super::inspect(h, s, cell, evaluated)
    }

    #[test]
    fn flags_and_summary_draws_are_those_of_the_sweeps_first_history() {
        let h = history();
        let s = Strategy::parse("summary(keep_recent=0, summary_size=5)").unwrap();
        let cell = CellSpec {
            budget_percent: 10.0,
            noise: NoiseModel::uniform(crate::noise::NoiseLevel::new(0.3, 0.1)),
            seed: 42,
            replicate: 2,
        };
        let x = inspect(&h, &s, cell.clone());
        let level = crate::noise::NoiseLevel::new(0.3, 0.1);
        assert_eq!(x.flags, crate::noise::flags(&h.truth, level, 42, 0, 2));
        let stream = crate::rng::key(&[42, crate::rng::tag::SUMMARY, 0, 2]);
        let summariser = s.summariser().unwrap();
        for i in 0..h.len() {
            let kept = summariser.keeps(x.flags[i], h.kinds[i], stream, i as u64);
            assert_eq!(x.context.summary_kept[i], kept);
            assert_eq!(x.fates[i], Some(Fate::Summarised { kept }));
        }
        // The oracle is handed the truth whatever the noise.
        let x = inspect(&h, &Strategy::parse("oracle").unwrap(), cell);
        assert_eq!(x.flags, h.truth);
    }

    #[test]
    fn fates_of_an_infeasible_cell_are_unknown_and_colour_is_optional() {
        let h = history();
        let cell = CellSpec {
            budget_percent: 10.0,
            noise: NoiseModel::uniform(crate::noise::NoiseLevel::NONE),
            seed: 0,
            replicate: 0,
        };
        let x = inspect(&h, &Strategy::parse("required").unwrap(), cell.clone());
        assert_eq!(x.outcome, Outcome::Infeasible);
        assert!(x.fates.iter().all(Option::is_none));
        let x = inspect(&h, &Strategy::parse("recent").unwrap(), cell);
        let plain = render(&h, &x, false);
        let coloured = render(&h, &x, true);
        assert!(!plain.contains('\x1b'));
        assert!(coloured.contains("\x1b[32mkept\x1b[0m"));
        assert!(coloured.contains("\x1b[31mdropped\x1b[0m"));
        assert!(coloured.contains("\x1b[1mrequired\x1b[0m"));
    }
}
