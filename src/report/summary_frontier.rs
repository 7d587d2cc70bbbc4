//! `summary_size_frontier`: per summariser family (a strategy without its summary's size,
//! [`summary_axis::family`]), what the agent had of the facts it needed against how large the
//! summaries it wrote were, one point per size, joined in order of size: the frontier that tells
//! a bigger summary from a better one. Beside the chart, `summary_size_frontier.md` gives the
//! points as a table.
//!
//! - **x**: the mean `summary_tokens` over the strategy's compactions that wrote a summary
//!   (`compactions.parquet`), all sessions pooled: the size actually written, which the ratio
//!   and cap bound but do not fix (a summary of little is small whatever its ratio).
//! - **y**: `needed_fact_retention_at_need` (`sessions.parquet`): of the needed facts' later
//!   uses, the share whose fact the call's input held, verbatim or in a summary. It is chosen
//!   over the required records carried after each compaction because it weighs what the agent
//!   used, at the call that used it, across every compaction of the run: a summary that grows
//!   by holding what is never used again does not score, and one size that compacts more often
//!   pays for it. The mean is over the sessions where it is defined, its 95 % interval by
//!   history ([`crate::stats::Acc`], as the summary table's).
//!
//! Drawn when some family runs at two sizes or more (the summary-size axis, or specs listed by
//! hand), and only from a folder that holds both tables.

use super::markdown_table::{HeadRule, MarkdownTable};
use super::publish::FileToWrite;
use super::text_table::Align;
use crate::error::InputError;
use crate::experiment::summary_axis;
use crate::figures::figure::{nice_axis, Axis, Figure, LegendEntry, Line, LineStyle, Panel, Point};
use crate::figures::palette;
use crate::stats::{Acc, Partial};
use crate::tables::manifest::Manifest as SessionManifest;
use crate::tables::read::Checked;
use std::collections::BTreeMap;
use std::path::Path;

/// The chart's file name (without extension).
pub const STEM: &str = "summary_size_frontier";

/// One strategy of a family: one size.
#[derive(Debug, Clone, PartialEq)]
pub struct FrontierPoint {
    pub family: String,
    pub strategy: String,
    /// The size it ran with (the sessions table's `summary_ratio`, `summary_cap`).
    pub ratio: Option<f64>,
    pub cap: Option<u64>,
    /// Compactions that wrote a summary, and the mean tokens they wrote (`None`: none did).
    pub summaries: u64,
    pub summary_tokens: Option<f64>,
    /// Sessions with the measure defined, and their histories.
    pub sessions: u64,
    pub histories: u64,
    pub retention: Option<f64>,
    pub interval: Option<(f64, f64)>,
}

/// The families of `strategies` that run at two sizes or more: (family, its strategies in the
/// grid's order), families in the order of their first strategy.
pub fn families(strategies: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for s in strategies {
        let Some(f) = summary_axis::family(s) else {
            continue;
        };
        match out.iter_mut().find(|(name, _)| *name == f) {
            Some((_, members)) => members.push(s.clone()),
            None => out.push((f, vec![s.clone()])),
        }
    }
    out.retain(|(_, members)| members.len() >= 2);
    out
}

/// Reads both tables and builds each family's points, sorted by the summary tokens written
/// (points without a summary last, in grid order).
pub fn read(
    sessions: &Path,
    compactions: &Path,
    families: &[(String, Vec<String>)],
) -> Result<Vec<FrontierPoint>, InputError> {
    let c = Checked::read(compactions, &crate::tables::compactions::table(), false)?;
    let (c_strategy, c_tokens) = (c.text("strategy"), c.whole("summary_tokens"));
    // No cache moves what a summary keeps: under a `caches` axis each session and compaction
    // counts once, from the first cache's.
    let c_cache = c.text("cache");
    let first_cache = |cache: &[String]| cache.first().cloned().unwrap_or_default();
    let c_first = first_cache(&c_cache);
    let mut written: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for ((s, &t), _) in c_strategy
        .iter()
        .zip(&c_tokens)
        .zip(&c_cache)
        .filter(|((_, &t), cache)| t > 0 && **cache == c_first)
    {
        let e = written.entry(s.as_str()).or_default();
        e.0 += 1;
        e.1 += t;
    }
    let t = Checked::read(sessions, &crate::tables::sessions::table(), false)?;
    let (history, strategy) = (t.text("history"), t.text("strategy"));
    let measure = t.opt_real("needed_fact_retention_at_need");
    let (ratio, cap) = (t.opt_real("summary_ratio"), t.opt_whole("summary_cap"));
    let cache = t.text("cache");
    let first = first_cache(&cache);
    let mut out = Vec::new();
    for (family, members) in families {
        let mut points: Vec<FrontierPoint> = members
            .iter()
            .map(|s| {
                let rows: Vec<usize> = (0..t.height())
                    .filter(|&i| &strategy[i] == s && cache[i] == first)
                    .collect();
                let (acc, histories) = by_history(rows.iter().map(|&i| (&history[i], measure[i])));
                let (n, sum) = written.get(s.as_str()).copied().unwrap_or((0, 0));
                FrontierPoint {
                    family: family.clone(),
                    strategy: s.clone(),
                    ratio: rows.first().and_then(|&i| ratio[i]),
                    cap: rows.first().and_then(|&i| cap[i]),
                    summaries: n,
                    summary_tokens: (n > 0).then(|| sum as f64 / n as f64),
                    sessions: acc.n,
                    histories,
                    retention: acc.mean(),
                    interval: acc.interval(),
                }
            })
            .collect();
        points.sort_by(|a, b| {
            let key = |p: &FrontierPoint| p.summary_tokens.unwrap_or(f64::INFINITY);
            key(a).total_cmp(&key(b))
        });
        out.extend(points);
    }
    Ok(out)
}

/// The values of a share, accumulated history by history (rows of one history need not be
/// adjacent): the accumulator and the histories with a value.
fn by_history<'a>(rows: impl Iterator<Item = (&'a String, Option<f64>)>) -> (Acc, u64) {
    let mut acc = Acc::share(false);
    let mut partials: BTreeMap<&str, Partial> = BTreeMap::new();
    for (h, v) in rows {
        if let Some(v) = v {
            partials
                .entry(h.as_str())
                .or_default()
                .push(acc.quantise(v));
        }
    }
    for p in partials.values() {
        acc.add_history(p);
    }
    let histories = acc.histories;
    (acc, histories)
}

fn style(f: usize) -> LineStyle {
    LineStyle {
        colour: palette::colour(f),
        marker: palette::strategy_marker(f),
        dash: None,
    }
}

/// What the chart's points rest on, for the caption.
fn rests_on(manifest: &SessionManifest) -> String {
    format!(
        "Each point is one strategy of experiment “{}” (all noise levels, windows, ratios and \
         note rates pooled; {} histories × {} replicates, seed {}): x the mean tokens of the \
         summaries its compactions wrote (compactions that wrote none left out), y the mean \
         share of needed-fact uses whose fact the call's input held, verbatim or in a summary \
         (needed_fact_retention_at_need, over the sessions where it is defined), band its \
         95 % interval by history. It cannot tell what a summary of that size written by a \
         model would keep: these are replays of generated histories with the named summariser \
         (the simulated one keeps each record with a fixed recall whatever the size, so there \
         a bigger summary only takes room); nor does a mean over sessions that compacted \
         different numbers of times weigh one compaction alone.",
        manifest.name, manifest.grid.histories, manifest.grid.replicates, manifest.seed
    )
}

/// The frontier chart; `None` without a point that has both coordinates.
pub fn figure(points: &[FrontierPoint], manifest: &SessionManifest) -> Option<Figure> {
    let drawn = |p: &FrontierPoint| Some((p.summary_tokens?, p.retention?));
    let top = points
        .iter()
        .filter_map(drawn)
        .map(|(x, _)| x)
        .reduce(f64::max)?;
    let mut families: Vec<&str> = Vec::new();
    for p in points {
        if !families.contains(&p.family.as_str()) {
            families.push(&p.family);
        }
    }
    let lines = families
        .iter()
        .enumerate()
        .map(|(f, name)| Line {
            style: style(f),
            points: points
                .iter()
                .filter(|p| p.family == *name)
                .map(|p| {
                    let (x, y) = drawn(p)?;
                    Some(Point {
                        x,
                        y,
                        band: p.interval,
                        hollow: false,
                        sparse: false,
                    })
                })
                .collect(),
        })
        .collect();
    let legend = families
        .iter()
        .enumerate()
        .map(|(f, name)| LegendEntry {
            label: (*name).to_string(),
            style: style(f),
        })
        .collect();
    Some(Figure {
        stem: STEM.into(),
        title: "Needed facts at need against summary size, by summariser".into(),
        subtitle: format!(
            "One line per summariser (a strategy without its summary's size), one point per \
             size, joined in order of the tokens written: a line that rises buys retention \
             with size, a flat one only spends room. {}",
            rests_on(manifest)
        ),
        x: nice_axis(
            "summary tokens written (mean per summary)".into(),
            0.0,
            top,
            true,
        ),
        y: Axis::unit("needed facts held at need"),
        columns: 1,
        panels: vec![Panel {
            title: "needed facts at need".into(),
            lines,
        }],
        legend_title: "summariser".into(),
        legend,
        legend_group: 1,
        band_label: super::charts::MEAN_BAND.into(),
    })
}

/// The headings of `summary_size_frontier.md`.
const TABLE_HEADINGS: [&str; 10] = [
    "summariser",
    "strategy",
    "summary_ratio",
    "summary_cap",
    "summaries",
    "summary tokens",
    "sessions",
    "histories",
    "needed facts at need",
    "95 % interval",
];

/// `summary_size_frontier.md`: the points as a table, with their n.
pub fn table_file(points: &[FrontierPoint], manifest: &SessionManifest) -> FileToWrite {
    let mut s = format!(
        "# Needed facts at need against summary size: experiment “{}”\n\n{}\n\n",
        manifest.name,
        rests_on(manifest)
    );
    let dash = || "–".to_string();
    let rows: Vec<[String; 10]> = points
        .iter()
        .map(|p| {
            [
                p.family.clone(),
                p.strategy.clone(),
                p.ratio.map_or_else(dash, |r| r.to_string()),
                p.cap.map_or_else(dash, |c| c.to_string()),
                p.summaries.to_string(),
                p.summary_tokens.map_or_else(dash, |t| format!("{t:.1}")),
                p.sessions.to_string(),
                p.histories.to_string(),
                p.retention.map_or_else(dash, |r| format!("{r:.3}")),
                p.interval
                    .map_or_else(dash, |(lo, hi)| format!("{lo:.3}–{hi:.3}")),
            ]
        })
        .collect();
    // Names left, numbers right, the interval (a range of two) left.
    let mut align = [Align::Right; 10];
    for c in [0, 1, 9] {
        align[c] = Align::Left;
    }
    MarkdownTable::new(&TABLE_HEADINGS, HeadRule::Aligned(&align)).write(&mut s, &rows);
    FileToWrite {
        relative: Path::new(super::publish::CHARTS_DIR).join(format!("{STEM}.md")),
        bytes: s.into_bytes(),
    }
}
