//! The charts of a session sweep, drawn from its summary table with the sweep charts' figure,
//! font and palette:
//!
//! - `session_tokens_retention`: retention at need against billed tokens per session, one line
//!   per strategy, one point per trigger ratio;
//! - `session_cost_retention`: the same against the mean cost per session in dollars, at the
//!   experiment's prices and cache;
//! - `session_compactions`: compactions per session against the trigger ratio;
//! - `cost_ratio_vs_length` (see `cost_ratio_chart`), from the sessions table, when the sweep
//!   has `raw(window=none)`;
//! - `compaction_decay` and `compaction_summary_size` (see `compaction_decay`), from the
//!   compactions table, with their means in `compaction_decay.md`;
//! - `cost_by_cache.md` (see `cost_by_cache`), from the pairs table, when the sweep has
//!   `raw(window=none)` and several caches;
//! - `summary_size_frontier` (see `summary_frontier`), from the sessions and compactions
//!   tables, when a summariser runs at two sizes or more, with its points in
//!   `summary_size_frontier.md`.
//!
//! The first three have one panel per window × note rate × noise level (windows across when
//! there are several; the cost chart also one per cache of a `caches` axis, the others, which
//! no cache moves, draw the first), each strategy one colour and one marker in every panel, and are written
//! as PNG and SVG into `RESULTS_DIR/charts/`, like a cell sweep's charts (`ctxlab plot` redraws
//! either kind).

use super::charts::{dodge_offset, figure_files, DODGED, FLAG_NOISE, MEAN_BAND};
use super::compaction_decay;
use super::cost_ratio_chart;
use super::publish::{self, FileToWrite};
use super::session_groups::rows_from_frame;
pub use super::session_groups::ChartGroup;
use super::summary_frontier;
use super::summary_grid::SummaryNoise;
use crate::error::InputError;
use crate::figures::figure::{nice_axis, Axis, Figure, LegendEntry, Line, LineStyle, Panel, Point};
use crate::figures::labels;
use crate::figures::palette;
use crate::tables::manifest::{Manifest as SessionManifest, SweepKind};
use crate::tables::read::read_frame;
use std::path::{Path, PathBuf};

/// The charts' file names (without extension), in the order they are drawn.
pub const STEMS: [&str; 3] = [
    "session_tokens_retention",
    "session_cost_retention",
    "session_compactions",
];

/// Whether `results_dir` holds a session sweep's results (its manifest says `"kind":
/// "sessions"`).
pub fn is_session_results(results_dir: &Path) -> bool {
    std::fs::read_to_string(results_dir.join("manifest.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .is_some_and(|v| v["kind"] == "sessions")
}

/// What a hollow mark says on the session charts.
const INCOMPLETE_NOTE: &str = "Hollow marks: groups where some sessions ran out of the window \
     before their last call (the completed share is the summary's `completed_mean`); their \
     billed tokens are those of less work, and what their later calls needed counts as lost.";

/// Reads the summary and manifest of a session sweep's results folder, draws both charts (PNG
/// and SVG) and writes them into `results_dir/charts/`, all or nothing. Returns the paths
/// written, each chart's PNG then its SVG.
pub fn render_all(results_dir: &Path) -> crate::error::Result<Vec<PathBuf>> {
    let files = render_files(results_dir)?;
    Ok(publish::write_all(results_dir, &files)?)
}

/// The charts of a session sweep's results folder, in memory.
pub(crate) fn render_files(results_dir: &Path) -> crate::error::Result<Vec<FileToWrite>> {
    let manifest_path = results_dir.join("manifest.json");
    let manifest = SessionManifest::read(&manifest_path)?;
    if manifest.kind != SweepKind::Sessions {
        return Err(InputError::key(
            manifest_path.display().to_string(),
            "kind",
            format!("{:?}: expected \"sessions\"", manifest.kind),
        )
        .into());
    }
    let summary_path = results_dir.join("summary.parquet");
    let rows = rows_from_frame(read_frame(&summary_path)?, &summary_path)?;
    let mut files = Vec::new();
    for figure in figures(&rows, &manifest) {
        files.extend(figure_files(&figure)?);
    }
    // Only a sweep with the agent as it ran has a baseline to take cost ratios against, and
    // only one that wrote its sessions table (not `--cells none`) has the sessions to take them.
    let sessions_path = results_dir.join("sessions.parquet");
    let baseline = manifest
        .grid
        .strategies
        .iter()
        .any(|s| s == cost_ratio_chart::BASELINE);
    // Each strategy's cost against the baseline under every cache, where there are several.
    let pairs_path = results_dir.join("pairs.parquet");
    if baseline && manifest.grid.caches.len() > 1 && pairs_path.exists() {
        let caches = &manifest.grid.caches;
        let rows = super::cost_by_cache::read(&pairs_path, caches)?;
        files.push(super::cost_by_cache::table_file(&rows, caches, &manifest));
    }
    if baseline && sessions_path.exists() {
        let sessions = cost_ratio_chart::read(&sessions_path)?;
        if let Some(figure) =
            cost_ratio_chart::figure(&sessions, &manifest, &super::complexity_trap::load()?)
        {
            files.extend(figure_files(&figure)?);
        }
    }
    // What survives the k-th compaction, when the compactions table was written whole.
    let compactions_path = results_dir.join("compactions.parquet");
    if compactions_path.exists() {
        let points = compaction_decay::read(&compactions_path, &manifest.grid.strategies)?;
        if let Some(figures) = compaction_decay::figures(&points, &manifest) {
            for figure in &figures {
                files.extend(figure_files(figure)?);
            }
            files.push(compaction_decay::table_file(&points, &manifest));
        }
    }
    // Retention against summary size, when a summariser runs at two sizes or more.
    let families = summary_frontier::families(&manifest.grid.strategies);
    if !families.is_empty() && compactions_path.exists() && sessions_path.exists() {
        let points = summary_frontier::read(&sessions_path, &compactions_path, &families)?;
        if let Some(figure) = summary_frontier::figure(&points, &manifest) {
            files.extend(figure_files(&figure)?);
            files.push(summary_frontier::table_file(&points, &manifest));
        }
    }
    Ok(files)
}

/// The rows arranged on the sweep's axes.
struct Groups<'a> {
    manifest: &'a SessionManifest,
    levels: Vec<SummaryNoise>,
    rows: &'a [ChartGroup],
    /// The caches whose panels a chart draws: every cache of the axis on the cost chart, the
    /// first on the charts no cache moves (billed tokens, compactions).
    caches: Vec<String>,
}

/// Where a group sits on the axes a panel's line runs through.
#[derive(Clone, Copy)]
struct GroupAt {
    s: usize,
    w: usize,
    n: usize,
    c: usize,
    l: usize,
}

impl<'a> Groups<'a> {
    fn get(&self, at: GroupAt, q: usize) -> Option<&'a ChartGroup> {
        let g = &self.manifest.grid;
        let cache = self.caches.get(at.c);
        // The level last: it is parsed from its label, so only for a group that matches the rest.
        self.rows.iter().find(|r| {
            r.text("strategy") == g.strategies[at.s]
                && r.whole("window") == g.windows[at.w]
                && r.real("ratio") == g.ratios[q]
                && r.real("note_rate") == g.note_rates[at.n]
                && cache.is_none_or(|c| c == r.text("cache"))
                && r.level() == self.levels[at.l]
        })
    }

    /// The same groups, with a panel for every cache of the axis.
    fn by_cache(&self) -> Groups<'a> {
        Groups {
            manifest: self.manifest,
            levels: self.levels.clone(),
            rows: self.rows,
            caches: self.manifest.grid.caches.clone(),
        }
    }

    /// A strategy's look, the same in every panel: its own colour and marker (distinct pairs
    /// for the first 40 strategies), a solid line.
    fn style(&self, s: usize) -> LineStyle {
        LineStyle {
            colour: palette::colour(s),
            marker: palette::strategy_marker(s),
            dash: None,
        }
    }

    /// One entry per strategy: windows are panels, not series.
    fn legend(&self) -> (String, Vec<LegendEntry>) {
        let entries = self
            .manifest
            .grid
            .strategies
            .iter()
            .enumerate()
            .map(|(s, name)| LegendEntry {
                label: name.clone(),
                style: self.style(s),
            })
            .collect();
        ("strategy".into(), entries)
    }

    /// Panels: note rate × noise level down, windows across (noise levels across when there is
    /// one window); `line` builds one strategy's points in one panel from (strategy, window,
    /// note rate, level).
    fn panels(&self, line: impl Fn(GroupAt) -> Vec<Option<Point>>) -> Vec<Panel> {
        let g = &self.manifest.grid;
        let mut panels = Vec::new();
        for c in 0..self.caches.len().max(1) {
            for n in 0..g.note_rates.len() {
                for l in 0..self.levels.len() {
                    for w in 0..g.windows.len() {
                        let mut title = format!("notes {}", labels::rate(g.note_rates[n]));
                        if g.windows.len() > 1 {
                            title = format!("window {} · {title}", g.windows[w]);
                        }
                        if self.levels.len() > 1 {
                            title = format!("{title} · {}", self.levels[l].label());
                        }
                        if self.caches.len() > 1 {
                            title = format!("cache {} · {title}", self.caches[c]);
                        }
                        panels.push(Panel {
                            title,
                            lines: (0..g.strategies.len())
                                .map(|s| Line {
                                    style: self.style(s),
                                    points: line(GroupAt { s, w, n, c, l }),
                                })
                                .collect(),
                        });
                    }
                }
            }
        }
        panels
    }

    /// The axes the panels split, for a title.
    fn facets(&self) -> &'static str {
        match (self.manifest.grid.windows.len() > 1, self.caches.len() > 1) {
            (true, true) => "cache, window, notes and flag noise",
            (true, false) => "window, notes and flag noise",
            (false, true) => "cache, notes and flag noise",
            (false, false) => "notes and flag noise",
        }
    }

    fn columns(&self) -> usize {
        let windows = self.manifest.grid.windows.len();
        if windows > 1 {
            windows
        } else {
            self.levels.len()
        }
        .clamp(1, 4)
    }

    /// What each point rests on: the sessions of one cell of the grid, and the histories.
    fn rests_on(&self) -> String {
        let m = self.manifest;
        let sessions: Vec<u64> = self.rows.iter().map(|r| r.whole("n")).collect();
        let histories: Vec<u64> = self.rows.iter().map(|r| r.whole("n_histories")).collect();
        let span = |v: &[u64]| {
            let (lo, hi) = (
                v.iter().copied().min().unwrap_or(0),
                v.iter().copied().max().unwrap_or(0),
            );
            if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}–{hi}")
            }
        };
        format!(
            "Each point is one strategy × window × trigger ratio × note rate × noise level: the \
             mean over its {} sessions ({} histories × {} replicates).",
            span(&sessions),
            span(&histories),
            m.grid.replicates
        )
    }

    fn source(&self) -> String {
        let m = self.manifest;
        let noise = match self.levels.as_slice() {
            [only] => format!(" Flag noise {} throughout.", only.label()),
            _ => String::new(),
        };
        format!(
            "{} {FLAG_NOISE}{noise} Experiment “{}”: {} histories × {} replicates, seed {}.",
            self.rests_on(),
            m.name,
            m.grid.histories,
            m.grid.replicates,
            m.seed
        )
    }
}

/// The three figures, in the order of [`STEMS`].
pub fn figures(rows: &[ChartGroup], manifest: &SessionManifest) -> Vec<Figure> {
    let groups = Groups {
        manifest,
        levels: manifest
            .grid
            .noise_labels()
            .iter()
            .map(|l| SummaryNoise::from_label(l))
            .collect(),
        rows,
        caches: manifest.grid.caches.iter().take(1).cloned().collect(),
    };
    vec![
        tokens_retention(&groups),
        cost_retention(&groups),
        compactions(&groups),
    ]
}

/// Retention at need against what a session costs: `x` picks the cost from a group, the axis
/// says in what, `title` names it.
struct CostAxis {
    stem: &'static str,
    title: &'static str,
    label: String,
    scale: f64,
    x: fn(&ChartGroup) -> Option<f64>,
    /// What the cost on x is worked out from, for the subtitle.
    note: String,
}

fn tokens_retention(g: &Groups) -> Figure {
    let largest = g
        .rows
        .iter()
        .filter_map(|r| r.stats("billed_tokens").mean)
        .fold(0.0, f64::max);
    let (scale, unit) = token_scale(largest);
    retention_against(
        g,
        CostAxis {
            stem: STEMS[0],
            title: "billed tokens",
            label: format!(
                "billed tokens per session{unit} (input + output of every model call, \
                 compactions included)"
            ),
            scale,
            x: |r| r.stats("billed_tokens").mean,
            note: String::new(),
        },
    )
}

fn cost_retention(g: &Groups) -> Figure {
    retention_against(
        &g.by_cache(),
        CostAxis {
            stem: STEMS[1],
            title: "cost in dollars",
            label: "mean cost per session, dollars (every model call, compactions included)".into(),
            scale: 1.0,
            x: |r| r.stats("cost").mean,
            note: format!(" Cost: {}.", prices(&g.manifest.config)),
        },
    )
}

/// The prices and cache a session sweep's cost is billed at, from its manifest's config.
fn prices(config: &serde_json::Value) -> String {
    let session = &config["session"];
    let p = &session["prices"];
    let number = |v: &serde_json::Value| v.as_f64().map(labels::tick);
    let rates = (|| {
        Some(format!(
            "input ${} and output ${} per million units of the cost model, cache reads {}× and \
             writes {}× the input price",
            number(&p["input"])?,
            number(&p["output"])?,
            number(&p["cache_read_factor"])?,
            number(&p["cache_write_factor"])?
        ))
    })()
    .unwrap_or_else(|| "the experiment's prices".into());
    match session["cache"].as_str() {
        Some(cache) => format!("{rates}, under the {cache} cache model"),
        None if session["caches"].is_array() => {
            format!("{rates}, under the cache model each panel names")
        }
        None => rates,
    }
}

fn retention_against(g: &Groups, axis: CostAxis) -> Figure {
    let grid = &g.manifest.grid;
    let xs: Vec<f64> = g.rows.iter().filter_map(axis.x).collect();
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min) / axis.scale;
    let hi = xs.iter().copied().fold(0.0, f64::max) / axis.scale;
    let x = nice_axis(axis.label, if lo.is_finite() { lo } else { 0.0 }, hi, false);
    let panels = g.panels(|at| {
        // Points in order of cost, so the line and its band run left to right.
        let mut points: Vec<Point> = (0..grid.ratios.len())
            .filter_map(|q| {
                let row = g.get(at, q)?;
                let need = row.stats("retention_at_need");
                Some(Point {
                    x: (axis.x)(row)? / axis.scale,
                    y: need.mean?,
                    band: need.interval(),
                    hollow: row.incomplete(),
                    sparse: false,
                })
            })
            .collect();
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        points.into_iter().map(Some).collect()
    });
    let (legend_title, legend) = g.legend();
    Figure {
        stem: axis.stem.into(),
        title: format!(
            "Retention at need against {}, by {}",
            axis.title,
            g.facets()
        ),
        subtitle: format!(
            "One point per trigger ratio ({}), means over sessions; bands: {MEAN_BAND} \
             retention at need (the share of required records present, in any form, at each \
             later call, a call after the run ended counting as none).{} {INCOMPLETE_NOTE} {}",
            list(&grid.ratios),
            axis.note,
            g.source()
        ),
        x,
        y: Axis::unit("retention at need"),
        columns: g.columns(),
        panels,
        legend_title,
        legend,
        legend_group: 1,
        band_label: MEAN_BAND.into(),
    }
}

fn compactions(g: &Groups) -> Figure {
    let grid = &g.manifest.grid;
    let lo = grid.ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = grid.ratios.iter().copied().fold(0.0, f64::max);
    let half = ((hi - lo) * 0.1).max(0.05);
    let mut ticks = grid.ratios.clone();
    ticks.sort_by(f64::total_cmp);
    let x = Axis {
        label: "trigger ratio (compact when usage ≥ window × ratio)".into(),
        min: lo - half,
        max: hi + half,
        ticks,
    };
    let top = g
        .rows
        .iter()
        .filter_map(|r| {
            let c = r.stats("compactions");
            c.interval().map(|i| i.1).or(c.mean)
        })
        .fold(0.0, f64::max);
    let y = nice_axis("compactions per session (mean)".into(), 0.0, top, true);
    let count = grid.strategies.len();
    let panels = g.panels(|at| {
        let mut points: Vec<Option<Point>> = (0..grid.ratios.len())
            .map(|q| {
                let row = g.get(at, q)?;
                let compactions = row.stats("compactions");
                Some(Point {
                    x: grid.ratios[q] + dodge_offset(at.s, count, &x),
                    y: compactions.mean?,
                    band: compactions.interval(),
                    hollow: row.incomplete(),
                    sparse: false,
                })
            })
            .collect();
        points.sort_by(|a, b| {
            let key = |p: &Option<Point>| p.map_or(f64::INFINITY, |p| p.x);
            key(a).total_cmp(&key(b))
        });
        points
    });
    let (legend_title, legend) = g.legend();
    Figure {
        stem: STEMS[2].into(),
        title: format!(
            "Compactions per session against the trigger ratio, by {}",
            g.facets()
        ),
        subtitle: format!(
            "Means over sessions, failed and storm compactions included; bands: {MEAN_BAND}. \
             {INCOMPLETE_NOTE} {DODGED} {}",
            g.source()
        ),
        x,
        y,
        columns: g.columns(),
        panels,
        legend_title,
        legend,
        legend_group: 1,
        band_label: MEAN_BAND.into(),
    }
}

/// Token counts are drawn in thousands or millions when large: (divisor, label suffix).
fn token_scale(largest: f64) -> (f64, &'static str) {
    if largest >= 10_000_000.0 {
        (1e6, ", millions")
    } else if largest >= 10_000.0 {
        (1e3, ", thousands")
    } else {
        (1.0, "")
    }
}

fn list(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| labels::tick(*v))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::session_groups::groups_for_test;
    use serde_json::{json, Value};

    #[test]
    fn axes_have_round_ticks_around_the_data() {
        let a = nice_axis("x".into(), 81.5, 220.7, false);
        assert_eq!(a.ticks, vec![50.0, 100.0, 150.0, 200.0, 250.0]);
        assert!(a.min < 50.0 && a.max > 250.0);
        let a = nice_axis("y".into(), 3.0, 17.2, true);
        assert_eq!(a.ticks.first(), Some(&0.0));
        assert_eq!(a.ticks.last(), Some(&20.0));
        assert_eq!(a.ticks.len(), 5);
        let flat = nice_axis("z".into(), 0.0, 0.0, true);
        assert!(flat.max > flat.min);
        assert_eq!(token_scale(85_000.0), (1e3, ", thousands"));
        assert_eq!(token_scale(900.0).0, 1.0);
    }

    fn manifest() -> SessionManifest {
        SessionManifest {
            kind: SweepKind::Sessions,
            name: "t".into(),
            seed: 1,
            config: serde_json::Value::Null,
            config_hash: String::new(),
            source: String::new(),
            rows: 8,
            histories: 4,
            shards: None,
            grid: crate::tables::manifest::Axes {
                histories: 4,
                replicates: 1,
                false_negative: vec![0.0, 0.2],
                false_positive: vec![0.0],
                strategies: vec!["recent".into(), "summary".into()],
                windows: vec![8000],
                ratios: vec![0.6, 0.9],
                note_rates: vec![0.1],
                ..Default::default()
            },
            files: Vec::new(),
            version: String::new(),
            wall_seconds: 0.0,
            inputs: Default::default(),
        }
    }

    /// A group's summary row, by column name (see [`groups_for_test`]); the compactions have
    /// no interval.
    fn row(strategy: &str, ratio: f64, fneg: f64, billed: f64, need: f64, comp: f64) -> Value {
        json!({
            "strategy": strategy,
            "window": 8000,
            "ratio": ratio,
            "note_rate": 0.1,
            "cache": "anthropic",
            "noise": format!("uniform(fn={fneg}, fp=0)"),
            "billed_tokens_mean": billed,
            // At $3 per million tokens.
            "cost_mean": billed * 3e-6,
            "n": 4,
            "n_histories": 4,
            "retention_at_need_mean": need,
            "retention_at_need_ci_low": need - 0.05,
            "retention_at_need_ci_high": need + 0.05,
            "compactions_mean": comp,
            "completed_mean": 1.0,
        })
    }

    /// Billed tokens fall as the ratio rises (fewer compactions), so points are drawn in the
    /// reverse order of the ratios.
    #[test]
    fn figures_put_each_group_where_its_numbers_say() {
        let m = manifest();
        let mut rows = Vec::new();
        for (s, base) in [("recent", 100_000.0), ("summary", 60_000.0)] {
            for fneg in [0.0, 0.2] {
                rows.push(row(s, 0.6, fneg, base + 20_000.0, 0.4 + fneg, 12.0));
                rows.push(row(s, 0.9, fneg, base, 0.5 + fneg, 8.0));
            }
        }
        let figs = figures(&groups_for_test(&rows), &m);
        assert_eq!(
            figs.iter().map(|f| f.stem.as_ref()).collect::<Vec<_>>(),
            STEMS
        );
        let tokens = &figs[0];
        // One panel per note rate × noise level; one line per strategy.
        let titles: Vec<&str> = tokens.panels.iter().map(|p| p.title.as_str()).collect();
        assert_eq!(
            titles,
            [
                "notes 10 % · FN 0 % · FP 0 %",
                "notes 10 % · FN 20 % · FP 0 %"
            ]
        );
        let recent: Vec<(f64, f64)> = tokens.panels[1].lines[0]
            .points
            .iter()
            .map(|p| (p.unwrap().x, p.unwrap().y))
            .collect();
        // In thousands, sorted by tokens: ratio 0.9 (100k) first, then 0.6 (120k).
        assert_eq!(recent, [(100.0, 0.5 + 0.2), (120.0, 0.4 + 0.2)]);
        assert!(tokens.x.label.contains("thousands"));
        assert_eq!(tokens.x.ticks.first(), Some(&60.0));
        assert_eq!(tokens.legend.len(), 2);
        assert_eq!(tokens.legend[1].label, "summary");

        let cost = &figs[1];
        let recent: Vec<f64> = cost.panels[1].lines[0]
            .points
            .iter()
            .map(|p| p.unwrap().x)
            .collect();
        // 100k and 120k tokens at $3 per million: $0.30 and $0.36.
        assert!((recent[0] - 0.30).abs() < 1e-12 && (recent[1] - 0.36).abs() < 1e-12);
        assert!(cost.x.label.contains("dollars"), "{}", cost.x.label);
        assert!(
            tokens
                .subtitle
                .contains("the mean over its 4 sessions (4 histories × 1 replicates)"),
            "{}",
            tokens.subtitle
        );

        let comp = &figs[2];
        let summary = &comp.panels[0].lines[1].points;
        let (a, b) = (summary[0].unwrap(), summary[1].unwrap());
        assert_eq!((a.y, b.y), (12.0, 8.0));
        // Offset to the right of the true ratio (second of two series), by less than 1 %.
        assert!(a.x > 0.6 && a.x - 0.6 < 0.01 * (comp.x.max - comp.x.min));
        assert_eq!(comp.x.ticks, [0.6, 0.9]);
        assert_eq!(comp.y.ticks.first(), Some(&0.0));
        assert!(comp.y.ticks.last().unwrap() >= &12.0);
    }

    /// Two windows and three strategies: one panel per window (windows across), one line per
    /// strategy in each, a strategy's colour and marker its own and the same in both panels,
    /// and the legend naming each strategy once.
    #[test]
    fn windows_are_panels_and_each_strategy_has_its_own_look() {
        let mut m = manifest();
        m.grid.windows = vec![8000, 16000];
        m.grid.strategies = vec!["recent".into(), "summary".into(), "mask".into()];
        m.grid.false_negative = vec![0.0];
        m.config = serde_json::json!({"session": {"cache": "anthropic", "prices": {
            "input": 3.0, "output": 15.0, "cache_read_factor": 0.1, "cache_write_factor": 1.25}}});
        let mut rows = Vec::new();
        for (i, s) in ["recent", "summary", "mask"].iter().enumerate() {
            for window in [8000, 16000] {
                for ratio in [0.6, 0.9] {
                    let billed = 1000.0 * (i + 1) as f64 + window as f64;
                    let mut r = row(s, ratio, 0.0, billed, 0.5, 2.0);
                    r["window"] = json!(window);
                    rows.push(r);
                }
            }
        }
        let figs = figures(&groups_for_test(&rows), &m);
        for f in &figs {
            let titles: Vec<&str> = f.panels.iter().map(|p| p.title.as_str()).collect();
            assert_eq!(
                titles,
                ["window 8000 · notes 10 %", "window 16000 · notes 10 %"]
            );
            assert_eq!(f.columns, 2);
            let names: Vec<&str> = f.legend.iter().map(|e| e.label.as_str()).collect();
            assert_eq!(names, ["recent", "summary", "mask"]);
            let looks: Vec<_> = f
                .legend
                .iter()
                .map(|e| (e.style.colour, e.style.marker))
                .collect();
            assert_eq!(
                looks,
                [
                    (palette::OKABE_ITO[0], palette::Marker::Circle),
                    (palette::OKABE_ITO[1], palette::Marker::Triangle),
                    (palette::OKABE_ITO[2], palette::Marker::Square),
                ]
            );
            for panel in &f.panels {
                let in_panel: Vec<_> = panel
                    .lines
                    .iter()
                    .map(|l| (l.style.colour, l.style.marker))
                    .collect();
                assert_eq!(in_panel, looks);
            }
            assert!(
                f.title.ends_with("by window, notes and flag noise"),
                "{}",
                f.title
            );
        }
        // The 16000 panel's `summary` line: 2000 + 16000 tokens at both ratios, $0.054.
        let cost = &figs[1].panels[1].lines[1].points;
        assert!(cost.iter().all(|p| (p.unwrap().x - 0.054).abs() < 1e-12));
        assert!(
            figs[1].subtitle.contains(
                "Cost: input $3 and output $15 per million units of the cost model, cache reads 0.1× and writes 1.25× the input price, under the anthropic cache model."
            ),
            "{}",
            figs[1].subtitle
        );
    }
}
