//! `cost_ratio_vs_length`: what each strategy costs against the agent as it ran
//! (`raw(window=none)`), by run length. Every session of a strategy other than the baseline is
//! paired with the baseline's session on the same history (and replicate, noise level, window,
//! ratio, note rate); the completed ones are grouped by the baseline's calls into the bands of
//! [`complexity_trap::BANDS`], and each band gets the ratio of the strategy's mean cost (and mean
//! input per call) to the baseline's, with a 95 % interval by run. One panel per strategy, a
//! line at ratio 1: below it the strategy saves.
//!
//! Beside them, in every panel, the Complexity Trap's live runs (masking over raw, cost and
//! prompt per call, banded by each run's own length and paired), computed from its data where
//! [`complexity_trap::locate`] finds it, and otherwise left out with a note in the caption.
//!
//! Drawn only for a session sweep that has `raw(window=none)`; read from `sessions.parquet`
//! through the table's declaration.

use super::complexity_trap::{self, Trap, BANDS};
use crate::error::InputError;
use crate::figures::figure::{nice_axis, Figure, LegendEntry, Line, LineStyle, Panel, Point};
use crate::figures::palette;
use crate::tables::manifest::Manifest as SessionManifest;
use crate::tables::read::Checked;
use std::collections::HashMap;
use std::path::Path;

/// The chart's file name (without extension).
pub const STEM: &str = "cost_ratio_vs_length";

/// The strategy every ratio is taken against: the agent as it ran, no window.
pub const BASELINE: &str = "raw(window=none)";

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
    /// The cache that billed it (empty in tables written before the column).
    pub cache: String,
    pub calls: u64,
    pub input_tokens: u64,
    pub cost: f64,
    pub completed: bool,
}

impl SessionCost {
    /// The session's coordinates but its strategy: where its baseline session sits.
    fn key(&self) -> (String, u64, String, u64, u64, u64, String) {
        (
            self.history.clone(),
            self.replicate,
            self.noise.clone(),
            self.window,
            self.ratio.to_bits(),
            self.note_rate.to_bits(),
            self.cache.clone(),
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
    let cache = t.text("cache");
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
            cache: cache[i].clone(),
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
    /// The cache both sessions were billed under.
    pub cache: String,
    pub history: String,
    /// The baseline session's calls: the run's length.
    pub length: u64,
    pub per_call_input: Option<f64>,
    pub cost: Option<f64>,
    /// Whether the session reached its last call.
    pub completed: bool,
    /// The session's and the baseline's cost, for ratios of means over several runs.
    pub costs: (f64, f64),
    /// The session's and the baseline's input per call, where both made a call.
    pub inputs_per_call: Option<(f64, f64)>,
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
                cache: s.cache.clone(),
                history: s.history.clone(),
                length: b.calls,
                per_call_input: over(s.per_call(), b.per_call()),
                cost: over(Some(s.cost), Some(b.cost)),
                completed: s.completed,
                costs: (s.cost, b.cost),
                inputs_per_call: s.per_call().zip(b.per_call()),
            })
        })
        .collect()
}

/// A mean over several runs against the baseline's mean over the same runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioOfMeans {
    pub value: f64,
    /// 95 % interval by run; `None` from a single run.
    pub interval: Option<(f64, f64)>,
}

/// `Σx / Σy` over pairs `(x, y)` of one run each, with the delta method's 95 % interval: the
/// residuals `x − R·y` give the standard error `√(Σ(x − R·y)² / (n − 1) / n) / ȳ`, times
/// Student's t with `n − 1` degrees of freedom. `None` without pairs or when `Σy` is 0.
pub fn ratio_of_means(pairs: &[(f64, f64)]) -> Option<RatioOfMeans> {
    let n = pairs.len();
    let (sx, sy) = pairs
        .iter()
        .fold((0.0, 0.0), |(a, b), (x, y)| (a + x, b + y));
    if n == 0 || sy <= 0.0 {
        return None;
    }
    let value = sx / sy;
    let interval = (n >= 2).then(|| {
        let residuals: f64 = pairs.iter().map(|(x, y)| (x - value * y).powi(2)).sum();
        let se = (residuals / (n - 1) as f64 / n as f64).sqrt() / (sy / n as f64);
        let half = crate::stats::t975(n as u64 - 1) * se;
        (value - half, value + half)
    });
    Some(RatioOfMeans { value, interval })
}

/// A strategy's completed sessions at one window and cache whose baseline's calls fall in one
/// band.
#[derive(Debug, Clone, PartialEq)]
pub struct BandRatio {
    pub strategy: String,
    pub window: u64,
    pub cache: String,
    pub low: u64,
    pub high: u64,
    pub runs: usize,
    pub cost: RatioOfMeans,
    pub per_call_input: Option<RatioOfMeans>,
}

/// Every strategy's, window's and cache's bands (of [`BANDS`]) that hold a completed session,
/// in the order of `strategies`, `windows`, the caches of the ratios, then the bands.
pub fn band_ratios(ratios: &[Ratio], strategies: &[String], windows: &[u64]) -> Vec<BandRatio> {
    let mut caches: Vec<&str> = Vec::new();
    for r in ratios {
        if !caches.contains(&r.cache.as_str()) {
            caches.push(&r.cache);
        }
    }
    let mut out = Vec::new();
    for strategy in strategies {
        for (&window, &cache) in windows
            .iter()
            .flat_map(|w| caches.iter().map(move |c| (w, c)))
        {
            for &(low, high) in &BANDS {
                let runs: Vec<&Ratio> = ratios
                    .iter()
                    .filter(|r| r.completed && &r.strategy == strategy && r.window == window)
                    .filter(|r| r.cache == cache && (low..high).contains(&r.length))
                    .collect();
                let costs: Vec<(f64, f64)> = runs.iter().map(|r| r.costs).collect();
                let inputs: Vec<(f64, f64)> =
                    runs.iter().filter_map(|r| r.inputs_per_call).collect();
                let Some(cost) = ratio_of_means(&costs) else {
                    continue;
                };
                out.push(BandRatio {
                    strategy: strategy.clone(),
                    window,
                    cache: cache.to_string(),
                    low,
                    high,
                    runs: runs.len(),
                    cost,
                    per_call_input: ratio_of_means(&inputs),
                });
            }
        }
    }
    out
}

/// One series of the chart: its legend label, style and a value per band.
struct BandSeries {
    label: String,
    style: LineStyle,
    values: Vec<Option<RatioOfMeans>>,
}

/// The band's point, moved along x by the series' place among `count` so none hides another.
fn dodged(band: usize, place: usize, count: usize, value: RatioOfMeans) -> Point {
    let (low, high) = BANDS[band];
    let width = (high - low) as f64;
    let offset = 0.08 * (place as f64 - (count as f64 - 1.0) / 2.0);
    Point {
        x: low as f64 + width * (0.5 + offset),
        y: value.value,
        band: value.interval,
        hollow: false,
        sparse: false,
    }
}

/// The paper's four series (cost and prompt per call, each condition banded by its own
/// length and paired), or none without its data.
fn trap_series(trap: &Trap) -> Vec<BandSeries> {
    let Trap::Found { bands, .. } = trap else {
        return Vec::new();
    };
    type Pick = fn(&complexity_trap::Band) -> Option<f64>;
    type Measure = (&'static str, usize, Pick, Option<(u32, u32)>);
    let measures: [Measure; 4] = [
        ("cost ×", 2, |b| b.cost, None),
        ("cost ×, paired", 2, |b| b.paired_cost, Some((3, 3))),
        ("prompt per call ×", 3, |b| b.prompt_per_call, None),
        (
            "prompt per call ×, paired",
            3,
            |b| b.paired_prompt_per_call,
            Some((3, 3)),
        ),
    ];
    measures
        .iter()
        .map(|&(label, colour, pick, dash)| BandSeries {
            label: format!("Complexity Trap, masking: {label}"),
            style: LineStyle {
                colour: palette::colour(colour),
                marker: if colour == 2 {
                    palette::Marker::Square
                } else {
                    palette::Marker::Diamond
                },
                dash,
            },
            values: bands
                .iter()
                .map(|b| {
                    pick(b).map(|value| RatioOfMeans {
                        value,
                        interval: None,
                    })
                })
                .collect(),
        })
        .collect()
}

/// ctxlab's series for one strategy: its cost by band per window and cache (each cache its own
/// dash), then its input per call by band per window (no cache moves it: the first cache's).
fn ctxlab_series(
    bands: &[BandRatio],
    strategy: &str,
    windows: &[u64],
    caches: &[String],
) -> Vec<BandSeries> {
    let mut out = Vec::new();
    let several = caches.len() > 1;
    for (m, label) in ["cost ×", "input per call ×"].iter().enumerate() {
        let caches = if m == 0 { caches } else { &caches[..1] };
        for (c, cache) in caches.iter().enumerate() {
            for (w, &window) in windows.iter().enumerate() {
                let values = BANDS
                    .iter()
                    .map(|&(low, _)| {
                        let b = bands.iter().find(|b| {
                            b.strategy == strategy
                                && b.window == window
                                && &b.cache == cache
                                && b.low == low
                        })?;
                        if m == 0 {
                            Some(b.cost)
                        } else {
                            b.per_call_input
                        }
                    })
                    .collect();
                let under = match several && m == 0 {
                    true => format!(" · cache {cache}"),
                    false => String::new(),
                };
                out.push(BandSeries {
                    label: format!("ctxlab: {label} · window {window}{under}"),
                    style: LineStyle {
                        colour: palette::colour(m),
                        marker: palette::marker(0, w),
                        dash: CACHE_DASHES[c % CACHE_DASHES.len()],
                    },
                    values,
                });
            }
        }
    }
    out
}

/// The dash of each cache's cost series: the first solid.
const CACHE_DASHES: [Option<(u32, u32)>; 4] = [None, Some((2, 3)), Some((8, 4)), Some((1, 2))];

/// `0.76 / 0.41 / 0.28`: one figure per band, `–` where there is none.
fn by_band(values: impl Iterator<Item = Option<f64>>) -> String {
    values
        .map(|v| v.map_or("–".into(), |v| format!("{v:.2}")))
        .collect::<Vec<_>>()
        .join(" / ")
}

/// What the caption says of the paper: its figures and what they are, or why none is drawn.
fn trap_caption(trap: &Trap) -> String {
    let bands_text = BANDS
        .iter()
        .map(|(l, h)| format!("{l}–{h}"))
        .collect::<Vec<_>>()
        .join(" / ");
    match trap {
        Trap::Found { file, bands } => format!(
            "Beside them, the Complexity Trap's live SWE-agent runs with Gemini 2.5 Flash \
             ({}): observation masking over the raw agent, ratios of means by each run's own \
             turn count ({bands_text}), cost × {} and prompt per call × {}; paired (instances \
             whose two runs both fall in the band: {}) cost × {} and prompt per call × {}. \
             Live runs whose length changed with the strategy, not replays: they hold the \
             per-call effect and the change of behaviour together.",
            file.display(),
            by_band(bands.iter().map(|b| b.cost)),
            by_band(bands.iter().map(|b| b.prompt_per_call)),
            bands
                .iter()
                .map(|b| b.paired_instances.to_string())
                .collect::<Vec<_>>()
                .join(" / "),
            by_band(bands.iter().map(|b| b.paired_cost)),
            by_band(bands.iter().map(|b| b.paired_prompt_per_call)),
        ),
        Trap::Absent(looked) => format!(
            "The Complexity Trap's live runs are not drawn: {} (see docs/sessions.md).",
            match looked {
                Some(dir) => format!(
                    "no folder {} and {} unset",
                    dir.display(),
                    complexity_trap::DIR_VAR
                ),
                None => format!("{} is set empty", complexity_trap::DIR_VAR),
            }
        ),
    }
}

/// The dashed line at ratio 1: what the baseline spends.
const PARITY: LineStyle = LineStyle {
    colour: palette::NEUTRAL,
    marker: palette::Marker::Cross,
    dash: Some((6, 6)),
};

/// One strategy's panel: the line at ratio 1 across `span`, then each series by band.
fn panel(title: &str, series: &[BandSeries], span: (f64, f64)) -> Panel {
    let level = |x: f64| {
        Some(Point {
            x,
            y: 1.0,
            band: None,
            hollow: false,
            sparse: false,
        })
    };
    let mut lines = vec![Line {
        style: PARITY,
        points: vec![level(span.0), level(span.1)],
    }];
    lines.extend(series.iter().enumerate().map(|(k, s)| {
        Line {
            style: s.style,
            points: s
                .values
                .iter()
                .enumerate()
                .map(|(b, v)| v.map(|v| dodged(b, k, series.len(), v)))
                .collect(),
        }
    }));
    Panel {
        title: title.to_string(),
        lines,
    }
}

/// The chart, or `None` when the sweep has no `raw(window=none)`. `trap`: the paper's bands,
/// drawn in every panel, or where they were not found.
pub fn figure(sessions: &[SessionCost], manifest: &SessionManifest, trap: &Trap) -> Option<Figure> {
    let grid = &manifest.grid;
    if !grid.strategies.iter().any(|s| s == BASELINE) {
        return None;
    }
    let all = ratios(sessions);
    let strategies: Vec<String> = grid
        .strategies
        .iter()
        .filter(|s| *s != BASELINE)
        .cloned()
        .collect();
    let bands = band_ratios(&all, &strategies, &grid.windows);
    // The caches in the sweep's order (one, named or not, in a sweep without the axis).
    let mut caches: Vec<String> = grid.caches.clone();
    if caches.is_empty() {
        caches = bands.iter().take(1).map(|b| b.cache.clone()).collect();
    }
    if caches.is_empty() {
        caches.push(String::new());
    }
    let per_panel: Vec<Vec<BandSeries>> = strategies
        .iter()
        .map(|s| {
            let mut v = ctxlab_series(&bands, s, &grid.windows, &caches);
            v.extend(trap_series(trap));
            v
        })
        .collect();
    let top = per_panel
        .iter()
        .flatten()
        .flat_map(|s| s.values.iter().flatten())
        .map(|r| r.interval.map_or(r.value, |i| i.1.max(r.value)))
        .fold(1.0, f64::max);
    let x = nice_axis(
        format!(
            "run length: calls of {BASELINE} on the history (ctxlab); each run's own turns (Complexity Trap)"
        ),
        0.0,
        BANDS[BANDS.len() - 1].1 as f64,
        true,
    );
    let y = nice_axis(
        format!("ratio to {BASELINE} (to the raw agent)"),
        0.0,
        top,
        true,
    );
    let panels = strategies
        .iter()
        .zip(&per_panel)
        .map(|(label, series)| panel(label, series, (x.min, x.max)))
        .collect();
    let first = per_panel.first().map(Vec::as_slice).unwrap_or_default();
    let legend = first
        .iter()
        .map(|s| LegendEntry {
            label: s.label.clone(),
            style: s.style,
        })
        .chain(std::iter::once(LegendEntry {
            label: format!("what {BASELINE} spends"),
            style: PARITY,
        }))
        .collect();
    Some(Figure {
        stem: STEM.into(),
        title: format!("Cost and input per call against {BASELINE}, by run length"),
        subtitle: subtitle(&all, &strategies, manifest, trap),
        x,
        y,
        columns: 2,
        panels,
        legend_title: "ratio, by band".into(),
        legend,
        legend_group: grid.windows.len(),
        band_label: "95 % interval by run (ctxlab)".into(),
    })
}

/// The chart's caption: what each point is, what it rests on, what is left out.
fn subtitle(
    all: &[Ratio],
    strategies: &[String],
    manifest: &SessionManifest,
    trap: &Trap,
) -> String {
    let grid = &manifest.grid;
    let (lowest, highest) = (BANDS[0].0, BANDS[BANDS.len() - 1].1);
    // Every cache replays the same sessions: count them once, under the first cache.
    let first = all.first().map(|r| r.cache.as_str());
    let all: Vec<&Ratio> = all
        .iter()
        .filter(|r| Some(r.cache.as_str()) == first)
        .collect();
    let outside = all
        .iter()
        .filter(|r| r.completed && !(lowest..highest).contains(&r.length))
        .count();
    let unfinished = all.iter().filter(|r| !r.completed).count();
    format!(
        "ctxlab (replays of one trajectory per history): per band of run length (the calls of \
         the same history under {BASELINE}, the agent as it ran), the strategy's mean cost and \
         mean input per call (input tokens / calls) over {BASELINE}'s on the same histories, \
         over the sessions that completed, with the 95 % interval by run (delta method); {} \
         of {} sessions of {} strategies left out as unfinished, {} as outside {lowest}–{highest} \
         calls. {} Experiment “{}”: {} histories × {} replicates, seed {}.",
        unfinished,
        all.len(),
        strategies.len(),
        outside,
        trap_caption(trap),
        manifest.name,
        grid.histories,
        grid.replicates,
        manifest.seed
    )
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
            cache: "gemini".into(),
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
    /// Pairs (1, 2) and (3, 4): R = 4 / 6 = 2/3; residuals 1 − 4/3 = −1/3 and 3 − 8/3 = 1/3,
    /// Σ² = 2/9, standard error √(2/9 / 1 / 2) / 3 = 1/9; t(1) = 12.706: 2/3 ± 1.4118.
    #[test]
    fn ratio_of_means_with_its_interval_by_run() {
        let r = ratio_of_means(&[(1.0, 2.0), (3.0, 4.0)]).unwrap();
        assert!((r.value - 2.0 / 3.0).abs() < 1e-12);
        let (lo, hi) = r.interval.unwrap();
        let half = crate::stats::t975(1) / 9.0;
        assert!((half - 1.41178).abs() < 1e-4, "{half}");
        assert!((lo - (2.0 / 3.0 - half)).abs() < 1e-12 && (hi - (2.0 / 3.0 + half)).abs() < 1e-12);
        let one = ratio_of_means(&[(1.0, 4.0)]).unwrap();
        assert_eq!((one.value, one.interval), (0.25, None));
        assert_eq!(ratio_of_means(&[]), None);
        assert_eq!(ratio_of_means(&[(1.0, 0.0)]), None);
    }

    /// Baselines of 30 and 35 calls (band 20–40) cost $0.40 and $0.60; the strategy's sessions
    /// $0.10 and $0.40: 0.50 / 1.00 = 0.5. Input per call 2 000 and 3 000 against 5 000 and
    /// 5 000: 0.5. A baseline of 10 calls is outside every band; an unfinished session is left
    /// out, and the bands without a session give no row.
    #[test]
    fn bands_take_the_ratio_of_means_over_completed_runs() {
        let mut rows = vec![
            session("a", BASELINE, 30, 150_000, 0.40),
            session("a", "mask", 30, 60_000, 0.10),
            session("b", BASELINE, 35, 175_000, 0.60),
            session("b", "mask", 35, 105_000, 0.40),
            session("c", BASELINE, 10, 50_000, 0.10),
            session("c", "mask", 10, 10_000, 0.01),
            session("d", BASELINE, 50, 50_000, 0.10),
            session("d", "mask", 50, 10_000, 0.01),
        ];
        rows[7].completed = false;
        let b = band_ratios(&ratios(&rows), &["mask".to_string()], &[16000]);
        assert_eq!(b.len(), 1);
        assert_eq!((b[0].low, b[0].high, b[0].runs), (20, 40, 2));
        assert!((b[0].cost.value - 0.5).abs() < 1e-12);
        assert!((b[0].per_call_input.unwrap().value - 0.5).abs() < 1e-12);
    }
}
