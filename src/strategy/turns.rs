//! A view read as a harness's conversation, for the presets whose rules go by messages and
//! turns (OpenCode, pi): which records open a message, where the agent's last call ends, and
//! whether the user spoke after it (the agent's loop ended there).

use crate::history::{starts_call, Kind};

/// Whether record `i` opens a message of the harness: a user message (`user`, or `summary`,
/// which a harness sends in a user's place), the first record of an agent call's output, and,
/// with `results_apart`, each tool result (pi keeps tool results as messages of their own;
/// OpenCode folds them into the message of the call that made them). System records and notes
/// belong to the message before them.
pub fn opens_message(kinds: &[Kind], i: usize, results_apart: bool) -> bool {
    match kinds[i] {
        Kind::User | Kind::Summary => true,
        Kind::ToolResult => results_apart,
        Kind::Assistant | Kind::ToolCall => starts_call(kinds, i),
        Kind::System | Kind::Note => false,
    }
}

/// The records `from..to` as messages: the index each one starts at, oldest first; `from`
/// always starts one (whatever it is, it opens what the view holds).
pub fn message_starts(
    kinds: &[Kind],
    from: usize,
    to: usize,
    results_apart: bool,
) -> impl DoubleEndedIterator<Item = usize> + '_ {
    (from..to).filter(move |&i| i == from || opens_message(kinds, i, results_apart))
}

/// Where the user spoke after the agent's last call: the first `user` record after that call's
/// output, the moment the agent's loop ended and waited (`None`: no call yet, or the agent is
/// still working).
pub fn turn_end(kinds: &[Kind]) -> Option<usize> {
    let last_output = kinds
        .iter()
        .rposition(|k| matches!(k, Kind::Assistant | Kind::ToolCall))?;
    (last_output + 1..kinds.len()).find(|&i| kinds[i] == Kind::User)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::{Assistant as A, ToolCall as C, ToolResult as T, User as U};

    #[test]
    fn messages_fold_or_separate_tool_results() {
        // U A C T T A T U: the call A C is one message; its results join it unless apart.
        let kinds = [U, A, C, T, T, A, T, U];
        let starts = |from, apart| message_starts(&kinds, from, 8, apart).collect::<Vec<_>>();
        assert_eq!(starts(0, false), [0, 1, 5, 7]);
        assert_eq!(starts(0, true), [0, 1, 3, 4, 5, 6, 7]);
        // A range that starts inside a message starts one there.
        assert_eq!(starts(2, false), [2, 5, 7]);
    }

    #[test]
    fn a_turn_ends_when_the_user_speaks_after_the_last_call() {
        assert_eq!(turn_end(&[U, A, T, U]), Some(3));
        assert_eq!(turn_end(&[U, A, T]), None, "the agent is still working");
        assert_eq!(turn_end(&[U]), None, "no call yet");
        assert_eq!(turn_end(&[U, A, U, U]), Some(2));
    }
}
