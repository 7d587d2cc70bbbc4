//! Replaying a history as an agent loop (see the module documentation of [`super`] for the
//! rules). One [`Replay`] lives for one session; everything that grows with the history is in
//! [`SessionScratch`], reused from session to session.

use super::cache::Request;
use super::config::SessionConfig;
use super::context::{Entry, Origin, NONE};
use super::trigger::Trigger;
use super::{notes, CallRow, Compactor, SessionMetrics, Trace};
use crate::context::Context;
use crate::history::starts_call;
use crate::history::{CostedHistory, Kind};
use crate::view::TextRef;
use tallies::{CacheBill, CompactionBook, LayerUse, NotesKept, ReplayProgress, RetentionTally};

mod at_need;
mod compact;
mod events;
mod finish;
mod replace;
mod tallies;
mod view;
pub use events::{first_user_turn, region};

const VERBATIM: u8 = 1;
const PARAPHRASED: u8 = 2;

/// The context as the strategy sees it (notes excluded), and which entry each view index is.
#[derive(Debug, Default)]
struct ViewBuffers {
    costs: Vec<u64>,
    /// Text lengths in chars (what `mask(min_chars)` compares); stand-ins count as 0.
    chars: Vec<u64>,
    lines: Vec<u32>,
    kinds: Vec<Kind>,
    tools: Vec<Option<String>>,
    mask: Vec<u64>,
    omitted: Vec<u64>,
    flags: Vec<bool>,
    texts: Vec<TextRef>,
    map: Vec<u32>,
    /// Tool-name buffers not in use by `tools`, so a slot that goes from no tool to a tool
    /// does not allocate.
    spare_tools: Vec<String>,
}

/// Per summary id: what it became at this compaction, whether it survived, whether it carries
/// a flagged record (its flag in the strategy's view); for summarisers that write text, its
/// text and the facts found in it (sorted, once each). Buffers beyond the session's summaries
/// are spares.
#[derive(Debug, Default)]
struct SummaryBuffers {
    remap: Vec<u32>,
    alive: Vec<bool>,
    flags: Vec<bool>,
    texts: Vec<String>,
    facts: Vec<Vec<u32>>,
}

/// Buffers a session reuses: hand the same scratch to every session a worker runs, and the
/// replay stops allocating once they have grown to the largest history.
#[derive(Debug, Default)]
pub struct SessionScratch {
    entries: Vec<Entry>,
    next: Vec<Entry>,
    /// `cum[i]`: the summed cost of `entries[..=i]` (separators excluded).
    cum: Vec<u64>,
    /// Per record: the summary carrying it, or [`NONE`].
    in_summary: Vec<u32>,
    /// Per record: whether that summary still carries its information.
    kept: Vec<bool>,
    /// Per record: written to notes.
    noted: Vec<bool>,
    /// Per record: [`VERBATIM`] / [`PARAPHRASED`] presence, recounted after a compaction.
    mark: Vec<u8>,
    /// The context as the strategy sees it.
    view: ViewBuffers,
    /// What each summary became at a compaction, and what it holds.
    summaries: SummaryBuffers,
    /// Per fact: held by a summary text in the context (scratch of the fact counts).
    fact_mark: Vec<bool>,
    /// The needed facts one agent call uses (scratch).
    uses: Vec<u32>,
    ctx: Context,
    /// Per record: fetched again since the last compaction ([`super::need`]).
    refetched: Vec<bool>,
    /// The session's bill under each cache it is billed under (the first `caches` are in use).
    bills: Vec<CacheBill>,
}

#[allow(clippy::too_many_arguments)] // the one entry point of a replay, every option of it
pub(super) fn run<C: Compactor + ?Sized>(
    history: &CostedHistory,
    flags: &[bool],
    compactor: &C,
    cfg: &SessionConfig,
    stream: u64,
    scratch: &mut SessionScratch,
    trace: Option<&mut Trace>,
    log: Option<&mut Vec<super::CompactionEvent>>,
) -> SessionMetrics {
    let mut metrics = None;
    let cfgs = std::slice::from_ref(cfg);
    run_billed(
        history,
        flags,
        compactor,
        cfgs,
        stream,
        scratch,
        trace,
        log,
        |m| metrics = Some(m),
    );
    metrics.expect("a replay measures its session once per cache")
}

/// [`run`] billed under each configuration of `cfgs` (which differ in their cache, model and
/// prices only; the first decides everything else): hands `emit` the session's measures under
/// each, in order, and logs its compactions once per configuration, in order (the same events
/// but for what they cost).
#[allow(clippy::too_many_arguments)] // the one entry point of a replay, every option of it
pub(super) fn run_billed<C: Compactor + ?Sized>(
    history: &CostedHistory,
    flags: &[bool],
    compactor: &C,
    cfgs: &[SessionConfig],
    stream: u64,
    scratch: &mut SessionScratch,
    trace: Option<&mut Trace>,
    log: Option<&mut Vec<super::CompactionEvent>>,
    emit: impl FnMut(SessionMetrics),
) {
    let cfg = &cfgs[0];
    assert_eq!(flags.len(), history.len(), "one flag per record");
    debug_assert!(cfg.validate().is_ok(), "validate the configuration first");
    debug_assert!(
        cfgs.iter().all(|c| billed_alike(c, cfg)),
        "the configurations differ beyond their cache, model and prices"
    );
    let n = history.len();
    let s = scratch;
    s.entries.clear();
    s.cum.clear();
    for (v, init) in [
        (&mut s.kept, false),
        (&mut s.noted, false),
        (&mut s.refetched, false),
    ] {
        v.clear();
        v.resize(n, init);
    }
    s.in_summary.clear();
    s.in_summary.resize(n, NONE);
    s.summaries.remap.clear();
    s.summaries.alive.clear();
    s.summaries.flags.clear();
    s.bills.truncate(cfgs.len());
    for (b, c) in s.bills.iter_mut().zip(cfgs) {
        b.reset(c);
    }
    for c in &cfgs[s.bills.len()..] {
        s.bills.push(CacheBill::new(c));
    }
    let mut run = Replay {
        h: history,
        flags,
        compactor,
        cfg,
        s,
        trace,
        log: events::Log::new(log, history),
        trigger: Trigger::new(cfg),
        notes: NotesKept::new(stream),
        retention: RetentionTally::default(),
        book: CompactionBook::new(
            stream,
            compactor.summariser().is_some_and(|x| x.writes_text()),
        ),
        progress: ReplayProgress::default(),
        layers: LayerUse::default(),
    };
    let kinds = &history.kinds;
    let mut r = 0;
    while r < n {
        if starts_call(kinds, r) {
            // The call (and a compaction just before it) is made when its output was written.
            run.progress.now = history.records()[r].time;
            let mut end = r + 1;
            while end < n && kinds[end] == Kind::ToolCall {
                end += 1;
            }
            if run.progress.calls > 0 {
                run.check(run.progress.calls + 1);
            }
            if !run.agent_call(r, end) && !run.condense_and_retry(r, end) {
                // The provider refuses a context over the window: the run ends here, and every
                // later call's needs go unmet.
                run.lost_after_exit(r);
                break;
            }
            r = end;
        } else {
            run.append(r);
            r += 1;
        }
    }
    run.finish(emit);
}

/// Whether `a` and `b` are one configuration but for the cache, model and prices they bill.
fn billed_alike(a: &SessionConfig, b: &SessionConfig) -> bool {
    let a = SessionConfig {
        model: b.model,
        cache: b.cache,
        prices: b.prices,
        ..a.clone()
    };
    a == *b
}

/// One session's replay: its inputs, the scratch it reuses, and its state by job.
struct Replay<'a, C: ?Sized> {
    h: &'a CostedHistory,
    flags: &'a [bool],
    compactor: &'a C,
    cfg: &'a SessionConfig,
    s: &'a mut SessionScratch,
    trace: Option<&'a mut Trace>,
    log: events::Log<'a>,
    trigger: Trigger,
    notes: NotesKept,
    retention: RetentionTally,
    book: CompactionBook,
    progress: ReplayProgress,
    layers: LayerUse,
}

impl<C: Compactor + ?Sized> Replay<'_, C> {
    /// The cost of the first `m` entries, separators included.
    fn prefix_cost(&self, m: usize) -> u64 {
        match m {
            0 => 0,
            m => self.s.cum[m - 1] + self.h.separator * (m as u64 - 1),
        }
    }

    /// What the next call would send: the fixed prefix and the context.
    fn context_cost(&self) -> u64 {
        self.cfg.prefix_tokens + self.prefix_cost(self.s.entries.len())
    }

    fn push(&mut self, e: Entry) {
        let gap = if self.s.entries.is_empty() {
            0
        } else {
            self.h.separator
        };
        self.layers.add(&self.h.kinds, e.origin, e.cost + gap);
        let sum = self.s.cum.last().copied().unwrap_or(0) + e.cost;
        self.s.cum.push(sum);
        self.s.entries.push(e);
    }

    /// Record `r` appears: appended verbatim, perhaps noted.
    fn append(&mut self, r: usize) {
        let cost = self.h.costs[r];
        self.push(Entry {
            origin: Origin::Record(r as u32),
            cost,
        });
        self.progress.appeared = r + 1;
        // Present verbatim until a compaction recounts.
        self.s.mark.resize(r, 0);
        self.s.mark.push(VERBATIM);
        if self.h.truth[r] {
            self.retention.appeared_required += 1;
            self.retention.present_required += 1.0;
        }
        if notes::noted(self.cfg.note_rate, self.flags[r], self.notes.stream, r) {
            self.s.noted[r] = true;
            self.notes.write(cost, self.h.separator);
        }
    }

    /// The agent call whose output is records `a..b`; `false` when its input and output do not
    /// fit the window, so the provider refuses it and the session ends (`exit_context`).
    fn agent_call(&mut self, a: usize, b: usize) -> bool {
        let call = self.progress.calls + 1;
        let input = self.context_cost();
        let output = self.h.costs[a..b].iter().sum::<u64>() + self.h.separator * (b - a - 1) as u64;
        if !self.compactor.unbounded() && input + output > self.cfg.window {
            self.progress.exit_call = Some(call);
            return false;
        }
        if !self.h.scored.facts.is_empty() {
            let fetch = self.needs_of_call(call, a, b);
            let bills = self.s.bills.iter_mut().map(|b| (&b.cache, &mut b.refetch));
            self.retention.needs.call(input, fetch, bills);
        }
        self.bill(Some(b), output);
        self.log_call();
        // What a trace shows: the session's one cache.
        let bill = self.s.bills[0].last;
        self.trigger.add_call(input + output);
        self.progress.last_call_usage = input + output;
        self.progress.peak_input = self.progress.peak_input.max(input);
        self.retention.need_pairs += u64::from(self.retention.appeared_required);
        self.retention.need_hits += self.retention.present_required;
        self.retention.stale_calls += u64::from(self.stale_now());
        if !self.h.scored.facts.is_empty() {
            let (total, kept) = self.facts_present();
            self.retention.need_facts += u64::from(total);
            self.retention.need_facts_kept += u64::from(kept);
            self.needed_uses(a, b);
        }
        self.progress.calls = call;
        let compaction_before = std::mem::take(&mut self.book.compacted);
        if let Some(t) = self.trace.as_deref_mut() {
            t.calls.push(CallRow {
                call,
                input,
                output,
                cumulative: self.trigger.usage,
                compaction_before,
                cache_read: bill.cache_read,
                cache_write: bill.cache_write,
                uncached: bill.uncached,
                required_present: self.retention.present_required,
                required_appeared: self.retention.appeared_required,
            });
        }
        self.layers.new_turn(a);
        for r in a..b {
            self.append(r);
        }
        true
    }

    /// Bills a model call on the current context (`output_end`: an agent call's output records
    /// end there; `None`: a compaction) under every cache, and adds it to the session's bill
    /// there; each cache's bill of it is its `last`.
    fn bill(&mut self, output_end: Option<usize>, output: u64) {
        let s = &mut *self.s;
        let kinds = &self.h.kinds;
        let system = s
            .entries
            .iter()
            .take_while(
                |e| matches!(e.origin, Origin::Record(r) if kinds[r as usize] == Kind::System),
            )
            .count();
        let req = Request {
            cum: &s.cum,
            separator: self.h.separator,
            system,
        };
        for b in &mut s.bills {
            let bill = b.cache.call(
                &req,
                &mut b.points,
                &self.h.recorded,
                output_end,
                output,
                self.progress.now,
            );
            b.total.add(bill);
            b.last = bill;
        }
    }
}
