//! The article's 12-record experiment (../shared/spec/article12.json), every figure worked out by
//! hand from the rules in DESIGN.md.

use ctxlab::cells::table_rows;
use ctxlab::history::{CostedHistory, History, Record};
use ctxlab::report::table::to_csv;
use ctxlab::{CostModel, Strategy};

const LENGTHS: [usize; 12] = [23, 27, 18, 13, 18, 21, 17, 24, 27, 22, 17, 18];
const REQUIRED: [u64; 4] = [1, 3, 6, 9];

/// Texts of the given lengths, alternating one-, two- and three-byte characters so that `chars`
/// and `bytes` disagree.
fn article_history() -> History {
    let alphabet = ['a', 'é', '日'];
    let records = LENGTHS
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let id = i as u64 + 1;
            let text: String = std::iter::repeat_n(alphabet[i % 3], n).collect();
            Record::new(id, text).required(REQUIRED.contains(&id))
        })
        .collect();
    History::new("article12", records)
}

fn strategies(specs: &[&str]) -> Vec<Strategy> {
    specs.iter().map(|s| Strategy::parse(s).unwrap()).collect()
}

#[test]
fn totals_and_capacities_match_the_article() {
    let h = CostedHistory::new(&article_history(), CostModel::Chars);
    assert_eq!(h.total, 256);
    let required_alone: u64 = REQUIRED
        .iter()
        .map(|&id| LENGTHS[id as usize - 1] as u64)
        .sum::<u64>()
        + 3;
    assert_eq!(required_alone, 92);
    let caps: Vec<u64> = [100.0, 70.0, 50.0, 25.0]
        .iter()
        .map(|&b| h.capacity(b))
        .collect();
    assert_eq!(caps, vec![256, 179, 128, 64]);
    // The same texts under `bytes` cost more: 4 records of 'é' (2 bytes), 4 of '日' (3 bytes).
    assert!(CostedHistory::new(&article_history(), CostModel::Bytes).total > 256);
}

/// (budget, strategy, used, reduction, retention) or infeasible (used = None).
type Expected = (f64, &'static str, Option<(u64, f64, f64)>);

#[test]
fn every_row_of_the_article_table() {
    let h = CostedHistory::new(&article_history(), CostModel::Chars);
    let rows = table_rows(
        &h,
        &strategies(&["recent", "required"]),
        &[100.0, 70.0, 50.0, 25.0],
        0,
    );
    let expected: [Expected; 8] = [
        (100.0, "recent", Some((256, 0.0, 1.0))),
        (100.0, "required", Some((256, 0.0, 1.0))),
        // recent keeps ids 5..=12 (171), stops at id 4 (171 + 14 > 179).
        (70.0, "recent", Some((171, 85.0 / 256.0, 0.5))),
        // required: flagged 92, then ids 12, 11, 10, 8 → 177; id 7 would make 195.
        (70.0, "required", Some((177, 79.0 / 256.0, 1.0))),
        // recent keeps ids 8..=12 (112), id 7 would make 130.
        (50.0, "recent", Some((112, 144.0 / 256.0, 0.25))),
        // required: 92 + id 12 = 111; id 11 would make 129.
        (50.0, "required", Some((111, 145.0 / 256.0, 1.0))),
        // recent keeps ids 10..=12 (59); id 9 would make 87.
        (25.0, "recent", Some((59, 197.0 / 256.0, 0.0))),
        (25.0, "required", None),
    ];
    assert_eq!(rows.len(), expected.len());
    for (row, (budget, strategy, want)) in rows.iter().zip(expected) {
        assert_eq!(row.budget_percent, budget);
        assert_eq!(row.strategy, strategy);
        let m = row.metrics;
        match want {
            Some((used, reduction, retention)) => {
                assert!(m.feasible, "{budget} {strategy}");
                assert_eq!(m.used, used, "{budget} {strategy}");
                assert_eq!(m.reduction(), Some(reduction), "{budget} {strategy}");
                assert_eq!(
                    m.required_retention(),
                    Some(retention),
                    "{budget} {strategy}"
                );
                assert_eq!(m.exact(), Some(1.0));
                assert!(m.used <= row.capacity);
            }
            None => {
                assert!(!m.feasible);
                assert_eq!(m.reduction(), None);
                assert_eq!(m.required_retention(), None);
            }
        }
    }
}

#[test]
fn fill_skip_and_drop_oldest_flagged_variants() {
    let h = CostedHistory::new(&article_history(), CostModel::Chars);
    let rows = table_rows(
        &h,
        &strategies(&[
            "required(fill=skip)",
            "recent(fill=skip)",
            "required(on_overflow=drop-oldest-flagged)",
        ]),
        &[50.0, 25.0],
        0,
    );
    let used: Vec<Option<u64>> = rows
        .iter()
        .map(|r| r.metrics.feasible.then_some(r.metrics.used))
        .collect();
    // 50 %: required+skip passes over ids 11, 10, 8, 7, 5 and takes id 4 (111 + 14 = 125);
    // recent+skip passes over ids 7, 6, 5 and takes id 4 (112 + 14 = 126).
    // 25 %: required+skip is still infeasible; recent+skip finds nothing older that fits (59);
    // drop-oldest-flagged drops ids 1 and 3, keeping 6 and 9 (49), and id 12 would make 68.
    assert_eq!(
        used,
        vec![Some(125), Some(126), Some(111), None, Some(59), Some(49)]
    );
    assert_eq!(rows[5].metrics.required_retention(), Some(0.5));
    assert_eq!(
        rows[5].strategy,
        "required(on_overflow=drop-oldest-flagged)"
    );
}

#[test]
fn a_pinned_tail_is_kept_first() {
    let h = CostedHistory::new(&article_history(), CostModel::Chars);
    // Tail ids 10..=12 cost 59; at 50 % the flagged head (92) no longer fits in 128 − 60.
    let rows = table_rows(
        &h,
        &strategies(&["required(keep_recent=3)", "recent(keep_recent=3)"]),
        &[70.0, 50.0, 20.0],
        0,
    );
    let used: Vec<Option<u64>> = rows
        .iter()
        .map(|r| r.metrics.feasible.then_some(r.metrics.used))
        .collect();
    // 20 % = 51 < 59: even the tail does not fit.
    assert_eq!(
        used,
        vec![Some(177), Some(171), None, Some(112), None, None]
    );
}

#[test]
fn csv_matches_the_documented_header_and_formats() {
    let h = CostedHistory::new(&article_history(), CostModel::Chars);
    let rows = table_rows(&h, &strategies(&["recent", "required"]), &[70.0, 25.0], 0);
    let csv = to_csv(&rows);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines,
        vec![
            "budget_percent,strategy,capacity,used,reduction,required_retention,exact,feasible",
            "70,recent,179,171,0.33203125,0.500000,1.000000,true",
            "70,required,179,177,0.30859375,1.000000,1.000000,true",
            "25,recent,64,59,0.76953125,0.000000,1.000000,true",
            "25,required,64,,,,,false",
        ]
    );
}
