//! An answer: the context a program built, read and checked as strictly as a built-in
//! strategy's is — every id in the context it was shown, in order, once; each item's cost;
//! the total it claims, within the capacity — and written into the [`Context`] the scoring
//! reads. One line of text says what is wrong with a refused answer.

use super::request::PROTOCOL;
use super::{Context, Outcome, SummaryCall, View};
use crate::context::Item;
use crate::view::Texts;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Answer {
    protocol: Option<u64>,
    request: u64,
    #[serde(default)]
    infeasible: bool,
    context: Option<Vec<AnswerItem>>,
    cost: Option<u64>,
    summary_call: Option<DeclaredCall>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerItem {
    keep: Option<u64>,
    placeholder: Option<u64>,
    summary: Option<Vec<u64>>,
    cost: Option<u64>,
    text: Option<String>,
}

/// A summary call of the program's own harness (see [`SummaryCall::Separate`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeclaredCall {
    prompt: u64,
    #[serde(default = "one")]
    calls: u32,
    #[serde(default)]
    cached: bool,
}

fn one() -> u32 {
    1
}

/// Reads answer `line` to request `number` (`first`: the process's first) and writes its
/// context into `out`; returns the outcome and the summary call it declared.
pub fn read(
    line: &str,
    first: bool,
    number: u64,
    view: &View,
    capacity: u64,
    out: &mut Context,
) -> Result<(Outcome, Option<SummaryCall>), String> {
    let answer: Answer = crate::strict_json::from_str(line).map_err(|e| {
        format!(
            "its answer is not a JSON answer object ({e}); it began: {}",
            crate::quote::cut(line, crate::quote::QUOTE_CHARS)
        )
    })?;
    match answer.protocol {
        None if first => {
            return Err(format!(
                "its first answer must say which protocol it speaks (\"protocol\": {PROTOCOL})"
            ))
        }
        Some(v) if v != u64::from(PROTOCOL) => {
            return Err(format!(
                "it speaks protocol {v}; this ctxlab speaks protocol {PROTOCOL}"
            ))
        }
        _ => {}
    }
    if answer.request != number {
        return Err(format!(
            "it answers request {} where request {number} was asked",
            answer.request
        ));
    }
    let call = answer.summary_call.map(|c| SummaryCall::Separate {
        prompt: c.prompt,
        calls: c.calls.max(1),
        cached: c.cached,
    });
    if answer.infeasible {
        if answer.context.is_some() || answer.cost.is_some() {
            return Err("an infeasible answer has no `context` and no `cost`".into());
        }
        return Ok((Outcome::Infeasible, None));
    }
    let Some(items) = answer.context else {
        return Err(
            "the answer has no `context` (the items kept) and does not say `\"infeasible\": true`"
                .into(),
        );
    };
    let Some(claimed) = answer.cost else {
        return Err("the answer does not claim its context's `cost`".into());
    };
    fill(&items, view, out)?;
    if out.cost != claimed {
        return Err(format!(
            "it claims its context costs {claimed}, but its {} items cost {} (separators of {} between them included)",
            out.items.len(),
            out.cost,
            view.separator
        ));
    }
    if out.cost > capacity {
        return Err(format!(
            "its context costs {}, over the capacity {capacity}",
            out.cost
        ));
    }
    Ok((Outcome::Feasible, call))
}

/// Writes `items` into `out` after checking each one.
fn fill(items: &[AnswerItem], view: &View, out: &mut Context) -> Result<(), String> {
    let n = view.len();
    let sep = view.separator;
    let session = matches!(view.texts, Texts::Entries { .. });
    let what = if session { "entry" } else { "record" };
    // The next id an item may name: ids follow the context's order, each once.
    let mut next = 0u64;
    let mut summaries = 0;
    for (k, item) in items.iter().enumerate() {
        let at = |id: u64| -> Result<usize, String> {
            if id >= n as u64 {
                let shown = if session {
                    format!("the context it was shown has {n} entries (a session shows only the records seen so far)")
                } else {
                    format!("the history has {n} records")
                };
                return Err(format!("item {k} names {what} {id}, but {shown}"));
            }
            if id < next {
                return Err(format!(
                    "item {k} names {what} {id} after {what} {}: items follow the order of the context, each {what} once",
                    next - 1
                ));
            }
            Ok(id as usize)
        };
        let kinds = [
            item.keep.is_some(),
            item.placeholder.is_some(),
            item.summary.is_some(),
        ];
        if kinds.iter().filter(|&&k| k).count() != 1 {
            return Err(format!(
                "item {k} must have exactly one of `keep`, `placeholder` or `summary`"
            ));
        }
        if let Some(id) = item.keep {
            if item.cost.is_some() || item.text.is_some() {
                return Err(format!(
                    "item {k} keeps {what} {id} as it is: `cost` and `text` are for placeholders and summaries"
                ));
            }
            let i = at(id)?;
            out.push(Item::Verbatim(i), view.costs[i], sep);
            next = id + 1;
        } else if let Some(id) = item.placeholder {
            let i = at(id)?;
            let cost = stand_in_cost(k, item, view)?;
            out.push(Item::Placeholder(i), cost, sep);
            next = id + 1;
        } else if let Some(ids) = &item.summary {
            summaries += 1;
            if summaries > 1 {
                return Err(format!(
                    "item {k} is a second summary: protocol {PROTOCOL} takes one summary per answer (ctxlab scores one summary text per context)"
                ));
            }
            let (Some(&lo), Some(&hi)) = (ids.first(), ids.last()) else {
                return Err(format!(
                    "item {k}: a summary stands for at least one {what}"
                ));
            };
            let first = at(lo)?;
            at(hi)?;
            if ids.windows(2).any(|w| w[1] != w[0] + 1) {
                return Err(format!(
                    "item {k}: a summary stands for consecutive {what}s in order, found {}",
                    crate::quote::cut(&format!("{ids:?}"), crate::quote::QUOTE_CHARS)
                ));
            }
            let cost = stand_in_cost(k, item, view)?;
            let end = hi as usize + 1;
            if let Some(text) = &item.text {
                write_summary_text(text, (first, end), view, out);
            }
            // Scored by what its text says (nothing, without a text).
            out.summary_from_text = true;
            out.push(Item::Summary { first, end, cost }, cost, sep);
            next = hi + 1;
        }
    }
    Ok(())
}

/// What a placeholder or a summary costs: its text's cost under the run's cost model, or the
/// cost it gives when it has no text; both given must agree.
fn stand_in_cost(k: usize, item: &AnswerItem, view: &View) -> Result<u64, String> {
    match (&item.text, item.cost) {
        (Some(text), given) => {
            let cost = view.model.cost(text);
            match given {
                Some(c) if c != cost => Err(format!(
                    "item {k} gives cost {c}, but its text costs {cost} under the cost model `{}`",
                    view.model
                )),
                _ => Ok(cost),
            }
        }
        (None, Some(cost)) => Ok(cost),
        (None, None) => Err(format!("item {k} needs its `text` or its `cost`")),
    }
}

/// The summary's text and the facts found in it, and which of its records it carries (one
/// of the facts the record introduced): what `ctxlab inspect` shows as kept or lost.
fn write_summary_text(text: &str, (first, end): (usize, usize), view: &View, out: &mut Context) {
    out.summary_text.clear();
    out.summary_text.push_str(text);
    let facts = &mut out.summary_facts;
    view.facts.find_in(text, |f| facts.push(f));
    facts.sort_unstable();
    facts.dedup();
    if let Texts::Records(_) = view.texts {
        for i in first..end {
            out.summary_kept[i] = view
                .facts
                .carried_by(i)
                .any(|f| out.summary_facts.binary_search(&f).is_ok());
        }
    }
}
