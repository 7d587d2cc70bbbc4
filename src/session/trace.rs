//! Scripted traces: a session driven by per-call usage figures alone, the way a stub client
//! drives a harness in a test. No history, no context: the trigger, the reset, storms and the
//! guard follow exactly the rules of a replay ([`super::trigger`]).

use super::config::SessionConfig;
use super::trigger::Trigger;

/// One agent model call of a scripted trace (the compaction call is not a row).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScriptRow {
    /// 1-based agent call number.
    pub call: u32,
    /// The call's input + output.
    pub usage: u64,
    /// The usage counter after the call.
    pub cumulative: u64,
    /// Whether a compaction ran just before this call.
    pub compaction_before: bool,
    /// Whether that compaction was a storm.
    pub storm: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptOutcome {
    pub trigger: u64,
    pub rows: Vec<ScriptRow>,
    pub compactions: u32,
    pub storms: u32,
    /// Agent calls plus compaction calls.
    pub model_calls: u32,
    pub guard_tripped: bool,
    /// Whether usage after the last call is at or over the trigger (the next call, if any,
    /// would compact first).
    pub due_after_last: bool,
}

/// Runs a scripted trace: `usage[i]` is the input + output of agent call `i + 1`.
///
/// Only `window`, `ratio`, `reset`, `storm_turns` and `max_consecutive` of `cfg` matter: a
/// compaction here has no context to shrink, so it is fruitless exactly when the counter stays
/// at or over the trigger (the forgotten reset).
pub fn run_script(cfg: &SessionConfig, usage: &[u64]) -> ScriptOutcome {
    let mut t = Trigger::new(cfg);
    let mut rows = Vec::with_capacity(usage.len());
    for (i, &u) in usage.iter().enumerate() {
        let call = i as u32 + 1;
        let mut compaction_before = false;
        let mut storm = false;
        if call > 1 && t.over() && t.allowed() {
            t.reset_usage();
            storm = t.record(call, t.still_over(0));
            compaction_before = true;
        }
        t.add_call(u);
        rows.push(ScriptRow {
            call,
            usage: u,
            cumulative: t.usage,
            compaction_before,
            storm,
        });
    }
    ScriptOutcome {
        trigger: t.threshold(),
        compactions: t.compactions,
        storms: t.storms,
        model_calls: usage.len() as u32 + t.compactions,
        guard_tripped: t.guard_tripped,
        due_after_last: !usage.is_empty() && t.over() && t.allowed(),
        rows,
    }
}

/// Parses a usage list such as `400,650,800`; an item may be `input+output`, e.g. `300+100`.
pub fn parse_usage(text: &str) -> Result<Vec<u64>, crate::error::ParseError> {
    let items: Vec<&str> = text.split(',').map(str::trim).collect();
    if items.iter().all(|s| s.is_empty()) {
        return Err("expected per-call usage figures such as 400,650,800".into());
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let mut total = 0u64;
            for part in item.split('+') {
                let v = part.trim().parse::<u64>().map_err(|_| {
                    format!(
                        "item {} ({item:?}) is not a whole number of tokens: expected figures such as 400,650,800 or input+output such as 300+100",
                        i + 1
                    )
                })?;
                total = total
                    .checked_add(v)
                    .ok_or_else(|| format!("item {} ({item:?}) is too large", i + 1))?;
            }
            Ok(total)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_lists_parse_with_sums_and_reject_junk() {
        assert_eq!(parse_usage("400, 650,800").unwrap(), vec![400, 650, 800]);
        assert_eq!(parse_usage("300+100").unwrap(), vec![400]);
        assert!(parse_usage("400,abc")
            .unwrap_err()
            .contains("item 2 (\"abc\")"));
        assert!(parse_usage("400,,5").unwrap_err().contains("item 2"));
        assert!(parse_usage("-5").is_err());
        assert!(parse_usage("1.5").is_err());
        assert!(parse_usage("").unwrap_err().contains("expected"));
    }

    #[test]
    fn the_guard_stops_a_storm() {
        let cfg = SessionConfig {
            reset: false,
            max_consecutive: Some(2),
            ..SessionConfig::default()
        };
        let out = run_script(&cfg, &[400, 650, 800, 280, 210, 150]);
        let before: Vec<bool> = out.rows.iter().map(|r| r.compaction_before).collect();
        assert_eq!(before, [false, false, false, true, true, false]);
        assert!(out.guard_tripped);
        assert_eq!((out.compactions, out.storms), (2, 1));
    }
}
