//! Sessions: compaction over time. A history is replayed as an agent loop and a trigger
//! decides when to compact, with any strategy.
//!
//! # The loop
//!
//! - **Turns.** Each `assistant` record is one agent model call (a `tool_call` record right
//!   after an assistant record or another tool call belongs to the same call; one that follows
//!   anything else is a call of its own). The call's input is the current context, its cost
//!   under the history's cost model; its output is the call's records, joined like any
//!   records. Every other record (system, user, tool results, ...) is appended to the context
//!   when it appears; records before the first call are the initial context.
//! - **Usage.** After each agent call the usage counter grows by that call's input + output.
//! - **The check** sits after a turn's tool results are appended and before the next agent
//!   call (there is none before the first call, nor after the last): when usage ≥
//!   `ceil(window × ratio)` (or, with [`Layers`], when the history layer is over its fill) the
//!   session compacts.
//! - **A compaction** applies the strategy to the current context, an ordered list of entries —
//!   original records, placeholders, summaries — each with a cost, kind, tool and flag (a
//!   placeholder is never flagged; a summary is flagged when it still carries a flagged
//!   record), under the capacity `floor(window × target)` (with layers: the other layers as
//!   they are plus the history layer's target). The context is **replaced** by the result, then
//!   the notes, if any, are read back after it; usage is reset to 0 (`reset = false` leaves it,
//!   the forgotten reset). A compaction that writes a summary is itself a model call, billed as
//!   the strategy's harness sends it ([`SummaryCall`]): by default its input is the context
//!   being compacted, with the agent's cache; a harness with a prompt of its own sends its
//!   instruction and the summarised records, perhaps in several calls. Its output is the
//!   summaries written (none for strategies that write none). It is billed but does not count
//!   towards usage. A preset whose harness condenses when the provider refuses a context
//!   (OpenHands) compacts then and sends the refused call again. A strategy that cannot meet the capacity
//!   (infeasible) leaves the context and the counter as they were: a failed, fruitless
//!   compaction, tried again at the next check.
//! - **Summaries.** A summary carries the records it replaced, each kept with the
//!   strategy's draw ([`Context::summary_kept`](crate::context::Context)). A summary that is
//!   summarised again puts every record it still carries through the strategy's
//!   [`Summariser`] once more (`Summariser::keeps` on the stream `rng::key(&[stream,
//!   compaction_index])`, indexed by record), so loss compounds; a summary that is dropped
//!   loses all it carried. The strategy itself draws from `rng::key(&[that stream,
//!   rng::tag::SUMMARY])`, so its draws and the session's are unrelated.
//! - **Notes, storms, provider caches, layers**: see [`notes`], [`trigger`], [`cache`], [`layers`].
//!
//! # Retention
//!
//! A required record is **present** at a moment when the context holds it verbatim (its own
//! entry, or the notes read back) or paraphrased (a summary that still carries it); verbatim
//! presence alone is what `retention_end` counts, any form what `retention_any_end` counts,
//! both over all required records of the history, at the end of the session.
//!
//! **Retention at need** asks whether a required record was there when later calls needed it.
//! For every agent call k and every required record r that appeared before call k (appended to
//! the context before the call's input was sent, including just before it), the pair (r, k)
//! scores 1 if r is present in any form in call k's input. Retention at need is the mean over
//! all such pairs (pooled: records that appeared early weigh more because more calls needed
//! them); `None` when there is no pair.

pub mod cache;
mod compactions;
pub mod config;
mod context;
mod invalid;
pub mod layers;
pub mod ledger;
pub mod need;
pub mod notes;
pub mod prices;
mod replay;
pub mod trace;
pub mod trigger;

pub use cache::{CacheKind, CacheRules, CacheSpec};
pub use compactions::{Carried, CompactionEvent, FirstTurn, NextCall};
pub use config::{Pricing, SessionConfig, TriggerMode};
pub use context::{Entry, Origin};
pub use invalid::Invalid;
pub use layers::{Layer, Layers};
pub use ledger::{Ledger, LedgerTotals};
pub use prices::Prices;
pub use replay::{first_user_turn, region, SessionScratch};
pub use trace::{parse_usage, run_script, ScriptOutcome, ScriptRow};

use crate::context::{Context, Outcome};
use crate::history::CostedHistory;
use crate::strategy::{Strategy, SummaryCall, When};
use crate::summariser::Summariser;
use crate::view::View;

/// What a session compacts with. [`Strategy`] is the one the project uses; the trait keeps the
/// session independent of the strategy catalogue (and lets tests plug in a rule of their own).
pub trait Compactor {
    /// Builds the compacted context for `view` under `capacity` (see [`Strategy::apply`]).
    fn compact(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome;

    /// The summariser behind the compactor's summaries, applied again to what an older summary
    /// carries when it is summarised once more (`None`: the default summariser, should a
    /// summary ever appear).
    fn summariser(&self) -> Option<&Summariser>;

    /// The `keep_recent` in force when the session's configuration gives `axis`.
    fn keep_recent(&self, axis: Option<usize>) -> usize;

    /// Its harness's own trigger, for a preset (`None`: the session's threshold).
    fn when(&self) -> Option<When> {
        None
    }

    /// Whether the compactor ever compacts; a session under one that does not (`raw`) never
    /// triggers, so it shows what the run costs without compaction.
    fn compacts(&self) -> bool {
        true
    }

    /// Whether a session under it ignores the window (the agent as it ran, never refused).
    fn unbounded(&self) -> bool {
        false
    }

    /// How its harness sends the call that writes a summary (default: on the whole context).
    fn summary_call(&self) -> SummaryCall {
        SummaryCall::WholeContext
    }

    /// Whether its rule sees the records earlier compactions masked as they were.
    fn reads_unmasked(&self) -> bool {
        false
    }

    /// Whether a context the provider refuses is condensed at once and the call retried.
    fn honours_condensation_request(&self) -> bool {
        false
    }
}

impl Compactor for Strategy {
    fn compact(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        self.apply(view, capacity, keep_recent, stream, out)
    }

    fn summariser(&self) -> Option<&Summariser> {
        Strategy::summariser(self)
    }

    fn keep_recent(&self, axis: Option<usize>) -> usize {
        self.effective_keep_recent(axis)
    }

    fn compacts(&self) -> bool {
        Strategy::compacts(self)
    }

    fn unbounded(&self) -> bool {
        Strategy::unbounded(self)
    }

    fn when(&self) -> Option<When> {
        Strategy::when(self)
    }

    fn summary_call(&self) -> SummaryCall {
        Strategy::summary_call(self)
    }

    fn reads_unmasked(&self) -> bool {
        Strategy::reads_unmasked(self)
    }

    fn honours_condensation_request(&self) -> bool {
        Strategy::honours_condensation_request(self)
    }
}

/// The measures of one session, by what they tell: what the run did, its bill, the required
/// records and facts it kept, the needed facts at their return, the compactions' ledgers and
/// the stale decisions it held.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SessionMetrics {
    pub run: SessionRun,
    pub bill: TokenBill,
    pub retention: RecordRetention,
    pub facts: FactRetention,
    /// The needed facts at their first return: met, recovered by a re-read or lost, and what
    /// the re-reads cost ([`need`]).
    pub needs: need::NeedMetrics,
    /// The compactions' ledgers summed ([`ledger`]).
    pub ledger: LedgerTotals,
    /// Supersessions ([`crate::stale`]) the context is stale on at the end (`None` for a run
    /// that did not complete), and over agent calls the (call, supersession) pairs whose input
    /// was stale: how often the agent was handed the old decision without the new.
    pub stale: Stale,
}

/// What a session's run did: its calls, its compactions, how it ended and the size of its
/// context.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SessionRun {
    pub records: u32,
    /// Agent model calls.
    pub calls: u32,
    /// Compactions run, failed ones included.
    pub compactions: u32,
    /// Compactions whose strategy was infeasible (the context was left as it was).
    pub failed_compactions: u32,
    /// Agent calls plus the compactions that called a model (summaries).
    pub model_calls: u32,
    /// Compactions that wrote a summary, each one model call.
    pub summary_calls: u32,
    pub storms: u32,
    /// Whether `max_consecutive` stopped compaction.
    pub guard_tripped: bool,
    /// Whether the session ran out of context: an agent call whose input + output exceeded the
    /// window, refused as a provider's context-length error refuses it, ended the run there.
    pub exit_context: bool,
    /// Whether the session reached its last call (it did not run out of context). The calls
    /// it never made needed what had appeared before them and got nothing: retention at need
    /// counts them as lost.
    pub completed: bool,
    /// That call (1-based); measures cover the calls before it.
    pub exit_call: Option<u32>,
    /// The largest agent-call input.
    pub peak_input: u64,
    /// The context's cost at the end.
    pub final_context: u64,
    /// The usage counter at the end.
    pub final_usage: u64,
}

/// What a session was billed: the tokens of every model call, by how the cache billed them,
/// and their cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TokenBill {
    /// Input units of every model call (`cache_read + cache_write + uncached_input`); under
    /// `cache = "recorded"` the provider's tokens the transcript records.
    pub input_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_write_tokens: u64,
    /// Input billed at the plain input price (neither read from nor written to cache).
    pub uncached_input_tokens: u64,
    pub output_tokens: u64,
    /// Billed cost under the configured [`Prices`].
    pub cost: f64,
}

/// The required records a session kept: at the end, in any form, by region, and when later
/// calls needed them (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RecordRetention {
    /// Records written to notes.
    pub noted: u32,
    /// Required records of the history. A session that ran out of context never saw some of
    /// them: it lost them (an ended run is a failure, not a saving).
    pub required_total: u32,
    /// Required records present verbatim at the end (their own entry or the notes); `None`
    /// for a run that did not complete, as for every end-of-run measure.
    pub required_verbatim: Option<u32>,
    /// Required records present in any form at the end: 1 each verbatim or kept by the
    /// simulated summariser, the carried share of each a text summary holds.
    pub required_any: Option<f64>,
    pub retention_end: Option<f64>,
    pub retention_any_end: Option<f64>,
    /// Present-in-any-form over (required record, later agent call) pairs; see the module
    /// documentation.
    pub retention_at_need: Option<f64>,
    /// Required records present in any form at the end, by region of the history (oldest,
    /// middle, newest third by record index, as in [`CompactionEvent::regions`]), over each
    /// region's required records; `None` for a region without one or a run that did not
    /// complete.
    pub regions: [Option<f64>; 3],
}

/// The facts ([`crate::history::facts`]) of the required records a session kept, and of the needed
/// ones (a later model-written record uses them again).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FactRetention {
    /// Facts of the required records.
    pub facts_total: u32,
    /// Of those, the facts the context's text holds at the end (any record holding the token
    /// counts).
    pub facts_kept: Option<u32>,
    pub fact_retention_end: Option<f64>,
    /// Retention at need by facts: over (fact of a required record, later agent call) pairs,
    /// the share whose token was in that call's input.
    pub fact_retention_at_need: Option<f64>,
    /// Needed facts of the required records (a later model-written record uses them again),
    /// and of those the ones the context holds at the end through their owner (the record
    /// that introduced the fact, verbatim, or a summary holding it).
    pub needed_facts_total: u32,
    pub needed_facts_kept: Option<u32>,
    pub needed_fact_retention_end: Option<f64>,
    /// The uses of those facts: agent calls whose output holds one beyond the gap.
    pub needed_uses: u64,
    /// Over those uses, the share whose call's input held the fact (uses after a run ended
    /// count as unmet).
    pub needed_fact_retention_at_need: Option<f64>,
}

/// A session's stale counts (see [`SessionMetrics::stale`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stale {
    pub end: Option<u32>,
    pub calls: u64,
}

/// One agent call of a replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallRow {
    /// 1-based agent call number.
    pub call: u32,
    pub input: u64,
    pub output: u64,
    /// The usage counter after the call.
    pub cumulative: u64,
    /// Whether a compaction ran just before this call.
    pub compaction_before: bool,
    pub cache_read: u64,
    pub cache_write: u64,
    /// Input billed at the plain input price.
    pub uncached: u64,
    /// Required records present in any form in this call's input, of those appeared so far.
    pub required_present: f64,
    pub required_appeared: u32,
}

impl CallRow {
    /// The call's input + output.
    pub fn usage(&self) -> u64 {
        self.input + self.output
    }
}

/// One compaction of a replay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CompactionRow {
    /// The agent call it ran before (1-based).
    pub before_call: u32,
    /// The compaction call's input (the context being compacted) and output (summaries).
    pub input: u64,
    pub output: u64,
    /// The capacity the strategy was given.
    pub capacity: u64,
    /// The context's cost after the compaction (notes included).
    pub context_after: u64,
    /// Whether it called a model (it wrote a summary); masking and clearing do not.
    pub model_call: bool,
    pub cache_read: u64,
    pub failed: bool,
    pub fruitless: bool,
    pub storm: bool,
    /// Required records present in any form after the compaction.
    pub required_present: f64,
}

/// A record the agent fetched again before an agent call ([`need`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RefetchRow {
    /// The agent call that needed it (1-based).
    pub call: u32,
    /// That call's first output record (0-based in the history).
    pub at: usize,
    /// The record fetched again (0-based in the history).
    pub record: usize,
}

/// What happened call by call, for people reading one session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    pub calls: Vec<CallRow>,
    pub compactions: Vec<CompactionRow>,
    pub refetches: Vec<RefetchRow>,
}

/// The stream of the draws of compaction `index` (0-based) of the session drawn from `stream`:
/// what a summary summarised again keeps of each record `r` is
/// `Summariser::keeps(flag, kind, compaction_stream(stream, index), r)`.
pub fn compaction_stream(stream: u64, index: u32) -> u64 {
    crate::rng::key(&[stream, u64::from(index)])
}

/// Replays `history` with `flags` (what strategies and the notes see) as one session.
///
/// `stream` keys every random draw of the session (summaries, notes): give each session its
/// own, e.g. `rng::key(&[seed, history, replicate])`. The configuration must have passed
/// [`SessionConfig::validate`]. Allocation-free once `scratch` has grown.
pub fn simulate(
    history: &CostedHistory,
    flags: &[bool],
    strategy: &Strategy,
    cfg: &SessionConfig,
    stream: u64,
    scratch: &mut SessionScratch,
) -> SessionMetrics {
    replay::run(history, flags, strategy, cfg, stream, scratch, None, None)
}

/// [`simulate_with`] with any [`Compactor`], logging every compaction into `log` (appended,
/// in order).
pub fn simulate_logged<C: Compactor + ?Sized>(
    history: &CostedHistory,
    flags: &[bool],
    strategy: &C,
    cfg: &SessionConfig,
    stream: u64,
    scratch: &mut SessionScratch,
    log: &mut Vec<CompactionEvent>,
) -> SessionMetrics {
    replay::run(
        history,
        flags,
        strategy,
        cfg,
        stream,
        scratch,
        None,
        Some(log),
    )
}

/// [`simulate_logged`] billed under each configuration of `cfgs`, which differ only in the
/// cache, model and prices they bill: the session is replayed once (nothing it does reads the
/// cache) and `emit` gets its measures under each configuration, in order. `log` gets its
/// compactions once per configuration, in that order too (the same compactions, each time
/// with what they cost there). Allocation-free once `scratch` has grown.
#[allow(clippy::too_many_arguments)] // simulate_logged's, with the caches and where they go
pub fn simulate_billed<C: Compactor + ?Sized>(
    history: &CostedHistory,
    flags: &[bool],
    strategy: &C,
    cfgs: &[SessionConfig],
    stream: u64,
    scratch: &mut SessionScratch,
    log: &mut Vec<CompactionEvent>,
    emit: impl FnMut(SessionMetrics),
) {
    let log = Some(log);
    replay::run_billed(
        history, flags, strategy, cfgs, stream, scratch, None, log, emit,
    );
}

/// [`simulate`] with any [`Compactor`], optionally recording every call and compaction.
pub fn simulate_with<C: Compactor + ?Sized>(
    history: &CostedHistory,
    flags: &[bool],
    compactor: &C,
    cfg: &SessionConfig,
    stream: u64,
    scratch: &mut SessionScratch,
    trace: Option<&mut Trace>,
) -> SessionMetrics {
    replay::run(history, flags, compactor, cfg, stream, scratch, trace, None)
}
