//! `ctxlab session`: scripted traces and history replays as text or CSV.

use super::text_table::{self, Align};
use crate::session::{ScriptOutcome, SessionConfig, SessionMetrics, Trace};
use crate::tables::numbers::percent;
use crate::tables::session_metrics::{self, MetricsKey};
use crate::tables::{session_calls, session_script};
use std::fmt::Write as _;

fn reset_words(cfg: &SessionConfig) -> &'static str {
    if cfg.reset {
        "usage resets after a compaction"
    } else {
        "usage is NOT reset after a compaction"
    }
}

/// The scripted trace as CSV, through its declaration (`tables::session_script`).
pub fn script_csv(out: &ScriptOutcome) -> String {
    session_script::table().csv_text(&(), &out.rows)
}

pub fn script_text(cfg: &SessionConfig, out: &ScriptOutcome) -> String {
    let mut s = format!(
        "window {} × ratio {} → trigger {}; {}\n\n",
        cfg.window,
        cfg.ratio,
        out.trigger,
        reset_words(cfg)
    );
    let width = out
        .rows
        .iter()
        .map(|r| r.cumulative.to_string().len())
        .max()
        .unwrap_or(0)
        .max("cumulative".len());
    let _ = writeln!(s, "call  {:>8}  {:>width$}", "usage", "cumulative");
    let _ = writeln!(s, "----  {:>8}  {:>width$}", "-----", "-".repeat(width));
    let mut previous = 0;
    for r in &out.rows {
        if r.compaction_before {
            let _ = writeln!(
                s,
                "      compaction (usage {previous} ≥ {}){}",
                out.trigger,
                if r.storm { " — storm" } else { "" }
            );
        }
        let _ = writeln!(s, "{:>4}  {:>8}  {:>width$}", r.call, r.usage, r.cumulative);
        previous = r.cumulative;
    }
    let _ = writeln!(
        s,
        "\n{} agent calls + {} compaction{} = {} model calls; {} storm{}",
        out.rows.len(),
        out.compactions,
        plural(out.compactions),
        out.model_calls,
        out.storms,
        plural(out.storms)
    );
    if out.guard_tripped {
        let _ = writeln!(
            s,
            "guard: compaction stopped after {} fruitless compactions in a row",
            cfg.max_consecutive.unwrap_or(0)
        );
    }
    if out.due_after_last {
        let _ = writeln!(
            s,
            "usage {previous} ≥ {} after the last call: the next call would compact first",
            out.trigger
        );
    }
    s
}

fn plural(n: u32) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The replay's calls as CSV, through their declaration (`tables::session_calls`).
pub fn calls_csv(trace: &Trace) -> String {
    session_calls::table().csv_text(&(), &trace.calls)
}

pub fn metrics_csv(
    history: &str,
    strategy: &crate::strategy::Strategy,
    cfg: &SessionConfig,
    m: &SessionMetrics,
) -> String {
    let key = MetricsKey::new(history, strategy, cfg);
    session_metrics::table().csv_text(&key, std::slice::from_ref(m))
}

/// What describes the replay on its first lines.
pub struct ReplayHeader<'a> {
    pub history: &'a str,
    pub records: usize,
    pub cost_model: &'a str,
    pub strategy: &'a str,
}

pub fn replay_text(
    head: &ReplayHeader,
    cfg: &SessionConfig,
    trace: &Trace,
    m: &SessionMetrics,
) -> String {
    let mut s = replay_setup(head, cfg);
    s.push('\n');
    s += &calls_table(trace);
    s += &replay_totals(cfg, m);
    s += &replay_retention(m);
    s += &replay_needs(m);
    s
}

/// The setup a replay ran under — history, window, cache, prices, budget and notes — so the
/// rows below can be read without the command line.
fn replay_setup(head: &ReplayHeader, cfg: &SessionConfig) -> String {
    let mut s = format!(
        "history {:?}: {} records ({}), strategy {}\nwindow {} × ratio {} → trigger {}; {}\n",
        head.history,
        head.records,
        head.cost_model,
        head.strategy,
        cfg.window,
        cfg.ratio,
        cfg.trigger(),
        reset_words(cfg)
    );
    let p = &cfg.prices;
    let _ = writeln!(
        s,
        "cache {} (min {}), priced as {}: input {} / output {} per million, reads {}×, writes {}×",
        cfg.cache.kind.as_str(),
        cfg.cache.min_tokens,
        cfg.model,
        p.input,
        p.output,
        p.cache_read_factor,
        p.cache_write_factor
    );
    match &cfg.layers {
        Some(l) => {
            let _ = writeln!(
                s,
                "budget layers: usable {} (reserved output {}), history budget {:.0}, compact above {} of it, down to {}",
                l.usable(cfg.window),
                l.reserved_output,
                l.history_budget(cfg.window),
                percent(l.trigger_fill),
                percent(l.target_fill)
            );
        }
        None => {
            let _ = writeln!(
                s,
                "a compaction leaves at most {} ({} of the window) before notes",
                cfg.capacity(),
                percent(cfg.target)
            );
        }
    }
    if cfg.note_rate > 0.0 {
        let _ = writeln!(
            s,
            "notes: rate {} (flagged records at twice the rate)",
            cfg.note_rate
        );
    }
    s
}

/// One line per agent call, with each compaction printed above the call it came before: the
/// trace as it happened, in order.
fn calls_table(trace: &Trace) -> String {
    let mut s = String::new();
    let headings = [
        "call",
        "input",
        "output",
        "cumulative",
        "cache read",
        "cache write",
        "uncached",
        "required",
    ];
    let rows: Vec<[String; 8]> = trace
        .calls
        .iter()
        .map(|c| {
            [
                c.call.to_string(),
                c.input.to_string(),
                c.output.to_string(),
                c.cumulative.to_string(),
                c.cache_read.to_string(),
                c.cache_write.to_string(),
                c.uncached.to_string(),
                format!("{}/{}", c.required_present, c.required_appeared),
            ]
        })
        .collect();
    let widths = text_table::widths(&headings, &rows);
    let align = [Align::Right; 9];
    let line = |cols: &[String]| text_table::line(cols, &widths, &align);
    s += &text_table::head(&headings, &widths, &align);
    let mut compactions = trace.compactions.iter().peekable();
    for (row, call) in rows.iter().zip(&trace.calls) {
        while let Some(c) = compactions.next_if(|c| c.before_call == call.call) {
            let what = if c.failed {
                format!(
                    "compaction FAILED: the strategy cannot fit capacity {}; context {} kept",
                    c.capacity, c.input
                )
            } else {
                format!(
                    "compaction: context {} → {} (capacity {}), summary output {}, required present {}",
                    c.input, c.context_after, c.capacity, c.output, c.required_present
                )
            };
            let mut flags = String::new();
            if c.fruitless {
                flags += ", fruitless";
            }
            if c.storm {
                flags += ", STORM";
            }
            let _ = writeln!(s, "      {what}{flags}");
        }
        s += &line(row);
    }
    s
}

/// Shown as a percentage, or "n/a" where the measure has no value for this run.
fn opt(x: Option<f64>) -> String {
    x.map(percent).unwrap_or_else(|| "n/a".into())
}

/// What the run cost: its calls, its billed tokens, its peak, and where it ran out of context.
fn replay_totals(cfg: &SessionConfig, m: &SessionMetrics) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "\n{} agent calls + {} compaction{} ({} failed) = {} model calls; {} storm{}{}",
        m.run.calls,
        m.run.compactions,
        plural(m.run.compactions),
        m.run.failed_compactions,
        m.run.model_calls,
        m.run.storms,
        plural(m.run.storms),
        if m.run.guard_tripped {
            "; the guard stopped compaction"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "billed: input {} (cache read {}, cache write {}, uncached {}), output {}; cost {:.6}",
        m.bill.input_tokens,
        m.bill.cache_read_tokens,
        m.bill.cache_write_tokens,
        m.bill.uncached_input_tokens,
        m.bill.output_tokens,
        m.bill.cost
    );
    let _ = writeln!(
        s,
        "peak input {}, final context {}, records noted {}",
        m.run.peak_input, m.run.final_context, m.retention.noted
    );
    if let Some(call) = m.run.exit_call {
        let _ = writeln!(
            s,
            "ran out of context: call {call}'s input and output exceed the window {}; the session ends there, and what it and every later call needed counts as lost",
            cfg.window
        );
    }
    s
}

/// What the run kept of the required records: verbatim, in any form, and their facts.
fn replay_retention(m: &SessionMetrics) -> String {
    let mut s = String::new();
    match (m.retention.required_verbatim, m.retention.required_any) {
        (Some(verbatim), Some(any)) => {
            let _ = writeln!(
                s,
                "required at the end: {}/{} verbatim ({}), {}/{} in any form ({}); retention at need {}",
                verbatim,
                m.retention.required_total,
                opt(m.retention.retention_end),
                any,
                m.retention.required_total,
                opt(m.retention.retention_any_end),
                opt(m.retention.retention_at_need)
            );
        }
        _ => {
            let _ = writeln!(
                s,
                "required at the end: none (the run did not complete, so it has no end); retention at need {}",
                opt(m.retention.retention_at_need)
            );
        }
    }
    if let (Some(facts), Some(needed)) = (m.facts.facts_kept, m.facts.needed_facts_kept) {
        let _ = writeln!(
            s,
            "facts of the required records at the end: {}/{} ({}); at need {}",
            facts,
            m.facts.facts_total,
            opt(m.facts.fact_retention_end),
            opt(m.facts.fact_retention_at_need)
        );
        let _ = writeln!(
            s,
            "needed facts (a later call uses them again) at the end, through the record that introduced them: {}/{} ({})",
            needed,
            m.facts.needed_facts_total,
            opt(m.facts.needed_fact_retention_end),
        );
    } else {
        let _ = writeln!(
            s,
            "facts of the required records at need {}",
            opt(m.facts.fact_retention_at_need)
        );
    }
    s
}

/// How the facts a later call needed fared when it needed them, and what re-reading them cost.
fn replay_needs(m: &SessionMetrics) -> String {
    let mut s = String::new();
    let n = &m.needs;
    let _ = writeln!(
        s,
        "needed facts at need: {} over all {} uses (any record holding the token; of the uses it missed, {} recovered by re-reading, {} lost); at their first return, through the record that introduced them, {} over {}",
        opt(m.facts.needed_fact_retention_at_need),
        m.facts.needed_uses,
        n.recovered,
        n.lost,
        opt(n.first_return_retention()),
        n.first_returns,
    );
    if n.refetch_calls > 0 {
        let _ = writeln!(
            s,
            "re-reads: {} extra {}, {} tokens, cost {:.6}; cost with re-reads {:.6}",
            n.refetch_calls,
            if n.refetch_calls == 1 {
                "call"
            } else {
                "calls"
            },
            n.refetch_tokens(),
            n.refetch_cost,
            m.bill.cost + n.refetch_cost
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::CallRow;

    /// The per-call CSV's bytes: every column in order, flags as `true`/`false`, the share of
    /// required records present as Rust displays it (`1`, `0.6666666666666666`).
    #[test]
    fn calls_csv_bytes_are_pinned() {
        let call = |call, input, output, cumulative, compaction_before| CallRow {
            call,
            input,
            output,
            cumulative,
            compaction_before,
            cache_read: 0,
            cache_write: input,
            uncached: 0,
            required_present: 1.0,
            required_appeared: 1,
        };
        let second = CallRow {
            cache_read: 5,
            cache_write: 47,
            required_present: 2.0 / 3.0,
            required_appeared: 4,
            ..call(2, 52, 40, 92, true)
        };
        let trace = Trace {
            calls: vec![call(1, 23, 27, 50, false), second],
            compactions: Vec::new(),
            refetches: Vec::new(),
        };
        // usage = input + output: 23 + 27 = 50, 52 + 40 = 92.
        assert_eq!(
            calls_csv(&trace),
            "call,usage,cumulative,compaction_before,input,output,cache_read,cache_write,uncached,required_present,required_appeared\n\
             1,50,50,false,23,27,0,23,0,1,1\n\
             2,92,92,true,52,40,5,47,0,0.6666666666666666,4\n"
        );
        let empty = Trace {
            calls: Vec::new(),
            compactions: Vec::new(),
            refetches: Vec::new(),
        };
        assert_eq!(
            calls_csv(&empty),
            "call,usage,cumulative,compaction_before,input,output,cache_read,cache_write,uncached,required_present,required_appeared\n"
        );
    }

    #[test]
    fn script_csv_bytes_are_pinned() {
        let row = |call, usage, cumulative, compaction_before| crate::session::ScriptRow {
            call,
            usage,
            cumulative,
            compaction_before,
            storm: compaction_before,
        };
        let out = ScriptOutcome {
            trigger: 1400,
            rows: vec![row(1, 400, 400, false), row(2, 1650, 1650, true)],
            compactions: 1,
            storms: 1,
            model_calls: 3,
            guard_tripped: false,
            due_after_last: true,
        };
        assert_eq!(
            script_csv(&out),
            "call,usage,cumulative,compaction_before\n1,400,400,false\n2,1650,1650,true\n"
        );
    }
}
