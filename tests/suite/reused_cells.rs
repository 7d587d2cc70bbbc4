//! A sweep copies the cells of a strategy that draws nothing from an earlier noise level or
//! replicate with the same flags (of one that reads no flag, from any): every copied row is
//! the row the cell gives evaluated alone.

use crate::common::*;
use ctxlab::cells::{evaluate_cell, evaluate_history, CellAt, CellScratch, Grid};
use ctxlab::history::source::HistorySource;
use ctxlab::sweep::SweepExperiment;

#[test]
fn every_row_of_a_history_is_the_row_its_cell_gives_alone() {
    let path = root().join("experiments/noise.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    // Short histories, so that many draws of flags repeat; a strategy of each kind: reads
    // neither (recent, mask), flags only (required), truth (oracle), draws (summary).
    let overrides: Vec<String> = [
        "histories.generate.count=6",
        "histories.generate.records=[3,30]",
        "replicates=3",
        r#"sweep.strategies=["recent","required","oracle","summary","mask"]"#,
        "sweep.budgets=[20,50]",
        "sweep.false_negative=[0.0,0.1]",
        "sweep.false_positive=[0.0,0.05]",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let exp = ctxlab::experiment::parse("noise.toml", &text, &overrides).unwrap();
    let source = HistorySource::open(
        SweepExperiment::source(&exp),
        SweepExperiment::flags_file(&exp),
    )
    .unwrap();
    let grid = Grid::new(&exp, source.len());
    let cost = SweepExperiment::cost(&exp);
    let checked = source
        .evaluate(0..source.len(), cost, |i, h, scratch: &mut CellScratch| {
            let mut rows = Vec::new();
            evaluate_history(&grid, i, h, scratch, &mut rows);
            for r in &rows {
                let at = CellAt {
                    history: i,
                    replicate: r.replicate,
                    level: r.level as usize,
                    strategy: r.strategy as usize,
                    keep_recent_axis: r.keep_recent_axis as usize,
                    budget: r.budget as usize,
                };
                assert_eq!(evaluate_cell(&grid, at, h).0, *r, "{at:?}");
            }
            rows.len()
        })
        .unwrap();
    let compared: usize = checked.iter().map(|(_, n)| n).sum();
    // 6 histories × 3 replicates × 4 levels × 5 strategies × 2 keep_recent × 2 budgets.
    assert_eq!(compared, 6 * 3 * 4 * 5 * 2 * 2);
}
