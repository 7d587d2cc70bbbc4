//! How far to trust a cost model's counts: for every model call a transcript records, the
//! estimated size of the context the model saw (the cost of its records, separators included)
//! against the input size the provider reported; and how far to trust a cache model: the
//! share of the prompt the provider recorded as read from cache against the share a modelled
//! cache reads when the run is replayed under `raw`.

use crate::cost::CostModel;
use crate::history::import::Run;
use crate::history::CostedHistory;
use crate::report::text_table::{self, Align};
use crate::session::{self, CacheRules, SessionConfig, SessionScratch};
use crate::strategy::Strategy;
use crate::tables::call_sizes::{self, CallSize};
use crate::tables::cost_ratios::{self, RatioRow, RatioStats};
use crate::tables::Names;
use std::fmt::Write;

/// The calls of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSizes {
    pub name: String,
    pub calls: Vec<CallSize>,
    /// Prompt tokens the transcript records as read from cache, of the prompt tokens of the
    /// calls whose billing it records (`(0, 0)`: none recorded).
    pub recorded_cache: (u64, u64),
    /// Units a modelled cache reads, of the input units, over the run replayed under `raw`.
    pub modelled_cache: (u64, u64),
}

/// `part / whole`, `None` for an empty whole.
pub fn share((part, whole): (u64, u64)) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// The run replayed under `raw` (every call it made, nothing compacted, a window nothing
/// reaches) with `cache`: (cache reads, input), in units of `model`.
pub fn modelled_cache(run: &Run, model: CostModel, cache: CacheRules) -> (u64, u64) {
    replayed_cache(&CostedHistory::new(&run.history, model), cache)
}

/// [`modelled_cache`] of a history already costed.
pub fn replayed_cache(costed: &CostedHistory, cache: CacheRules) -> (u64, u64) {
    let cfg = SessionConfig {
        cache,
        ..SessionConfig::new(1 << 50, 1.0).expect("a valid window")
    };
    let raw = Strategy::parse("raw").expect("raw parses");
    let m = session::simulate(
        costed,
        &costed.truth,
        &raw,
        &cfg,
        0,
        &mut SessionScratch::default(),
    );
    (m.bill.cache_read_tokens, m.bill.input_tokens)
}

/// Estimated and recorded sizes of every recorded call of a run under `model`, and its
/// recorded and modelled cache shares under `cache`.
pub fn sizes(run: &Run, model: CostModel, cache: CacheRules) -> RunSizes {
    // Prefix sums: each call's context is a range of records, and contexts overlap heavily.
    let mut prefix = Vec::with_capacity(run.history.records.len() + 1);
    prefix.push(0u64);
    for r in &run.history.records {
        prefix.push(prefix.last().unwrap() + model.cost(&r.text));
    }
    let calls = run
        .calls
        .iter()
        .map(|c| {
            let n = (c.end - c.start) as u64;
            CallSize {
                estimated: prefix[c.end] - prefix[c.start]
                    + model.separator() * n.saturating_sub(1),
                recorded: c.recorded,
            }
        })
        .collect();
    let recorded = run.recorded();
    RunSizes {
        name: run.history.name.clone(),
        calls,
        recorded_cache: (
            recorded.iter().map(|c| c.usage.cache_read).sum(),
            recorded.iter().map(|c| c.usage.input()).sum(),
        ),
        modelled_cache: modelled_cache(run, model, cache),
    }
}

/// A report row: `calls` is shown where no call has a recorded size.
fn row(
    name: &str,
    stats: Option<RatioStats>,
    calls: usize,
    recorded: (u64, u64),
    modelled: (u64, u64),
) -> RatioRow {
    RatioRow {
        run: name.to_string(),
        calls,
        ratios: stats,
        recorded_cache_share: share(recorded),
        modelled_cache_share: share(modelled),
    }
}

/// The rows of the report: one per run, then `overall` over every call of every run (each
/// call weighs the same).
fn rows(runs: &[RunSizes]) -> Vec<RatioRow> {
    let mut out: Vec<RatioRow> = runs
        .iter()
        .map(|r| {
            let stats = RatioStats::of(&r.calls);
            row(
                &r.name,
                stats,
                r.calls.len(),
                r.recorded_cache,
                r.modelled_cache,
            )
        })
        .collect();
    let all = RatioStats::of(runs.iter().flat_map(|r| &r.calls));
    // Pooled: every token weighs the same.
    let sum = |f: fn(&RunSizes) -> (u64, u64)| {
        runs.iter()
            .map(f)
            .fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
    };
    out.push(row(
        "overall",
        all,
        0,
        sum(|r| r.recorded_cache),
        sum(|r| r.modelled_cache),
    ));
    out
}

/// The report as CSV, through its declaration (`tables::cost_ratios`).
pub fn to_csv(runs: &[RunSizes]) -> String {
    cost_ratios::table().csv_text(&(), &rows(runs))
}

/// Every call as a CSV row: `run,call,estimated,recorded` (call numbered from 1), for plotting
/// or fitting outside (`tables::call_sizes`).
pub fn calls_csv(runs: &[RunSizes]) -> String {
    let table = call_sizes::table();
    let mut out = Vec::new();
    table.write_csv_header(&mut out).expect("in-memory write");
    for r in runs {
        let calls: Vec<(u64, CallSize)> = (1..).zip(r.calls.iter().copied()).collect();
        table
            .write_csv(&r.name, Names::NONE, &calls, &mut out, &mut Vec::new())
            .expect("in-memory write");
    }
    String::from_utf8(out).expect("fields of text are text")
}

pub fn to_text(runs: &[RunSizes], model: CostModel, cache: &str) -> String {
    let table = cost_ratios::table();
    let body = table.text_rows(&(), &rows(runs));
    let mut out = format!(
        "estimated ({model}) / recorded context size per model call; a ratio below 1 means the estimate counts less than the model saw;\nfit: recorded ≈ fit_fixed + fit_slope × estimated (least squares);\ncache shares: prompt read from cache as the transcript records it, and as the {cache} cache model reads it replaying the run under raw\n\n"
    );
    let mut align = vec![Align::Right; table.columns.len()];
    align[0] = Align::Left;
    out += &text_table::render(&table.column_names(), &body, &align);
    let silent = runs.iter().filter(|r| r.calls.is_empty()).count();
    if silent > 0 {
        let _ = writeln!(
            out,
            "\n{silent} run(s) record no input size for any model call and are left out of `overall`."
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::import::Call;
    use crate::history::{History, Kind, Record, Usage};
    use crate::session::CacheKind;

    fn gemini() -> CacheRules {
        CacheRules::new(CacheKind::Gemini, 0)
    }

    fn run() -> Run {
        let records = vec![
            Record::new(1, "abcd").kind(Kind::System),
            Record::new(2, "ef").kind(Kind::User),
            Record::new(3, "ghijkl").kind(Kind::Assistant),
            Record::new(4, "m").kind(Kind::ToolResult),
        ];
        Run {
            history: History::new("r", records),
            failed: vec![false; 4],
            calls: vec![
                Call {
                    start: 0,
                    end: 2,
                    recorded: 7,
                    usage: Some(Usage {
                        uncached: 7,
                        ..Usage::default()
                    }),
                },
                Call {
                    start: 0,
                    end: 4,
                    recorded: 16,
                    usage: Some(Usage {
                        uncached: 4,
                        cache_read: 12,
                        cache_write: 0,
                        output: 1,
                    }),
                },
                Call {
                    start: 2,
                    end: 4,
                    recorded: 0,
                    usage: None,
                },
            ],
            continued: false,
        }
    }

    #[test]
    fn estimates_are_context_costs_with_separators() {
        let s = sizes(&run(), CostModel::Chars, gemini());
        // 4 + 2 + one gap; 4 + 2 + 6 + 1 + three gaps; 6 + 1 + one gap.
        assert_eq!(
            s.calls.iter().map(|c| c.estimated).collect::<Vec<_>>(),
            vec![7, 16, 8]
        );
        let st = RatioStats::of(&s.calls).unwrap();
        assert_eq!(st.n, 2); // the call with nothing recorded has no ratio
        assert_eq!((st.mean, st.sd, st.min, st.max), (1.0, 0.0, 1.0, 1.0));
        let a = sizes(&run(), CostModel::ApproxTokens, gemini());
        // ceil(4/4)+ceil(2/4) = 2 against 7; 1+1+2+1 = 5 against 16.
        let st = RatioStats::of(&a.calls).unwrap();
        let (r1, r2) = (2.0 / 7.0, 5.0 / 16.0);
        assert!((st.mean - (r1 + r2) / 2.0).abs() < 1e-12);
        let sd = (((r1 - st.mean).powi(2) + (r2 - st.mean).powi(2)) / 1.0).sqrt();
        assert!((st.sd - sd).abs() < 1e-12);
        assert_eq!((st.min, st.max), (r1, r2));
        // Two points (2, 7) and (5, 16): slope 9/3 = 3, fixed 7 - 3*2 = 1.
        let (fixed, slope) = st.fit.unwrap();
        assert!((slope - 3.0).abs() < 1e-12 && (fixed - 1.0).abs() < 1e-12);
    }

    /// Both reports' bytes on sizes set by hand: a run with two recorded calls, one whose
    /// only call records no size (its ratio cells empty, its name quoted in the CSV), and
    /// `overall`.
    #[test]
    fn report_bytes_are_pinned() {
        let size = |estimated, recorded| CallSize {
            estimated,
            recorded,
        };
        let runs = vec![
            RunSizes {
                name: "a".into(),
                calls: vec![size(10, 20), size(30, 40)],
                recorded_cache: (1, 3),
                modelled_cache: (0, 0),
            },
            RunSizes {
                name: "b, c".into(),
                calls: vec![size(5, 0)],
                recorded_cache: (0, 0),
                modelled_cache: (3, 4),
            },
        ];
        // a: ratios 1/2 and 3/4, mean 0.625, sd sqrt(2 × 0.125² / 1) = 0.177; means 30 and
        // 20; the line through (10, 20) and (30, 40): fixed 10, slope 1; cache 1/3 recorded.
        // overall: a's ratios (b has none), caches 1/3 and 3/4 pooled.
        assert_eq!(
            to_csv(&runs),
            "run,calls,recorded_mean,estimated_mean,ratio_mean,ratio_sd,ratio_min,ratio_max,fit_fixed,fit_slope,recorded_cache_share,modelled_cache_share\n\
             a,2,30,20,0.625,0.177,0.500,0.750,10,1.000,0.333,\n\
             \"b, c\",1,,,,,,,,,,0.750\n\
             overall,2,30,20,0.625,0.177,0.500,0.750,10,1.000,0.333,0.750\n"
        );
        assert_eq!(
            calls_csv(&runs),
            "run,call,estimated,recorded\na,1,10,20\na,2,30,40\n\"b, c\",1,5,0\n"
        );
        let text = to_text(&runs, CostModel::Chars, "gemini");
        // The table below the three lines of preamble, the same cells as the CSV's.
        let table = text.split_once("\n\n").unwrap().1;
        assert_eq!(
            table,
            "run      calls  recorded_mean  estimated_mean  ratio_mean  ratio_sd  ratio_min  ratio_max  fit_fixed  fit_slope  recorded_cache_share  modelled_cache_share\n\
             -------  -----  -------------  --------------  ----------  --------  ---------  ---------  ---------  ---------  --------------------  --------------------\n\
             a            2             30              20       0.625     0.177      0.500      0.750         10      1.000                 0.333\n\
             b, c         1                                                                                                                                        0.750\n\
             overall      2             30              20       0.625     0.177      0.500      0.750         10      1.000                 0.333                 0.750\n"
        );
    }

    #[test]
    fn reports_list_runs_then_overall() {
        let s = vec![sizes(&run(), CostModel::Chars, gemini())];
        let csv = to_csv(&s);
        assert_eq!(
            csv,
            "run,calls,recorded_mean,estimated_mean,ratio_mean,ratio_sd,ratio_min,ratio_max,fit_fixed,fit_slope,recorded_cache_share,modelled_cache_share\n\
             r,2,12,12,1.000,0.000,1.000,1.000,0,1.000,0.522,0.000\n\
             overall,2,12,12,1.000,0.000,1.000,1.000,0,1.000,0.522,0.000\n"
        );
        assert_eq!(
            calls_csv(&s),
            "run,call,estimated,recorded\nr,1,7,7\nr,2,16,16\nr,3,8,0\n"
        );
        // Recorded: 12 read of 7 + 16 = 23 prompt tokens, 0.522. Modelled (gemini, minimum 0)
        // under raw, chars: the one assistant record makes the replay's one agent call, on
        // [r1 r2] = 4 + 2 + one gap = 7, with no earlier request to share: 0 of 7.
        let text = to_text(&s, CostModel::Chars, "gemini");
        assert!(text.contains("estimated (chars)"), "{text}");
        assert!(text.lines().any(|l| l.starts_with("overall ")), "{text}");
    }
}
