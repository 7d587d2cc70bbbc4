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
    /// Checked before the answer is read (see [`read`]).
    #[serde(rename = "protocol")]
    _protocol: Option<serde_json::Value>,
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
    let not_an_answer = |why: &dyn std::fmt::Display| {
        format!(
            "its answer is not a JSON answer object ({why}); it began: {}",
            crate::quote::cut(line, crate::quote::QUOTE_CHARS)
        )
    };
    // The version first, so an answer of a later protocol is refused as one, whatever fields
    // it holds.
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| not_an_answer(&e))?;
    if !value.is_object() {
        return Err(not_an_answer(&"it is not an object"));
    }
    match value.get("protocol") {
        None if first => {
            return Err(format!(
                "its first answer must say which protocol it speaks (\"protocol\": {PROTOCOL})"
            ))
        }
        Some(v) if v.as_u64() != Some(u64::from(PROTOCOL)) => {
            return Err(format!(
                "it speaks protocol {v}; this ctxlab speaks protocol {PROTOCOL}"
            ))
        }
        _ => {}
    }
    let answer: Answer = crate::strict_json::from_str(line).map_err(|e| not_an_answer(&e))?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{CostedHistory, History, Kind, Record};
    use crate::cost::CostModel;

    /// Four records costed in chars (separator 1): 10, 12, 14, 16; record 1 introduces the fact
    /// `parse_config`, record 2 `app.py`.
    fn four() -> CostedHistory {
        let texts = [
            "fix it now",
            "parse_config",
            "see app.py now",
            "nothing at all..",
        ];
        let records = texts
            .iter()
            .enumerate()
            .map(|(i, t)| Record::new(i as u64, *t).kind(Kind::ToolResult))
            .collect();
        CostedHistory::new(&History::new("h", records), CostModel::Chars)
    }

    fn answer(line: &str, first: bool, capacity: u64) -> (Result<Outcome, String>, Context) {
        let h = four();
        let flags = vec![false; 4];
        let view = View::new(&h, &flags);
        let mut out = Context::default();
        out.clear(4);
        let got = read(line, first, 1, &view, capacity, &mut out).map(|(o, _)| o);
        (got, out)
    }

    fn refusal(line: &str) -> String {
        answer(line, true, 100).0.unwrap_err()
    }

    #[test]
    fn a_context_with_a_placeholder_and_a_text_summary_is_read_and_costed() {
        // Summary of 0–1 as the text "parse_config" (12), a placeholder "[x]" (3) for 2, record
        // 3 (16): 12 + 1 + 3 + 1 + 16 = 33.
        let (got, out) = answer(
            r#"{"protocol":1,"request":1,"context":[{"summary":[0,1],"text":"parse_config"},{"placeholder":2,"text":"[x]"},{"keep":3}],"cost":33}"#,
            true,
            33,
        );
        assert_eq!(got, Ok(Outcome::Feasible));
        assert_eq!(
            out.items,
            [
                Item::Summary {
                    first: 0,
                    end: 2,
                    cost: 12
                },
                Item::Placeholder(2),
                Item::Verbatim(3)
            ]
        );
        assert_eq!((out.cost, &out.placeholder_costs[..]), (33, &[3][..]));
        assert!(out.summary_from_text);
        assert_eq!(out.summary_text, "parse_config");
        // The text holds record 1's fact, not record 0's (it has none).
        assert_eq!(&out.summary_kept[..2], &[false, true]);
        // One unit over: refused.
        let (over, _) = answer(
            r#"{"request":1,"context":[{"summary":[0,1],"text":"parse_config"},{"placeholder":2,"text":"[x]"},{"keep":3}],"cost":33}"#,
            false,
            32,
        );
        assert_eq!(
            over.unwrap_err(),
            "its context costs 33, over the capacity 32"
        );
        let (infeasible, out) = answer(r#"{"request":1,"infeasible":true}"#, false, 5);
        assert_eq!((infeasible, out.items.len()), (Ok(Outcome::Infeasible), 0));
    }

    #[test]
    fn each_wrong_answer_is_refused_with_what_was_wrong() {
        let cases = [
            (
                r#"{"request":1,"context":[],"cost":0}"#,
                "its first answer must say which protocol it speaks (\"protocol\": 1)",
            ),
            (
                r#"{"protocol":2,"request":1,"context":[],"cost":0,"budget_left":3}"#,
                "it speaks protocol 2; this ctxlab speaks protocol 1",
            ),
            (
                r#"{"protocol":1,"request":7,"context":[],"cost":0}"#,
                "it answers request 7 where request 1 was asked",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"keep":4}],"cost":0}"#,
                "item 0 names record 4, but the history has 4 records",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"keep":2},{"keep":2}],"cost":29}"#,
                "item 1 names record 2 after record 2: items follow the order of the context, each record once",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"keep":0,"cost":3}],"cost":3}"#,
                "item 0 keeps record 0 as it is: `cost` and `text` are for placeholders and summaries",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"keep":0,"placeholder":1}],"cost":3}"#,
                "item 0 must have exactly one of `keep`, `placeholder` or `summary`",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"placeholder":0}],"cost":3}"#,
                "item 0 needs its `text` or its `cost`",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"placeholder":0,"text":"[x]","cost":4}],"cost":4}"#,
                "item 0 gives cost 4, but its text costs 3 under the cost model `chars`",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"summary":[0,2],"cost":4}],"cost":4}"#,
                "item 0: a summary stands for consecutive records in order, found [0, 2]",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"summary":[0],"cost":4},{"summary":[1],"cost":4}],"cost":9}"#,
                "item 1 is a second summary: protocol 1 takes one summary per answer (ctxlab scores one summary text per context)",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[{"keep":0}],"cost":11}"#,
                "it claims its context costs 11, but its 1 items cost 10 (separators of 1 between them included)",
            ),
            (
                r#"{"protocol":1,"request":1,"infeasible":true,"cost":0}"#,
                "an infeasible answer has no `context` and no `cost`",
            ),
            (
                r#"{"protocol":1,"request":1}"#,
                "the answer has no `context` (the items kept) and does not say `\"infeasible\": true`",
            ),
            (
                r#"{"protocol":1,"request":1,"context":[]}"#,
                "the answer does not claim its context's `cost`",
            ),
        ];
        for (line, why) in cases {
            assert_eq!(refusal(line), why, "{line}");
        }
        for (line, starts) in [
            (
                r#"[1,2]"#,
                "its answer is not a JSON answer object (it is not an object)",
            ),
            (
                r#"{"protocol":1,"#,
                "its answer is not a JSON answer object (EOF while parsing",
            ),
            (
                r#"{"protocol":1,"request":1,"kept":[]}"#,
                "its answer is not a JSON answer object (unknown field `kept`",
            ),
        ] {
            let why = refusal(line);
            assert!(why.starts_with(starts), "{why}");
            assert!(why.ends_with(&format!("; it began: {line}")), "{why}");
        }
    }
}
