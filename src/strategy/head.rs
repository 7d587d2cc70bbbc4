//! The head every harness keeps: the system prompt and the task. SWE-agent never elides the
//! first observation, OpenHands keeps `keep_first` events, the Complexity Trap keeps system
//! and task verbatim; so every strategy that compacts keeps its head verbatim, applies its
//! rule to what lies between the head and its pinned tail, and is infeasible when the head
//! (with the tail) does not fit.

use super::spec::{Params, SpecValue};
use crate::error::ParseError;
use crate::history::Kind;

/// Which leading records a strategy keeps whatever happens (`keep_first` in a spec).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Head {
    /// The leading `system` records and the first `user` message right after them (the task):
    /// `keep_first=task`, the default.
    Task,
    /// The first `n` records, whatever their kind (`keep_first=N`; 0 keeps no head, the
    /// article's rules).
    First(usize),
}

impl Head {
    /// How many leading records of a context with these kinds the head holds.
    pub fn len(self, kinds: &[Kind]) -> usize {
        match self {
            Head::First(n) => n.min(kinds.len()),
            Head::Task => {
                let systems = kinds.iter().take_while(|k| **k == Kind::System).count();
                systems + usize::from(kinds.get(systems) == Some(&Kind::User))
            }
        }
    }

    /// `keep_first=...` as a spec writes it.
    pub fn param(self) -> String {
        match self {
            Head::Task => "keep_first=task".into(),
            Head::First(n) => format!("keep_first={n}"),
        }
    }

    /// Reads `keep_first`: a whole number or `task`.
    pub fn parse(p: &mut Params) -> Result<Option<Head>, ParseError> {
        match p.value("keep_first") {
            None => Ok(None),
            Some(SpecValue::Int(n)) if n >= 0 => Ok(Some(Head::First(n as usize))),
            Some(SpecValue::Str(s)) if s == "task" => Ok(Some(Head::Task)),
            Some(v) => Err(p.bad(
                "keep_first",
                "a whole number ≥ 0 (the first N records) or `task` (the system prompt and the first user message)",
                &v,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::*;

    #[test]
    fn the_task_head_is_the_leading_systems_and_the_first_user_message() {
        assert_eq!(Head::Task.len(&[System, User, Assistant, User]), 2);
        assert_eq!(Head::Task.len(&[System, System, User]), 3);
        assert_eq!(Head::Task.len(&[User, User]), 1);
        assert_eq!(Head::Task.len(&[Assistant, User]), 0);
        assert_eq!(Head::Task.len(&[System, Assistant]), 1);
        assert_eq!(Head::Task.len(&[]), 0);
        assert_eq!(Head::First(5).len(&[User, User]), 2);
    }
}
