//! `ctxlab table` through the binary: output formats and every bad-input case.

use crate::common::*;

#[test]
fn table_prints_the_article_rows_for_the_bundled_history() {
    let o = ctxlab(
        &root(),
        &["table", "data/article12.jsonl", "--format", "csv"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("50,required,128,111,0.56640625,1.000000,1.000000,true"),
        "{out}"
    );
    assert!(out.contains("25,required,64,,,,,false"), "{out}");
    let text = stdout(&ctxlab(&root(), &["table", "data/article12.jsonl"]));
    assert!(text.contains("INFEASIBLE"), "{text}");
    assert!(text.contains("30.9%"), "{text}");
    let md = stdout(&ctxlab(
        &root(),
        &["table", "data/article12.jsonl", "--format", "markdown"],
    ));
    assert!(md.starts_with("| budget | strategy |"), "{md}");
}

#[test]
fn bad_history_lines_name_file_line_and_expectation() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, &[&str]); 6] = [
        (
            "malformed.jsonl",
            "{\"id\":1,\"text\":\"a\"}\n{\"id\":2,",
            &["malformed.jsonl:2:", "expected"],
        ),
        (
            "missing.jsonl",
            "{\"id\":1}",
            &["missing.jsonl:1:", "missing field `text`"],
        ),
        (
            "type.jsonl",
            "{\"id\":1,\"text\":5}",
            &["type.jsonl:1:", "invalid type"],
        ),
        (
            "kind.jsonl",
            "{\"id\":1,\"text\":\"a\",\"kind\":\"robot\"}",
            &["kind.jsonl:1:", "unknown kind", "tool_result"],
        ),
        (
            "order.jsonl",
            "{\"id\":3,\"text\":\"a\"}\n\n{\"id\":1,\"text\":\"b\"}",
            &["order.jsonl:3:", "strictly increase"],
        ),
        ("empty.jsonl", "\n", &["empty.jsonl", "no records"]),
    ];
    for (name, text, needles) in cases {
        std::fs::write(dir.path().join(name), text).unwrap();
        let o = ctxlab(dir.path(), &["table", name]);
        assert_fails_with(&o, needles);
        assert!(stdout(&o).is_empty(), "nothing printed on failure");
    }
}

#[test]
fn bad_arguments_fail_clearly() {
    let r = root();
    assert_fails_with(
        &ctxlab(&r, &["table", "no/such.jsonl"]),
        &["no/such.jsonl", "cannot read"],
    );
    assert_fails_with(
        &ctxlab(&r, &["table", "data/article12.jsonl", "--budgets=-5"]),
        &["--budgets", "-5", "from 0 to 100"],
    );
    assert_fails_with(
        &ctxlab(&r, &["table", "data/article12.jsonl", "--budgets", "50,x"]),
        &["--budgets", "not a number"],
    );
    assert_fails_with(
        &ctxlab(
            &r,
            &["table", "data/article12.jsonl", "--strategies", "newest"],
        ),
        &["unknown strategy `newest`"],
    );
    assert_fails_with(
        &ctxlab(
            &r,
            &[
                "table",
                "data/article12.jsonl",
                "--strategies",
                "required(fil=skip)",
            ],
        ),
        &["unknown parameter `fil`"],
    );
    assert_fails_with(
        &ctxlab(&r, &["table", "data/article12.jsonl", "--cost", "words"]),
        &["words"],
    );
}

#[test]
fn table_accepts_every_strategy_of_the_field() {
    // The article's history has no tool records: mask and clear_tool_uses keep it verbatim and
    // drop the oldest after the head (the task, id 1); at 50 % (128) the others give their own
    // figures.
    let o = ctxlab(
        &root(),
        &[
            "table",
            "data/article12.jsonl",
            "--format",
            "csv",
            "--budgets",
            "50",
            "--strategies",
            "pinned,mask(keep_recent=10, min_chars=5),clear_tool_uses(keep=8, exclude_tools=[bash,grep]),summary(summary_size=20),amortized,oracle",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().skip(1).collect();
    // Lengths 23 27 18 13 18 21 17 24 27 22 17 18 (ids 1–12), required 1 3 6 9; capacity 128.
    // pinned: 1 (23), then 12, 11, 10, 9 (18, 17, 22, 27: 23 + 84 + 4 = 111); 8 would be 136.
    assert_eq!(
        rows[0],
        "50,pinned,128,111,0.56640625,0.500000,1.000000,true"
    );
    // mask: no tool results, so `recent` after the head (the task, id 1, 23): the rest has 105
    // with the separator to the head: 12, 11, 10, 9 = 84 + 3 + 1 = 88; 8 would make 113. Used
    // 23 + 88 = 111, required 1 and 9.
    assert_eq!(
        rows[1],
        "50,\"mask(keep_recent=10, min_chars=5)\",128,111,0.56640625,0.500000,1.000000,true"
    );
    assert_eq!(rows[2], "50,\"clear_tool_uses(keep=8, exclude_tools=[bash,grep])\",128,111,0.56640625,0.500000,1.000000,true");
    // summary: the head (1, 23) leaves 105; ids 2–6 summarised (20) + 1 + ids 7–12 (125 + 5) + 1
    // is over; folding 7, 8 still over (134, 109); fold 9: 1 + 20 + 1 + (57 + 2) = 81 ≤ 105.
    // Used 104; verbatim required: 1 of 4 (the head); 4 verbatim items of 5.
    assert_eq!(
        rows[3],
        "50,summary(summary_size=20),128,104,0.593750,0.250000,0.800000,true"
    );
    // amortized: 256 > 128; the head (1, 23) leaves 105, cut to 52: 12 (19), 11 (37), 10 would
    // be 60. Used 23 + 37 = 60.
    assert_eq!(
        rows[4],
        "50,amortized,128,60,0.765625,0.250000,1.000000,true"
    );
    // oracle: required by cost 3 (18), 6 (21), 1 (23), 9 (27): 92; then 12 (111), 11 (129 > 128,
    // skipped), 10 (134, skipped), 8, 7 skipped, 5 (18 → 130, skipped), 4 (13 → 125): 125.
    assert_eq!(
        rows[5],
        "50,oracle,128,125,0.51171875,1.000000,1.000000,true"
    );
}
