//! `cost_ratio_vs_length`: what each strategy costs against the agent as it ran
//! (`raw(window=none)`), session by session, against the run's length. For every session of a
//! strategy other than the baseline, two ratios to the baseline's session on the same history
//! (and replicate, noise level, window, ratio, note rate): its input per call (`input_tokens /
//! calls`) and its cost. One panel per strategy, one point per history and window, a line at
//! ratio 1. The sign of a strategy against raw is read off it: below 1 it saves.
//!
//! Drawn only for a session sweep that has `raw(window=none)`; read from `sessions.parquet`
//! through the table's declaration.

use super::figure::{nice_axis, Figure, LegendEntry, Line, LineStyle, Panel, Point};
use super::palette;
use crate::error::InputError;
use crate::tables::manifest::Manifest as SessionManifest;
use crate::tables::read::Checked;
use std::collections::HashMap;
use std::path::Path;

/// The chart's file name (without extension).
pub const STEM: &str = "cost_ratio_vs_length";

/// The strategy every ratio is taken against: the agent as it ran, no window.
pub const BASELINE: &str = "raw(window=none)";

/// The Complexity Trap's live SWE-agent runs with Gemini 2.5 Flash
/// (`../shared/data/complexity-trap/experiment_instance_costs_sweagent.csv`): observation
/// masking's mean prompt tokens per call over the raw agent's, each condition's runs banded by
/// their own turn count (`[low, high)` turns). A test recomputes them from the file.
pub const COMPLEXITY_TRAP_FLASH: [(u64, u64, f64); 3] =
    [(20, 40, 0.76), (40, 80, 0.41), (80, 160, 0.28)];

/// One session of `sessions.parquet`, as the chart needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionCost {
    pub history: String,
    pub replicate: u64,
    pub noise: String,
    pub strategy: String,
    pub window: u64,
    pub ratio: f64,
    pub note_rate: f64,
    pub calls: u64,
    pub input_tokens: u64,
    pub cost: f64,
    pub completed: bool,
}

impl SessionCost {
    /// The session's coordinates but its strategy: where its baseline session sits.
    fn key(&self) -> (String, u64, String, u64, u64, u64) {
        (
            self.history.clone(),
            self.replicate,
            self.noise.clone(),
            self.window,
            self.ratio.to_bits(),
            self.note_rate.to_bits(),
        )
    }

    fn per_call(&self) -> Option<f64> {
        (self.calls > 0).then(|| self.input_tokens as f64 / self.calls as f64)
    }
}

/// Reads the sessions of `path`, checked against the sessions table's declaration.
pub fn read(path: &Path) -> Result<Vec<SessionCost>, InputError> {
    let t = Checked::read(path, &crate::tables::sessions::table(), false)?;
    let (history, replicate, noise) = (t.text("history"), t.whole("replicate"), t.text("noise"));
    let (strategy, window) = (t.text("strategy"), t.whole("window"));
    let (ratio, note_rate) = (t.real("ratio"), t.real("note_rate"));
    let (calls, input, cost) = (t.whole("calls"), t.whole("input_tokens"), t.real("cost"));
    let completed = {
        let ca = t.frame.column("completed").and_then(|c| c.bool());
        // Checked above: the column is a flag without nulls.
        ca.expect("checked type")
            .iter()
            .map(Option::unwrap_or_default)
            .collect::<Vec<bool>>()
    };
    Ok((0..t.height())
        .map(|i| SessionCost {
            history: history[i].clone(),
            replicate: replicate[i],
            noise: noise[i].clone(),
            strategy: strategy[i].clone(),
            window: window[i],
            ratio: ratio[i],
            note_rate: note_rate[i],
            calls: calls[i],
            input_tokens: input[i],
            cost: cost[i],
            completed: completed[i],
        })
        .collect())
}

/// One session against its baseline session.
#[derive(Debug, Clone, PartialEq)]
pub struct Ratio {
    pub strategy: String,
    pub window: u64,
    pub history: String,
    /// The baseline session's calls: the run's length.
    pub length: u64,
    pub per_call_input: Option<f64>,
    pub cost: Option<f64>,
    /// Whether the session reached its last call (an early end is drawn hollow).
    pub completed: bool,
}

/// Every non-baseline session's ratios to its baseline session, in the table's order; empty
/// when the sweep has no `raw(window=none)`.
pub fn ratios(sessions: &[SessionCost]) -> Vec<Ratio> {
    let baseline: HashMap<_, &SessionCost> = sessions
        .iter()
        .filter(|s| s.strategy == BASELINE)
        .map(|s| (s.key(), s))
        .collect();
    sessions
        .iter()
        .filter(|s| s.strategy != BASELINE)
        .filter_map(|s| {
            let b = baseline.get(&s.key())?;
            let over = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if b > 0.0 => Some(a / b),
                _ => None,
            };
            Some(Ratio {
                strategy: s.strategy.clone(),
                window: s.window,
                history: s.history.clone(),
                length: b.calls,
                per_call_input: over(s.per_call(), b.per_call()),
                cost: over(Some(s.cost), Some(b.cost)),
                completed: s.completed,
            })
        })
        .collect()
}

/// The chart, or `None` when the sweep has no `raw(window=none)`.
pub fn figure(sessions: &[SessionCost], manifest: &SessionManifest) -> Option<Figure> {
    let grid = &manifest.grid;
    if !grid.strategies.iter().any(|s| s == BASELINE) {
        return None;
    }
    let all = ratios(sessions);
    let strategies: Vec<&String> = grid.strategies.iter().filter(|s| *s != BASELINE).collect();
    let longest = all.iter().map(|r| r.length).max().unwrap_or(0) as f64;
    let x = nice_axis(
        format!("run length (calls of {BASELINE})"),
        0.0,
        longest,
        true,
    );
    let top = all
        .iter()
        .flat_map(|r| [r.per_call_input, r.cost])
        .flatten()
        .fold(1.0, f64::max);
    let y = nice_axis(format!("ratio to {BASELINE}"), 0.0, top, true);
    // A series per measure (colour) and window (marker).
    let style = |m: usize, w: usize| LineStyle {
        colour: palette::colour(m),
        marker: palette::marker(0, w),
        dash: None,
    };
    let parity = LineStyle {
        colour: palette::NEUTRAL,
        marker: palette::Marker::Cross,
        dash: Some((6, 6)),
    };
    let level = |x: f64| {
        Some(Point {
            x,
            y: 1.0,
            band: None,
            hollow: false,
            sparse: false,
        })
    };
    type Measure = fn(&Ratio) -> Option<f64>;
    let measures: [(&str, Measure); 2] = [
        ("input per call", |r| r.per_call_input),
        ("cost", |r| r.cost),
    ];
    let series: Vec<(usize, usize)> = (0..measures.len())
        .flat_map(|m| (0..grid.windows.len()).map(move |w| (m, w)))
        .collect();
    let panels = strategies
        .iter()
        .map(|label| {
            let mut lines = vec![Line {
                style: parity,
                points: vec![level(x.min), level(x.max)],
            }];
            lines.extend(series.iter().map(|&(m, w)| {
                Line {
                    style: style(m, w),
                    // One point per session: a gap after each, so no line joins them.
                    points: all
                        .iter()
                        .filter(|r| &r.strategy == *label && r.window == grid.windows[w])
                        .filter_map(|r| {
                            Some(Point {
                                x: r.length as f64,
                                y: measures[m].1(r)?,
                                band: None,
                                hollow: !r.completed,
                                sparse: false,
                            })
                        })
                        .flat_map(|p| [Some(p), None])
                        .collect(),
                }
            }));
            Panel {
                title: (*label).clone(),
                lines,
            }
        })
        .collect();
    let legend = series
        .iter()
        .map(|&(m, w)| LegendEntry {
            label: format!("{} · window {}", measures[m].0, grid.windows[w]),
            style: style(m, w),
        })
        .chain(std::iter::once(LegendEntry {
            label: format!("what {BASELINE} spends"),
            style: parity,
        }))
        .collect();
    let trap = COMPLEXITY_TRAP_FLASH
        .iter()
        .map(|(lo, hi, r)| format!("{r:.2} × for {lo}–{hi} turns"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(Figure {
        stem: STEM.into(),
        title: format!("Input per call and cost against {BASELINE}, by run length"),
        subtitle: format!(
            "One point per history and window: the strategy's session's input tokens per call (input \
             tokens / calls) and its cost, each over those of the same history under \
             {BASELINE} (the agent as it ran), against that session's calls; replays of one \
             trajectory per history. Hollow marks: sessions that ended before their last call. \
             Beside them, the Complexity Trap's live SWE-agent runs with Gemini 2.5 Flash put \
             observation masking's mean prompt per call at {trap} of the raw agent's: live \
             runs whose length changed with the strategy, not replays. Experiment “{}”: {} \
             histories × {} replicates, seed {}.",
            manifest.name, grid.histories, grid.replicates, manifest.seed
        ),
        x,
        y,
        columns: 2,
        panels,
        legend_title: "ratio · window".into(),
        legend,
        legend_group: grid.windows.len(),
        band_label: String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(history: &str, strategy: &str, calls: u64, input: u64, cost: f64) -> SessionCost {
        SessionCost {
            history: history.into(),
            replicate: 0,
            noise: "uniform(fn=0, fp=0)".into(),
            strategy: strategy.into(),
            window: 16000,
            ratio: 0.8,
            note_rate: 0.0,
            calls,
            input_tokens: input,
            cost,
            completed: true,
        }
    }

    /// Baseline: 10 calls, 50 000 input tokens (5 000 a call), $0.40. The other: 10 calls,
    /// 20 000 tokens (2 000 a call, 0.4 ×), $0.10 (0.25 ×); a session without a baseline
    /// (another window) is left out.
    #[test]
    fn ratios_are_taken_against_the_same_history_under_the_baseline() {
        let mut other_window = session("a", "mask", 10, 1, 1.0);
        other_window.window = 32000;
        let rows = vec![
            session("a", "mask", 10, 20_000, 0.10),
            session("a", BASELINE, 10, 50_000, 0.40),
            other_window,
        ];
        let r = ratios(&rows);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].length, 10);
        assert_eq!(r[0].per_call_input, Some(0.4));
        assert_eq!(r[0].cost, Some(0.25));
        assert!(ratios(&rows[..1]).is_empty());
    }
}
