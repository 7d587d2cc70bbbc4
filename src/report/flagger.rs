//! The flagger's confusion matrix as a table, in the report (Markdown) and on the terminal
//! (text): its columns are declared once, in [`COLUMNS`].

use super::manifest::Manifest;
use super::summary_grid::SummaryGrid;
use super::text_table::{self, Align};
use crate::flags::audit::{Audit, AuditRow};
use crate::flags::{Confusion, Counts};
use crate::tables::numbers;
use std::fmt::Write as _;

/// One column of the confusion table: its heading and how a scope's counts fill it.
pub struct ConfusionColumn {
    pub heading: &'static str,
    pub cell: fn(&Counts) -> String,
}

/// The columns after the scope (all records, or one kind).
pub const COLUMNS: [ConfusionColumn; 8] = [
    ConfusionColumn {
        heading: "histories",
        cell: |c| c.histories.to_string(),
    },
    ConfusionColumn {
        heading: "records",
        cell: |c| c.records.to_string(),
    },
    ConfusionColumn {
        heading: "TP",
        cell: |c| c.true_positive.to_string(),
    },
    ConfusionColumn {
        heading: "FN",
        cell: |c| c.false_negative.to_string(),
    },
    ConfusionColumn {
        heading: "FP",
        cell: |c| c.false_positive.to_string(),
    },
    ConfusionColumn {
        heading: "TN",
        cell: |c| c.true_negative.to_string(),
    },
    ConfusionColumn {
        heading: "FN rate (FN / required)",
        cell: |c| rate(c.false_negative, c.required()),
    },
    ConfusionColumn {
        heading: "FP rate (FP / not required)",
        cell: |c| rate(c.false_positive, c.unrequired()),
    },
];

/// What the four counts mean, said once under every table.
pub const LEGEND: &str = "TP: required and flagged; FN: required, not flagged (a miss); FP: not required, flagged; TN: neither.";

/// `0.250 (3/12)`, or `—` with nothing to err on.
fn rate(part: u64, whole: u64) -> String {
    if whole == 0 {
        "—".into()
    } else {
        format!("{:.3} ({part}/{whole})", part as f64 / whole as f64)
    }
}

/// `1 history`, `4 histories`.
fn histories(n: u64) -> String {
    if n == 1 {
        "1 history".into()
    } else {
        format!("{n} histories")
    }
}

fn headings() -> Vec<&'static str> {
    std::iter::once("records of")
        .chain(COLUMNS.iter().map(|c| c.heading))
        .collect()
}

/// A row per scope: all records first, then each kind.
fn rows(c: &Confusion) -> Vec<Vec<String>> {
    let row = |scope: String, counts: &Counts| {
        std::iter::once(scope)
            .chain(COLUMNS.iter().map(|col| (col.cell)(counts)))
            .collect()
    };
    std::iter::once(row("all".into(), &c.overall))
        .chain(
            c.by_kind
                .iter()
                .map(|(k, counts)| row(format!("kind {k}"), counts)),
        )
        .collect()
}

/// The confusion table for a terminal, with what it rests on and the legend.
pub fn text(c: &Confusion) -> String {
    let mut align = vec![Align::Left];
    align.extend(COLUMNS.iter().map(|_| Align::Right));
    format!(
        "the flagger against the truth over {}, {} records:\n{}{LEGEND}\n",
        histories(c.overall.histories),
        c.overall.records,
        text_table::render(&headings(), &rows(c), &align)
    )
}

/// Where a run's flags came from, as the manifest's experiment says.
fn origin(manifest: &Manifest) -> String {
    let histories = manifest.config.get("histories");
    let key = |k: &str| histories.and_then(|h| h.get(k)).and_then(|v| v.as_str());
    match (key("flags_file"), key("format")) {
        (Some(file), _) => format!("the flags file `{file}`"),
        (None, Some(format)) if format != "jsonl" => format!(
            "the flag rules `{}` applied to the `{format}` transcripts",
            key("flags").unwrap_or(crate::experiment::DEFAULT_TRANSCRIPT_FLAGS)
        ),
        _ => "the `flag` fields of the history records".into(),
    }
}

/// The report's section: the confusion matrix, then the retention those flags lead to at the
/// sweep's lowest noise level.
pub fn section(out: &mut String, c: &Confusion, grid: &SummaryGrid, manifest: &Manifest) {
    let _ = writeln!(out, "## Flags: the flagger against the truth\n");
    let _ = writeln!(
        out,
        "The flags strategies and summarisers see come from {}; retention is scored against \
         the truth (`required`). The table counts every record of the sweep's {} \
         ({} records) once, by its truth and its flag before label noise: the noise axis adds \
         its own mistakes on top. {LEGEND}\n",
        origin(manifest),
        histories(c.overall.histories),
        c.overall.records
    );
    super::markdown_table::table(out, &headings(), &rows(c));
    let Some(level) = grid.noise_levels.first() else {
        return;
    };
    let _ = writeln!(
        out,
        "The retention these flags lead to, at the sweep's lowest noise level ({}{}): mean \
         required retention {} (95 % interval by history), by budget.\n",
        level.label(),
        if level.false_negative == 0.0 && level.false_positive == 0.0 {
            ": the flagger's mistakes alone"
        } else {
            ""
        },
        super::manifest::retention_drawn(manifest).meaning()
    );
    let mut header = super::markdown_table::series_header(grid);
    header.extend(
        grid.budgets
            .iter()
            .map(|&b| format!("budget {} %", numbers::budget(b))),
    );
    let rows: Vec<Vec<String>> = (0..grid.series.len())
        .map(|s| {
            let mut row = super::markdown_table::series_cells(grid, s);
            row.extend(
                (0..grid.budgets.len())
                    .map(|b| super::markdown_table::retention(grid.get(s, 0, b))),
            );
            row
        })
        .collect();
    super::markdown_table::table(out, &header, &rows);
}

/// One column of the audit table: its heading, where it sits, and how a row fills it.
pub struct AuditColumn {
    pub heading: &'static str,
    pub align: Align,
    pub cell: fn(&AuditRow) -> String,
}

/// The audit table's columns, declared once.
pub const AUDIT_COLUMNS: [AuditColumn; 10] = [
    AuditColumn {
        heading: "records of",
        align: Align::Left,
        cell: |r| r.scope.label(),
    },
    AuditColumn {
        heading: "histories",
        align: Align::Right,
        cell: |r| r.counts.histories.to_string(),
    },
    AuditColumn {
        heading: "required",
        align: Align::Right,
        cell: |r| r.counts.required().to_string(),
    },
    AuditColumn {
        heading: "FN",
        align: Align::Right,
        cell: |r| r.counts.false_negative.to_string(),
    },
    AuditColumn {
        heading: "FN rate",
        align: Align::Right,
        cell: |r| opt_rate(r.counts.false_negative_rate()),
    },
    AuditColumn {
        heading: "FN 95 % (histories)",
        align: Align::Right,
        cell: |r| interval(r.fn_interval, r.fn_histories),
    },
    AuditColumn {
        heading: "not required",
        align: Align::Right,
        cell: |r| r.counts.unrequired().to_string(),
    },
    AuditColumn {
        heading: "FP",
        align: Align::Right,
        cell: |r| r.counts.false_positive.to_string(),
    },
    AuditColumn {
        heading: "FP rate",
        align: Align::Right,
        cell: |r| opt_rate(r.counts.false_positive_rate()),
    },
    AuditColumn {
        heading: "FP 95 % (histories)",
        align: Align::Right,
        cell: |r| interval(r.fp_interval, r.fp_histories),
    },
];

fn opt_rate(r: Option<f64>) -> String {
    r.map_or_else(|| "—".into(), |r| format!("{r:.3}"))
}

/// `0.100–0.300 (4)`: the interval and the histories it rests on; `— (1)` without one.
fn interval(i: Option<(f64, f64)>, histories: u64) -> String {
    match i {
        Some((lo, hi)) => format!("{lo:.3}–{hi:.3} ({histories})"),
        None => format!("— ({histories})"),
    }
}

/// `ctxlab flags audit`'s report: the rates, then the noise specs that would mimic them.
pub fn audit_text(a: &Audit, flags_from: &str) -> String {
    let mut out = format!(
        "flags audit: {}, {} records; flags from {flags_from}\n\n",
        histories(a.histories),
        a.records
    );
    let headings: Vec<&str> = AUDIT_COLUMNS.iter().map(|c| c.heading).collect();
    let align: Vec<Align> = AUDIT_COLUMNS.iter().map(|c| c.align).collect();
    let rows: Vec<Vec<String>> = a
        .rows
        .iter()
        .map(|r| AUDIT_COLUMNS.iter().map(|c| (c.cell)(r)).collect())
        .collect();
    out += &text_table::render(&headings, &rows, &align);
    out += &format!(
        "\nFN rate: FN / required records; FP rate: FP / not-required records. Quarter k holds\n\
         the records i (0-based) with floor(4i/n) = k − 1 of each n-record history. Intervals:\n\
         95 % by history (each history one cluster: the stats module's interval of a share,\n\
         Jeffreys's on the effective sample its CR1 variance gives, over the H histories in\n\
         brackets, those with records to err on); — with fewer than two.\n\n\
         Noise specs that would mimic this flagger (by_position: least-squares lines over\n\
         records at relative position i/(n − 1), ends clamped to [0, 1]):\n  {}\n  {}\n  {}\n",
        a.uniform_spec(),
        a.by_kind_spec(),
        a.by_position_spec()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_say_what_they_rest_on() {
        assert_eq!(rate(3, 12), "0.250 (3/12)");
        assert_eq!(rate(0, 0), "—");
        assert_eq!(headings().len(), COLUMNS.len() + 1);
    }
}
