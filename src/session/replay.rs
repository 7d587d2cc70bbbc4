//! Replaying a history as an agent loop (see the module documentation of [`super`] for the
//! rules). One [`Replay`] lives for one session; everything that grows with the history is in
//! [`SessionScratch`], reused from session to session.

use super::cache::{Billing, Cache, Request};
use super::config::{SessionConfig, TriggerMode};
use super::context::{Entry, Origin, NONE};
use super::layers::Layer;
use super::need::{Fetch, NeedTally};
use super::trigger::Trigger;
use super::{notes, CallRow, CompactionRow, Compactor, RefetchRow, SessionMetrics, Trace};
use crate::context::{Context, Item, Outcome};
use crate::history::recovery::NO_FILE;
use crate::history::starts_call;
use crate::history::{CostedHistory, Kind};
use crate::rng;
use crate::strategy::threshold;
use crate::strategy::{SummaryCall, When};
use crate::summariser::Summariser;
use crate::view::{TextRef, Texts, View};

mod events;
pub use events::{first_user_turn, region};

const VERBATIM: u8 = 1;
const PARAPHRASED: u8 = 2;

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
    /// Per summary id: what it became at this compaction, whether it survived, whether it
    /// carries a flagged record (its flag in the strategy's view).
    remap: Vec<u32>,
    alive: Vec<bool>,
    summary_flag: Vec<bool>,
    /// The context as the strategy sees it (notes excluded), and which entry each view index is.
    view_costs: Vec<u64>,
    /// Text lengths in chars (what `mask(min_chars)` compares); stand-ins count as 0.
    view_chars: Vec<u64>,
    view_lines: Vec<u32>,
    view_kinds: Vec<Kind>,
    view_tools: Vec<Option<String>>,
    view_mask: Vec<u64>,
    view_omitted: Vec<u64>,
    view_flags: Vec<bool>,
    view_texts: Vec<TextRef>,
    view_map: Vec<u32>,
    /// Per summary id, for summarisers that write text: its text and the facts found in it
    /// (sorted, once each). Buffers beyond the session's summaries are spares.
    summary_texts: Vec<String>,
    summary_facts: Vec<Vec<u32>>,
    /// Per fact: held by a summary text in the context (scratch of the fact counts).
    fact_mark: Vec<bool>,
    /// The needed facts one agent call uses (scratch).
    uses: Vec<u32>,
    /// Tool-name buffers not in use by `view_tools`, so a slot that goes from no tool to a
    /// tool does not allocate.
    spare_tools: Vec<String>,
    ctx: Context,
    /// Prefixes (in entries) an Anthropic cache holds at breakpoints, sorted.
    cache_points: Vec<usize>,
    /// Per record: fetched again since the last compaction ([`super::need`]).
    refetched: Vec<bool>,
    /// The ledger of each compaction of the session ([`super::ledger`]), logged or not.
    ledgers: Vec<super::ledger::Open>,
}

/// Keeps the text and facts of the summary just written as summary `id`, reusing buffers.
fn store_text(texts: &mut Vec<String>, all_facts: &mut Vec<Vec<u32>>, ctx: &Context, id: usize) {
    while texts.len() <= id {
        texts.push(String::new());
        all_facts.push(Vec::new());
    }
    texts[id].clear();
    texts[id].push_str(&ctx.summary_text);
    let facts = &mut all_facts[id];
    facts.clear();
    facts.extend_from_slice(&ctx.summary_facts);
    facts.sort_unstable();
    facts.dedup();
}

/// Whether a summary's facts (sorted) hold one of the facts that carry record `r` (its needed
/// facts, or all it introduced when none is needed): a text summary carries a record only
/// through what it says.
fn holds_own_fact(facts: &crate::facts::Facts, summary: &[u32], r: usize) -> bool {
    facts
        .carried_by(r)
        .any(|f| summary.binary_search(&f).is_ok())
}

/// Copies `tool` into `slot`, reusing buffers (the slot's own, or one from `spare`).
fn set_tool(slot: &mut Option<String>, tool: &Option<String>, spare: &mut Vec<String>) {
    match (slot.as_mut(), tool) {
        (Some(buf), Some(name)) => buf.clone_from(name),
        (Some(_), None) => spare.extend(slot.take()),
        (None, Some(name)) => {
            let mut buf = spare.pop().unwrap_or_default();
            buf.clone_from(name);
            *slot = Some(buf);
        }
        (None, None) => {}
    }
}

/// The layer of an entry (the rules are in [`super::layers`]); `turn_start` is the first
/// record of the newest turn.
fn layer_of(kinds: &[Kind], turn_start: usize, origin: Origin) -> Layer {
    match origin {
        Origin::Record(r) | Origin::Placeholder(r) => match kinds[r as usize] {
            Kind::System => Layer::System,
            Kind::Note => Layer::Knowledge,
            _ if r as usize >= turn_start => Layer::Work,
            _ => Layer::History,
        },
        Origin::Notes(_) => Layer::Knowledge,
        Origin::Summary(_) | Origin::SummaryPlaceholder(_) => Layer::History,
    }
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
    assert_eq!(flags.len(), history.len(), "one flag per record");
    debug_assert!(cfg.validate().is_ok(), "validate the configuration first");
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
    s.remap.clear();
    s.alive.clear();
    s.summary_flag.clear();
    s.cache_points.clear();
    s.ledgers.clear();
    let mut run = Replay {
        h: history,
        flags,
        compactor,
        cfg,
        stream,
        notes_stream: notes::stream(stream),
        s,
        trace,
        log: events::Log::new(log, history),
        trigger: Trigger::new(cfg),
        cache: Cache::new(cfg.cache).with_fixed_prefix(cfg.prefix_tokens),
        billing: Billing::default(),
        layer_used: [0; 4],
        turn_start: 0,
        appeared: 0,
        notes_count: 0,
        notes_cost: 0,
        notes_upto: 0,
        summaries: 0,
        calls: 0,
        compacted: false,
        failed: 0,
        summary_calls: 0,
        exit_call: None,
        unchanged: false,
        compression_failed: false,
        last_call_usage: 0,
        peak_input: 0,
        appeared_required: 0,
        present_required: 0.0,
        need_pairs: 0,
        need_hits: 0.0,
        need_facts: 0,
        need_facts_kept: 0,
        need_uses: 0,
        need_uses_met: 0,
        needs: NeedTally::default(),
        stale_calls: 0,
        text_summaries: compactor.summariser().is_some_and(|x| x.writes_text()),
        now: None,
        left_by_compaction: 0,
    };
    let kinds = &history.kinds;
    let mut r = 0;
    while r < n {
        if starts_call(kinds, r) {
            // The call (and a compaction just before it) is made when its output was written.
            run.now = history.records()[r].time;
            let mut end = r + 1;
            while end < n && kinds[end] == Kind::ToolCall {
                end += 1;
            }
            if run.calls > 0 {
                run.check(run.calls + 1);
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
    run.finish()
}

struct Replay<'a, C: ?Sized> {
    h: &'a CostedHistory,
    flags: &'a [bool],
    compactor: &'a C,
    cfg: &'a SessionConfig,
    stream: u64,
    notes_stream: u64,
    s: &'a mut SessionScratch,
    trace: Option<&'a mut Trace>,
    log: events::Log<'a>,
    trigger: Trigger,
    cache: Cache,
    billing: Billing,
    /// Use of each [`Layer`], kept up to date whether or not layers trigger.
    layer_used: [u64; 4],
    /// The first record of the newest turn (the last agent call's output).
    turn_start: usize,
    /// Records appended so far: `0..appeared`.
    appeared: usize,
    notes_count: u32,
    notes_cost: u64,
    /// Records before this index were appended when the notes in the context were read back.
    notes_upto: usize,
    /// Summaries created so far (their ids are `0..summaries`).
    summaries: u32,
    calls: u32,
    /// A compaction ran since the last agent call.
    compacted: bool,
    failed: u32,
    /// Compactions that wrote a summary: the only ones that call a model.
    summary_calls: u32,
    /// The agent call whose context did not fit the window, which ended the session.
    exit_call: Option<u32>,
    /// Whether the last replacement left the context as it was.
    unchanged: bool,
    /// A compression of this session was rejected as a failure its harness remembers.
    compression_failed: bool,
    /// The last agent call's input and output; after a compaction, the context it left (what
    /// Codex recomputes its usage to).
    last_call_usage: u64,
    peak_input: u64,
    appeared_required: u32,
    /// Required records present in the context: 1 each verbatim, the carried share of each a
    /// text summary holds (see [`crate::facts::Facts::carried_share`]).
    present_required: f64,
    need_pairs: u64,
    need_hits: f64,
    /// Facts of the required records that appeared, over later agent calls, and of those the
    /// ones the context's text held (retention at need, by facts).
    need_facts: u64,
    need_facts_kept: u64,
    /// Uses of a needed fact of a required record (an agent call whose output holds it, beyond
    /// the gap), and of those the ones whose call's input held it (needed facts at need).
    need_uses: u64,
    need_uses_met: u64,
    /// Needed facts at their first return, and the re-reads that recover them.
    needs: NeedTally,
    /// (agent call, supersession) pairs whose input was stale ([`crate::stale`]).
    stale_calls: u64,
    /// The compactor's summaries are text whose facts are read from it (not the simulated
    /// summariser's draws).
    text_summaries: bool,
    /// The time of the coming agent call, if the history has one (what the cache's TTL reads).
    now: Option<crate::history::Time>,
    /// The entries the latest compaction that changed the context left before the ones
    /// appended since ([`Context::left_by_compaction`]).
    left_by_compaction: usize,
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

    fn layer_of(&self, origin: Origin) -> Layer {
        layer_of(&self.h.kinds, self.turn_start, origin)
    }

    fn push(&mut self, e: Entry) {
        let gap = if self.s.entries.is_empty() {
            0
        } else {
            self.h.separator
        };
        self.layer_used[self.layer_of(e.origin) as usize] += e.cost + gap;
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
        self.appeared = r + 1;
        // Present verbatim until a compaction recounts.
        self.s.mark.resize(r, 0);
        self.s.mark.push(VERBATIM);
        if self.h.truth[r] {
            self.appeared_required += 1;
            self.present_required += 1.0;
        }
        if notes::noted(self.cfg.note_rate, self.flags[r], self.notes_stream, r) {
            self.s.noted[r] = true;
            self.notes_cost += cost
                + if self.notes_count > 0 {
                    self.h.separator
                } else {
                    0
                };
            self.notes_count += 1;
        }
    }

    /// The agent call whose output is records `a..b`; `false` when its input and output do not
    /// fit the window, so the provider refuses it and the session ends (`exit_context`).
    fn agent_call(&mut self, a: usize, b: usize) -> bool {
        let call = self.calls + 1;
        let input = self.context_cost();
        let output = self.h.costs[a..b].iter().sum::<u64>() + self.h.separator * (b - a - 1) as u64;
        if !self.compactor.unbounded() && input + output > self.cfg.window {
            self.exit_call = Some(call);
            return false;
        }
        if !self.h.facts.is_empty() {
            let fetch = self.needs_of_call(call, a, b);
            self.needs.call(&self.cache, input, fetch);
        }
        let bill = self.bill(Some(b), output);
        self.log_call(&bill);
        self.trigger.add_call(input + output);
        self.last_call_usage = input + output;
        self.peak_input = self.peak_input.max(input);
        self.need_pairs += u64::from(self.appeared_required);
        self.need_hits += self.present_required;
        self.stale_calls += u64::from(self.stale_now());
        if !self.h.facts.is_empty() {
            let (total, kept) = self.facts_present();
            self.need_facts += u64::from(total);
            self.need_facts_kept += u64::from(kept);
            self.needed_uses(a, b);
        }
        self.calls = call;
        let compaction_before = std::mem::take(&mut self.compacted);
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
                required_present: self.present_required,
                required_appeared: self.appeared_required,
            });
        }
        // A new turn: the previous one is history now.
        self.layer_used[Layer::History as usize] += self.layer_used[Layer::Work as usize];
        self.layer_used[Layer::Work as usize] = 0;
        self.turn_start = a;
        for r in a..b {
            self.append(r);
        }
        true
    }

    /// After the provider refused the agent call whose output is records `a..b`: a harness
    /// that honours a condensation request condenses at once and sends the call again
    /// (OpenHands' controller turns the context-window error into a `CondensationRequestAction`
    /// when history truncation is on, its default). Once per call: a condensation that leaves
    /// the context as it was, or still too long, ends the run. `true` when the retried call
    /// went through.
    fn condense_and_retry(&mut self, a: usize, b: usize) -> bool {
        if !self.compactor.honours_condensation_request() {
            return false;
        }
        self.s.ctx.condensation_requested = true;
        self.compact(self.calls + 1);
        self.s.ctx.condensation_requested = false;
        if !self.compacted {
            return false;
        }
        self.exit_call = None;
        self.agent_call(a, b)
    }

    /// The check before agent call `before_call`.
    fn check(&mut self, before_call: u32) {
        if !self.trigger.allowed() || !self.compactor.compacts() {
            return;
        }
        if self.over_threshold() {
            self.compact(before_call);
        }
    }

    /// Whether the context (or the counter) is at or over what triggers a compaction: the
    /// preset's own rule, else the history layer's fill, else `window × ratio` against the
    /// context the next call would send (or the usage counter).
    fn over_threshold(&self) -> bool {
        if let Some(when) = self.compactor.when() {
            return match when {
                When::EveryCall => true,
                When::Tokens(n) => self.context_cost() >= n,
                When::Share(f) => self.context_cost() >= threshold(self.cfg.window, f),
                When::Below(reserve) => {
                    self.context_cost() >= self.cfg.window.saturating_sub(reserve)
                }
                When::LastCall(f) => self.last_call_usage >= threshold(self.cfg.window, f),
                When::Events(n) => self.events() > n,
            };
        }
        match (&self.cfg.layers, self.cfg.trigger) {
            (Some(l), _) => l.over(self.layer_used[Layer::History as usize], self.cfg.window),
            (None, TriggerMode::Context) => self.context_cost() >= self.trigger.threshold(),
            (None, TriggerMode::Usage) => self.trigger.over(),
        }
    }

    /// Entries of the context as a harness counts events (the notes read back are not one).
    fn events(&self) -> usize {
        self.s
            .entries
            .iter()
            .filter(|e| !matches!(e.origin, Origin::Notes(_)))
            .count()
    }

    /// Fills the strategy's view of the context: every entry but the notes (the fresh read-back,
    /// a superset, replaces them). Returns the view's length and cost.
    fn build_view(&mut self) -> (usize, u64) {
        let s = &mut *self.s;
        let h = self.h;
        s.view_costs.clear();
        s.view_chars.clear();
        s.view_lines.clear();
        s.view_kinds.clear();
        s.view_mask.clear();
        s.view_omitted.clear();
        s.view_flags.clear();
        s.view_texts.clear();
        s.view_map.clear();
        let mut len = 0usize;
        // A rule that reads the full history sees what earlier calls masked as it was.
        let unmasked = self.compactor.reads_unmasked();
        for (i, &entry) in s.entries.iter().enumerate() {
            let e = match entry.origin {
                Origin::Placeholder(r) if unmasked => Entry {
                    origin: Origin::Record(r),
                    cost: h.costs[r as usize],
                },
                _ => entry,
            };
            let (kind, tool, mask, flag) = match e.origin {
                Origin::Record(r) => {
                    let r = r as usize;
                    (h.kinds[r], &h.tools[r], h.mask_costs[r], self.flags[r])
                }
                // A stand-in carries nothing, so it is never flagged; masking it again
                // changes nothing.
                Origin::Placeholder(r) => {
                    (h.kinds[r as usize], &h.tools[r as usize], e.cost, false)
                }
                Origin::Summary(id) => (Kind::Summary, &None, e.cost, s.summary_flag[id as usize]),
                Origin::SummaryPlaceholder(_) => (Kind::Summary, &None, e.cost, false),
                Origin::Notes(_) => continue,
            };
            s.view_costs.push(e.cost);
            s.view_chars.push(match e.origin {
                Origin::Record(r) => h.chars[r as usize],
                _ => 0,
            });
            s.view_lines.push(match e.origin {
                Origin::Record(r) => h.lines[r as usize],
                _ => 0,
            });
            s.view_kinds.push(kind);
            s.view_mask.push(mask);
            // A stand-in elided again keeps its cost, as a masked one does.
            s.view_omitted.push(match e.origin {
                Origin::Record(r) => h.omitted_costs[r as usize],
                _ => e.cost,
            });
            s.view_flags.push(flag);
            s.view_texts.push(match e.origin {
                Origin::Record(r) => TextRef::Record(r),
                Origin::Summary(id) if self.text_summaries => TextRef::Summary(id),
                _ => TextRef::Stand,
            });
            s.view_map.push(i as u32);
            if len == s.view_tools.len() {
                s.view_tools.push(None);
            }
            set_tool(&mut s.view_tools[len], tool, &mut s.spare_tools);
            len += 1;
        }
        let cost = s.view_costs.iter().sum::<u64>() + h.separator * (len as u64).saturating_sub(1);
        (len, cost)
    }

    /// Compacts just before agent call `before_call`.
    fn compact(&mut self, before_call: u32) {
        let index = self.trigger.compactions;
        let stream = super::compaction_stream(self.stream, index);
        let input = self.context_cost();
        let (len, view_cost) = self.build_view();
        // The fixed prefix takes its share of the window before any strategy does: a preset
        // sees the window less it (so its trigger and target are the harness's, on the whole
        // input), a generic strategy its target less it.
        let prefix = self.cfg.prefix_tokens;
        let capacity = match &self.cfg.layers {
            // A preset aims where its harness aims; only the window bounds it.
            _ if self.compactor.when().is_some() => self.cfg.window.saturating_sub(prefix),
            None => self.cfg.capacity().saturating_sub(prefix),
            // Leave the other layers as they are and bring history down to its target.
            Some(l) => {
                view_cost.saturating_sub(self.layer_used[Layer::History as usize])
                    + l.history_target(self.cfg.window)
            }
        };
        let keep_recent = self.compactor.keep_recent(self.cfg.keep_recent);
        let outcome = {
            let s = &mut *self.s;
            let view = View {
                costs: &s.view_costs,
                chars: &s.view_chars,
                lines: &s.view_lines,
                kinds: &s.view_kinds,
                tools: &s.view_tools[..len],
                mask_costs: &s.view_mask,
                clear_cost: self.h.clear_cost,
                omitted_costs: &s.view_omitted,
                masked_cost: self.h.masked_cost,
                separator: self.h.separator,
                flags: &s.view_flags,
                model: self.h.model,
                texts: Texts::Entries {
                    records: self.h.records(),
                    summaries: &s.summary_texts,
                    entries: &s.view_texts,
                },
                task: self.h.task_text(),
                facts: &self.h.facts,
                fixed_prefix: prefix,
            };
            let strategy_stream = rng::key(&[stream, rng::tag::SUMMARY]);
            s.ctx.compression_failed_before = self.compression_failed;
            s.ctx.left_by_compaction = self.left_by_compaction;
            self.compactor
                .compact(view, capacity, keep_recent, strategy_stream, &mut s.ctx)
        };
        self.compacted = true;
        self.compression_failed |= self.s.ctx.compression_failed;
        // Only a summary is written by a model: masking and clearing call none, and a failed
        // compaction wrote nothing.
        let calls_model = outcome == Outcome::Feasible
            && self
                .s
                .ctx
                .items
                .iter()
                .any(|i| matches!(i, Item::Summary { .. }));
        // A summary on the whole context is billed against the context it read (its output
        // once the summaries are written); a prompt of the harness's own holds the records
        // the summaries stand for, measured in the view before it is replaced.
        let summary_call = self.compactor.summary_call();
        let mut bill = Billing::default();
        let mut summarised = 0;
        if calls_model {
            match summary_call {
                SummaryCall::WholeContext => bill = self.bill(None, 0),
                SummaryCall::Separate { .. } => {
                    summarised = self.summarised_cost() + self.s.ctx.summary_read_extra;
                }
            }
        }
        if let Some((read, written)) = self.s.ctx.rejected_call {
            // The harness called the model and then threw its summary away: the calls are
            // billed, nothing is replaced.
            if let SummaryCall::Separate {
                prompt,
                calls,
                cached,
            } = summary_call
            {
                let b = self.bill_separate((prompt, calls, cached), read, written);
                bill.add(b);
                self.summary_calls += summary_call.calls();
            }
        }
        let (output, fruitless) = if outcome == Outcome::Infeasible {
            // Nothing is replaced and nothing reset: the harness tries again next turn.
            self.failed += 1;
            (0, true)
        } else {
            let output = self.replace(stream);
            if !self.unchanged {
                // The context was rewritten: what the agent fetched again is gone with it.
                self.needs.compacted();
                self.s.refetched.fill(false);
            }
            if self.unchanged && self.compactor.when().is_some() {
                // A preset whose rule changed nothing this call (a per-call view with nothing
                // to elide, Gemini CLI finding no split point): its harness did not compact.
                self.compacted = false;
                return;
            }
            self.left_by_compaction = self.s.ctx.items.len();
            self.trigger.reset_usage();
            self.last_call_usage = self.context_cost();
            let usage_counter = self.compactor.when().is_none()
                && self.cfg.layers.is_none()
                && self.cfg.trigger == TriggerMode::Usage;
            let fruitless = if self.compactor.when() == Some(When::EveryCall) {
                // A view re-applied on every call is not meant to bring anything under a mark.
                false
            } else if usage_counter {
                // The counter after the reset, plus what the next call must send.
                self.trigger.still_over(self.context_cost())
            } else {
                // Still at or over whatever triggered it.
                self.over_threshold()
            };
            (output, fruitless)
        };
        if calls_model {
            // The summaries are the call's output, known only now.
            match summary_call {
                SummaryCall::WholeContext => {
                    self.billing.output += output;
                    bill.output = output;
                }
                SummaryCall::Separate {
                    prompt,
                    calls,
                    cached,
                } => {
                    let b = self.bill_separate((prompt, calls, cached), summarised, output);
                    bill.add(b);
                }
            }
            self.summary_calls += summary_call.calls();
        }
        let storm = self.trigger.record(before_call, fruitless);
        let context_after = self.context_cost();
        let failed = outcome == Outcome::Infeasible;
        self.log_compaction(before_call, (input, context_after, output), failed, &bill);
        if let Some(t) = self.trace.as_deref_mut() {
            t.compactions.push(CompactionRow {
                before_call,
                input,
                output,
                capacity,
                context_after,
                model_call: calls_model,
                cache_read: bill.cache_read,
                failed: outcome == Outcome::Infeasible,
                fruitless,
                storm,
                required_present: self.present_required,
            });
        }
    }

    /// Bills the summary calls of a harness's own prompt (`prompt`, `calls`, `cached` of
    /// [`SummaryCall::Separate`]) that read `summarised` and write `output` each, and returns
    /// their bill. Each later call sends the prompt of the one before and the summary it wrote
    /// (Gemini CLI's self-check), and writes the summary again.
    fn bill_separate(
        &mut self,
        (prompt, calls, cached): (u64, u32, bool),
        summarised: u64,
        output: u64,
    ) -> Billing {
        let mut bill = Billing::default();
        let first = prompt + summarised;
        for k in 0..u64::from(calls) {
            let input = first + k * output;
            let shared = match k {
                0 => 0,
                _ if cached => first + (k - 1) * output,
                _ => 0,
            };
            let b = self.cache.separate(input, shared, output);
            self.billing.add(b);
            bill.add(b);
        }
        bill
    }

    /// The joined cost, in the view, of the records the strategy's summaries stand for (what
    /// a harness that sends only those records puts in its summary prompt).
    fn summarised_cost(&self) -> u64 {
        let s = &*self.s;
        let sep = self.h.separator;
        s.ctx
            .items
            .iter()
            .map(|item| match *item {
                Item::Summary { first, end, .. } if end > first => {
                    s.view_costs[first..end].iter().sum::<u64>() + sep * (end - first - 1) as u64
                }
                _ => 0,
            })
            .sum()
    }

    /// Replaces the context with the strategy's result (in `ctx`, over the view) followed by
    /// the notes read back; returns the cost of the summaries written (the compaction call's
    /// output).
    fn replace(&mut self, stream: u64) -> u64 {
        let s = &mut *self.s;
        let existing = self.summaries as usize;
        s.remap.clear();
        s.remap.resize(existing, NONE);
        s.alive.clear();
        s.alive.resize(existing, false);
        s.next.clear();

        let mut output = 0u64;
        let mut nth_placeholder = 0usize;
        let unmasked = self.compactor.reads_unmasked();
        for item in &s.ctx.items {
            let entry = match *item {
                Item::Verbatim(j) => {
                    let e = s.entries[s.view_map[j] as usize];
                    if let Origin::Summary(id) = e.origin {
                        s.alive[id as usize] = true;
                    }
                    e
                }
                Item::Placeholder(j) => {
                    let e = s.entries[s.view_map[j] as usize];
                    // What the strategy's stand-in text costs.
                    let cost = s.ctx.placeholder_costs[nth_placeholder];
                    nth_placeholder += 1;
                    let origin = match e.origin {
                        Origin::Record(r) | Origin::Placeholder(r) => Origin::Placeholder(r),
                        Origin::Summary(id) | Origin::SummaryPlaceholder(id) => {
                            Origin::SummaryPlaceholder(id)
                        }
                        Origin::Notes(_) => unreachable!("notes are not in the view"),
                    };
                    Entry { origin, cost }
                }
                Item::Summary { first, end, cost } => {
                    let id = self.summaries;
                    self.summaries += 1;
                    s.remap.push(NONE);
                    s.alive.push(true);
                    if self.text_summaries {
                        store_text(
                            &mut s.summary_texts,
                            &mut s.summary_facts,
                            &s.ctx,
                            id as usize,
                        );
                    }
                    for j in first..end {
                        match s.entries[s.view_map[j] as usize].origin {
                            Origin::Placeholder(r) if unmasked => {
                                // The summariser read the record the stand-in masks.
                                s.in_summary[r as usize] = id;
                                s.kept[r as usize] = s.ctx.summary_kept[j];
                            }
                            Origin::Record(r) => {
                                s.in_summary[r as usize] = id;
                                s.kept[r as usize] = if self.text_summaries {
                                    holds_own_fact(
                                        &self.h.facts,
                                        &s.summary_facts[id as usize],
                                        r as usize,
                                    )
                                } else {
                                    s.ctx.summary_kept[j]
                                };
                            }
                            Origin::Summary(old) => s.remap[old as usize] = id,
                            // Stand-ins carry nothing; notes are not in the view.
                            _ => {}
                        }
                    }
                    output += cost;
                    Entry {
                        origin: Origin::Summary(id),
                        cost,
                    }
                }
            };
            s.next.push(entry);
        }
        if self.notes_count > 0 {
            s.next.push(Entry {
                origin: Origin::Notes(self.notes_count),
                cost: self.notes_cost,
            });
            self.notes_upto = self.appeared;
        }

        // What the prompt cache can still serve: the entries before the first change.
        let common = s
            .entries
            .iter()
            .zip(&s.next)
            .take_while(|(a, b)| a == b)
            .count();
        self.unchanged = common == s.entries.len() && common == s.next.len();
        std::mem::swap(&mut s.entries, &mut s.next);
        s.cum.clear();
        let mut sum = 0;
        for e in &s.entries {
            sum += e.cost;
            s.cum.push(sum);
        }
        self.cache.replaced(common, &mut s.cache_points);

        // Records of a summary that was summarised again go through the summariser once more;
        // records of a summary that was dropped are gone.
        let default = Summariser::default();
        let summariser = self.compactor.summariser().unwrap_or(&default);
        s.summary_flag.clear();
        s.summary_flag.resize(self.summaries as usize, false);
        for r in 0..self.appeared {
            let id = s.in_summary[r];
            if id == NONE {
                continue;
            }
            let id = match s.remap[id as usize] {
                NONE if s.alive[id as usize] => id,
                NONE => {
                    s.in_summary[r] = NONE;
                    s.kept[r] = false;
                    continue;
                }
                new => {
                    s.in_summary[r] = new;
                    s.kept[r] = s.kept[r]
                        && if self.text_summaries {
                            holds_own_fact(&self.h.facts, &s.summary_facts[new as usize], r)
                        } else {
                            summariser.keeps(self.flags[r], self.h.kinds[r], stream, r as u64)
                        };
                    new
                }
            };
            if s.kept[r] && self.flags[r] {
                s.summary_flag[id as usize] = true;
            }
        }
        self.recount();
        output
    }

    /// Recomputes which records are present and each layer's use from the entries.
    fn recount(&mut self) {
        let s = &mut *self.s;
        s.mark.clear();
        s.mark.resize(self.appeared, 0);
        self.layer_used = [0; 4];
        for i in 0..s.entries.len() {
            let e = s.entries[i];
            let gap = if i == 0 { 0 } else { self.h.separator };
            self.layer_used[layer_of(&self.h.kinds, self.turn_start, e.origin) as usize] +=
                e.cost + gap;
            match e.origin {
                Origin::Record(r) => s.mark[r as usize] |= VERBATIM,
                Origin::Notes(_) => {
                    for r in 0..self.notes_upto {
                        if s.noted[r] {
                            s.mark[r] |= VERBATIM;
                        }
                    }
                }
                _ => {}
            }
        }
        for r in 0..self.appeared {
            if s.in_summary[r] != NONE && s.kept[r] {
                s.mark[r] |= PARAPHRASED;
            }
        }
        self.present_required = (0..self.appeared)
            .filter(|&r| self.h.truth[r])
            .map(|r| self.presence(r))
            .sum();
    }

    /// How much of record `r` the context holds: 1 verbatim (its entry or the notes); carried
    /// by a summary, 1 for the simulated summariser (it writes every fact of a record it keeps)
    /// and the share of its needed facts a text summary holds; 0 otherwise.
    fn presence(&self, r: usize) -> f64 {
        let s = &*self.s;
        let mark = s.mark.get(r).copied().unwrap_or(0);
        if mark & VERBATIM != 0 {
            1.0
        } else if mark & PARAPHRASED == 0 {
            0.0
        } else if self.text_summaries {
            let facts = &s.summary_facts[s.in_summary[r] as usize];
            self.h
                .facts
                .carried_share(r, |f| facts.binary_search(&f).is_ok())
        } else {
            1.0
        }
    }

    /// The supersessions the context is stale on now: a record held is one present in any form.
    fn stale_now(&self) -> u32 {
        let pairs = &self.h.source.supersessions;
        if pairs.is_empty() {
            return 0;
        }
        crate::stale::count(pairs, self.appeared, |r| self.presence(r) > 0.0)
    }

    /// Counts the uses of needed facts of required records by the agent call whose output is
    /// records `a..b`, and those the call's input (the context now) holds.
    fn needed_uses(&mut self, a: usize, b: usize) {
        let facts = &self.h.facts;
        let needed = &self.h.needed_facts;
        let mut uses = std::mem::take(&mut self.s.uses);
        uses.clear();
        for r in a..b {
            uses.extend(
                facts
                    .holds(r)
                    .iter()
                    .copied()
                    .filter(|&f| facts.is_use(f, r) && needed.binary_search(&f).is_ok()),
            );
        }
        uses.sort_unstable();
        uses.dedup();
        if !uses.is_empty() {
            self.need_uses += uses.len() as u64;
            self.need_uses_met += u64::from(self.facts_kept_of(&uses));
        }
        self.s.uses = uses;
    }

    /// A run that ran out of context at the agent call starting at record `from`: that call
    /// and every later one would have needed what had appeared before it, and got nothing.
    fn lost_after_exit(&mut self, from: usize) {
        let h = self.h;
        let (kinds, n) = (&h.kinds, h.len());
        let mut required = self.appeared_required;
        let mut r = from;
        while r < n {
            if starts_call(kinds, r) {
                let mut end = r + 1;
                while end < n && kinds[end] == Kind::ToolCall {
                    end += 1;
                }
                self.need_pairs += u64::from(required);
                let introduced = h.facts.introduced_by(r);
                self.need_facts += h.required_facts.partition_point(|&f| f < introduced) as u64;
                for j in r..end {
                    let uses = h
                        .facts
                        .holds(j)
                        .iter()
                        .filter(|&&f| {
                            h.facts.is_use(f, j) && h.needed_facts.binary_search(&f).is_ok()
                        })
                        .count() as u64;
                    self.need_uses += uses;
                    let first_returns = h
                        .facts
                        .holds(j)
                        .iter()
                        .filter(|&&f| self.is_first_return(f, j))
                        .count() as u64;
                    self.needs.lost(first_returns, uses);
                    required += u32::from(h.truth[j]);
                }
                r = end;
            } else {
                required += u32::from(h.truth[r]);
                r += 1;
            }
        }
    }

    /// Bills a model call on the current context (`output_end`: an agent call's output records
    /// end there; `None`: a compaction) and adds it to the session's bill.
    fn bill(&mut self, output_end: Option<usize>, output: u64) -> Billing {
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
        let bill = self.cache.call(
            &req,
            &mut s.cache_points,
            &self.h.recorded,
            output_end,
            output,
            self.now,
        );
        self.billing.add(bill);
        bill
    }

    /// The facts of the required records that appeared, and how many of them the context's
    /// text holds: a record present in any form ([`Self::recount`]'s marks: its entry, the
    /// notes, or a summary that still carries it and so writes its facts) holds every fact it
    /// holds.
    fn facts_present(&mut self) -> (u32, u32) {
        // The required facts of the records that appeared: those introduced before `appeared`.
        let all = &self.h.required_facts;
        let introduced = self.h.facts.introduced_by(self.appeared);
        let appeared = &all[..all.partition_point(|&f| f < introduced)];
        (appeared.len() as u32, self.facts_kept_of(appeared))
    }

    /// How many of `facts` (ascending) the context's text holds now.
    fn facts_kept_of(&mut self, appeared: &[u32]) -> u32 {
        let s = &mut *self.s;
        let facts = &self.h.facts;
        if !self.text_summaries {
            let mark = &s.mark;
            return facts.kept(
                appeared,
                |j| mark.get(j).is_some_and(|&m| m != 0),
                |_| false,
            );
        }
        // A text summary holds the facts found in its text, not those of the records it carries.
        s.fact_mark.clear();
        s.fact_mark.resize(facts.len(), false);
        for e in &s.entries {
            if let Origin::Summary(id) = e.origin {
                for &f in &s.summary_facts[id as usize] {
                    s.fact_mark[f as usize] = true;
                }
            }
        }
        let (mark, fact_mark) = (&s.mark, &s.fact_mark);
        facts.kept(
            appeared,
            |j| mark.get(j).is_some_and(|&m| m & VERBATIM != 0),
            |f| fact_mark[f as usize],
        )
    }

    /// Whether record `r`'s holding fact `f` is the first return of a needed fact of a
    /// required record (a need, [`super::need`]).
    fn is_first_return(&self, f: u32, r: usize) -> bool {
        self.h.facts.first_return(f) == Some(r as u32)
            && self.h.needed_facts.binary_search(&f).is_ok()
    }

    /// The needs of agent call `call`, whose output is records `a..b` (see [`super::need`]):
    /// its first returns, met or not, and its uses whose token the input lacks, recovered (the
    /// records to fetch again, marked fetched) or lost.
    fn needs_of_call(&mut self, call: u32, a: usize, b: usize) -> Fetch {
        let mut fetch = Fetch::default();
        self.mark_summary_facts();
        let facts = &self.h.facts;
        for r in a..b {
            for &f in facts.holds(r) {
                if self.is_first_return(f, r) {
                    fetch.first_returns += 1;
                    // An owner in this very output (a long response) was written by the agent
                    // as it used it.
                    let owner = facts.owner(f);
                    fetch.first_returns_met += u64::from(owner >= a || self.held_by_owner(f));
                }
            }
        }
        self.reread_named_files(call, a, b, &mut fetch);
        // The call's uses, each fact once (as `needed_uses` counts them).
        let facts = &self.h.facts;
        let mut uses = std::mem::take(&mut self.s.uses);
        uses.clear();
        for r in a..b {
            uses.extend(
                facts.holds(r).iter().copied().filter(|&f| {
                    facts.is_use(f, r) && self.h.needed_facts.binary_search(&f).is_ok()
                }),
            );
        }
        uses.sort_unstable();
        uses.dedup();
        let files = &self.h.files;
        for &f in &uses {
            if self.held_anywhere(f) {
                continue;
            }
            let held = facts.held_by(f);
            let before = &held[..held.partition_point(|&j| (j as usize) < a)];
            // A record fetched again since the compaction serves it, if it is as it was.
            if before
                .iter()
                .any(|&j| self.s.refetched[j as usize] && files.recoverable_at(j as usize, a))
            {
                fetch.recovered += 1;
                continue;
            }
            // A listing, a search, a page or a read-only command's output is run again; a file
            // is read again only when the agent names it (above).
            match before.iter().rev().find(|&&j| {
                files.view_of[j as usize] == NO_FILE && files.recoverable_at(j as usize, a)
            }) {
                Some(&j) => {
                    fetch.recovered += 1;
                    self.fetch_again(call, a, j as usize, &mut fetch);
                }
                None => fetch.lost += 1,
            }
        }
        self.s.uses = uses;
        fetch
    }

    /// The files the agent names in the output `a..b` (a call or its text) that it viewed
    /// before, while no view of them is in the context: it reads each again (its latest view),
    /// whether or not it edited the file since. A call that views the file is that read itself.
    fn reread_named_files(&mut self, call: u32, a: usize, b: usize, fetch: &mut Fetch) {
        let h = self.h;
        if h.file_names.is_empty() {
            return;
        }
        for r in a..b {
            if !matches!(h.kinds[r], Kind::Assistant | Kind::ToolCall) {
                continue;
            }
            for &f in h.facts.holds(r) {
                let at = h.file_names.partition_point(|&(x, _)| x < f);
                for &(_, file) in h.file_names[at..].iter().take_while(|&&(x, _)| x == f) {
                    if h.files.call_views[r] == file {
                        continue;
                    }
                    let views = &h.files.files[file as usize].views;
                    let before = &views[..views.partition_point(|&v| (v as usize) < a)];
                    let Some(&latest) = before.last() else {
                        continue;
                    };
                    let s = &*self.s;
                    let present = before.iter().any(|&v| {
                        s.refetched[v as usize]
                            || s.mark.get(v as usize).is_some_and(|&m| m & VERBATIM != 0)
                    });
                    if !present {
                        self.fetch_again(call, a, latest as usize, fetch);
                    }
                }
            }
        }
    }

    /// Fetches record `j` again before the agent call starting at record `a`.
    fn fetch_again(&mut self, call: u32, a: usize, j: usize, fetch: &mut Fetch) {
        self.s.refetched[j] = true;
        fetch.records += self.h.costs[j];
        fetch.call_output +=
            crate::history::import::file_view::producing_call_at(self.h.records(), j)
                .map_or(0, |c| self.h.costs[c]);
        if let Some(t) = self.trace.as_deref_mut() {
            t.refetches.push(RefetchRow {
                call,
                at: a,
                record: j,
            });
        }
    }

    /// Whether the context's text holds fact `f` at all: any record holding the token
    /// (verbatim, in the notes, or carried by a simulated summary) or a text summary naming it.
    fn held_anywhere(&self, f: u32) -> bool {
        let s = &*self.s;
        let verbatim_only = if self.text_summaries { VERBATIM } else { !0 };
        s.fact_mark[f as usize]
            || self.h.facts.held_by(f).iter().any(|&j| {
                s.mark
                    .get(j as usize)
                    .is_some_and(|&m| m & verbatim_only != 0)
            })
    }

    /// Marks in `fact_mark` the facts the text summaries in the context hold (nothing for the
    /// simulated summariser, whose summaries carry records, not text).
    fn mark_summary_facts(&mut self) {
        let s = &mut *self.s;
        s.fact_mark.clear();
        s.fact_mark.resize(self.h.facts.len(), false);
        if !self.text_summaries {
            return;
        }
        for e in &s.entries {
            if let Origin::Summary(id) = e.origin {
                for &f in &s.summary_facts[id as usize] {
                    s.fact_mark[f as usize] = true;
                }
            }
        }
    }

    /// Whether the context holds fact `f` through its owner: the owner verbatim (its entry or
    /// the notes), or a summary that holds the fact (a text summary whose text has it, marked
    /// by [`Self::mark_summary_facts`]; a simulated one carrying a record that holds it, whose
    /// facts it writes). A later record that merely repeats the token does not count.
    fn held_by_owner(&self, f: u32) -> bool {
        let s = &*self.s;
        let facts = &self.h.facts;
        let mark = |j: usize| s.mark.get(j).copied().unwrap_or(0);
        if mark(facts.owner(f)) & VERBATIM != 0 || s.fact_mark[f as usize] {
            return true;
        }
        !self.text_summaries
            && facts
                .held_by(f)
                .iter()
                .any(|&j| mark(j as usize) & PARAPHRASED != 0)
    }

    fn finish(mut self) -> SessionMetrics {
        if self.exit_call.is_none() {
            let rest = self.cache.rest(&self.h.recorded);
            self.billing.add(rest);
        }
        self.recount();
        let ledger = self.close_ledgers();
        // Over every required record and fact of the history (the records that appeared are
        // all of them, for a run that completed).
        let (_, facts_kept) = self.facts_present();
        let facts_total = self.h.required_facts.len() as u32;
        let needed_facts_total = self.h.needed_facts.len() as u32;
        self.mark_summary_facts();
        let needed_facts_kept = self
            .h
            .needed_facts
            .iter()
            .filter(|&&f| self.held_by_owner(f))
            .count() as u32;
        let s = &*self.s;
        let mut verbatim = 0u32;
        let mut any = 0.0;
        for r in 0..self.appeared {
            if self.h.truth[r] {
                verbatim += u32::from(s.mark[r] & VERBATIM != 0);
                any += self.presence(r);
            }
        }
        let required_total = self.h.required_total() as u32;
        let completed = self.exit_call.is_none();
        // End-of-run measures only where the run ended: a run that died has no end.
        let end = |x: Option<f64>| x.filter(|_| completed);
        let share = |part: f64| end((required_total > 0).then(|| part / f64::from(required_total)));
        let of =
            |kept: u32, total: u32| end((total > 0).then(|| f64::from(kept) / f64::from(total)));
        let at_end = |x: u32| completed.then_some(x);
        let regions = match completed {
            true => self.regions(),
            false => [None; 3],
        };
        let stale = super::Stale {
            end: at_end(self.stale_now()),
            calls: self.stale_calls,
        };
        SessionMetrics {
            records: self.h.len() as u32,
            calls: self.calls,
            compactions: self.trigger.compactions,
            failed_compactions: self.failed,
            model_calls: self.calls + self.summary_calls,
            summary_calls: self.summary_calls,
            storms: self.trigger.storms,
            guard_tripped: self.trigger.guard_tripped,
            exit_context: !completed,
            completed,
            exit_call: self.exit_call,
            input_tokens: self.billing.input,
            cache_read_tokens: self.billing.cache_read,
            cache_write_tokens: self.billing.cache_write,
            uncached_input_tokens: self.billing.uncached,
            output_tokens: self.billing.output,
            cost: self.billing.cost(&self.cfg.prices),
            peak_input: self.peak_input,
            final_context: self.context_cost(),
            final_usage: self.trigger.usage,
            noted: s.noted.iter().filter(|&&x| x).count() as u32,
            required_total,
            required_verbatim: at_end(verbatim),
            required_any: completed.then_some(any),
            retention_end: share(f64::from(verbatim)),
            retention_any_end: share(any),
            retention_at_need: (self.need_pairs > 0)
                .then(|| self.need_hits / self.need_pairs as f64),
            facts_total,
            facts_kept: at_end(facts_kept),
            fact_retention_end: of(facts_kept, facts_total),
            fact_retention_at_need: (self.need_facts > 0)
                .then(|| self.need_facts_kept as f64 / self.need_facts as f64),
            needed_facts_total,
            needed_facts_kept: at_end(needed_facts_kept),
            needed_fact_retention_end: of(needed_facts_kept, needed_facts_total),
            needed_uses: self.need_uses,
            needed_fact_retention_at_need: (self.need_uses > 0)
                .then(|| self.need_uses_met as f64 / self.need_uses as f64),
            needs: self.needs.finish(&self.cfg.prices),
            regions,
            ledger,
            stale,
        }
    }
}
