//! When a replay compacts, and what a compaction costs: the trigger's check, the strategy's run
//! on the view, the summary calls' bill and the trace of each compaction.

use super::Replay;
use crate::context::{Item, Outcome};
use crate::rng;
use crate::session::cache::Billing;
use crate::session::config::TriggerMode;
use crate::session::context::Origin;
use crate::session::{CompactionRow, Compactor};
use crate::strategy::threshold;
use crate::strategy::{SummaryCall, When};
use crate::view::{StandInCosts, Texts, View};

impl<C: Compactor + ?Sized> Replay<'_, C> {
    /// After the provider refused the agent call whose output is records `a..b`: a harness
    /// that honours a condensation request condenses at once and sends the call again
    /// (OpenHands' controller turns the context-window error into a `CondensationRequestAction`
    /// when history truncation is on, its default). Once per call: a condensation that leaves
    /// the context as it was, or still too long, ends the run. `true` when the retried call
    /// went through.
    pub(super) fn condense_and_retry(&mut self, a: usize, b: usize) -> bool {
        if !self.compactor.honours_condensation_request() {
            return false;
        }
        self.s.ctx.from_session.condensation_requested = true;
        self.compact(self.progress.calls + 1);
        self.s.ctx.from_session.condensation_requested = false;
        if !self.book.compacted {
            return false;
        }
        self.progress.exit_call = None;
        self.agent_call(a, b)
    }

    /// The check before agent call `before_call`.
    pub(super) fn check(&mut self, before_call: u32) {
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
    pub(super) fn over_threshold(&self) -> bool {
        if let Some(when) = self.compactor.when() {
            return match when {
                When::EveryCall => true,
                When::Tokens(n) => self.context_cost() >= n,
                When::Share(f) => self.context_cost() >= threshold(self.cfg.window, f),
                When::Below(reserve) => {
                    self.context_cost() >= self.cfg.window.saturating_sub(reserve)
                }
                When::LastCall(f) => self.progress.last_call_usage >= threshold(self.cfg.window, f),
                When::Events(n) => self.events() > n,
            };
        }
        match (&self.cfg.layers, self.cfg.trigger) {
            (Some(l), _) => l.over(self.layers.history(), self.cfg.window),
            (None, TriggerMode::Context) => self.context_cost() >= self.trigger.threshold(),
            (None, TriggerMode::Usage) => self.trigger.over(),
        }
    }

    /// Entries of the context as a harness counts events (the notes read back are not one).
    pub(super) fn events(&self) -> usize {
        self.s
            .entries
            .iter()
            .filter(|e| !matches!(e.origin, Origin::Notes(_)))
            .count()
    }

    /// Compacts just before agent call `before_call`.
    pub(super) fn compact(&mut self, before_call: u32) {
        let index = self.trigger.compactions;
        let stream = crate::session::compaction_stream(self.book.stream, index);
        let input = self.context_cost();
        let (len, view_cost) = self.build_view();
        let capacity = self.capacity(view_cost);
        let outcome = self.run_strategy(stream, len, capacity);
        self.book.compacted = true;
        self.book.compression_failed |= self.s.ctx.call_report.compression_failed;
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
        let summarised = self.bill_summary_input(calls_model, summary_call);
        if let Some((read, written)) = self.s.ctx.call_report.rejected_call {
            // The harness called the model and then threw its summary away: the calls are
            // billed, nothing is replaced.
            if let SummaryCall::Separate {
                prompt,
                calls,
                cached,
            } = summary_call
            {
                self.bill_separate((prompt, calls, cached), read, written);
                self.book.summary_calls += summary_call.calls();
            }
        }
        let (output, fruitless) = if outcome == Outcome::Infeasible {
            // Nothing is replaced and nothing reset: the harness tries again next turn.
            self.book.failed += 1;
            (0, true)
        } else {
            let Some(output) = self.put_in_place(stream) else {
                return;
            };
            (output, self.still_triggered())
        };
        if calls_model {
            self.bill_summary_output(summary_call, summarised, output);
        }
        let storm = self.trigger.record(before_call, fruitless);
        let context_after = self.context_cost();
        let failed = outcome == Outcome::Infeasible;
        self.log_compaction(before_call, (input, context_after, output), failed);
        // What a trace shows: the session's one cache.
        let bill = self.s.bills[0].summary;
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
                required_present: self.retention.present_required,
            });
        }
    }

    /// Bills what the call that writes the summaries reads, when a model writes them: on the
    /// whole context, the context as the next call would send it; with a prompt of the
    /// harness's own, nothing yet, and the records it summarises are returned (measured in the
    /// view before it is replaced) for [`Replay::bill_summary_output`].
    fn bill_summary_input(&mut self, calls_model: bool, summary_call: SummaryCall) -> u64 {
        for b in &mut self.s.bills {
            b.summary = Billing::default();
        }
        if !calls_model {
            return 0;
        }
        match summary_call {
            SummaryCall::WholeContext => {
                self.bill(None, 0);
                for b in &mut self.s.bills {
                    b.summary = b.last;
                }
                0
            }
            SummaryCall::Separate { .. } => {
                self.summarised_cost() + self.s.ctx.call_report.summary_read_extra
            }
        }
    }

    /// Bills the summaries as the output of the call that wrote them, known only once they are
    /// in place (`summarised`: what a separate prompt read).
    fn bill_summary_output(&mut self, summary_call: SummaryCall, summarised: u64, output: u64) {
        match summary_call {
            SummaryCall::WholeContext => {
                for b in &mut self.s.bills {
                    b.total.output += output;
                    b.summary.output = output;
                }
            }
            SummaryCall::Separate {
                prompt,
                calls,
                cached,
            } => {
                self.bill_separate((prompt, calls, cached), summarised, output);
            }
        }
        self.book.summary_calls += summary_call.calls();
    }

    /// What the strategy may leave: the fixed prefix takes its share of the window before any
    /// strategy does, so a preset sees the window less it (its trigger and target are the
    /// harness's, on the whole input) and a generic strategy its target less it.
    fn capacity(&self, view_cost: u64) -> u64 {
        let prefix = self.cfg.prefix_tokens;
        match &self.cfg.layers {
            // A preset aims where its harness aims; only the window bounds it.
            _ if self.compactor.when().is_some() => self.cfg.window.saturating_sub(prefix),
            None => self.cfg.capacity().saturating_sub(prefix),
            // Leave the other layers as they are and bring history down to its target.
            Some(l) => {
                view_cost.saturating_sub(self.layers.history()) + l.history_target(self.cfg.window)
            }
        }
    }

    /// Runs the compactor on the view just built (`len` entries) into the scratch's context.
    fn run_strategy(&mut self, stream: u64, len: usize, capacity: u64) -> Outcome {
        let keep_recent = self.compactor.keep_recent(self.cfg.keep_recent);
        let s = &mut *self.s;
        let view = View {
            costs: &s.view.costs,
            chars: &s.view.chars,
            lines: &s.view.lines,
            kinds: &s.view.kinds,
            tools: &s.view.tools[..len],
            stand_ins: StandInCosts {
                mask_costs: &s.view.mask,
                clear_cost: self.h.stand_ins.clear_cost,
                omitted_costs: &s.view.omitted,
                masked_cost: self.h.stand_ins.masked_cost,
            },
            separator: self.h.separator,
            flags: &s.view.flags,
            model: self.h.model,
            texts: Texts::Entries {
                records: self.h.records(),
                summaries: &s.summaries.texts,
                entries: &s.view.texts,
            },
            task: self.h.task_text(),
            facts: &self.h.scored.facts,
            fixed_prefix: self.cfg.prefix_tokens,
        };
        let strategy_stream = rng::key(&[stream, rng::tag::SUMMARY]);
        s.ctx.from_session.compression_failed_before = self.book.compression_failed;
        s.ctx.from_session.left_by_compaction = self.book.left_by_compaction;
        self.compactor
            .compact(view, capacity, keep_recent, strategy_stream, &mut s.ctx)
    }

    /// Puts the strategy's result in place of the context and resets what a compaction resets;
    /// returns the summaries' cost, or `None` when a preset's rule left the context as it was
    /// (its harness did not compact).
    fn put_in_place(&mut self, stream: u64) -> Option<u64> {
        let output = self.replace(stream);
        if !self.book.unchanged {
            // The context was rewritten: what the agent fetched again is gone with it.
            self.retention.needs.compacted();
            self.s.refetched.fill(false);
        }
        if self.book.unchanged && self.compactor.when().is_some() {
            // A preset whose rule changed nothing this call (a per-call view with nothing
            // to elide, Gemini CLI finding no split point): its harness did not compact.
            self.book.compacted = false;
            return None;
        }
        self.book.left_by_compaction = self.s.ctx.items.len();
        self.trigger.reset_usage();
        self.progress.last_call_usage = self.context_cost();
        Some(output)
    }

    /// Whether the compaction just run left the context at or over its mark.
    fn still_triggered(&self) -> bool {
        let usage_counter = self.compactor.when().is_none()
            && self.cfg.layers.is_none()
            && self.cfg.trigger == TriggerMode::Usage;
        if self.compactor.when() == Some(When::EveryCall) {
            // A view re-applied on every call is not meant to bring anything under a mark.
            false
        } else if usage_counter {
            // The counter after the reset, plus what the next call must send.
            self.trigger.still_over(self.context_cost())
        } else {
            // Still at or over whatever triggered it.
            self.over_threshold()
        }
    }

    /// Bills the summary calls of a harness's own prompt (`prompt`, `calls`, `cached` of
    /// [`SummaryCall::Separate`]) that read `summarised` and write `output` each, under every
    /// cache, and adds them to its compaction's `summary`. Each later call sends the prompt of
    /// the one before and the summary it wrote (Gemini CLI's self-check), and writes the
    /// summary again.
    pub(super) fn bill_separate(
        &mut self,
        (prompt, calls, cached): (u64, u32, bool),
        summarised: u64,
        output: u64,
    ) {
        let first = prompt + summarised;
        for b in &mut self.s.bills {
            for k in 0..u64::from(calls) {
                let input = first + k * output;
                let shared = match k {
                    0 => 0,
                    _ if cached => first + (k - 1) * output,
                    _ => 0,
                };
                let bill = b.cache.separate(input, shared, output);
                b.total.add(bill);
                b.summary.add(bill);
            }
        }
    }

    /// The joined cost, in the view, of the records the strategy's summaries stand for (what
    /// a harness that sends only those records puts in its summary prompt).
    pub(super) fn summarised_cost(&self) -> u64 {
        let s = &*self.s;
        let sep = self.h.separator;
        s.ctx
            .items
            .iter()
            .map(|item| match *item {
                Item::Summary { first, end, .. } if end > first => {
                    s.view.costs[first..end].iter().sum::<u64>() + sep * (end - first - 1) as u64
                }
                _ => 0,
            })
            .sum()
    }
}
