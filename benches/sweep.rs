//! Cells per second: each strategy alone on a fixed synthetic sweep, then the whole of
//! `experiments/noise.toml` end to end (tables included). Run with `cargo bench`.
//!
//! A plain harness (no criterion) keeps the build light; each figure is the best of three runs
//! so a busy machine disturbs it less.

use ctxlab::cells::{evaluate_history, CellRow, Grid, Scratch};
use ctxlab::experiment as config;
use ctxlab::history::generate::{generate, GenerateConfig, Position};
use ctxlab::history::CostedHistory;
use ctxlab::strategy::Strategy;
use ctxlab::sweep::run;
use ctxlab::CostModel;
use rayon::prelude::*;
use std::time::Instant;

fn best_of_three(mut f: impl FnMut() -> u64) -> (u64, f64) {
    let mut best = f64::INFINITY;
    let mut cells = 0;
    for _ in 0..3 {
        let t = Instant::now();
        cells = f();
        best = best.min(t.elapsed().as_secs_f64());
    }
    (cells, best)
}

fn main() {
    let cfg = GenerateConfig {
        count: 300,
        records: [20, 200],
        required_share: 0.2,
        required_position: Position::Early,
        seed: 1,
    };
    let costed: Vec<CostedHistory> = generate(&cfg)
        .iter()
        .map(|h| CostedHistory::new(h, CostModel::Chars))
        .collect();
    let base = config::parse(
        "bench",
        r#"
name = "bench"
seed = 7
replicates = 5
[histories]
generate = { count = 300, records = [20, 200], required_share = 0.2 }
[sweep]
strategies = ["recent"]
budgets = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
keep_recent = [0, 3]
false_negative = [0.0, 0.1, 0.2, 0.4]
false_positive = [0.0, 0.05]
"#,
        &[],
    )
    .expect("bench config");
    println!("machine: {} threads", rayon::current_num_threads());
    println!(
        "{:<44} {:>12} {:>14}",
        "strategy (hot loop only)", "cells", "cells/s"
    );
    for spec in ctxlab::strategy::NAMES
        .iter()
        .chain(["required(fill=skip)"].iter())
    {
        let mut exp = base.clone();
        exp.strategies = vec![Strategy::parse(spec).expect("known strategy")];
        let grid = Grid::new(&exp, costed.len());
        let (cells, secs) = best_of_three(|| {
            costed
                .par_iter()
                .enumerate()
                .map_init(
                    || (Scratch::default(), Vec::<CellRow>::new()),
                    |(scratch, rows), (i, h)| {
                        rows.clear();
                        evaluate_history(&grid, i, h, scratch, rows);
                        rows.len() as u64
                    },
                )
                .sum()
        });
        println!("{:<44} {:>12} {:>14.0}", spec, cells, cells as f64 / secs);
    }
    let exp = config::load(std::path::Path::new("experiments/noise.toml"), &[])
        .expect("experiments/noise.toml");
    let mut exp = exp;
    let out = std::env::temp_dir().join("ctxlab-bench-noise");
    exp.output_dir = out.clone();
    let (cells, secs) = best_of_three(|| {
        run::run(&exp, &run::RunOptions::default())
            .expect("sweep runs")
            .rows
    });
    println!(
        "{:<44} {:>12} {:>14.0}   ({secs:.2} s wall, Parquet + CSV written)",
        "experiments/noise.toml end to end",
        cells,
        cells as f64 / secs
    );
    std::fs::remove_dir_all(out).ok();
}
