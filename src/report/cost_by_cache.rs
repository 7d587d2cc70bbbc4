//! `cost_by_cache.md`: what each strategy costs against the agent as it ran
//! (`raw(window=none)`), under every cache of a `caches` axis, and the sign all of them agree
//! on. A per-call rewrite of old history saves input and breaks the cached prefix, so whether
//! it saves money is decided by the cache model as much as by the replay: a sign is stated only
//! where every cache's 95 % interval lies on the same side of 0, and "depends on the cache"
//! elsewhere.
//!
//! Read from `pairs.parquet` through the pairs table's declaration: the `cost` pairs against
//! the baseline, one per (strategy, window, ratio, note rate, noise level) and cache. Written
//! only for a session sweep with the baseline and more than one cache.

use super::cost_ratio_chart::BASELINE;
use super::markdown_table::{HeadRule, MarkdownTable};
use super::publish::FileToWrite;
use super::text_table::Align;
use crate::error::InputError;
use crate::tables::manifest::Manifest;
use crate::tables::read::Checked;
use std::path::Path;

/// The file's name (without extension), beside the charts.
pub const STEM: &str = "cost_by_cache";

/// The paired measure the verdicts rest on.
const MEASURE: &str = "cost";

/// One strategy's cost difference against the baseline under one cache.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheDiff {
    pub mean: Option<f64>,
    pub interval: Option<(f64, f64)>,
    /// Pairs of sessions that both completed (the difference's n), and their histories.
    pub pairs: u64,
    pub histories: u64,
}

/// A strategy at one setting of the other axes, under every cache in the axis' order.
#[derive(Debug, Clone, PartialEq)]
pub struct CostRow {
    pub strategy: String,
    pub window: u64,
    pub ratio: f64,
    pub note_rate: f64,
    pub noise: String,
    pub by_cache: Vec<CacheDiff>,
}

/// What every cache says of a difference's sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CostSign {
    /// Every interval below 0.
    Saves,
    /// Every interval above 0.
    CostsMore,
    /// Intervals on both sides, one across 0, or one missing.
    Depends,
    /// Every difference exactly 0: the strategy never changed a call of these runs.
    Same,
}

impl CostSign {
    pub fn of(diffs: &[CacheDiff]) -> CostSign {
        let all = |side: fn((f64, f64)) -> bool| diffs.iter().all(|d| d.interval.is_some_and(side));
        if !diffs.is_empty() && all(|(lo, hi)| lo == 0.0 && hi == 0.0) {
            CostSign::Same
        } else if !diffs.is_empty() && all(|(_, hi)| hi < 0.0) {
            CostSign::Saves
        } else if !diffs.is_empty() && all(|(lo, _)| lo > 0.0) {
            CostSign::CostsMore
        } else {
            CostSign::Depends
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CostSign::Saves => "saves under every cache",
            CostSign::CostsMore => "costs more under every cache",
            CostSign::Depends => "depends on the cache",
            CostSign::Same => "the same bill (no call changed)",
        }
    }
}

/// The rows of `pairs.parquet` against the baseline, grouped by setting, caches in `caches`'
/// order; empty when the sweep has no baseline.
pub fn read(path: &Path, caches: &[String]) -> Result<Vec<CostRow>, InputError> {
    let t = Checked::read(path, &crate::tables::sessions::pairs_table(), false)?;
    let (strategy, baseline, measure) = (t.text("strategy"), t.text("baseline"), t.text("measure"));
    let (window, ratio, note_rate) = (t.whole("window"), t.real("ratio"), t.real("note_rate"));
    let (noise, cache) = (t.text("noise"), t.text("cache"));
    let (n, histories) = (t.whole("n"), t.whole("n_histories"));
    let (mean, low, high) = (
        t.opt_real("diff_mean"),
        t.opt_real("diff_ci_low"),
        t.opt_real("diff_ci_high"),
    );
    let mut rows: Vec<CostRow> = Vec::new();
    for i in (0..t.height()).filter(|&i| baseline[i] == BASELINE && measure[i] == MEASURE) {
        let Some(c) = caches.iter().position(|x| *x == cache[i]) else {
            continue;
        };
        let same = |r: &CostRow| {
            r.strategy == strategy[i]
                && r.window == window[i]
                && r.ratio == ratio[i]
                && r.note_rate == note_rate[i]
                && r.noise == noise[i]
        };
        let at = match rows.iter().position(same) {
            Some(at) => at,
            None => {
                rows.push(CostRow {
                    strategy: strategy[i].clone(),
                    window: window[i],
                    ratio: ratio[i],
                    note_rate: note_rate[i],
                    noise: noise[i].clone(),
                    by_cache: vec![
                        CacheDiff {
                            mean: None,
                            interval: None,
                            pairs: 0,
                            histories: 0,
                        };
                        caches.len()
                    ],
                });
                rows.len() - 1
            }
        };
        rows[at].by_cache[c] = CacheDiff {
            mean: mean[i],
            interval: low[i].zip(high[i]),
            pairs: n[i],
            histories: histories[i],
        };
    }
    Ok(rows)
}

/// `-0.105 (-0.140..-0.070), 40`: the mean difference in dollars, its interval, its pairs.
fn cell(d: &CacheDiff) -> String {
    match (d.mean, d.interval) {
        (Some(m), Some((lo, hi))) => format!("{m:+.3} ({lo:+.3}..{hi:+.3}), {}", d.pairs),
        (Some(m), None) => format!("{m:+.3}, {}", d.pairs),
        _ => "–".into(),
    }
}

/// A column of an axis the sweep varies, shown only when it does.
struct AxisColumn {
    heading: &'static str,
    align: Align,
    cell: fn(&CostRow) -> String,
}

/// The ratio, note-rate and noise columns, in this order.
const AXIS_COLUMNS: [AxisColumn; 3] = [
    AxisColumn {
        heading: "ratio",
        align: Align::Right,
        cell: |r| r.ratio.to_string(),
    },
    AxisColumn {
        heading: "note rate",
        align: Align::Right,
        cell: |r| r.note_rate.to_string(),
    },
    AxisColumn {
        heading: "noise",
        align: Align::Left,
        cell: |r| r.noise.clone(),
    },
];

/// The Markdown file: a caption that says what it counts, then one row per setting.
pub fn table_file(rows: &[CostRow], caches: &[String], manifest: &Manifest) -> FileToWrite {
    let g = &manifest.grid;
    let (ratios, notes, levels) = (
        g.ratios.len() > 1,
        g.note_rates.len() > 1,
        g.noise_labels().len() > 1,
    );
    let mut s = format!(
        "# Cost against {BASELINE} under each cache: experiment “{}”\n\n\
         The mean difference in dollars per session (strategy − {BASELINE}, the agent as it \
         ran, on the same history and replicate) with its 95 % interval by history, then the \
         pairs it rests on: sessions where both reached their last call (a run that died has \
         no bill to compare). One column per cache of `session.caches`; every session was \
         replayed once and billed under each cache, so only the bill differs between columns. \
         The verdict states a sign only where every cache's interval lies on the same side of \
         0. It cannot tell which cache is true of a provider: a cache fitted to recorded \
         bills holds for runs like those it was fitted on, and no cache here was fitted on the \
         strategies' own bills.\n\n",
        manifest.name,
    );
    let axes: Vec<&AxisColumn> = [ratios, notes, levels]
        .into_iter()
        .zip(&AXIS_COLUMNS)
        .filter_map(|(varies, column)| varies.then_some(column))
        .collect();
    let mut headings = vec!["strategy".to_string(), "window".into()];
    let mut align = vec![Align::Left, Align::Right];
    for a in &axes {
        headings.push(a.heading.into());
        align.push(a.align);
    }
    for c in caches {
        headings.push(format!("{c}: $ (95 %), pairs"));
        align.push(Align::Right);
    }
    headings.push("verdict".into());
    align.push(Align::Left);
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut row = vec![r.strategy.clone(), r.window.to_string()];
            row.extend(axes.iter().map(|a| (a.cell)(r)));
            row.extend(r.by_cache.iter().map(cell));
            row.push(CostSign::of(&r.by_cache).label().to_string());
            row
        })
        .collect();
    MarkdownTable::new(&headings, HeadRule::Aligned(&align)).write(&mut s, &cells);
    FileToWrite {
        relative: Path::new("charts").join(format!("{STEM}.md")),
        bytes: s.into_bytes(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(lo: f64, hi: f64) -> CacheDiff {
        CacheDiff {
            mean: Some((lo + hi) / 2.0),
            interval: Some((lo, hi)),
            pairs: 10,
            histories: 10,
        }
    }

    #[test]
    fn a_sign_is_stated_only_where_every_cache_agrees() {
        let saves = [diff(-0.7, -0.4), diff(-0.05, -0.02), diff(-0.14, -0.07)];
        assert_eq!(CostSign::of(&saves), CostSign::Saves);
        let more = [diff(0.02, 0.06), diff(0.1, 0.2)];
        assert_eq!(CostSign::of(&more), CostSign::CostsMore);
        // Opposite signs (the per-call elision: cheaper without a cache, dearer with one).
        let split = [diff(-0.3, -0.16), diff(0.1, 0.12)];
        assert_eq!(CostSign::of(&split), CostSign::Depends);
        // One interval across 0.
        let across = [diff(-0.66, -0.32), diff(-0.015, 0.010)];
        assert_eq!(CostSign::of(&across), CostSign::Depends);
        let mut missing = saves.to_vec();
        missing[1].interval = None;
        assert_eq!(CostSign::of(&missing), CostSign::Depends);
        assert_eq!(CostSign::of(&[]), CostSign::Depends);
        assert_eq!(
            CostSign::of(&[diff(0.0, 0.0), diff(0.0, 0.0)]),
            CostSign::Same
        );
    }
}
