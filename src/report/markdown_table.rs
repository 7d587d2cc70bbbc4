//! The Markdown table pieces the report's sections share: a table, the cells that name a
//! series, a retention with its interval.

use super::summary_grid::SummaryGrid;
use super::summary_table::SummaryRow;
use crate::figures::labels::{fraction3, opt_fraction3};
use std::fmt::Write as _;

/// A value in code type.
pub(super) fn code(s: &str) -> String {
    format!("`{s}`")
}

/// Markdown table cells must not contain a bare `|`.
pub(super) fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// The leading cells naming a series: strategy, and keep_recent when it varies.
pub(super) fn series_header(grid: &SummaryGrid) -> Vec<String> {
    let mut header = vec!["strategy".to_string()];
    if grid.shows_keep_recent() {
        header.push("keep_recent".into());
    }
    header
}

pub(super) fn series_cells(grid: &SummaryGrid, s: usize) -> Vec<String> {
    let series = &grid.series[s];
    let mut cells = vec![escape(&code(&series.strategy))];
    if grid.shows_keep_recent() {
        cells.push(series.keep_recent.to_string());
    }
    cells
}

pub(super) fn table(out: &mut String, header: &[String], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", header.join(" | "));
    let _ = writeln!(
        out,
        "|{}",
        header.iter().map(|_| " --- |").collect::<String>()
    );
    for row in rows {
        let _ = writeln!(out, "| {} |", row.join(" | "));
    }
    out.push('\n');
}

/// `mean (low–high)`, or the mean alone without an interval, or `—` without a mean.
pub(super) fn retention(row: Option<&SummaryRow>) -> String {
    let Some(row) = row else {
        return "—".into();
    };
    let retention = row.retention();
    match (retention.mean, retention.ci_low, retention.ci_high) {
        (Some(m), Some(low), Some(high)) => {
            format!("{} ({}–{})", fraction3(m), fraction3(low), fraction3(high))
        }
        (m, _, _) => opt_fraction3(m),
    }
}
