//! `openhands_amortized(max_size=100, keep_first=1)`: OpenHands' `AmortizedForgettingCondenser`
//! (`type: amortized`), from `OpenHands/OpenHands`
//! `openhands/memory/condenser/impl/amortized_forgetting_condenser.py` @
//! 76483ad8f5f51b47b20f29acf2fa51c770a5aa67 (same rule at d6fab190bfb55f07cc380993b45ec4f781706a92),
//! defaults from `openhands/core/config/condenser_config.py` @
//! d074f47c428b6dbd0a9669f9b2112444f68eb80d, the task's re-insertion from
//! `openhands/memory/conversation_memory.py` @ d6fab190.
//!
//! - **The rule.** `should_condense = len(view) > max_size`; then `target_size = max_size // 2;
//!   head = view[:keep_first]; tail = view[-(target_size - len(head)):]` and everything between
//!   is forgotten (a stored `CondensationAction`, no placeholder, no model call). `keep_first`
//!   is the generic head parameter (default here `keep_first=1`, the config's; the class's is 0).
//! - **Trigger.** [`When::Events`]`(max_size)`: the context holds more than `max_size` entries,
//!   or the provider refused the context as too long: `should_condense` is also true on an
//!   unhandled condensation request, which OpenHands' controller files on a context-window
//!   error (see `openhands_llm_summarizing`); the session then cuts at once and sends the call
//!   again.
//!   Persistent: later checks and cuts see the cut context, as OpenHands' later views exclude the
//!   forgotten events.
//! - **The task survives.** OpenHands' message layer re-inserts the system prompt and the task
//!   when the view lacks them (see `openhands_recent`), so they are kept here too: the leading
//!   system records and the first user message right after the head. The tail is OpenHands'
//!   `events_from_tail = target_size - len(head)`, the re-inserted task on top of it, as
//!   OpenHands sends it. Departure: the session's event trigger counts the re-inserted task as
//!   an event, so after the first cut it fires one event before OpenHands'.
//! - **Parameters.** `max_size ≥ 2` (config `ge=2`); OpenHands' constructor also requires
//!   `keep_first < max_size // 2`, checked here when `keep_first` is a number.
//! - **Unit.** Events = records (a thought and its tool call stored as two records are two).
//! - **Cell.** One cut: the whole history if it holds at most `max_size` records, else the cut;
//!   infeasible when the result exceeds the capacity. `keep_recent` is ignored.

use super::openhands_recent::reinserted;
use super::preset::{at_least, push_first_and_newest};
use super::rule::{RuleSpec, Tail};
use super::{spec, Context, Head, Outcome, View, When};
use crate::error::ParseError;

pub const DEFAULT_MAX_SIZE: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenHandsAmortized {
    /// Events the view may hold before a cut; a cut leaves `max_size / 2`.
    pub max_size: usize,
}

impl RuleSpec for OpenHandsAmortized {
    const NAME: &'static str = "openhands_amortized";
    const TAIL: Tail = Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(1);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let max_size = at_least(p, "max_size", 2, " (events)")?.unwrap_or(DEFAULT_MAX_SIZE);
        // The generic head, read again to check it as OpenHands' constructor does.
        let keep_first = match Head::parse(p)? {
            Some(Head::First(k)) => k,
            None => 1,
            Some(Head::Task) => 0,
        };
        if keep_first >= max_size / 2 {
            return Err(format!(
                "strategy `{}`: `keep_first` ({keep_first}) must be less than max_size / 2 ({}), as OpenHands requires",
                Self::NAME,
                max_size / 2
            )
            .into());
        }
        Ok(OpenHandsAmortized { max_size })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        if self.max_size != DEFAULT_MAX_SIZE {
            params.push(format!("max_size={}", self.max_size));
        }
    }

    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        let n = view.len();
        if out.head_len + n <= self.max_size && !out.from_session.condensation_requested {
            return push_first_and_newest(view, n, 0, capacity, out);
        }
        let pre = reinserted(&view);
        let tail = (self.max_size / 2).saturating_sub(out.head_len);
        push_first_and_newest(view, pre, tail, capacity, out)
    }

    fn when(&self) -> Option<When> {
        Some(When::Events(self.max_size))
    }

    fn honours_condensation_request(&self) -> bool {
        true
    }
}
