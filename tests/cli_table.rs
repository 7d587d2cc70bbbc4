//! `ctxlab table` through the binary: output formats and every bad-input case.

mod common;
use common::*;

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
