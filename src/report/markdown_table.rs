//! Every Markdown table ctxlab writes goes through [`MarkdownTable`]; beside it, the pieces the
//! report's sections share: the cells that name a series, a retention with its interval.

use super::summary_grid::SummaryGrid;
use super::summary_table::SummaryRow;
use super::text_table::Align;
use crate::figures::labels::{fraction3, opt_fraction3};

/// The rule under a table's headings.
#[derive(Debug, Clone, Copy)]
pub enum HeadRule<'a> {
    /// `| --- | --- |`: no alignment (the report's tables, `ctxlab table`).
    Spaced,
    /// `|---|---:|`: `---:` under a column aligned right, `---` under one aligned left (the
    /// charts' tables, numbers right as a reader scans them).
    Aligned(&'a [Align]),
}

/// A Markdown table's head, its heading line and rule, ready for rows. Cells are written as
/// given: a caller escapes a `|` a cell may hold ([`escape`]).
pub struct MarkdownTable {
    head: String,
}

impl MarkdownTable {
    pub fn new<S: AsRef<str>>(headings: &[S], rule: HeadRule) -> Self {
        let mut head = row(headings) + "|";
        match rule {
            HeadRule::Spaced => head += &" --- |".repeat(headings.len()),
            HeadRule::Aligned(align) => {
                debug_assert_eq!(align.len(), headings.len(), "an alignment per column");
                for a in align {
                    head += match a {
                        Align::Left => "---|",
                        Align::Right => "---:|",
                    };
                }
            }
        }
        head.push('\n');
        MarkdownTable { head }
    }

    /// A key–value table: blank headings (`| | |`), no alignment.
    pub fn headless(columns: usize) -> Self {
        let blanks = "|".to_string() + &" |".repeat(columns) + "\n";
        MarkdownTable {
            head: blanks + "|" + &" --- |".repeat(columns) + "\n",
        }
    }

    /// The head, then a line per row.
    pub fn write<S: AsRef<str>, R: AsRef<[S]>>(&self, out: &mut String, rows: &[R]) {
        out.push_str(&self.head);
        for r in rows {
            out.push_str(&row(r.as_ref()));
        }
    }
}

/// `| a | b |` and a newline.
fn row<S: AsRef<str>>(cells: &[S]) -> String {
    let cells: Vec<&str> = cells.iter().map(AsRef::as_ref).collect();
    format!("| {} |\n", cells.join(" | "))
}

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

/// A report's table: headings, rule, rows, then a blank line before what follows.
pub(super) fn table<S: AsRef<str>>(out: &mut String, header: &[S], rows: &[Vec<String>]) {
    MarkdownTable::new(header, HeadRule::Spaced).write(out, rows);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_writes_its_head_rule_and_rows_as_given() {
        let rows = [["`a\\|b`".to_string(), String::new()]];
        let mut out = String::new();
        MarkdownTable::new(&["strategy", "used"], HeadRule::Spaced).write(&mut out, &rows);
        assert_eq!(out, "| strategy | used |\n| --- | --- |\n| `a\\|b` |  |\n");
        let mut out = String::new();
        let align = [Align::Left, Align::Right];
        MarkdownTable::new(&["strategy", "used"], HeadRule::Aligned(&align)).write(&mut out, &rows);
        assert_eq!(out, "| strategy | used |\n|---|---:|\n| `a\\|b` |  |\n");
    }

    #[test]
    fn a_headless_table_has_blank_headings() {
        let mut out = String::new();
        MarkdownTable::headless(2).write(&mut out, &[["seed", "7"]]);
        assert_eq!(out, "| | |\n| --- | --- |\n| seed | 7 |\n");
    }
}
