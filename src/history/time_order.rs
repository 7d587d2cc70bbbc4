//! The time order a history's records keep: no record is timed before the start of the model
//! call before it. A call's output is a run of consecutive model outputs (`assistant`,
//! `tool_call`) and starts at the first of them that carries a time; its later outputs may be
//! written after a tool's result that comes after them in the history (a harness runs the
//! first tool of a response while the model still streams the second, as Claude Code does), so
//! a record is held against the start of that run, not against its latest output. Records
//! without a time are not checked and do not start a run's time.

use super::{Kind, Time};

/// Where a history's records stand in time as they are read, one record at a time.
#[derive(Debug, Clone, Default)]
pub struct TimeOrder {
    /// The time of the latest run of model outputs and where its first timed record is (a
    /// line number, or whatever place the caller names records by).
    call_start: Option<(Time, usize)>,
    /// The previous record was a model output.
    in_outputs: bool,
    /// The current run of outputs has no timed record yet.
    untimed_run: bool,
}

impl TimeOrder {
    /// Takes the next record, of `kind` at `time`, found at `place`. `Err((start, at))` when
    /// it is timed before `start`, the start of the latest model call, found at `at`.
    pub fn next(
        &mut self,
        kind: Kind,
        time: Option<Time>,
        place: usize,
    ) -> Result<(), (Time, usize)> {
        let output = matches!(kind, Kind::Assistant | Kind::ToolCall);
        if output && !self.in_outputs {
            self.untimed_run = true;
        }
        self.in_outputs = output;
        let Some(t) = time else {
            return Ok(());
        };
        if let Some((start, at)) = self.call_start {
            if t < start {
                return Err((start, at));
            }
        }
        if output && self.untimed_run {
            self.call_start = Some((t, place));
            self.untimed_run = false;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(records: &[(Kind, i64)]) -> Result<(), (Time, usize)> {
        let mut order = TimeOrder::default();
        for (i, &(kind, t)) in records.iter().enumerate() {
            order.next(kind, Some(Time(t)), i + 1)?;
        }
        Ok(())
    }

    #[test]
    fn a_record_is_held_against_the_start_of_the_call_before_it() {
        use Kind::*;
        // Two tool calls of one response (712, 817) and the first one's result (719): the
        // result is after the call's start, 712.
        assert_eq!(
            check(&[
                (User, 0),
                (ToolCall, 712),
                (ToolCall, 817),
                (ToolResult, 719)
            ]),
            Ok(())
        );
        // Before it: refused, naming the call's first output (record 2 at 712).
        assert_eq!(
            check(&[
                (User, 0),
                (ToolCall, 712),
                (ToolCall, 817),
                (ToolResult, 700)
            ]),
            Err((Time(712), 2))
        );
        // A result between two calls starts no call: the second call (record 4, at 900) is
        // what the last record is held against.
        assert_eq!(
            check(&[
                (User, 0),
                (ToolCall, 712),
                (ToolResult, 719),
                (ToolCall, 900),
                (ToolResult, 850)
            ]),
            Err((Time(900), 4))
        );
        // An output is held against the previous call too.
        assert_eq!(
            check(&[(Assistant, 500), (User, 600), (Assistant, 400)]),
            Err((Time(500), 1))
        );
    }

    #[test]
    fn untimed_records_are_not_checked_and_a_run_starts_at_its_first_time() {
        let mut order = TimeOrder::default();
        order.next(Kind::Assistant, None, 1).unwrap();
        order.next(Kind::ToolCall, Some(Time(50)), 2).unwrap();
        order.next(Kind::ToolResult, None, 3).unwrap();
        assert_eq!(
            order.next(Kind::ToolResult, Some(Time(49)), 4),
            Err((Time(50), 2))
        );
    }
}
