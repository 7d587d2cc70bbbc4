//! `openhands_recent(keep_first=1, max_events=100)`: OpenHands' `RecentEventsCondenser`
//! (`type: recent`), from `OpenHands/OpenHands`
//! `openhands/memory/condenser/impl/recent_events_condenser.py` @
//! 76483ad8f5f51b47b20f29acf2fa51c770a5aa67 (HEAD d6fab190bfb55f07cc380993b45ec4f781706a92 lacks
//! the guard below), defaults from `openhands/core/config/condenser_config.py` @
//! d074f47c428b6dbd0a9669f9b2112444f68eb80d, the task's re-insertion from
//! `openhands/memory/conversation_memory.py` @ d6fab190 (`_ensure_system_message`,
//! `_ensure_initial_user_message`).
//!
//! - **The rule.** `head = view[:keep_first]; tail_length = max(0, max_events - len(head));
//!   tail = view[-tail_length:] if tail_length > 0 else []`: the first `keep_first` events and
//!   the newest `max_events - keep_first`, every call, nothing in between, no placeholder.
//!   `keep_first` is the generic head parameter (default here `keep_first=1`, the config's);
//!   `max_events` counts the head too.
//! - **The task survives.** With `keep_first=1` the head is the system prompt; OpenHands'
//!   message layer then re-inserts the initial user message (the task) at position 1 whenever
//!   the event there is not a user message, and the system prompt when no event holds it. So
//!   the leading system records and the first user message right after the head (what
//!   `keep_first=task` would keep) are kept verbatim here too, outside the `max_events` count,
//!   as OpenHands does not count them. (OpenHands skips the task when a later user message
//!   happens to open the tail; we keep it anyway.)
//! - **Quirks not reproduced.** When the view is shorter than `max_events`, head and tail
//!   overlap and OpenHands sends the head twice (`[e0, e0, e1]`); we send it once. With
//!   `max_events ≤ keep_first` HEAD's `view[-0:]` keeps everything; we follow the guarded
//!   version (the head alone).
//! - **Orphans.** OpenHands' message layer (`openhands/memory/conversation_memory.py`
//!   @ d6fab190, `_filter_unmatched_tool_calls`) leaves out a tool result whose tool call was
//!   cut off: the tool results that open the tail after a cut are left out here too (in a
//!   session they leave the context; the next cut keeps the same newest records, which lie
//!   after them). A tool call whose result was cut off can only sit in a head of more than the
//!   system prompt; it is kept.
//! - **Defaults.** Config `keep_first=1` (`ge=0`), `max_events=100` (`ge=1`); the class
//!   defaults are `max_events=10`.
//! - **Unit.** Events = records (a thought and its tool call stored as two records are two).
//! - **Trigger.** Every call ([`When::EveryCall`]): a per-call view; re-applied in a session to
//!   the context it cut before, it keeps the same records as applied to the full history.
//! - **Cell.** The rule on the whole history; infeasible when the result exceeds the capacity.
//!   `keep_recent` is ignored.

use super::preset::{at_least, push_first_and_newest};
use super::rule::{RuleSpec, Tail};
use super::{spec, Context, Head, Outcome, View, When};
use crate::error::ParseError;

pub const DEFAULT_MAX_EVENTS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenHandsRecent {
    /// Events kept, the head included (the re-inserted system prompt and task excluded).
    pub max_events: usize,
}

/// The records at the start of a view after an OpenHands head that its message layer inserts
/// again if they are gone: the leading system records and the first user message after them
/// (none when the head already holds the task).
pub(super) fn reinserted(view: &View) -> usize {
    Head::Task.len(view.kinds)
}

impl RuleSpec for OpenHandsRecent {
    // Reads sizes, kinds and texts only: neither a flag nor a draw.
    const READS_FLAGS: bool = false;
    const DRAWS: bool = false;
    const NAME: &'static str = "openhands_recent";
    const TAIL: Tail = Tail::Own;
    const DEFAULT_HEAD: Head = Head::First(1);

    fn parse(p: &mut spec::Params) -> Result<Self, ParseError> {
        let max_events = at_least(p, "max_events", 1, " (events)")?.unwrap_or(DEFAULT_MAX_EVENTS);
        Ok(OpenHandsRecent { max_events })
    }

    fn push_params(&self, params: &mut Vec<String>) {
        if self.max_events != DEFAULT_MAX_EVENTS {
            params.push(format!("max_events={}", self.max_events));
        }
    }

    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        let tail = self.max_events.saturating_sub(out.head_len);
        push_first_and_newest(view, reinserted(&view), tail, capacity, out)
    }

    fn when(&self) -> Option<When> {
        Some(When::EveryCall)
    }
}
