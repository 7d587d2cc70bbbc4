//! `claude_code`: Claude Code's context management in its tiers, where `claude_code_compact` has
//! the full compaction alone. Claude Code is closed source; this rests on third-party analyses
//! of the published CLI, named as what they are:
//!
//! - **A** — *Harness Engineering: from Claude Code to AI Coding* (zhanghandong, an online book
//!   that reads the CLI's source): chapter 9 (auto-compaction), 10 (post-compaction file
//!   restoration), 11 (micro-compaction).
//! - **B** — anthropics/claude-code#31806 (the auto-compact threshold from deobfuscated code).
//! - **C** — a comment on Hacker News item 47614091 and the reproductions of
//!   `services/compact/timeBasedMCConfig.ts` on third-party sites (claude-code-leak-explained):
//!   the time-based micro-compaction's configuration.
//! - **D** — the `compact-guard` skill (rohitg00/pro-workflow), which quotes the
//!   post-compaction constants.
//!
//! The tiers, in the order Claude Code runs them before a request:
//!
//! 1. **Time-based clearing of tool results** (A ch. 11, C). When the time since the last
//!    assistant message exceeds `idle_minutes` (`gapThresholdMinutes`, 60: "the server's 1h
//!    cache TTL is guaranteed expired"), the prompt cache is cold and the whole prefix will be
//!    written again anyway, so the content of every result of a compactable tool but the newest
//!    `idle_keep` (`keepRecent`, 5; at least 1) becomes `[Old tool result content cleared]`; the
//!    tool calls stay. The compactable tools are `idle_tools` (file read, shell, grep, glob,
//!    web fetch and search, file edit and write, as A lists them). "Now" is the newest record
//!    the context holds after the last call (the user's message, or the results that came back
//!    late), the last assistant message's time its call's output; a history without times never
//!    triggers it. Its master switch is a remote flag whose value is not public (off in the
//!    code's defaults, C): the preset assumes it on, `idle_clear=false` turns it off.
//! 2. **Full compaction** (B, A ch. 9): as `claude_code_compact` — when the context (after the
//!    clearing above) reaches the window less `output_reserve` and `buffer` (20 000 and 13 000:
//!    167 000 of 200 000; or a `threshold` share, or `trigger_tokens`), the system records stay
//!    and everything else becomes one summary, the same size and writer parameters; a window of
//!    at most the reserves is refused, naming the smallest that works.
//! 3. **Re-attached files** (A ch. 10, D), after a full compaction: the most recently read
//!    files come back after the summary, at most `files` (5) files of at most `file_tokens`
//!    (5 000) each and `files_budget` (50 000) in all, each as the record of its newest read
//!    ([`Reattach`](super::reattach::Reattach), with the assumptions it states). They are
//!    context the next call reads, not output of the summary call.
//!
//! Not modelled: the cached micro-compaction (server-side `cache_edits` once enough tool results
//! pile up), the session-memory compaction (experimental), CLAUDE.md and other attachments
//! (system records here), the circuit breaker. The rule runs before every call and decides
//! itself ([`When::EveryCall`]); the summary call is the whole context with the agent's cache.

use super::claude_code_compact::{
    check_trigger_window, parse_trigger, push_trigger, undefined_on, SUMMARY_MAX, SUMMARY_RATIO,
};
use super::preset::{fits, is_stand_in, stand_in_cost};
use super::reattach::{Reattach, FILES, FILES_BUDGET, FILE_TOKENS};
use super::rule::{RuleSpec, Tail};
use super::summary_preset::{leading_systems, push_if, push_marked, push_summary, unchanged};
use super::{spec, threshold, Context, Head, Item, Outcome, SummaryRule, View, When};
use crate::error::ParseError;
use crate::history::Kind;

/// `gapThresholdMinutes`, `keepRecent` (reported).
pub const IDLE_MINUTES: u64 = 60;
pub const IDLE_KEEP: usize = 5;
/// `COMPACTABLE_TOOLS`, by the names Claude Code's transcripts give them.
pub const IDLE_TOOLS: [&str; 8] = [
    "Bash",
    "Edit",
    "Glob",
    "Grep",
    "Read",
    "WebFetch",
    "WebSearch",
    "Write",
];
/// `TIME_BASED_MC_CLEARED_MESSAGE`.
pub const IDLE_CLEARED: &str = "[Old tool result content cleared]";

/// The time-based clearing of tool results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdleClearing {
    pub minutes: u64,
    pub keep: usize,
    /// Sorted, without repeats, so equal sets give equal labels.
    pub tools: Vec<String>,
}

impl IdleClearing {
    fn default_tools() -> Vec<String> {
        IDLE_TOOLS.iter().map(|t| t.to_string()).collect()
    }

    /// Marks in `cleared` the tool results the clearing replaces now; `false` when the session
    /// was not idle long enough or nothing is left to clear.
    fn mark(&self, view: &View, cleared: &mut [bool]) -> bool {
        let kinds = view.kinds;
        let Some(last) = kinds
            .iter()
            .rposition(|k| matches!(k, Kind::Assistant | Kind::ToolCall))
        else {
            return false;
        };
        let Some(then) = view.texts.time(last) else {
            return false;
        };
        let Some(now) = (last + 1..view.len())
            .rev()
            .find_map(|i| view.texts.time(i))
        else {
            return false;
        };
        if now.seconds_since(then) <= (self.minutes * 60) as f64 {
            return false;
        }
        let compactable = |i: usize| {
            kinds[i] == Kind::ToolResult
                && view.tools[i]
                    .as_deref()
                    .is_some_and(|t| self.tools.iter().any(|c| c == t))
        };
        let mut newer = 0;
        let mut any = false;
        for i in (0..view.len()).rev().filter(|&i| compactable(i)) {
            newer += 1;
            if newer > self.keep.max(1) && !is_stand_in(view, i) {
                cleared[i] = true;
                any = true;
            }
        }
        any
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ClaudeCodeTiers {
    /// The full compaction's trigger and output reserve, as `claude_code_compact` reads them.
    pub trigger: When,
    pub output_reserve: u64,
    pub summary: SummaryRule,
    /// `None`: `idle_clear=false`.
    pub idle: Option<IdleClearing>,
    pub reattach: Reattach,
}

/// Whether a context costing `total` reaches the full compaction's trigger on `window`, with
/// `fixed` units sent ahead of it (a count of tokens counts them; the window is what they left).
fn over(trigger: When, total: u64, window: u64, fixed: u64) -> bool {
    match trigger {
        When::Tokens(n) => fixed + total >= n,
        When::Share(f) => total >= threshold(window, f),
        When::Below(reserve) => total >= window.saturating_sub(reserve),
        _ => false,
    }
}

impl ClaudeCodeTiers {
    /// The tiers on the view: the clearing if the session was idle, then the full compaction if
    /// the context still reaches the trigger; `cleared` (all false) marks what is cleared.
    fn rule(
        &self,
        view: &View,
        capacity: u64,
        cleared: &mut [bool],
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let idle = self.idle.as_ref().is_some_and(|c| c.mark(view, cleared));
        let cleared_cost = view.model.cost(IDLE_CLEARED);
        let cost = |i: usize| {
            if cleared[i] {
                stand_in_cost(view, i, || cleared_cost)
            } else {
                view.costs[i]
            }
        };
        let total =
            out.head_cost + out.joined_cost((0..n).map(cost).sum(), n as u64, view.separator);
        if over(
            self.trigger,
            total,
            capacity + out.head_cost,
            view.fixed_prefix,
        ) && leading_systems(view.kinds) < n
        {
            return self.compact(view, capacity, cleared, stream, out);
        }
        if !idle {
            return unchanged(view, capacity, out);
        }
        push_marked(view, cleared, cleared_cost, capacity, out)
    }

    /// The full compaction of the view, the records of `cleared` already cleared: the system
    /// records, one summary, the re-attached files.
    fn compact(
        &self,
        view: &View,
        capacity: u64,
        cleared: &[bool],
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let systems = leading_systems(view.kinds);
        let cleared_cost = view.model.cost(IDLE_CLEARED);
        for i in 0..systems {
            out.push(Item::Verbatim(i), view.costs[i], view.separator);
        }
        let replaced = (systems..n)
            .map(|i| {
                if cleared[i] {
                    cleared_cost
                } else {
                    view.costs[i]
                }
            })
            .sum::<u64>()
            + view.separator * (n - systems).saturating_sub(1) as u64;
        let budget = self.summary.size.cost(replaced);
        let carried = |i: usize| !cleared[i] && !is_stand_in(view, i);
        push_summary(
            &self.summary,
            view,
            (systems, n),
            carried,
            budget,
            stream,
            out,
        );
        self.reattach.push(view, systems..n, |i| cleared[i], out);
        fits(out, capacity)
    }
}

impl RuleSpec for ClaudeCodeTiers {
    const NAME: &'static str = "claude_code";
    const TAIL: Tail = Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(0);
    // For `inspect`: the tool results cleared while idle.
    const STAND_IN: &'static str = "cleared";

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let (trigger, output_reserve) = parse_trigger(p)?;
        let summary = SummaryRule::from_params_or(p, SUMMARY_RATIO, SUMMARY_MAX)?;
        let minutes = p.u64("idle_minutes")?.unwrap_or(IDLE_MINUTES);
        let keep = super::preset::at_least(p, "idle_keep", 1, " tool results")?;
        let mut tools = p
            .list("idle_tools")?
            .unwrap_or_else(IdleClearing::default_tools);
        tools.sort();
        tools.dedup();
        let idle = p.bool("idle_clear")?.unwrap_or(true).then(|| IdleClearing {
            minutes,
            keep: keep.unwrap_or(IDLE_KEEP),
            tools,
        });
        let d = Reattach::default();
        let reattach = Reattach {
            files: p.usize("files")?.unwrap_or(d.files),
            file_tokens: p.u64("file_tokens")?.unwrap_or(d.file_tokens),
            budget: p.u64("files_budget")?.unwrap_or(d.budget),
        };
        Ok(ClaudeCodeTiers {
            trigger,
            output_reserve,
            summary,
            idle,
            reattach,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        push_trigger(params, self.trigger, self.output_reserve);
        self.summary
            .push_params_or(params, SUMMARY_RATIO, SUMMARY_MAX);
        match &self.idle {
            None => params.push("idle_clear=false".into()),
            Some(idle) => {
                push_if(params, "idle_minutes", idle.minutes, IDLE_MINUTES);
                push_if(params, "idle_keep", idle.keep, IDLE_KEEP);
                if idle.tools != IdleClearing::default_tools() {
                    params.push(format!("idle_tools=[{}]", idle.tools.join(",")));
                }
            }
        }
        push_if(params, "files", self.reattach.files, FILES);
        push_if(
            params,
            "file_tokens",
            self.reattach.file_tokens,
            FILE_TOKENS,
        );
        push_if(params, "files_budget", self.reattach.budget, FILES_BUDGET);
    }

    fn apply(
        &self,
        view: View,
        capacity: u64,
        _: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let window = capacity + out.head_cost;
        if undefined_on(self.trigger, window) {
            // The harness is undefined on this window (see the module documentation).
            return Outcome::Infeasible;
        }
        let n = view.len();
        // `out.chosen` holds the results cleared now (taken while the context is written).
        let mut cleared = std::mem::take(&mut out.chosen);
        let outcome = self.rule(&view, capacity, &mut cleared[..n], stream, out);
        out.chosen = cleared;
        outcome
    }

    fn when(&self) -> Option<When> {
        // The clearing reads the time before every call; the rule checks the threshold itself.
        Some(When::EveryCall)
    }

    fn check_window(&self, window: u64) -> Result<(), String> {
        check_trigger_window(self.trigger, window)
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }
}
