//! `ctxlab table`: every strategy at every budget on one history, as text, CSV or Markdown
//! (the rows are evaluated by [`crate::cells::table_rows`], the sweep's own code).

use super::markdown_table::{HeadRule, MarkdownTable};
use super::text_table::{self, Align};
pub use crate::cells::TableRow;
use crate::history::CostedHistory;
use crate::tables::numbers::{budget, percent};

/// The rows as CSV, through the table's declaration (`tables::budget_table`).
pub fn to_csv(rows: &[TableRow]) -> String {
    let table = crate::tables::budget_table::table();
    let mut out = Vec::new();
    table.write_csv_header(&mut out).expect("in-memory write");
    table
        .write_csv(
            &(),
            crate::tables::Names::NONE,
            rows,
            &mut out,
            &mut Vec::new(),
        )
        .expect("in-memory write");
    String::from_utf8(out).expect("utf-8")
}

const HEADINGS: [&str; 7] = [
    "budget",
    "strategy",
    "capacity",
    "used",
    "reduction",
    "required kept",
    "exact",
];

fn cells(r: &TableRow) -> [String; 7] {
    let m = &r.metrics;
    let head = [
        format!("{}%", budget(r.budget_percent)),
        r.strategy.clone(),
        r.capacity.to_string(),
    ];
    if !m.feasible {
        let [a, b, c] = head;
        return [
            a,
            b,
            c,
            "INFEASIBLE".into(),
            String::new(),
            String::new(),
            String::new(),
        ];
    }
    let retention = match m.required_retention() {
        Some(x) => format!("{}/{} ({})", m.required_kept, m.required_total, percent(x)),
        None => "no required records".into(),
    };
    let [a, b, c] = head;
    [
        a,
        b,
        c,
        m.used.to_string(),
        m.reduction().map(percent).unwrap_or_default(),
        retention,
        m.exact().map(percent).unwrap_or_default(),
    ]
}

/// A plain-text table that reads like the article's.
pub fn to_text(history: &CostedHistory, rows: &[TableRow]) -> String {
    let body: Vec<[String; 7]> = rows.iter().map(cells).collect();
    let mut out = format!(
        "history {:?}: {} records, total {} {}, {} required\n\n",
        history.name,
        history.len(),
        history.total,
        history.model,
        history.required_total()
    );
    // Text left, numbers right, as a reader scans them.
    let mut align = [Align::Right; 7];
    align[1] = Align::Left;
    out += &text_table::render(&HEADINGS, &body, &align);
    out
}

pub fn to_markdown(rows: &[TableRow]) -> String {
    let body: Vec<[String; 7]> = rows.iter().map(cells).collect();
    let mut out = String::new();
    MarkdownTable::new(&HEADINGS, HeadRule::Spaced).write(&mut out, &body);
    out
}
