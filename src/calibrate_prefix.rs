//! What every call sends that a transcript does not hold — a harness's system prompt and tool
//! definitions, and what it attaches on its own — measured from the usage the provider
//! recorded: `ctxlab calibrate --fit-prefix`.
//!
//! Each run is replayed as it ran (`recorded_compaction`: its own summaries at its own
//! compaction points, no window to end it), and its modelled input (every call's context,
//! summary calls included) is set beside the input the provider recorded (every call's, cache
//! reads and writes included). The prefix is the recorded input the replay does not model,
//! spread evenly over the replay's calls, pooled over the runs:
//! `round((Σ recorded − Σ modelled) / Σ calls)`, at least 0. It is fitted on the runs with even
//! positions in the list (the first, third, …) and checked on the others, then fitted on all;
//! per run the modelled input with the prefix is printed beside the recorded one.
//!
//! What it cannot tell: whether the gap is constant (a system prompt) or grows after each
//! compaction (files re-attached), since one number stands for both; the replay's calls are
//! not exactly the recorded ones (a response the replay splits into two calls sends the
//! prefix twice).

use crate::cost::CostModel;
use crate::history::import::Run;
use crate::history::CostedHistory;
use crate::report::text_table::{self, Align};
use crate::session::{simulate, SessionConfig, SessionScratch};
use crate::strategy::Strategy;
use std::fmt::Write;

/// One run as it ran: the input it was billed for and the input the replay models.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefixRun {
    pub name: String,
    /// Model calls of the replay (agent and summary calls).
    pub calls: u64,
    /// Input the provider recorded over the run's calls.
    pub recorded: u64,
    /// Input the replay models without a prefix.
    pub modelled: u64,
}

impl PrefixRun {
    /// The replay's input with `prefix` units on every call.
    pub fn with_prefix(&self, prefix: u64) -> u64 {
        self.modelled + prefix * self.calls
    }
}

/// The run replayed as it ran, under `model`.
pub fn replay(run: &Run, model: CostModel) -> PrefixRun {
    let history = CostedHistory::new(&run.history, model);
    let strategy = Strategy::parse("recorded_compaction").expect("a known strategy");
    let cfg = SessionConfig {
        // The run as it ran: no window ends it.
        window: u64::MAX / 4,
        ..SessionConfig::default()
    };
    let m = simulate(
        &history,
        &history.truth,
        &strategy,
        &cfg,
        0,
        &mut SessionScratch::default(),
    );
    PrefixRun {
        name: run.history.name.clone(),
        calls: u64::from(m.run.model_calls) + u64::from(m.run.summary_calls),
        recorded: run.recorded().iter().map(|c| c.usage.input()).sum(),
        modelled: m.bill.input_tokens,
    }
}

/// The prefix that makes the runs' modelled input add up to the recorded one; `None` when
/// they record no input.
pub fn fit<'a>(runs: impl IntoIterator<Item = &'a PrefixRun>) -> Option<u64> {
    let (mut recorded, mut modelled, mut calls) = (0u64, 0u64, 0u64);
    for r in runs.into_iter().filter(|r| r.recorded > 0) {
        recorded += r.recorded;
        modelled += r.modelled;
        calls += r.calls;
    }
    (calls > 0).then(|| (recorded.saturating_sub(modelled) as f64 / calls as f64).round() as u64)
}

/// Modelled over recorded input of `runs` with `prefix`, pooled.
pub fn pooled_ratio<'a>(runs: impl IntoIterator<Item = &'a PrefixRun>, prefix: u64) -> f64 {
    let (mut recorded, mut modelled) = (0u64, 0u64);
    for r in runs.into_iter().filter(|r| r.recorded > 0) {
        recorded += r.recorded;
        modelled += r.with_prefix(prefix);
    }
    modelled as f64 / recorded as f64
}

/// The fit, its held-out check and every run, as text.
pub fn to_text(runs: &[PrefixRun]) -> Option<String> {
    let prefix = fit(runs)?;
    let even: Vec<&PrefixRun> = runs.iter().step_by(2).collect();
    let odd: Vec<&PrefixRun> = runs.iter().skip(1).step_by(2).collect();
    let mut s = String::new();
    let mut rows = Vec::new();
    for r in runs {
        let ratio = |m: u64| match r.recorded {
            0 => "—".to_string(),
            rec => format!("{:.3}", m as f64 / rec as f64),
        };
        rows.push(vec![
            r.name.clone(),
            r.calls.to_string(),
            r.recorded.to_string(),
            r.modelled.to_string(),
            ratio(r.modelled),
            r.with_prefix(prefix).to_string(),
            ratio(r.with_prefix(prefix)),
        ]);
    }
    let headings = [
        "run",
        "calls",
        "recorded_input",
        "modelled_input",
        "ratio",
        "with_prefix",
        "ratio_with_prefix",
    ];
    let mut aligns = vec![Align::Right; headings.len()];
    aligns[0] = Align::Left;
    s.push_str(&text_table::render(&headings, &rows, &aligns));
    let recorded: usize = runs.iter().filter(|r| r.recorded > 0).count();
    let _ = writeln!(
        s,
        "\n{} runs ({} record their input); modelled over recorded input, pooled: {:.3} without a prefix, {:.3} with it",
        runs.len(),
        recorded,
        pooled_ratio(runs, 0),
        pooled_ratio(runs, prefix)
    );
    if let (Some(on_even), false) = (fit(even.iter().copied()), odd.is_empty()) {
        let _ = writeln!(
            s,
            "held out: fitted on the runs at odd places of the list ({} runs): {on_even}; on the other {} runs modelled over recorded {:.3}",
            even.len(),
            odd.len(),
            pooled_ratio(odd.iter().copied(), on_even)
        );
    }
    let _ = writeln!(
        s,
        "the prefix every call sends that the transcripts do not hold, fitted on all {recorded} runs:\n\n[session]\nprefix_tokens = {prefix}"
    );
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(calls: u64, recorded: u64, modelled: u64) -> PrefixRun {
        PrefixRun {
            name: "r".into(),
            calls,
            recorded,
            modelled,
        }
    }

    #[test]
    fn the_prefix_spreads_the_missing_input_over_the_calls() {
        // (1000 + 3000 − 400 − 1200) / (2 + 6) = 2400 / 8 = 300.
        let runs = [run(2, 1000, 400), run(6, 3000, 1200)];
        assert_eq!(fit(&runs), Some(300));
        // 400 + 600 + 1200 + 1800 = 4000 of 4000.
        assert_eq!(pooled_ratio(&runs, 300), 1.0);
        assert_eq!(pooled_ratio(&runs, 0), 0.4);
    }

    #[test]
    fn runs_without_recorded_input_are_left_out_and_a_surplus_is_no_prefix() {
        assert_eq!(fit(&[run(3, 0, 900)]), None);
        assert_eq!(fit(&[run(3, 100, 900)]), Some(0));
    }
}
