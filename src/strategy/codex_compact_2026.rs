//! `codex_compact_2026(user_tokens=20000, threshold=0.9, scope=total, path=local)`: Codex's
//! auto-compaction as upstream holds it in 2026 (`codex_compact` keeps replaying the 2025
//! `compact.rs` @ 0100b103, so experiment files naming it still run; the year in the name
//! says which Codex a row measures). Sources, `openai/codex` (commit dates are not in the
//! stored copies; the pull requests named date them):
//! `codex-rs/core/src/compact.rs` @ e06dd0e5d5694c24968bf49b62466cdedae04aaa (local path,
//! `InitialContextInjection`, the overflow retry), `compact_remote.rs` @
//! 683f0a6897c3835f32556f3ddf6542f94689f401 (remote path), `session/turn.rs` @
//! 000c857ecc17e5ab40a985bdaa40816450ee5ebf (where compaction runs), and `codex_window` (when).
//!
//! - **Trigger** ([`When::EveryCall`], decided by the rule): see `codex_window` — the usage
//!   (the last response's tokens plus Codex's estimate of the tool outputs since), against
//!   `threshold` (90 %) of the window or the configured `limit`, over the whole context
//!   (`scope=total`) or over what came after the window's prefill (`scope=body_after_prefix`,
//!   capped by `effective_percent` = 95 % of the window).
//! - **History compacted**: the context up to the check; pre-turn, the incoming user message and
//!   what follows it are left out and come back after the compaction.
//! - **Initial context**: the `system` records (Codex's developer, `AGENTS.md` and environment
//!   messages; Codex rebuilds them from the session, here they are the records themselves).
//!   *Mid-turn* (`InitialContextInjection::BeforeLastUserMessage`) they go just before the last
//!   real user message kept, or before the summary when none is kept
//!   (`insert_initial_context_before_last_real_user_or_summary`), so the summary stays last.
//!   *Pre-turn* (`DoNotInject`) the replacement holds none and the next turn re-injects them in
//!   full, after the summary and before the incoming user message.
//! - **User messages**: as `codex_compact` — newest first within `user_tokens` (`ceil(chars / 4)`
//!   each), the first that does not fit middle-truncated to what is left (a stand-in of that
//!   share) and the selection stopped there; previous summaries are not user messages.
//! - **Summary**: one summary, standing for every record of the compacted history that is not
//!   kept verbatim (previous summaries included), placed after the user messages.
//! - **Local path** (`path=local`, every provider without remote compaction: the runs measured
//!   here): the summary call is the history and `SUMMARIZATION_PROMPT`; when the provider refuses
//!   it as too long, Codex removes the oldest history item (and the call or output paired with
//!   it) and tries again (`run_compact_task_inner`, `history.remove_first_item()`): the records
//!   removed are not summarised. Nothing left to remove: the compaction fails, and the run ends.
//! - **Remote path** (`path=remote`, OpenAI providers, `compact_conversation_history`): no
//!   prompt is sent; while Codex's estimate of the history exceeds the usable window, the newest
//!   item is removed if Codex generated it (a tool output or a developer message, with its
//!   paired call: `trim_function_call_history_to_fit_context_window`). What OpenAI's server
//!   returns is not published: ctxlab assumes it builds what the local path builds from what it
//!   is sent (the user messages within `user_tokens`, one summary last); Codex then keeps user
//!   messages and summaries (`should_keep_compacted_history_item`) and injects the initial
//!   context as above.
//! - **Departures**: the summary call is billed on the whole context with the agent's cache
//!   ([`super::SummaryCall::WholeContext`]), the incoming user message and trimmed records
//!   included; a compacted history with nothing to summarise (only system records and user
//!   messages kept) is left as it is; a cell is taken as the check before a further call.

use super::codex_compact::{approx_tokens, select_user_messages, truncated_cost};
use super::codex_window::{check, Check, CompactLimits, UsageScope};
use super::summary_preset::{at_least, fits, joined, push_if, push_summary, share, unchanged};
use super::{spec, Context, Head, Item, Outcome, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::Kind;

pub const DEFAULT_USER_TOKENS: u64 = 20_000;
pub const DEFAULT_THRESHOLD: f64 = 0.9;
pub const DEFAULT_EFFECTIVE_PERCENT: u64 = 95;

/// Which compaction Codex runs (`should_use_remote_compact_task`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    Local,
    Remote,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CodexCompact2026 {
    pub user_tokens: u64,
    pub limits: CompactLimits,
    pub path: Path,
    pub summary: SummaryRule,
}

/// The record paired with history record `i` (a tool call and its output), if any, within
/// `0..stop`: a `tool_call` and the output at its place in the results that follow the call, or
/// an `assistant` record that calls a tool without `tool_call` records and its first result.
fn partner(kinds: &[Kind], i: usize, stop: usize) -> Option<usize> {
    match kinds[i] {
        Kind::ToolCall | Kind::Assistant => {
            let first_call = if kinds[i] == Kind::ToolCall {
                (0..i)
                    .rev()
                    .take_while(|&j| kinds[j] == Kind::ToolCall)
                    .last()
                    .unwrap_or(i)
            } else {
                i
            };
            let mut results = i + 1;
            while results < stop && kinds[results] == Kind::ToolCall {
                results += 1;
            }
            let place = if kinds[i] == Kind::ToolCall {
                i - first_call
            } else if results == i + 1 {
                0
            } else {
                return None;
            };
            let r = results + place;
            (r < stop && (results..=r).all(|j| kinds[j] == Kind::ToolResult)).then_some(r)
        }
        Kind::ToolResult => {
            let run = (0..i)
                .rev()
                .take_while(|&j| kinds[j] == Kind::ToolResult)
                .last()
                .unwrap_or(i);
            let place = i - run;
            let calls = (0..run)
                .rev()
                .take_while(|&j| kinds[j] == Kind::ToolCall)
                .last()
                .unwrap_or(run);
            if calls < run {
                (place < run - calls).then_some(calls + place)
            } else {
                (run > 0 && place == 0 && kinds[run - 1] == Kind::Assistant).then_some(run - 1)
            }
        }
        _ => None,
    }
}

/// The records a compaction leaves out of its request (`out.order`, unsorted, few).
fn dropped(order: &[usize], i: usize) -> bool {
    order.contains(&i)
}

impl CodexCompact2026 {
    /// Whether record `i` of the compacted history is one the summary stands for.
    fn carried(view: &View, i: usize, kept: &[bool], order: &[usize]) -> bool {
        view.kinds[i] != Kind::System && !kept[i] && !dropped(order, i)
    }

    /// The cost of the summary of what is still in the request.
    fn summary_cost(&self, view: &View, stop: usize, kept: &[bool], order: &[usize]) -> u64 {
        let replaced = joined(
            view.separator,
            (0..stop)
                .filter(|&i| Self::carried(view, i, kept, order))
                .map(|i| view.costs[i]),
        );
        self.summary.size.cost(replaced)
    }

    /// Drops history item `i` and its pair from the request.
    fn drop_item(view: &View, i: usize, stop: usize, order: &mut Vec<usize>) {
        order.push(i);
        if let Some(p) = partner(view.kinds, i, stop).filter(|&p| !dropped(order, p)) {
            order.push(p);
        }
    }

    /// The local path's retry: while the request and its summary exceed the window, the oldest
    /// item goes. `false` when nothing is left to remove and it still does not fit.
    fn trim_oldest(&self, view: &View, stop: usize, window: u64, out: &mut Context) -> bool {
        let kept = std::mem::take(&mut out.chosen);
        let mut order = std::mem::take(&mut out.order);
        let prompt = crate::llm::prompts::built_in("codex").map_or(0, |p| view.model.cost(p));
        let ok = loop {
            let request = joined(
                view.separator,
                (0..stop)
                    .filter(|&i| !dropped(&order, i))
                    .map(|i| view.costs[i])
                    .chain(std::iter::once(prompt)),
            );
            if request + self.summary_cost(view, stop, &kept, &order) <= window {
                break true;
            }
            match (0..stop).find(|&i| !dropped(&order, i)) {
                Some(i) => Self::drop_item(view, i, stop, &mut order),
                None => break false,
            }
        };
        out.chosen = kept;
        out.order = order;
        ok
    }

    /// The remote path's trim: the newest items Codex generated go while its estimate of the
    /// history exceeds the usable window.
    fn trim_newest(&self, view: &View, stop: usize, window: u64, out: &mut Context) {
        let usable = self.limits.usable(window);
        let mut order = std::mem::take(&mut out.order);
        loop {
            let estimate: u64 = (0..stop)
                .filter(|&i| !dropped(&order, i))
                .map(|i| approx_tokens(view.chars[i]))
                .sum();
            let last = (0..stop).rev().find(|&i| !dropped(&order, i));
            match last {
                Some(i)
                    if estimate > usable
                        && matches!(view.kinds[i], Kind::ToolResult | Kind::System) =>
                {
                    Self::drop_item(view, i, stop, &mut order)
                }
                _ => break,
            }
        }
        out.order = order;
    }

    /// Emits the replacement: user messages, the initial context where the phase puts it, the
    /// summary, and pre-turn the incoming records.
    fn emit(
        &self,
        view: &View,
        at: &Check,
        truncated: Option<(usize, u64)>,
        stream: u64,
        out: &mut Context,
    ) {
        let sep = view.separator;
        let stop = at.stop;
        let kept = std::mem::take(&mut out.chosen);
        let order = std::mem::take(&mut out.order);
        let is_user = |i: usize| kept[i] || truncated.is_some_and(|(t, _)| t == i);
        let users = (0..stop).filter(|&i| is_user(i));
        let systems = (0..stop).filter(|&i| view.kinds[i] == Kind::System);
        let user_item = |i: usize, out: &mut Context| match truncated.filter(|&(t, _)| t == i) {
            Some((t, tokens)) => {
                let cost = truncated_cost(view, t, tokens, out);
                out.push(Item::Placeholder(t), cost, sep);
            }
            None => out.push(Item::Verbatim(i), view.costs[i], sep),
        };
        // Mid-turn the initial context goes before the last user message kept.
        let last = (0..stop)
            .rev()
            .find(|&i| is_user(i))
            .filter(|_| !at.pre_turn);
        for i in users.filter(|&i| Some(i) != last) {
            user_item(i, out);
        }
        if !at.pre_turn {
            for i in systems.clone() {
                out.push(Item::Verbatim(i), view.costs[i], sep);
            }
            if let Some(i) = last {
                user_item(i, out);
            }
        }
        // Every item dropped from the request: the summary stands for nothing.
        let first = (0..stop).find(|&i| !dropped(&order, i)).unwrap_or(stop);
        let cost = self.summary_cost(view, stop, &kept, &order);
        push_summary(
            &self.summary,
            view,
            (first, stop),
            |i| Self::carried(view, i, &kept, &order),
            cost,
            stream,
            out,
        );
        if at.pre_turn {
            for i in systems.chain(stop..view.len()) {
                out.push(Item::Verbatim(i), view.costs[i], sep);
            }
        }
        out.chosen = kept;
        out.order = order;
    }
}

impl super::rule::RuleSpec for CodexCompact2026 {
    const NAME: &'static str = "codex_compact_2026";
    // For `inspect`: the one stand-in is a user message truncated in the middle.
    const STAND_IN: &'static str = "truncated";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let scope = match p.choice("scope", &["total", "body_after_prefix"])? {
            Some(s) if s == "body_after_prefix" => UsageScope::BodyAfterPrefix,
            _ => UsageScope::Total,
        };
        let path = match p.choice("path", &["local", "remote"])? {
            Some(s) if s == "remote" => Path::Remote,
            _ => Path::Local,
        };
        let limit = super::preset::at_least(p, "limit", 1, " (tokens)")?.map(|v| v as u64);
        let effective = at_least(
            p,
            "effective_percent",
            1,
            DEFAULT_EFFECTIVE_PERCENT as usize,
        )?;
        if effective > 100 {
            return Err(p.bad(
                "effective_percent",
                "a whole number from 1 to 100",
                &spec::SpecValue::Int(effective as i64),
            ));
        }
        Ok(CodexCompact2026 {
            user_tokens: p.u64("user_tokens")?.unwrap_or(DEFAULT_USER_TOKENS),
            limits: CompactLimits {
                scope,
                threshold: share(p, "threshold")?.unwrap_or(DEFAULT_THRESHOLD),
                limit,
                effective_percent: effective as u64,
            },
            path,
            summary: SummaryRule::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_if(params, "user_tokens", self.user_tokens, DEFAULT_USER_TOKENS);
        push_if(
            params,
            "threshold",
            self.limits.threshold,
            DEFAULT_THRESHOLD,
        );
        if let Some(limit) = self.limits.limit {
            params.push(format!("limit={limit}"));
        }
        if self.limits.scope == UsageScope::BodyAfterPrefix {
            params.push("scope=body_after_prefix".into());
        }
        push_if(
            params,
            "effective_percent",
            self.limits.effective_percent,
            DEFAULT_EFFECTIVE_PERCENT,
        );
        if self.path == Path::Remote {
            params.push("path=remote".into());
        }
        self.summary.push_params(params);
    }

    fn apply(
        &self,
        view: View,
        capacity: u64,
        _: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let at = check(&view);
        // Codex reads the whole request's usage against the whole window.
        if !self.limits.reached(&at, capacity + view.fixed_prefix) {
            return unchanged(&view, capacity, out);
        }
        let stop = at.stop;
        let truncated = select_user_messages(&view, 0..stop, self.user_tokens, out);
        let kept = &out.chosen;
        if !(0..stop).any(|i| Self::carried(&view, i, kept, &[])) {
            out.chosen.fill(false);
            return unchanged(&view, capacity, out);
        }
        match self.path {
            Path::Local => {
                if !self.trim_oldest(&view, stop, capacity, out) {
                    // Codex's compaction fails: the context stays, and the refused call ends
                    // the run.
                    return Outcome::Infeasible;
                }
            }
            Path::Remote => self.trim_newest(&view, stop, capacity, out),
        }
        self.emit(&view, &at, truncated, stream, out);
        fits(out, capacity)
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
