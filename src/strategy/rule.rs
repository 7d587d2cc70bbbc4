//! What every strategy provides, in its own file: its name, its parameters (parsing and the
//! canonical label), how it reads `keep_recent`, and its rule. The one list of strategies is
//! `strategies!` in `mod.rs`; a strategy the list names but that misses a piece does not
//! compile.

use super::spec::Params;
use super::{Context, Outcome, View};
use super::{Head, SummaryCall, SummaryRule, When};
use crate::error::ParseError;
use crate::summariser::Summariser;

/// How a strategy reads `keep_recent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// It pins the newest `keep_recent` records and applies its rule to the older ones (the
    /// shared machinery of `Strategy::apply`).
    Pinned,
    /// It reads `keep_recent` itself (a window, a verbatim tail).
    Own,
    /// It takes no parameters at all, not even `keep_recent`; the text says why.
    None(&'static str),
}

pub trait RuleSpec: Sized {
    /// The name in specs and labels.
    const NAME: &'static str;
    const TAIL: Tail = Tail::Pinned;
    /// `keep_recent` when neither the spec nor a sweep axis sets it.
    const DEFAULT_KEEP_RECENT: usize = 0;
    /// The head kept verbatim when the spec does not set `keep_first`.
    const DEFAULT_HEAD: Head = Head::Task;
    /// What `ctxlab inspect` calls a record this rule replaced by a stand-in of its own
    /// ([`super::Item::Placeholder`]); the stand-in's cost is in the context.
    const STAND_IN: &'static str = "masked";
    /// Whether its rule keeps its head itself: `keep_first` is then a parameter of the rule
    /// (read again in [`RuleSpec::parse`]), and `Strategy::apply` hands it the whole history
    /// with no head set aside, so the rule may also forget the head (the OpenHands SDK's hard
    /// context reset summarises every event, the first ones included).
    const OWN_HEAD: bool = false;
    /// With [`Tail::None`], whether it still takes the parameter `key` of its own (`raw`'s
    /// `window`).
    fn takes_own(_key: &str) -> bool {
        false
    }

    /// Reads the strategy's own parameters (every key it does not take is an error later).
    fn parse(p: &mut Params) -> Result<Self, ParseError>;

    /// Appends the parameters that differ from their defaults, as `key=value`.
    fn push_params(&self, _params: &mut Vec<String>) {}

    /// Builds the context. With [`Tail::Pinned`] the view is the history without the pinned
    /// tail and `keep_recent` is 0.
    fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome;

    /// Whether its context depends on the flags it is handed. A sweep gives a cell of a rule
    /// that does not the very rows of an earlier noise level or replicate of the same history
    /// (`cells::eval`), so `false` is a promise: `tests/suite/invariants.rs` checks it for every
    /// rule that makes it, on random histories, flags and capacities.
    const READS_FLAGS: bool = true;
    /// Whether its context depends on the summariser's stream (its own random draws, keyed by
    /// history and replicate). A cell of a rule that draws nothing is reused, as above, under
    /// the same promise and the same check; a rule that draws, or runs a program, never is.
    const DRAWS: bool = true;

    /// Whether the runner hands it the true labels as flags (the oracle).
    fn sees_truth(&self) -> bool {
        false
    }

    /// Whether it ever changes a context (`raw` does not).
    fn compacts(&self) -> bool {
        true
    }

    /// Whether a session under it ignores the window (`raw(window=none)`).
    fn unbounded(&self) -> bool {
        false
    }

    /// Its harness's own trigger, for a preset (`None`: the session's threshold decides).
    fn when(&self) -> Option<When> {
        None
    }

    /// Its summary's size and writer, for a strategy whose summaries [`SummaryRule`] sizes:
    /// what a sweep's summary-size axis sets and the sessions table reports.
    fn summary_rule(&self) -> Option<&SummaryRule> {
        None
    }

    /// Its simulated summariser, for a strategy that summarises (by default its
    /// [`RuleSpec::summary_rule`]'s).
    fn summariser(&self) -> Option<&Summariser> {
        self.summary_rule().map(|s| &s.summariser)
    }

    /// How its harness sends the call that writes a summary (a session bills that call so).
    fn summary_call(&self) -> SummaryCall {
        SummaryCall::WholeContext
    }

    /// Whether its rule reads what earlier calls of a session masked as the records they
    /// were (a harness that keeps the full history and masks only what it sends).
    fn reads_unmasked(&self) -> bool {
        false
    }

    /// Whether a context the provider refuses as too long makes its harness condense at once
    /// and retry the call (OpenHands' condensation request), instead of ending the run.
    fn honours_condensation_request(&self) -> bool {
        false
    }

    /// Why its harness is undefined on a window of `window` units, if it is.
    fn check_window(&self, _window: u64) -> Result<(), String> {
        Ok(())
    }
}
