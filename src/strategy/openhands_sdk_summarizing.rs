//! `openhands_sdk_summarizing(max_size=240, keep_first=2)`: the `LLMSummarizingCondenser` of
//! the OpenHands agent SDK, which OpenHands ships now (`OpenHands/software-agent-sdk`
//! `openhands-sdk/openhands/sdk/context/condenser/llm_summarizing_condenser.py` @
//! 611629e6999ad398dc49c761721eefe18d5e6bd9, 2026-08-22; the folder last changed in c11602d1,
//! 2026-08-13, "cap condenser token limit by agent context"), with `base.py`
//! (`RollingCondenser.condense`, L107–198), `utils.py` and `view/` of the same commit. The
//! older `OpenHands/OpenHands` condenser stays `openhands_llm_summarizing`.
//!
//! - **Reasons** (`get_condensation_reasons`, L117–154), checked before every agent call
//!   ([`When::EveryCall`]): *request* — the provider refused the context (the agent turns
//!   `LLMContextWindowExceedError` into a `CondensationRequest`, `agent/agent.py`); *tokens* —
//!   the view's tokens exceed the token limit; *events* — the view holds more than `max_size`
//!   events (records and summaries).
//! - **Token limit** (`_effective_max_tokens`, L96–115): the smaller of the condenser's own
//!   `max_tokens` (default none) and the agent model's effective input limit
//!   (`LLM.effective_max_input_tokens`, the model's metadata). ctxlab does not model the
//!   model's metadata: `max_input_tokens=window` (default) assumes it is the window,
//!   `max_input_tokens=N` sets it, `max_input_tokens=none` assumes the model has none.
//! - **Soft and hard** (`condensation_requirement`, L156–184): token pressure and requests are
//!   hard; event count alone is soft. `RollingCondenser.condense` (`base.py` L159–198): when no
//!   condensation is available, a soft requirement leaves the view as it is; a hard one calls
//!   the hard context reset, and if that returns nothing the exception ends the run.
//! - **No condensation available** (`get_condensation`, L361–393): no manipulation index where
//!   the cut needs one, nothing to forget, fewer forgotten events than `minimum_progress` × the
//!   view, or the summary call failed (its prompt over the summarising model's window).
//! - **The cut** and the token target: see `openhands_sdk_cut`. The summary goes where the
//!   forgotten events began (`summary_offset = forgetting_start`).
//! - **Hard context reset** (`hard_context_reset`, L316–359): one summary of every event,
//!   the head included, at offset 0 — the view becomes that summary alone. The summary call is
//!   tried up to `hard_reset_retries` times (5); after each failure every event string is cut to
//!   `hard_reset_scaling` (0.8) of the longest event's length, then of the previous cut
//!   (`int(...)`), by `maybe_truncate`. When every attempt fails the SDK raises: here the
//!   compaction fails (infeasible), so the refused call ends the run.
//! - **When the summary call fails**: ctxlab does not run the condenser's model, so it fails
//!   exactly when its prompt (the ≈ 508-token instruction of `prompts/summarizing_prompt.j2`
//!   and the events, [`PROMPT_TOKENS`]) and the summary exceed `summary_window` — the
//!   summarising model's window, by default the agent's (the default agent's condenser is a copy
//!   of the agent's LLM, `openhands-tools/openhands/tools/preset/default.py`).
//! - **The summary call** (`_generate_condensation`, L186–246): one user message with the
//!   instruction and the forgotten events, previous summaries among them; billed as a prompt of
//!   its own with no cache read. The hard reset's call is billed on the whole events, not on
//!   their truncated strings, and a truncated event is carried like a whole one.
//! - **Head**: `keep_first` is the SDK's (default 2: the system prompt and the task), read by
//!   the rule itself, since the hard reset forgets it too; `keep_first=task` is refused (the SDK
//!   counts events). The SDK refuses `keep_first ≥ max_size // 2 − 1` (L73–81), and so does the
//!   spec. The SDK's default agent deploys `max_size=80, keep_first=4` (`default_condenser`,
//!   L505–515); the class defaults are these.
//! - **Departures**: one condensation per check (the SDK re-checks at its next step before the
//!   call; with these targets one condensation meets them unless the summary alone exceeds
//!   half the token limit); tool definitions are not in a replayed transcript, so they count no
//!   tokens; the summary prompt's per-event `<EVENT>` framing is not counted.
//! - **Summary**: [`SummaryRule`] parameters, `summariser=NAME` included.

use super::openhands_sdk_cut::{
    find_next, manipulation_indices, suffix_for_reduction, truncated_cost,
};
use super::spec::SpecValue;
use super::summary_preset::{fits, joined, push_if, summarise_span, unchanged};
use super::{spec, Context, Head, Item, Outcome, SummaryCall, SummaryRule, View, When};
use crate::error::ParseError;

pub const DEFAULT_MAX_SIZE: usize = 240;
pub const DEFAULT_KEEP_FIRST: usize = 2;
pub const DEFAULT_MINIMUM_PROGRESS: f64 = 0.1;
pub const DEFAULT_RESET_RETRIES: u32 = 5;
pub const DEFAULT_RESET_SCALING: f64 = 0.8;
/// `prompts/summarizing_prompt.j2` without its loop over the events: 2 030 characters, at 4 a
/// token.
pub const PROMPT_TOKENS: u64 = 508;

/// A limit that defaults to the window: `window`, a count, or (where allowed) `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenCap {
    Window,
    Tokens(u64),
    Unlimited,
}

impl TokenCap {
    fn of(self, window: u64) -> Option<u64> {
        match self {
            TokenCap::Window => Some(window),
            TokenCap::Tokens(n) => Some(n),
            TokenCap::Unlimited => None,
        }
    }

    fn parse(p: &mut spec::Params, key: &'static str, none: bool) -> Result<Self, ParseError> {
        let expected = if none {
            "a whole number of tokens, `window` or `none`"
        } else {
            "a whole number of tokens or `window`"
        };
        match p.value(key) {
            None => Ok(TokenCap::Window),
            Some(SpecValue::Int(n)) if n >= 0 => Ok(TokenCap::Tokens(n as u64)),
            Some(SpecValue::Str(s)) if s == "window" => Ok(TokenCap::Window),
            Some(SpecValue::Str(s)) if none && s == "none" => Ok(TokenCap::Unlimited),
            Some(v) => Err(p.bad(key, expected, &v)),
        }
    }

    fn push(self, params: &mut Vec<String>, key: &str) {
        match self {
            TokenCap::Window => {}
            TokenCap::Tokens(n) => params.push(format!("{key}={n}")),
            TokenCap::Unlimited => params.push(format!("{key}=none")),
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct OpenHandsSdkSummarizing {
    pub max_size: usize,
    pub keep_first: usize,
    /// The condenser's own `max_tokens`.
    pub max_tokens: Option<u64>,
    /// The agent model's effective input limit.
    pub max_input_tokens: TokenCap,
    pub minimum_progress: f64,
    pub reset_retries: u32,
    pub reset_scaling: f64,
    /// The summarising model's window.
    pub summary_window: TokenCap,
    /// Whether the agent's actions carry thinking blocks (tool loops are atomic).
    pub thinking_blocks: bool,
    pub summary: SummaryRule,
}

/// Why the view is condensed (`Reason`), as far as the rule needs it.
struct Reasons {
    request: bool,
    tokens: Option<(u64, u64)>,
    events: bool,
}

impl OpenHandsSdkSummarizing {
    /// A share strictly between 0 and 1 (the SDK's `gt=0.0, lt=1.0`).
    fn open_share(p: &mut spec::Params, key: &'static str) -> Result<Option<f64>, ParseError> {
        match p.fraction(key, 0.0, 1.0)? {
            Some(v) if v <= 0.0 || v >= 1.0 => {
                Err(p.bad(key, "a number above 0 and below 1", &SpecValue::Float(v)))
            }
            v => Ok(v),
        }
    }

    /// `keep_first` as the SDK reads it: a count of events, below `max_size // 2 − 1`.
    fn keep_first(p: &mut spec::Params, max_size: usize) -> Result<usize, ParseError> {
        let keep_first = match p.value("keep_first") {
            None => DEFAULT_KEEP_FIRST,
            Some(SpecValue::Int(n)) if n >= 0 => n as usize,
            Some(v) => return Err(p.bad("keep_first", "a whole number of events", &v)),
        };
        if (max_size / 2) as i64 - keep_first as i64 - 1 <= 0 {
            return Err(format!(
                "strategy `{}`: `keep_first` ({keep_first}) must be less than max_size // 2 − 1 \
                 ({}), as the SDK requires to leave room for condensation",
                p.strategy(),
                (max_size / 2) as i64 - 1
            )
            .into());
        }
        Ok(keep_first)
    }

    fn reasons(&self, view: &View, window: u64, requested: bool) -> Reasons {
        let limit = match (self.max_tokens, self.max_input_tokens.of(window)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let total = view.span_cost(0..view.len());
        Reasons {
            request: requested,
            tokens: limit.filter(|&l| total > l).map(|l| (total, l)),
            events: view.len() > self.max_size,
        }
    }

    /// `_get_forgotten_events` and the checks of `get_condensation`: the forgotten range, or
    /// `None` where the SDK raises `NoCondensationAvailableException`.
    fn forgotten(
        &self,
        view: &View,
        reasons: &Reasons,
        window: u64,
        out: &mut Context,
    ) -> Option<(usize, usize)> {
        let n = view.len();
        let k = self.keep_first as i64;
        let mut from_tail = i64::MAX;
        if reasons.request {
            from_tail = from_tail.min((n / 2) as i64 - k - 1);
        }
        if reasons.events {
            from_tail = from_tail.min((self.max_size / 2) as i64 - k - 1);
        }
        if let Some((total, limit)) = reasons.tokens {
            let reduction = total as i64 - (limit / 2) as i64;
            from_tail = from_tail.min(suffix_for_reduction(view, self.keep_first, reduction));
        }
        let allowed = &mut out.chosen[..n];
        let end_ok = manipulation_indices(view.kinds, self.thinking_blocks, allowed);
        let start = find_next(allowed, end_ok, k)?;
        let end = find_next(allowed, end_ok, n as i64 - from_tail)?;
        if end <= start || ((end - start) as f64) < n as f64 * self.minimum_progress {
            return None;
        }
        let forgotten = view.span_cost(start..end);
        let summary = self.summary.size.cost(forgotten);
        let fits = PROMPT_TOKENS + forgotten + summary <= self.summary_window.of(window)?;
        fits.then_some((start, end))
    }

    /// `hard_context_reset`: the summary of every event, or `None` when every attempt's prompt
    /// is over the summarising model's window.
    fn hard_reset(&self, view: &View, window: u64, out: &mut Context) -> bool {
        let n = view.len();
        let summary = self.summary.size.cost(view.span_cost(0..n));
        let room = self.summary_window.of(window).unwrap_or(u64::MAX);
        let longest = view.chars.iter().copied().max().unwrap_or(0);
        let mut max_chars: Option<u64> = None;
        for _ in 0..self.reset_retries {
            let events = joined(
                view.separator,
                (0..n).map(|i| truncated_cost(view, i, max_chars, out)),
            );
            if PROMPT_TOKENS + events + summary <= room {
                return true;
            }
            // `int(max_event_str_length * scaling)`, starting from the longest event.
            let m = max_chars.unwrap_or(longest);
            max_chars = Some((m as f64 * self.reset_scaling) as u64);
        }
        false
    }
}

impl super::rule::RuleSpec for OpenHandsSdkSummarizing {
    const NAME: &'static str = "openhands_sdk_summarizing";
    const TAIL: super::rule::Tail = super::rule::Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(DEFAULT_KEEP_FIRST);
    const OWN_HEAD: bool = true;

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        // The SDK's `gt=0`.
        let max_size = super::summary_preset::at_least(p, "max_size", 1, DEFAULT_MAX_SIZE)?;
        let keep_first = Self::keep_first(p, max_size)?;
        let reset_retries = match p.u64("hard_reset_retries")? {
            Some(0) => {
                return Err(p.bad(
                    "hard_reset_retries",
                    "a whole number ≥ 1",
                    &SpecValue::Int(0),
                ))
            }
            v => v.map_or(DEFAULT_RESET_RETRIES, |v| v as u32),
        };
        Ok(OpenHandsSdkSummarizing {
            max_size,
            keep_first,
            max_tokens: p.u64("max_tokens")?,
            max_input_tokens: TokenCap::parse(p, "max_input_tokens", true)?,
            minimum_progress: Self::open_share(p, "minimum_progress")?
                .unwrap_or(DEFAULT_MINIMUM_PROGRESS),
            reset_retries,
            reset_scaling: Self::open_share(p, "hard_reset_scaling")?
                .unwrap_or(DEFAULT_RESET_SCALING),
            summary_window: TokenCap::parse(p, "summary_window", false)?,
            thinking_blocks: p.bool("thinking_blocks")?.unwrap_or(false),
            summary: SummaryRule::from_params(p)?,
        })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        // `keep_first` is written by the strategy's label, as for every head.
        push_if(params, "max_size", self.max_size, DEFAULT_MAX_SIZE);
        if let Some(n) = self.max_tokens {
            params.push(format!("max_tokens={n}"));
        }
        self.max_input_tokens.push(params, "max_input_tokens");
        push_if(
            params,
            "minimum_progress",
            self.minimum_progress,
            DEFAULT_MINIMUM_PROGRESS,
        );
        push_if(
            params,
            "hard_reset_retries",
            self.reset_retries,
            DEFAULT_RESET_RETRIES,
        );
        push_if(
            params,
            "hard_reset_scaling",
            self.reset_scaling,
            DEFAULT_RESET_SCALING,
        );
        self.summary_window.push(params, "summary_window");
        push_if(params, "thinking_blocks", self.thinking_blocks, false);
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
        let n = view.len();
        // The rule keeps its head itself: the capacity is the whole window.
        let reasons = self.reasons(&view, capacity, out.from_session.condensation_requested);
        if !reasons.request && reasons.tokens.is_none() && !reasons.events {
            return unchanged(&view, capacity, out);
        }
        let hard = reasons.request || reasons.tokens.is_some();
        match self.forgotten(&view, &reasons, capacity, out) {
            Some((start, end)) => {
                for i in 0..start {
                    out.push(Item::Verbatim(i), view.costs[i], view.separator);
                }
                summarise_span(&self.summary, &view, (start, end), stream, out);
                for i in end..n {
                    out.push(Item::Verbatim(i), view.costs[i], view.separator);
                }
                fits(out, capacity)
            }
            // A soft requirement waits for a cut to become possible.
            None if !hard => unchanged(&view, capacity, out),
            None if self.hard_reset(&view, capacity, out) => {
                summarise_span(&self.summary, &view, (0, n), stream, out);
                fits(out, capacity)
            }
            // The SDK re-raises: the context stays as it was and the refused call ends the run.
            None => Outcome::Infeasible,
        }
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }

    fn summary_rule(&self) -> Option<&SummaryRule> {
        Some(&self.summary)
    }

    fn summary_call(&self) -> SummaryCall {
        SummaryCall::Separate {
            prompt: PROMPT_TOKENS,
            calls: 1,
            cached: false,
        }
    }

    fn honours_condensation_request(&self) -> bool {
        true
    }
}
