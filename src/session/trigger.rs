//! When to compact and what each compaction amounted to: the usage counter, storms and the
//! guard. Shared by scripted traces and history replays, so both follow one rule.
//!
//! - After each agent call, usage grows by that call's input + output (the compaction call's
//!   own tokens are billed but not counted here: with the reset they would be wiped at once).
//! - The check sits before an agent call (never before the first): compact when usage ≥ the
//!   trigger (or, with budget layers, when the history layer is over its fill).
//! - A compaction is **fruitless** when it does not bring the session back under its trigger:
//!   the usage the next call starts from (the counter after the reset, or without it, plus the
//!   compacted context the next call must send) is still ≥ the trigger, or with layers the
//!   history layer is still over its fill, or the strategy could not compact at all.
//! - A **storm** compaction is a fruitless one fired within `storm_turns` agent calls of the
//!   previous compaction. The first compaction of a session is never a storm.
//! - With `max_consecutive = m`, after m fruitless compactions in a row the session stops
//!   compacting for good (the guard real harnesses added after such loops).

use super::config::SessionConfig;

#[derive(Debug, Clone)]
pub struct Trigger {
    threshold: u64,
    reset: bool,
    storm_turns: u32,
    max_consecutive: Option<u32>,
    /// The usage counter.
    pub usage: u64,
    last_compaction: Option<u32>,
    consecutive_fruitless: u32,
    pub compactions: u32,
    pub storms: u32,
    /// Whether the guard has stopped compaction for the rest of the session.
    pub guard_tripped: bool,
}

impl Trigger {
    pub fn new(cfg: &SessionConfig) -> Self {
        Trigger {
            threshold: cfg.trigger(),
            reset: cfg.reset,
            storm_turns: cfg.storm_turns,
            max_consecutive: cfg.max_consecutive,
            usage: 0,
            last_compaction: None,
            consecutive_fruitless: 0,
            compactions: 0,
            storms: 0,
            guard_tripped: false,
        }
    }

    pub fn threshold(&self) -> u64 {
        self.threshold
    }

    /// Counts an agent call's input + output.
    pub fn add_call(&mut self, tokens: u64) {
        self.usage += tokens;
    }

    /// Whether the counter is at or over the trigger.
    pub fn over(&self) -> bool {
        self.usage >= self.threshold
    }

    /// Whether a compaction may run (the guard has not tripped).
    pub fn allowed(&self) -> bool {
        !self.guard_tripped
    }

    /// The reset after a compaction that replaced the context (a no-op without `reset`).
    pub fn reset_usage(&mut self) {
        if self.reset {
            self.usage = 0;
        }
    }

    /// Whether the counter plus the next call's input leaves the session at or over the
    /// trigger (the counter-mode meaning of fruitless).
    pub fn still_over(&self, next_input: u64) -> bool {
        self.usage + next_input >= self.threshold
    }

    /// Records a compaction run just before agent call `before_call` (1-based); returns whether
    /// it is a storm.
    pub fn record(&mut self, before_call: u32, fruitless: bool) -> bool {
        self.compactions += 1;
        let storm = fruitless
            && self
                .last_compaction
                .is_some_and(|last| before_call - last <= self.storm_turns);
        if storm {
            self.storms += 1;
        }
        self.last_compaction = Some(before_call);
        if fruitless {
            self.consecutive_fruitless += 1;
        } else {
            self.consecutive_fruitless = 0;
        }
        if self
            .max_consecutive
            .is_some_and(|m| self.consecutive_fruitless >= m)
        {
            self.guard_tripped = true;
        }
        storm
    }
}
