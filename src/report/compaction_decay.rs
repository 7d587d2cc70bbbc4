//! `compaction_decay`: what each strategy still carries after its k-th compaction, and how
//! large its summaries are, from the compactions table (`compactions.parquet`, read through
//! its declaration). Beside the chart, `compaction_decay.md` gives the same means as a table.
//!
//! Every mean at `k` is over the compactions numbered k, failed ones included: over the
//! sessions that compacted at least k times, so a strategy whose sessions compact fewer times
//! has fewer sessions behind its later points (the table gives n).

use super::markdown_table::{HeadRule, MarkdownTable};
use super::publish::FileToWrite;
use super::text_table::Align;
use crate::error::InputError;
use crate::figures::figure::{nice_axis, Axis, Figure, LegendEntry, Line, LineStyle, Panel, Point};
use crate::figures::palette;
use crate::tables::manifest::Manifest as SessionManifest;
use crate::tables::read::Checked;
use std::path::Path;

/// The chart's file name (without extension).
pub const STEM: &str = "compaction_decay";

/// The summary-size chart's file name (without extension).
pub const SIZE_STEM: &str = "compaction_summary_size";

/// The measures drawn, one panel each: (column of the compactions table, panel title).
const MEASURES: [(&str, &str); 4] = [
    (
        "required_share",
        "required records carried (of those appeared)",
    ),
    (
        "needed_facts_share",
        "needed facts carried, owner rule (of those appeared)",
    ),
    ("retention_oldest", "required records carried, oldest third"),
    ("retention_newest", "required records carried, newest third"),
];

/// The means of one strategy's compactions numbered `k`.
#[derive(Debug, Clone, PartialEq)]
pub struct DecayPoint {
    pub strategy: String,
    pub k: u64,
    /// Compactions numbered k (one per session that reached k).
    pub n: u64,
    /// Per measure of [`MEASURES`], the mean over the compactions where it is defined.
    pub means: [Option<f64>; 4],
    pub summary_tokens: f64,
}

/// Reads `path` and averages it by strategy and k, in the grid's strategy order then k.
pub fn read(path: &Path, strategies: &[String]) -> Result<Vec<DecayPoint>, InputError> {
    let t = Checked::read(path, &crate::tables::compactions::table(), false)?;
    let (strategy, k) = (t.text("strategy"), t.whole("k"));
    let summary = t.whole("summary_tokens");
    let columns: Vec<Vec<Option<f64>>> = MEASURES.iter().map(|(c, _)| t.opt_real(c)).collect();
    // No cache moves what a compaction keeps: under a `caches` axis each compaction is counted
    // once, from the first cache's sessions.
    let cache = t.text("cache");
    let first = cache.first().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for s in strategies {
        let rows: Vec<usize> = (0..t.height())
            .filter(|&i| &strategy[i] == s && cache[i] == first)
            .collect();
        let top = rows.iter().map(|&i| k[i]).max().unwrap_or(0);
        for at in 1..=top {
            let these: Vec<usize> = rows.iter().copied().filter(|&i| k[i] == at).collect();
            let mean = |values: &mut dyn Iterator<Item = f64>| {
                let (sum, n) = values.fold((0.0, 0u64), |(s, n), v| (s + v, n + 1));
                (n > 0).then(|| sum / n as f64)
            };
            out.push(DecayPoint {
                strategy: s.clone(),
                k: at,
                n: these.len() as u64,
                means: std::array::from_fn(|m| {
                    mean(&mut these.iter().filter_map(|&i| columns[m][i]))
                }),
                summary_tokens: mean(&mut these.iter().map(|&i| summary[i] as f64)).unwrap_or(0.0),
            });
        }
    }
    Ok(out)
}

fn style(s: usize) -> LineStyle {
    LineStyle {
        colour: palette::colour(s),
        marker: palette::marker(s, 0),
        dash: None,
    }
}

fn point(k: u64, y: Option<f64>) -> Option<Point> {
    Some(Point {
        x: k as f64,
        y: y?,
        band: None,
        hollow: false,
        sparse: false,
    })
}

/// The k axis, 1 to the largest k.
fn k_axis(points: &[DecayPoint]) -> Axis {
    let top = points.iter().map(|p| p.k).max().unwrap_or(1) as f64;
    let mut x = nice_axis("k (the session's k-th compaction)".into(), 1.0, top, false);
    x.min = x.min.min(0.5);
    x
}

/// Retention against k (one panel per measure) and summary size against k, one line per
/// strategy; `None` when no session compacted.
pub fn figures(points: &[DecayPoint], manifest: &SessionManifest) -> Option<[Figure; 2]> {
    if points.is_empty() {
        return None;
    }
    let strategies = &manifest.grid.strategies;
    let lines = |y: &dyn Fn(&DecayPoint) -> Option<f64>| -> Vec<Line> {
        strategies
            .iter()
            .enumerate()
            .map(|(s, label)| Line {
                style: style(s),
                points: points
                    .iter()
                    .filter(|p| &p.strategy == label)
                    .map(|p| point(p.k, y(p)))
                    .collect(),
            })
            .collect()
    };
    let legend: Vec<LegendEntry> = strategies
        .iter()
        .enumerate()
        .map(|(s, label)| LegendEntry {
            label: label.clone(),
            style: style(s),
        })
        .collect();
    let rests_on = format!(
        "Means over the compactions numbered k of every session of experiment “{}” (all \
         noise levels, windows, ratios and note rates pooled), failed compactions included; \
         a point at k rests only on the sessions that compacted at least k times (n per point \
         in compaction_decay.md). Replays of generated histories with the simulated \
         summariser's recall, not live runs.",
        manifest.name
    );
    let panels = MEASURES
        .iter()
        .enumerate()
        .map(|(m, (_, title))| Panel {
            title: (*title).into(),
            lines: lines(&|p| p.means[m]),
        })
        .collect();
    let decay = Figure {
        stem: STEM.into(),
        title: "What survives the k-th compaction, by strategy".into(),
        subtitle: format!(
            "Shares just after the compaction, over the records (and needed facts) that had \
             appeared by then: carried verbatim or in a summary (a summary summarised again \
             applies its recall again). Thirds split the records that had appeared by index. \
             {rests_on}"
        ),
        x: k_axis(points),
        y: Axis::unit("share carried"),
        columns: 2,
        panels,
        legend_title: "strategy".into(),
        legend: legend.clone(),
        legend_group: 1,
        band_label: String::new(),
    };
    let top = points.iter().map(|p| p.summary_tokens).fold(0.0, f64::max);
    let size = Figure {
        stem: SIZE_STEM.into(),
        title: "Summary size at the k-th compaction, by strategy".into(),
        subtitle: format!(
            "Tokens of the summaries the compaction wrote (0 for one that writes none). \
             {rests_on}"
        ),
        x: k_axis(points),
        y: nice_axis("summary tokens (mean)".into(), 0.0, top, true),
        columns: 1,
        panels: vec![Panel {
            title: "summary tokens".into(),
            lines: lines(&|p| Some(p.summary_tokens)),
        }],
        legend_title: "strategy".into(),
        legend,
        legend_group: 1,
        band_label: String::new(),
    };
    Some([decay, size])
}

/// The headings of `compaction_decay.md`.
const TABLE_HEADINGS: [&str; 8] = [
    "strategy",
    "k",
    "n",
    "required carried",
    "needed facts carried",
    "oldest third",
    "newest third",
    "summary tokens",
];

/// `compaction_decay.md`: the chart's means as a table, with n.
pub fn table_file(points: &[DecayPoint], manifest: &SessionManifest) -> FileToWrite {
    let mut s = format!(
        "# What survives the k-th compaction: experiment “{}”\n\n\
         Means over the compactions numbered k (n: how many; sessions that compacted at least \
         k times), all noise levels, windows, ratios and note rates pooled; shares of what had \
         appeared by then, carried verbatim or in a summary (`compactions.parquet`).\n\n",
        manifest.name
    );
    let cell = |v: Option<f64>| v.map_or("–".to_string(), |v| format!("{v:.3}"));
    let rows: Vec<[String; 8]> = points
        .iter()
        .map(|p| {
            [
                p.strategy.clone(),
                p.k.to_string(),
                p.n.to_string(),
                cell(p.means[0]),
                cell(p.means[1]),
                cell(p.means[2]),
                cell(p.means[3]),
                format!("{:.0}", p.summary_tokens),
            ]
        })
        .collect();
    let mut align = [Align::Right; 8];
    align[0] = Align::Left;
    MarkdownTable::new(&TABLE_HEADINGS, HeadRule::Aligned(&align)).write(&mut s, &rows);
    FileToWrite {
        relative: Path::new("charts").join(format!("{STEM}.md")),
        bytes: s.into_bytes(),
    }
}
