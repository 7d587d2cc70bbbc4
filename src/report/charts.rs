//! The charts of a sweep, drawn from its summary table: what each chart shows, and
//! [`render_all`], which redraws every chart and the Markdown report of a results folder.
//!
//! - `retention_vs_reduction`: required retention against reduction, one point per budget,
//!   one panel per noise level.
//! - `retention_vs_noise`: required retention against the false-negative rate at one budget
//!   (`config.charts.noise_budget`), one panel per false-positive rate; when the sweep has noise
//!   models of several families, one panel per strategy (and false-positive rate) and one line
//!   per family at the models' nominal rates, so models at one rate sit side by side.
//! - `feasibility`: the share of feasible cells against the budget, one panel per noise level.
//!
//! Each is written as PNG and SVG into `RESULTS_DIR/charts/`.

use super::manifest::{self as manifest_file, Manifest, DEFAULT_NOISE_BUDGET};
use super::markdown;
use super::noise_choice::{NoiseChoice, NoiseRateAxis};
use super::publish::{self, FileToWrite, CHARTS_DIR};
use super::summary_grid::SummaryGrid;
use super::summary_table::{read_summary, SummaryRow};
use crate::error::InputError;
use crate::figures::figure::{Axis, Figure, LegendEntry, Line, LineStyle, Panel, Point};
use crate::figures::palette;
use crate::tables::numbers;
use std::path::{Path, PathBuf};

/// The report's file name inside a results folder.
pub const REPORT_FILE: &str = "report.md";

/// A results folder's tables, read and checked.
pub struct Inputs {
    pub summary_path: PathBuf,
    pub manifest_path: PathBuf,
    pub rows: Vec<SummaryRow>,
    pub manifest: Manifest,
}

impl Inputs {
    /// Reads `summary.parquet` and `manifest.json` from a results folder.
    pub fn read(results_dir: &Path) -> Result<Inputs, InputError> {
        if !results_dir.is_dir() {
            return Err(InputError::File {
                path: results_dir.into(),
                message: "not a folder: expected a results folder written by `ctxlab sweep`".into(),
            });
        }
        let summary_path = results_dir.join("summary.parquet");
        let manifest_path = results_dir.join("manifest.json");
        // The summary first: a folder without tables is named by its missing table.
        let table = read_summary(&summary_path)?;
        let manifest = manifest_file::read(&manifest_path)?;
        let rows = table.rows(manifest_file::retention_drawn(&manifest));
        Ok(Inputs {
            summary_path,
            manifest_path,
            rows,
            manifest,
        })
    }

    /// The rows on the sweep's axes, strategies in the experiment's order.
    pub fn grid(&self) -> Result<SummaryGrid<'_>, InputError> {
        SummaryGrid::new(
            &self.rows,
            &self.manifest.grid.strategies,
            &self.summary_path,
        )
    }
}

/// Reads the tables of `results_dir`, draws every chart (PNG and SVG) into
/// `results_dir/charts/` and writes `results_dir/report.md`.
///
/// Everything is rendered in memory first and then written under temporary names and renamed
/// into place, so on any error nothing is written. Returns the paths written: for each chart
/// its PNG then its SVG, then the report.
pub fn render_all(results_dir: &Path) -> crate::error::Result<Vec<PathBuf>> {
    let files = render_files(results_dir, &results_dir.join("compare.parquet"))?;
    Ok(publish::write_all(results_dir, &files)?)
}

/// The charts and report of a results folder, in memory; the compare charts are drawn from
/// the table at `compare` (absent: none), which may not be published yet.
pub(crate) fn render_files(
    results_dir: &Path,
    compare: &Path,
) -> crate::error::Result<Vec<FileToWrite>> {
    let inputs = Inputs::read(results_dir)?;
    let grid = inputs.grid()?;
    let noise = NoiseChoice::resolve(&grid, &inputs.manifest, &inputs.manifest_path)?;
    let mut figures = figures(&grid, &inputs.manifest, &noise);
    figures.extend(compare_figures(compare, &grid, &inputs.manifest)?);

    // Each figure drawn on a core of its own (drawing was the run's serial tail); gathered in
    // figure order, and the first figure that fails in that order is the error reported.
    use rayon::prelude::*;
    let drawn: Vec<_> = figures.par_iter().map(figure_files).collect();
    let mut files = Vec::new();
    for figure in drawn {
        files.extend(figure?);
    }
    let report = markdown::report(&grid, &inputs.manifest, &noise, &figures);
    files.push(FileToWrite {
        relative: REPORT_FILE.into(),
        bytes: report.into_bytes(),
    });
    Ok(files)
}

fn drawing(figure: &Figure, ext: &str, e: crate::error::DrawError) -> crate::error::Error {
    crate::error::Error::Draw {
        chart: format!("{}.{ext}", figure.stem),
        message: e.0,
    }
}

/// A figure rendered as its two files, `charts/<stem>.png` and `charts/<stem>.svg`.
pub(crate) fn figure_files(figure: &Figure) -> crate::error::Result<[FileToWrite; 2]> {
    let png = figure.to_png().map_err(|e| drawing(figure, "png", e))?;
    let svg = figure.to_svg().map_err(|e| drawing(figure, "svg", e))?;
    let file = |ext: &str, bytes: Vec<u8>| FileToWrite {
        relative: Path::new(CHARTS_DIR).join(format!("{}.{ext}", figure.stem)),
        bytes,
    };
    Ok([file("png", png), file("svg", svg.into_bytes())])
}

fn budget_list(budgets: &[f64]) -> String {
    budgets
        .iter()
        .map(|&b| numbers::budget(b))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The x axis of a retention-against-noise chart: wide enough for the nominal rates and the
/// realised ones drawn.
fn realised_axis(axis: NoiseRateAxis, xs: &[f64], rows: impl Iterator<Item = f64>) -> Axis {
    let all: Vec<f64> = xs.iter().copied().chain(rows).collect();
    rate_axis(noise_x_label(axis).into(), &all)
}

/// What the x axis of the noise charts is.
const REALISED_NOTE: &str = "x: the rate the flags realised on these histories (the share of required records left unflagged, or of other records flagged), not the model's nominal rate: models compare fairly at the same realised rate. The report lists both.";

pub(crate) const FLAG_NOISE: &str = "FN = P(flag off | required), FP = P(flag on | not required).";
const RETENTION_LABEL: &str = "required retention (fraction of required records kept)";
/// What the retention drawn rests on, for a subtitle.
fn retention_note(manifest: &Manifest) -> String {
    format!(
        "Retention {}; hollow marks: groups where some cells are infeasible (the feasible share is in the report).",
        manifest_file::retention_drawn(manifest).meaning()
    )
}
const REDUCTION_LABEL: &str =
    "reduction = 1 − used / total (fraction of the history's cost removed), over feasible cells";
/// What a reduction rests on, for the subtitles of the charts that draw it.
const REDUCTION_NOTE: &str = "Reduction is over feasible cells only (an infeasible cell removed \
     nothing it could report); circled marks rest on fewer than 10 % of their histories.";
const BUDGET_LABEL: &str = "budget (% of each history's total cost)";
const FEASIBLE_LABEL: &str = "feasible share (fraction of cells whose context fits the budget)";
pub(crate) const MEAN_BAND: &str = "95 % interval of the mean, by history";
pub(crate) const DODGED: &str =
    "Series are offset slightly along x so that equal values stay visible.";
/// The step between neighbouring series' offsets, as a share of the x axis' span.
const DODGE: f64 = 0.01;
/// The largest spread of all offsets together, as a share of the x axis' span.
const DODGE_SPREAD: f64 = 0.05;
const SHARE_BAND: &str = "95 % interval of the share, by history";

/// The three figures, in the order they are written and reported.
pub fn figures(grid: &SummaryGrid, manifest: &Manifest, noise: &NoiseChoice) -> Vec<Figure> {
    vec![
        retention_vs_reduction(grid, manifest),
        retention_vs_noise(grid, manifest, noise),
        feasibility(grid, manifest),
    ]
}

fn style(grid: &SummaryGrid, s: usize) -> LineStyle {
    let series = &grid.series[s];
    LineStyle {
        colour: palette::colour(series.strategy_index),
        marker: palette::marker(series.strategy_index, series.keep_recent_index),
        dash: palette::dash(series.keep_recent_index),
    }
}

fn legend(grid: &SummaryGrid) -> (String, Vec<LegendEntry>) {
    let title = if grid.shows_keep_recent() {
        "strategy · keep_recent"
    } else {
        "strategy"
    };
    let entries = (0..grid.series.len())
        .map(|s| LegendEntry {
            label: grid.series_label(s),
            style: style(grid, s),
        })
        .collect();
    (title.to_string(), entries)
}

/// Panels per row for one panel per noise level: one row per false-positive rate when the
/// levels form a full grid of at most four false-negative rates, else rows of up to four.
fn noise_columns(grid: &SummaryGrid) -> usize {
    let n = grid.noise_levels.len();
    let fns = grid.false_negatives.len();
    if fns * grid.false_positives.len() == n && (2..=4).contains(&fns) {
        fns
    } else {
        n.clamp(1, 4)
    }
}

/// One panel per noise level, one line per series, one point per budget: `point` turns a
/// series' row into its point (or a gap).
fn budget_panels(
    grid: &SummaryGrid,
    point: impl Fn(usize, &SummaryRow) -> Option<Point>,
) -> Vec<Panel> {
    (0..grid.noise_levels.len())
        .map(|n| Panel {
            title: grid.noise_levels[n].label(),
            lines: (0..grid.series.len())
                .map(|s| Line {
                    style: style(grid, s),
                    points: (0..grid.budgets.len())
                        .map(|b| point(s, grid.get(s, n, b)?))
                        .collect(),
                })
                .collect(),
        })
        .collect()
}

fn source(manifest: &Manifest) -> String {
    format!(
        "Experiment “{}”: {} histories × {} replicates, seed {}.",
        manifest.name, manifest.grid.histories, manifest.grid.replicates, manifest.seed
    )
}

fn retention_vs_reduction(grid: &SummaryGrid, manifest: &Manifest) -> Figure {
    let panels = budget_panels(grid, |_, row| retention_point(row));
    let (legend_title, legend) = legend(grid);
    Figure {
        stem: "retention_vs_reduction".into(),
        title: "Required retention against reduction, by flag noise".into(),
        subtitle: format!(
            "One point per budget ({} %). {REDUCTION_NOTE} {} Bands: {MEAN_BAND}. \
             {FLAG_NOISE} {}",
            budget_list(&grid.budgets),
            retention_note(manifest),
            source(manifest)
        ),
        x: Axis::unit(REDUCTION_LABEL),
        y: Axis::unit(RETENTION_LABEL),
        columns: noise_columns(grid),
        panels,
        legend_title,
        legend,
        legend_group: grid.keep_recents.len(),
        band_label: MEAN_BAND.into(),
    }
}

/// The charts of `compare.parquet`, when the folder has one: for each measure, the paired
/// difference (strategy − baseline) against the budget, a panel per noise level, with its
/// interval by history and the zero line.
fn compare_figures(
    path: &Path,
    grid: &SummaryGrid,
    manifest: &Manifest,
) -> Result<Vec<Figure>, InputError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let t = PairRows::read(path)?;
    let mut measures: Vec<String> = Vec::new();
    for m in &t.measure {
        if !measures.contains(m) {
            measures.push(m.clone());
        }
    }
    let x_axis = Axis {
        label: BUDGET_LABEL.into(),
        min: -3.0,
        max: 103.0,
        ticks: (0..=5).map(|i| i as f64 * 20.0).collect(),
    };
    let zero = LineStyle {
        colour: palette::NEUTRAL,
        marker: palette::Marker::Cross,
        dash: Some((6, 6)),
    };
    let figures = measures
        .iter()
        .map(|m| compare_figure(&t, m, grid, manifest, &x_axis, zero))
        .collect();
    Ok(figures)
}

/// The columns of `compare.parquet` its charts draw, each one entry per row.
struct PairRows {
    strategy: Vec<String>,
    keep_recent: Vec<u64>,
    budget: Vec<f64>,
    noise: Vec<String>,
    measure: Vec<String>,
    baseline: Vec<String>,
    mean: Vec<Option<f64>>,
    low: Vec<Option<f64>>,
    high: Vec<Option<f64>>,
    pair_histories: Vec<u64>,
}

impl PairRows {
    fn read(path: &Path) -> Result<PairRows, InputError> {
        let t =
            crate::tables::read::Checked::read(path, &crate::tables::cells::pairs_table(), false)?;
        Ok(PairRows {
            strategy: t.text("strategy"),
            keep_recent: t.whole("keep_recent"),
            budget: t.real("budget_percent"),
            noise: t.text("noise"),
            measure: t.text("measure"),
            baseline: t.text("baseline"),
            mean: t.opt_real("diff_mean"),
            low: t.opt_real("diff_ci_low"),
            high: t.opt_real("diff_ci_high"),
            pair_histories: t.whole("n_histories"),
        })
    }
}

/// One measure's figure: a panel per noise level, a line per series plus the zero line.
fn compare_figure(
    t: &PairRows,
    m: &str,
    grid: &SummaryGrid,
    manifest: &Manifest,
    x_axis: &Axis,
    zero: LineStyle,
) -> Figure {
    let panels = (0..grid.noise_levels.len())
        .map(|n| {
            let mut lines: Vec<Line> = (0..grid.series.len())
                .map(|s| Line {
                    style: style(grid, s),
                    points: difference_points(t, m, grid, s, n, x_axis),
                })
                .collect();
            // No difference: the line a strategy on a par with the baseline follows.
            let flat = |x| {
                Some(Point {
                    x,
                    y: 0.0,
                    band: None,
                    hollow: false,
                    sparse: false,
                })
            };
            lines.push(Line {
                style: zero,
                points: vec![flat(0.0), flat(100.0)],
            });
            Panel {
                title: grid.noise_levels[n].label(),
                lines,
            }
        })
        .collect();
    let (legend_title, mut legend) = legend(grid);
    legend.push(LegendEntry {
        label: "no difference".into(),
        style: zero,
    });
    let against = t.baseline.first().cloned().unwrap_or_default();
    Figure {
        stem: format!("compare_{m}").into(),
        title: format!("{m}: each strategy minus {against}, by budget"),
        subtitle: format!(
            "Paired on the same cells (history, replicate, budget, noise){}. Bands: 95 % \
                 interval of the mean difference, by history; circled marks rest on fewer \
                 than 10 % of their histories. {DODGED} {FLAG_NOISE} {}",
            if m.starts_with("reduction") {
                ", over the cells both strategies could build (feasible)".to_string()
            } else {
                credit_note(m)
            },
            source(manifest)
        ),
        x: x_axis.clone(),
        y: Axis {
            label: format!("difference in {m} (strategy − {against})"),
            min: -1.05,
            max: 1.05,
            ticks: vec![-1.0, -0.5, 0.0, 0.5, 1.0],
        },
        columns: noise_columns(grid),
        panels,
        legend_title,
        legend,
        legend_group: grid.keep_recents.len(),
        band_label: MEAN_BAND.into(),
    }
}

/// One series' mean differences at each budget of one noise level, with their intervals; a
/// budget without a pair row, or without a mean and interval, is a gap in the line.
fn difference_points(
    t: &PairRows,
    m: &str,
    grid: &SummaryGrid,
    s: usize,
    n: usize,
    x_axis: &Axis,
) -> Vec<Option<Point>> {
    let series = &grid.series[s];
    let level = &grid.noise_levels[n];
    grid.budgets
        .iter()
        .map(|&b| {
            let i = (0..t.measure.len()).find(|&i| {
                t.measure[i] == m
                    && t.strategy[i] == series.strategy
                    && t.keep_recent[i] == series.keep_recent
                    && t.budget[i] == b
                    && t.noise[i] == level.model
            })?;
            // The pairs of both strategies' defined cells, against
            // the histories of the group.
            let group = grid
                .budgets
                .iter()
                .position(|&x| x == b)
                .and_then(|bi| grid.get(s, n, bi));
            Some(Point {
                x: b + dodge(grid, s, x_axis),
                y: t.mean[i]?,
                band: Some((t.low[i]?, t.high[i]?)),
                hollow: false,
                sparse: group
                    .is_some_and(|g| rests_on_few(t.pair_histories[i], g.whole("n_histories"))),
            })
        })
        .collect()
}

/// A point at (reduction, retention) with the retention's interval; none without both means.
fn retention_point(row: &SummaryRow) -> Option<Point> {
    Some(Point {
        x: row.stats("reduction_feasible").mean?,
        y: row.retention().mean?,
        band: retention_band(row),
        hollow: row.real("feasible_share") < 1.0,
        sparse: rests_on_few(row.whole("n_feasible_histories"), row.whole("n_histories")),
    })
}

/// Whether a value over some of a group's histories rests on fewer than a tenth of them
/// (`SPARSE`): the chart circles it, since its mean speaks for few runs.
pub(crate) fn rests_on_few(histories: u64, of: u64) -> bool {
    of > 0 && (histories as f64) < SPARSE * of as f64
}

/// The share of a group's histories below which a value is circled as resting on few.
const SPARSE: f64 = 0.1;

fn retention_band(row: &SummaryRow) -> Option<(f64, f64)> {
    row.retention().interval()
}

/// A small shift along x for series `s`, centred on the true value, so series with equal
/// values on an axis of a few discrete values stay visible side by side.
fn dodge(grid: &SummaryGrid, s: usize, axis: &Axis) -> f64 {
    dodge_offset(s, grid.series.len(), axis)
}

/// The shift along x of series `s` of `count` (see [`dodge`]).
pub(crate) fn dodge_offset(s: usize, count: usize, axis: &Axis) -> f64 {
    let count = count as f64;
    let centre = (count - 1.0) / 2.0;
    // The whole spread stays within DODGE_SPREAD of the span, inside the axes' 3 % padding.
    let step = DODGE.min(DODGE_SPREAD / (count - 1.0).max(1.0));
    (s as f64 - centre) * (axis.max - axis.min) * step
}

/// An axis for rates from 0 up to the largest rate swept, in steps of 0.1 (or 0.2 past 0.5).
fn rate_axis(label: String, rates: &[f64]) -> Axis {
    let largest = rates.iter().copied().fold(0.0, f64::max);
    let (top, step) = if largest <= 0.5 {
        (((largest * 10.0).ceil() / 10.0).max(0.1), 0.1)
    } else {
        (1.0, 0.2)
    };
    let steps = (top / step).round() as usize;
    let pad = top * 0.03;
    Axis {
        label,
        min: -pad,
        max: top + pad,
        ticks: (0..=steps).map(|i| i as f64 * step).collect(),
    }
}

fn retention_vs_noise(grid: &SummaryGrid, manifest: &Manifest, noise: &NoiseChoice) -> Figure {
    if !grid.one_noise_family() {
        return retention_vs_noise_models(grid, manifest);
    }
    let axis = NoiseRateAxis::choose(grid);
    let (xs, panel_rates) = axis.rates(grid);
    let b = noise.budget_index;
    let x_axis = realised_axis(axis, xs, grid.rows.iter().filter_map(|r| axis.realised(r)));
    let panels = panel_rates
        .iter()
        .map(|&panel| Panel {
            title: axis.panel_title_realised(
                panel,
                xs.iter()
                    .find_map(|&x| grid.get(0, axis.level(grid, x, panel)?, b)),
            ),
            lines: (0..grid.series.len())
                .map(|s| Line {
                    style: style(grid, s),
                    points: xs
                        .iter()
                        .map(|&x| {
                            let row = grid.get(s, axis.level(grid, x, panel)?, b)?;
                            let x = axis.realised(row).unwrap_or(x);
                            Some(Point {
                                x: x + dodge(grid, s, &x_axis),
                                y: row.retention().mean?,
                                band: retention_band(row),
                                hollow: row.real("feasible_share") < 1.0,
                                sparse: false,
                            })
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    let substituted = substituted_budget(noise);
    let (legend_title, legend) = legend(grid);
    Figure {
        stem: "retention_vs_noise".into(),
        title: format!(
            "Required retention against flag noise at a {} % budget",
            numbers::budget(noise.budget)
        ),
        subtitle: format!(
            "Budget {} % of each history's total cost{substituted}. {REALISED_NOTE} {} Bands: \
             {MEAN_BAND}. {DODGED} {FLAG_NOISE} {}",
            numbers::budget(noise.budget),
            retention_note(manifest),
            source(manifest)
        ),
        x: x_axis,
        y: Axis::unit(RETENTION_LABEL),
        columns: panel_rates.len().clamp(1, 4),
        panels,
        legend_title,
        legend,
        legend_group: grid.keep_recents.len(),
        band_label: MEAN_BAND.into(),
    }
}

/// What a paired retention measure credits, for its chart's caption.
fn credit_note(measure: &str) -> String {
    if measure.starts_with("needed_fact_retention_any_record") {
        "; a needed fact (a token of a required record a later model-written record uses again) \
         counts as kept when any kept record holds it, a later one repeating it included; an \
         infeasible cell keeps none"
            .into()
    } else if measure.starts_with("needed_fact_retention") {
        "; a needed fact (a token of a required record a later model-written record uses again) \
         counts as kept only through the record that introduced it, or a placeholder or summary \
         standing for it that holds it, never through a later record repeating it; an \
         infeasible cell keeps none"
            .into()
    } else {
        String::new()
    }
}

/// The x axis' label of the retention-against-noise chart.
fn noise_x_label(axis: NoiseRateAxis) -> &'static str {
    match axis {
        NoiseRateAxis::FalseNegative => {
            "false-negative rate FN (fraction of required records left unflagged)"
        }
        NoiseRateAxis::FalsePositive => {
            "false-positive rate FP (fraction of other records flagged)"
        }
    }
}

/// What the budget of the noise chart rests on, when it stands in for 50 %.
fn substituted_budget(noise: &NoiseChoice) -> String {
    if noise.substituted {
        format!(
            " (the experiment sets no charts.noise_budget and {} % was not swept: nearest budget)",
            numbers::budget(DEFAULT_NOISE_BUDGET)
        )
    } else {
        String::new()
    }
}

/// The panels of [`retention_vs_noise_models`]: a row per budget, and in it one per rate of
/// the other axis and series, as (budget index, panel rate, series). Every swept budget is
/// drawn because whether the pattern of the mistakes matters depends on it: at a tight budget a
/// model that unflags long records leaves a flagged set that fits, and keeps more.
pub(crate) fn model_panels(grid: &SummaryGrid) -> Vec<(usize, f64, usize)> {
    let (_, panel_rates) = NoiseRateAxis::choose(grid).rates(grid);
    (0..grid.budgets.len())
        .flat_map(|b| {
            panel_rates
                .iter()
                .flat_map(move |&p| (0..grid.series.len()).map(move |s| (b, p, s)))
        })
        .collect()
}

/// Retention against the realised rate with noise models of several families: one panel per
/// strategy (and rate of the other axis) and budget, one line per family, so a reader sees at
/// one rate whether the pattern of the mistakes matters more than their number, and at which
/// budgets.
fn retention_vs_noise_models(grid: &SummaryGrid, manifest: &Manifest) -> Figure {
    let axis = NoiseRateAxis::choose(grid);
    let (xs, panel_rates) = axis.rates(grid);
    let per_row = panel_rates.len() * grid.series.len();
    let x_axis = realised_axis(axis, xs, grid.rows.iter().filter_map(|r| axis.realised(r)));
    let families = grid.noise_families.len();
    let family_style = |f: usize| LineStyle {
        colour: palette::colour(f),
        marker: palette::marker(f, 0),
        dash: None,
    };
    let panels = model_panels(grid)
        .into_iter()
        .map(|(b, p, s)| {
            let mut title = grid.series_label(s);
            if panel_rates.len() > 1 {
                title = format!("{title} · {}", axis.panel_title(p));
            }
            if grid.budgets.len() > 1 {
                title = format!("{title} · budget {} %", numbers::budget(grid.budgets[b]));
            }
            Panel {
                title,
                lines: (0..families)
                    .map(|f| Line {
                        style: family_style(f),
                        points: xs
                            .iter()
                            .map(|&x| {
                                let (q, fp) = match axis {
                                    NoiseRateAxis::FalseNegative => (x, p),
                                    NoiseRateAxis::FalsePositive => (p, x),
                                };
                                let row = grid.get(s, grid.family_noise_index(f, q, fp)?, b)?;
                                let x = axis.realised(row).unwrap_or(x);
                                Some(Point {
                                    x: x + dodge_offset(f, families, &x_axis),
                                    y: row.retention().mean?,
                                    band: retention_band(row),
                                    hollow: row.real("feasible_share") < 1.0,
                                    sparse: false,
                                })
                            })
                            .collect(),
                    })
                    .collect(),
            }
        })
        .collect::<Vec<_>>();
    let legend = (0..families)
        .map(|f| LegendEntry {
            label: grid.noise_families[f].clone(),
            style: family_style(f),
        })
        .collect();
    Figure {
        stem: "retention_vs_noise".into(),
        title: "Required retention against flag noise by noise model, at each budget".into(),
        subtitle: format!(
            "A row of panels per budget swept ({} % of each history's total cost): whether the \
             pattern of the mistakes matters depends on the budget. One line per noise model (its \
             family: the model without its rates), at the rates the model realised, so models \
             that made as many mistakes sit side by side. {REALISED_NOTE} {} Bands: {MEAN_BAND}. \
             {DODGED} {FLAG_NOISE} {}",
            grid.budgets
                .iter()
                .map(|&b| numbers::budget(b))
                .collect::<Vec<_>>()
                .join(", "),
            retention_note(manifest),
            source(manifest)
        ),
        x: x_axis,
        y: Axis::unit(RETENTION_LABEL),
        columns: per_row.clamp(1, 4),
        panels,
        legend_title: "noise model".into(),
        legend,
        legend_group: 1,
        band_label: MEAN_BAND.into(),
    }
}

fn feasibility(grid: &SummaryGrid, manifest: &Manifest) -> Figure {
    let x_axis = Axis {
        label: BUDGET_LABEL.into(),
        min: -3.0,
        max: 103.0,
        ticks: (0..=5).map(|i| i as f64 * 20.0).collect(),
    };
    let panels = budget_panels(grid, |s, row| {
        Some(Point {
            x: row.real("budget_percent") + dodge(grid, s, &x_axis),
            y: row.real("feasible_share"),
            band: Some(row.stats("feasible").interval()?),
            hollow: false,
            sparse: false,
        })
    });
    let (legend_title, legend) = legend(grid);
    Figure {
        stem: "feasibility".into(),
        title: "Feasible share by budget, by flag noise".into(),
        subtitle: format!(
            "A cell is infeasible when what the strategy must keep (e.g. the flagged records, \
             or a pinned tail) exceeds the budget. Bands: {SHARE_BAND} (cells of one history \
             are not independent). {DODGED} {FLAG_NOISE} {}",
            source(manifest)
        ),
        x: x_axis,
        y: Axis::unit(FEASIBLE_LABEL),
        columns: noise_columns(grid),
        panels,
        legend_title,
        legend,
        legend_group: grid.keep_recents.len(),
        band_label: SHARE_BAND.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_axis_ends_at_the_next_tenth() {
        let a = rate_axis("x".into(), &[0.0, 0.1, 0.2, 0.4]);
        assert_eq!(a.ticks.len(), 5);
        assert!((a.ticks[4] - 0.4).abs() < 1e-12);
        let a = rate_axis("x".into(), &[0.0, 0.7]);
        assert_eq!(a.ticks.len(), 6);
        assert_eq!(a.ticks[5], 1.0);
    }
}
