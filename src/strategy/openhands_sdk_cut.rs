//! Where the OpenHands SDK's summarising condenser may cut a view, and how much it cuts
//! (`OpenHands/software-agent-sdk` @ 611629e6999ad398dc49c761721eefe18d5e6bd9, 2026-08-22; the
//! preset itself is `openhands_sdk_summarizing`).
//!
//! - **Manipulation indices** (`openhands/sdk/context/view/view.py` L38–50, the intersection of
//!   every property's indices in `view/properties/`): an index is a place where events may be
//!   inserted or a range `[i, j)` of events deleted. In ctxlab's records: the records of one agent
//!   call (an `assistant` record and the `tool_call` records after it) are one batch
//!   (`batch_atomicity.py` L49–76); an agent call that calls a tool (it has `tool_call` records,
//!   or `tool_result` records follow it) is an action whose observations are the `tool_result`
//!   records right after it, and no index lies between them (`tool_call_matching.py` L61–100).
//!   So an index lies before every record but a `tool_result` and a `tool_call` that continues a
//!   call; the end of the view is one unless the view ends in a tool call without its result.
//! - **Tool loops** (`tool_loop_atomicity.py` L95–126), with `thinking_blocks=true`: a run of
//!   actions and observations that starts at an action carrying thinking blocks is atomic. ctxlab
//!   does not know which records carried thinking blocks; the parameter assumes Anthropic's
//!   extended thinking, where the first action after anything else (a user message, a summary, a
//!   message without a tool call) carries them and the actions of the same tool loop do not.
//! - **The cut** (`llm_summarizing_condenser.py` L248–314): `events_from_tail` is the smallest of
//!   the targets of the reasons present (request: `len(view) // 2 − keep_first − 1`; events:
//!   `max_size // 2 − keep_first − 1`; tokens: the suffix left after removing the shortest
//!   prefix after the head whose tokens exceed `total − max_tokens // 2`, `utils.py` L53–173);
//!   the events forgotten are `view[find_next(keep_first) : find_next(len(view) −
//!   events_from_tail)]`.

use super::{Context, View};
use crate::history::Kind;

/// The truncation notice `maybe_truncate` puts in the middle of an event string it shortens
/// (`openhands/sdk/utils/truncate.py`, `DEFAULT_TRUNCATE_NOTICE`, 113 characters).
pub const TRUNCATE_NOTICE: &str = "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>";

/// Whether the agent call whose first record is `j` calls a tool: it holds `tool_call` records,
/// or `tool_result` records follow it.
fn calls_tool(kinds: &[Kind], j: usize) -> bool {
    let mut end = j + 1;
    while end < kinds.len() && kinds[end] == Kind::ToolCall {
        end += 1;
    }
    end > j + 1 || kinds.get(end) == Some(&Kind::ToolResult)
}

/// Whether record `j` is an action or an observation in the SDK's terms.
fn acts(kinds: &[Kind], j: usize) -> bool {
    match kinds[j] {
        Kind::ToolCall | Kind::ToolResult => true,
        Kind::Assistant => calls_tool(kinds, j),
        _ => false,
    }
}

/// Fills `allowed[i]` (for `i < kinds.len()`) with whether `i` is a manipulation index, and
/// returns whether the end of the view is one.
pub fn manipulation_indices(kinds: &[Kind], thinking: bool, allowed: &mut [bool]) -> bool {
    let n = kinds.len();
    let mut in_loop = false;
    for i in 0..n {
        let continues_call = kinds[i] == Kind::ToolResult
            || (kinds[i] == Kind::ToolCall
                && i > 0
                && matches!(kinds[i - 1], Kind::Assistant | Kind::ToolCall));
        let mut ok = !continues_call;
        if thinking {
            // An action after anything but an action or observation opens a tool loop (it
            // carries the thinking blocks); later actions and observations are inside it.
            let prev_acts = i > 0 && acts(kinds, i - 1);
            if acts(kinds, i) {
                if !prev_acts && kinds[i] != Kind::ToolResult {
                    in_loop = true;
                } else if in_loop {
                    ok = false;
                }
            } else {
                in_loop = false;
            }
        }
        allowed[i] = ok;
    }
    n == 0 || kinds[n - 1] != Kind::ToolCall
}

/// The smallest manipulation index at or after `threshold` (`ManipulationIndices.find_next`,
/// `view/manipulation_indices.py` L18–38); `None` where the SDK raises `ValueError`.
pub fn find_next(allowed: &[bool], end_ok: bool, threshold: i64) -> Option<usize> {
    let n = allowed.len() as i64;
    let from = threshold.max(0);
    if from > n {
        return None;
    }
    (from as usize..allowed.len())
        .find(|&i| allowed[i])
        .or((end_ok).then_some(allowed.len()))
}

/// `get_suffix_length_for_token_reduction(view.events[keep_first:], reduction, base_events =
/// view.events[:keep_first])` (`utils.py` L119–173): how many of the events after the head may
/// stay so that dropping the others removes more than `reduction` tokens. A prefix's tokens are
/// what adding it to the head adds, separators included.
pub fn suffix_for_reduction(view: &View, keep_first: usize, reduction: i64) -> i64 {
    let n = view.len();
    let k = keep_first.min(n);
    let len = (n - k) as i64;
    if len == 0 {
        return 0;
    }
    if reduction <= 0 {
        return len;
    }
    let mut tokens = 0u64;
    for j in k..n {
        // The first event after an empty head pays no separator.
        tokens += view.costs[j] + if j == 0 { 0 } else { view.separator };
        if tokens as i64 > reduction {
            return (n - j - 1) as i64;
        }
    }
    0
}

/// What event `i` costs in the summary prompt once `maybe_truncate` cut its string to
/// `max_chars` characters (`truncate.py` L50–130): the share of the record the head and tail
/// keep and the notice between them, or the notice's first characters when it alone fills the
/// budget. The event string is the record's text (the SDK's `str(event)` adds the event's type
/// and fields, which a replayed transcript does not hold).
pub fn truncated_cost(view: &View, i: usize, max_chars: Option<u64>, out: &mut Context) -> u64 {
    let chars = view.chars[i];
    let Some(max) = max_chars.filter(|&m| chars > m) else {
        return view.costs[i];
    };
    let notice = TRUNCATE_NOTICE.len() as u64;
    out.text.clear();
    if notice >= max {
        out.text.push_str(&TRUNCATE_NOTICE[..max as usize]);
        return view.model.cost(&out.text);
    }
    out.text.push_str(TRUNCATE_NOTICE);
    let kept = max - notice;
    let share = (u128::from(view.costs[i]) * u128::from(kept)).div_ceil(u128::from(chars));
    share as u64 + view.model.cost(&out.text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::{Assistant as A, System as S, ToolCall as C, ToolResult as T, User as U};

    fn indices(kinds: &[Kind], thinking: bool) -> Vec<usize> {
        let mut allowed = vec![false; kinds.len()];
        let end = manipulation_indices(kinds, thinking, &mut allowed);
        let mut v: Vec<usize> = (0..kinds.len()).filter(|&i| allowed[i]).collect();
        if end {
            v.push(kinds.len());
        }
        v
    }

    #[test]
    fn indices_lie_between_tool_calls_and_their_results_never_inside() {
        // S U A T A C C T T A: the batch A C C and its results T T are one unit.
        let kinds = [S, U, A, T, A, C, C, T, T, A];
        assert_eq!(indices(&kinds, false), vec![0, 1, 2, 4, 9, 10]);
        // Ending in a tool call without its result: the end is no index.
        assert_eq!(indices(&[S, U, A, C], false), vec![0, 1, 2]);
    }

    #[test]
    fn with_thinking_blocks_a_tool_loop_is_one_unit_until_a_message_ends_it() {
        // The loop opened by the first action runs through A T A T; the user message ends it.
        let kinds = [S, U, A, T, A, T, U, A, T, A];
        assert_eq!(indices(&kinds, true), vec![0, 1, 2, 6, 7, 9, 10]);
    }

    #[test]
    fn find_next_is_the_smallest_index_at_or_after_the_threshold() {
        let allowed = [true, true, false, false, true];
        assert_eq!(find_next(&allowed, true, 2), Some(4));
        assert_eq!(find_next(&allowed, false, 5), None);
        assert_eq!(find_next(&allowed, true, 5), Some(5));
        assert_eq!(find_next(&allowed, true, 6), None);
    }
}
