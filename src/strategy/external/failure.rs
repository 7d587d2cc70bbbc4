//! How an external program's failure reaches the runner. A strategy's `apply` returns an
//! [`Outcome`](crate::context::Outcome), not a `Result`, and runs in the hot loop; so a
//! failure is left on the calling thread, and whoever evaluated the cells — a sweep's worker,
//! `ctxlab table` — collects it with [`watch`] and names the cell. The external calls of one
//! watched evaluation are counted, so the failing one is found among the rows it made: the
//! n-th cell of an external strategy, or the session whose compactions reach n. After a
//! failure the later calls on the thread return at once, uncounted, until the watch ends.

use super::SummaryCall;
use std::cell::RefCell;

/// What went wrong with one request to an external program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The failing call's place among the external strategies' calls of the watched
    /// evaluation (1-based).
    pub call: u64,
    pub command: String,
    pub capacity: u64,
    pub keep_recent: usize,
    /// The request's number for its process (1-based).
    pub request: u64,
    /// What was wrong, in one line.
    pub what: String,
    /// The end of the program's standard error (empty when it wrote none).
    pub stderr: String,
}

impl Failure {
    /// The error: one line naming `cell`, the request and what was wrong, then the program's
    /// standard error, if it wrote any.
    pub fn message(&self, cell: &str) -> String {
        let mut m = format!(
            "external strategy failed on {cell}: request {} to `{}`: {}",
            self.request, self.command, self.what
        );
        if !self.stderr.is_empty() {
            m.push_str("\nthe program's standard error ended with:");
            for line in self.stderr.lines() {
                m.push_str("\n  ");
                m.push_str(line);
            }
        }
        m
    }

    /// [`Failure::message`] for a cell known only by what the request said.
    pub fn message_at(&self, place: &str) -> String {
        self.message(&format!(
            "{place} (capacity {}, keep_recent {})",
            self.capacity, self.keep_recent
        ))
    }
}

#[derive(Default)]
struct Watch {
    calls: u64,
    failure: Option<Failure>,
    summary_call: SummaryCall,
}

thread_local! {
    static WATCH: RefCell<Watch> = RefCell::new(Watch::default());
}

/// Runs `evaluate` (cells or sessions on this thread) and returns what it made with the first
/// failure of an external program during it, if any.
pub fn watch<T>(evaluate: impl FnOnce() -> T) -> (T, Option<Failure>) {
    WATCH.with(|w| *w.borrow_mut() = Watch::default());
    let made = evaluate();
    let failure = WATCH.with(|w| std::mem::take(&mut *w.borrow_mut()).failure);
    (made, failure)
}

/// Counts a call and returns its place, or `None` when a failure is pending on this thread.
pub(super) fn begin_call() -> Option<u64> {
    WATCH.with(|w| {
        let mut w = w.borrow_mut();
        if w.failure.is_some() {
            return None;
        }
        w.calls += 1;
        Some(w.calls)
    })
}

/// Leaves `failure` for the watch (the first one stays).
pub(super) fn fail(failure: Failure) {
    WATCH.with(|w| {
        w.borrow_mut().failure.get_or_insert(failure);
    })
}

/// Remembers the summary call the last answer declared.
pub(super) fn set_summary_call(call: SummaryCall) {
    WATCH.with(|w| w.borrow_mut().summary_call = call)
}

/// The summary call the last answer on this thread declared.
pub(super) fn summary_call() -> SummaryCall {
    WATCH.with(|w| w.borrow().summary_call)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_stops_the_counting_until_the_watch_ends() {
        let failure = |call| Failure {
            call,
            command: "python3 rule.py".into(),
            capacity: 90,
            keep_recent: 3,
            request: 7,
            what: "item 2 keeps record 57, but the history has 40 records".into(),
            stderr: "Traceback\nValueError: x".into(),
        };
        let ((), got) = watch(|| {
            assert_eq!(begin_call(), Some(1));
            assert_eq!(begin_call(), Some(2));
            fail(failure(2));
            // Later calls are not counted, and the first failure stays.
            assert_eq!(begin_call(), None);
            fail(failure(9));
        });
        assert_eq!(got, Some(failure(2)));
        // A new watch starts afresh.
        let ((), none) = watch(|| assert_eq!(begin_call(), Some(1)));
        assert_eq!(none, None);
        assert_eq!(
            failure(2).message_at("history \"h\""),
            "external strategy failed on history \"h\" (capacity 90, keep_recent 3): request 7 to \
             `python3 rule.py`: item 2 keeps record 57, but the history has 40 records\n\
             the program's standard error ended with:\n  Traceback\n  ValueError: x"
        );
    }
}
