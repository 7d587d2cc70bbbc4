//! `report.md`: the experiment as run, the charts, and under each chart a table of the numbers
//! it draws, taken from the summary table so text and picture cannot disagree.

use super::manifest::Manifest;
use super::markdown_table::{
    code, escape, retention, series_cells, series_header, table, MarkdownTable,
};
use super::noise_choice::{NoiseChoice, NoiseRateAxis};
use super::publish::CHARTS_DIR;
use super::summary_grid::SummaryGrid;
use super::summary_table::SummaryRow;
use crate::figures::figure::Figure;
use crate::figures::labels::{self, fraction3};
use crate::tables::numbers;
use std::fmt::Write as _;

/// The whole report. `figures` are the charts as drawn, in the order of [`super::charts::figures`].
pub fn report(
    grid: &SummaryGrid,
    manifest: &Manifest,
    noise: &NoiseChoice,
    figures: &[Figure],
) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# Report: {}\n", manifest.name);
    let _ = writeln!(
        out,
        "Run with ctxlab {}. Charts and tables below are drawn from `summary.parquet` and \
         `manifest.json` in this folder; `ctxlab plot <this folder>` redraws them.\n",
        manifest.version
    );
    experiment(&mut out, grid, manifest);
    if let Some(confusion) = &manifest.inputs.flagger {
        super::flagger::section(&mut out, confusion, grid, manifest);
    }
    for figure in figures {
        let _ = writeln!(out, "## {}\n", figure.title);
        let _ = writeln!(
            out,
            "![{title}]({dir}/{stem}.png)\n\nVector version: [{dir}/{stem}.svg]({dir}/{stem}.svg)\n",
            title = figure.title,
            dir = CHARTS_DIR,
            stem = figure.stem
        );
        let _ = writeln!(out, "{}\n", figure.subtitle);
        match figure.stem.as_ref() {
            "retention_vs_reduction" => retention_vs_reduction_table(&mut out, grid, manifest),
            "retention_vs_noise" => retention_vs_noise_table(&mut out, grid, noise, manifest),
            "feasibility" => feasibility_table(&mut out, grid),
            stem if stem.starts_with("compare_") => compare_table(&mut out, grid, figure),
            _ => {}
        }
    }
    out
}

fn list<T>(values: &[T], show: impl Fn(&T) -> String) -> String {
    values.iter().map(show).collect::<Vec<_>>().join(", ")
}

fn experiment(out: &mut String, grid: &SummaryGrid, manifest: &Manifest) {
    let _ = writeln!(out, "## Experiment\n");
    let rows: Vec<[String; 2]> = experiment_rows(grid, manifest)
        .into_iter()
        .map(|(key, value)| [key.to_string(), escape(&value)])
        .collect();
    MarkdownTable::headless(2).write(out, &rows);
    rests_on(out, grid, manifest);
    if let Some(note) = super::manifest::flags_note(manifest) {
        let _ = writeln!(out, "\n{note}");
    }
    let config = serde_json::to_string_pretty(&manifest.config)
        .unwrap_or_else(|_| manifest.config.to_string());
    let _ = writeln!(
        out,
        "\nThe resolved experiment (after overrides):\n\n```json\n{config}\n```\n"
    );
}

/// The experiment's key and value rows: its axes, its grid's size, and how it ran.
fn experiment_rows(grid: &SummaryGrid, manifest: &Manifest) -> Vec<(&'static str, String)> {
    let g = &manifest.grid;
    let noise_labels = g.noise_labels();
    let noise_levels = noise_labels.len();
    let grid_levels = g.false_negative.len() * g.false_positive.len();
    let product = g.histories
        * g.replicates
        * noise_levels as u64
        * g.strategies.len() as u64
        * g.keep_recent.len() as u64
        * g.budgets.len() as u64;
    let mut rows: Vec<(&'static str, String)> = vec![
        ("experiment", manifest.name.clone()),
        ("seed", manifest.seed.to_string()),
        ("histories", manifest.histories.to_string()),
        (
            "replicates (noise draws per history)",
            g.replicates.to_string(),
        ),
        (
            "false-negative rates (FN)",
            list(&g.false_negative, |x| format!("{x}")),
        ),
        (
            "false-positive rates (FP)",
            list(&g.false_positive, |x| format!("{x}")),
        ),
        ("strategies", list(&g.strategies, |s| code(s))),
        ("keep_recent", list(&g.keep_recent, |k| k.to_string())),
        (
            "budgets (% of each history's total cost)",
            list(&g.budgets, |&b| numbers::budget(b)),
        ),
        (
            "grid",
            format!(
                "{} histories × {} replicates × {} noise levels × {} strategies × {} keep_recent × \
                 {} budgets = {} cells",
                g.histories,
                g.replicates,
                noise_levels,
                g.strategies.len(),
                g.keep_recent.len(),
                g.budgets.len(),
                product
            ),
        ),
        ("cells run", manifest.rows.to_string()),
        ("summary groups", grid.rows.len().to_string()),
        ("run time", labels::duration(manifest.wall_seconds)),
        ("ctxlab version", manifest.version.clone()),
    ];
    // Noise models beyond the shorthand's uniform grid are listed after its rates (and the
    // rates of a grid left empty beside them are not listed).
    if noise_levels > grid_levels {
        let at = rows
            .iter()
            .position(|(key, _)| *key == "strategies")
            .expect("listed above");
        let models = list(&noise_labels[grid_levels..], |m| code(m));
        rows.insert(
            at,
            (
                "noise models (nominal rates in the FN / FP columns)",
                models,
            ),
        );
        if grid_levels == 0 {
            rows.retain(|(key, _)| !key.starts_with("false-"));
        }
    }
    rows
}

/// What the numbers rest on: how many histories and replicates a group holds, and why its
/// intervals are by history.
fn rests_on(out: &mut String, grid: &SummaryGrid, manifest: &Manifest) {
    let g = &manifest.grid;
    let drawn = super::manifest::retention_drawn(manifest);
    let fewest = grid
        .rows
        .iter()
        .map(|r| r.whole("n_histories"))
        .min()
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "\n**What the numbers rest on.** A group (strategy × keep_recent × budget × noise level) \
         holds {} histories × {} replicates = up to {} cells, but its cells are not independent: \
         replicates and budgets of one history share that history. Every interval is therefore \
         a 95 % interval of the mean **by history**: cluster-robust (CR1) from per-history \
         totals, `mean ± t(0.975, H − 1) · se`, with H the group's histories (at least {fewest} \
         here; a group of one history gets no interval); a share (retention, reduction, \
         feasibility) gets Jeffreys's interval on the effective sample that variance gives \
         instead, inside [0, 1] and with width at 0 and 1. Retention is drawn {}; reduction and \
         `exact` are means over feasible cells; the feasibility chart's share is a mean over \
         all cells with the same interval by history.",
        g.histories,
        g.replicates,
        g.histories * g.replicates,
        drawn.meaning()
    );
}

fn retention_vs_reduction_table(out: &mut String, grid: &SummaryGrid, manifest: &Manifest) {
    let _ = writeln!(
        out,
        "Each cell: mean required retention {} (95 % interval by history) / mean reduction \
         over feasible cells / feasible share where it is under 1; — where no cell was \
         feasible.\n",
        super::manifest::retention_drawn(manifest).meaning()
    );
    series_by_budget_table(out, grid, |cell| {
        match cell.and_then(|r| r.stats("reduction_feasible").mean) {
            Some(reduction) => {
                let share = cell.map_or(1.0, |r| r.real("feasible_share"));
                let partial = if share < 1.0 {
                    format!(" / feasible {}", fraction3(share))
                } else {
                    String::new()
                };
                format!("{} / {}{partial}", retention(cell), fraction3(reduction))
            }
            None => "—".into(),
        }
    });
}

/// The chart's numbers at its budget; with noise models of several families at every budget,
/// as the chart draws them.
fn retention_vs_noise_table(
    out: &mut String,
    grid: &SummaryGrid,
    noise: &NoiseChoice,
    manifest: &Manifest,
) {
    if grid.one_noise_family() {
        noise_table_at(out, grid, noise.budget_index, manifest);
    } else {
        for b in 0..grid.budgets.len() {
            noise_table_at(out, grid, b, manifest);
        }
    }
}

fn noise_table_at(out: &mut String, grid: &SummaryGrid, budget_index: usize, manifest: &Manifest) {
    let _ = writeln!(
        out,
        "Each cell: mean required retention {} (95 % interval by history) at a {} % budget; \
         — where the group has no value.\n",
        super::manifest::retention_drawn(manifest).meaning(),
        numbers::budget(grid.budgets[budget_index])
    );
    let axis = NoiseRateAxis::choose(grid);
    let (xs, panels) = axis.rates(grid);
    // Columns in the chart's order: panel by panel, along the x axis within each (with models
    // of several families, every level in the grid's order: family by family).
    let levels: Vec<usize> = if grid.one_noise_family() {
        panels
            .iter()
            .flat_map(|&p| xs.iter().filter_map(move |&x| axis.level(grid, x, p)))
            .collect()
    } else {
        (0..grid.noise_levels.len()).collect()
    };
    let mut header = series_header(grid);
    header.extend(levels.iter().map(|&n| grid.noise_levels[n].label()));
    // First the rates each level's flags realised (the chart's x), beside the nominal ones
    // the header names.
    let mut realised = vec!["realised FN · FP".to_string()];
    realised.resize(header.len() - levels.len(), String::new());
    realised.extend(levels.iter().map(|&n| {
        let row = (0..grid.series.len()).find_map(|s| grid.get(s, n, budget_index));
        match row {
            Some(r) => format!(
                "{} · {}",
                r.stats("fn_realised")
                    .mean
                    .map_or("—".into(), labels::rate_precise),
                r.stats("fp_realised")
                    .mean
                    .map_or("—".into(), labels::rate_precise)
            ),
            None => "—".into(),
        }
    }));
    let rows: Vec<Vec<String>> = std::iter::once(realised)
        .chain((0..grid.series.len()).map(|s| {
            let mut row = series_cells(grid, s);
            row.extend(
                levels
                    .iter()
                    .map(|&n| retention(grid.get(s, n, budget_index))),
            );
            row
        }))
        .collect();
    table(out, &header, &rows);
}

fn feasibility_table(out: &mut String, grid: &SummaryGrid) {
    let _ = writeln!(
        out,
        "Each cell: feasible share (feasible cells / cells), 95 % interval by history.\n"
    );
    series_by_budget_table(out, grid, |cell| match cell {
        Some(r) => {
            let interval = match r.stats("feasible").interval() {
                Some((lo, hi)) => format!(" {}–{}", fraction3(lo), fraction3(hi)),
                _ => String::new(),
            };
            format!(
                "{} ({}/{}){interval}",
                fraction3(r.real("feasible_share")),
                r.whole("n_feasible"),
                r.whole("n")
            )
        }
        None => "—".into(),
    });
}

/// The numbers a compare chart draws, read from the chart itself: a row per series and budget,
/// a column per noise level.
fn compare_table(out: &mut String, grid: &SummaryGrid, figure: &Figure) {
    let _ = writeln!(
        out,
        "Each cell: mean difference (strategy − baseline) over the cells both strategies \
         define, with its 95 % interval by history; — where there is none (the baseline \
         itself). Every row of `compare.csv` also has the shares of histories better and worse.\n"
    );
    let mut header = series_header(grid);
    header.push("budget %".into());
    header.extend(figure.panels.iter().map(|p| p.title.clone()));
    let mut rows = Vec::new();
    for s in 0..grid.series.len() {
        if figure
            .panels
            .iter()
            .all(|p| p.lines[s].points.iter().all(Option::is_none))
        {
            continue;
        }
        for (b, &budget) in grid.budgets.iter().enumerate() {
            let mut row = series_cells(grid, s);
            row.push(numbers::budget(budget));
            row.extend(figure.panels.iter().map(|p| match p.lines[s].points[b] {
                Some(pt) => match pt.band {
                    Some((lo, hi)) => {
                        format!(
                            "{} ({} to {})",
                            fraction3(pt.y),
                            fraction3(lo),
                            fraction3(hi)
                        )
                    }
                    None => fraction3(pt.y),
                },
                None => "—".into(),
            }));
            rows.push(row);
        }
    }
    table(out, &header, &rows);
}

/// A table with a row per series and budget and a column per noise level; `show` writes a
/// group's cell (or its absence).
fn series_by_budget_table(
    out: &mut String,
    grid: &SummaryGrid,
    show: impl Fn(Option<&SummaryRow>) -> String,
) {
    let mut header = series_header(grid);
    header.push("budget %".into());
    header.extend(grid.noise_levels.iter().map(|n| n.label()));
    let mut rows = Vec::new();
    for s in 0..grid.series.len() {
        for (b, &budget) in grid.budgets.iter().enumerate() {
            let mut row = series_cells(grid, s);
            row.push(numbers::budget(budget));
            row.extend((0..grid.noise_levels.len()).map(|n| show(grid.get(s, n, b))));
            rows.push(row);
        }
    }
    table(out, &header, &rows);
}
