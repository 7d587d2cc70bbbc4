//! The guide's tables of names held to the registries they describe: a cache, a strategy or a
//! table format added to its list and not to the guide (or left in the guide when removed)
//! fails here.

use std::path::Path;

fn guide(page: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs")
        .join(page);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The names in the first column of the Markdown table whose header starts with `header`
/// (`| cache |`): the first code span of each row.
fn first_column(text: &str, header: &str) -> Vec<String> {
    let mut lines = text.lines().skip_while(|l| !l.starts_with(header));
    assert!(lines.next().is_some(), "no table headed {header:?}");
    lines
        .skip(1) // the `| --- |` line
        .take_while(|l| l.starts_with('|'))
        .map(|row| {
            let cell = row.split('|').nth(1).expect("a first cell");
            let start = cell.find('`').expect("the first cell names in code") + 1;
            let len = cell[start..].find(['`', '(']).expect("a closed code span");
            cell[start..start + len].to_string()
        })
        .collect()
}

#[test]
fn the_cache_table_lists_every_cache_in_the_registry_order() {
    let names = first_column(&guide("sessions.md"), "| cache | rule");
    assert_eq!(names, ctxlab::session::CacheKind::NAMES);
}

#[test]
fn the_price_table_gives_every_model_its_prices_in_the_table_order() {
    let text = guide("sessions.md");
    let mut lines = text
        .lines()
        .skip_while(|l| !l.starts_with("| model | input |"));
    assert!(lines.next().is_some(), "no price table in docs/sessions.md");
    let number = |cell: &str| -> f64 { cell.trim().parse().unwrap_or_else(|_| panic!("{cell:?}")) };
    let mut models = Vec::new();
    for row in lines.skip(1).take_while(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        // A row may name several models that share their prices: `claude-opus-4.1, claude-opus-4`.
        for name in cells[1].trim_end_matches(" (default)").split(", ") {
            let m = ctxlab::session::prices::lookup(name).unwrap();
            let listed = [cells[2], cells[3], cells[4], cells[5], cells[6]].map(number);
            let table = [
                m.input,
                m.output,
                m.cache_read_factor,
                m.cache_write_factor,
                m.min_tokens as f64,
            ];
            assert_eq!(listed, table, "docs/sessions.md's row of {name}");
            models.push(name.to_string());
        }
    }
    assert_eq!(models, ctxlab::session::prices::names());
}

#[test]
fn the_strategies_page_names_every_strategy_and_no_other() {
    let text = guide("strategies.md");
    let mut tables = first_column(&text, "| spec (defaults) |");
    tables.extend(first_column(&text, "| preset | harness |"));
    let known = ctxlab::strategy::NAMES;
    for name in &tables {
        assert!(
            known.contains(&name.as_str()),
            "docs/strategies.md lists {name:?}, which is no strategy"
        );
    }
    for name in known {
        let named = tables.iter().any(|t| t == name)
            || text.contains(&format!("- `{name}`"))
            || text.contains(&format!("`{name}("));
        assert!(
            named,
            "docs/strategies.md does not describe the strategy {name:?}"
        );
    }
}

#[test]
fn the_experiment_files_page_lists_every_table_format() {
    let keys: Vec<String> = ctxlab::formats::TableFormat::ALL
        .iter()
        .map(|f| format!("`{:?}`", f.key()))
        .collect();
    // `any of `"parquet"`, `"csv"``, in the registry's order.
    let listed = format!(
        "| `output.dir`, `output.formats` | output folder; any of {} ",
        keys.join(", ")
    );
    assert!(
        guide("experiment-files.md").contains(&listed),
        "docs/experiment-files.md does not list the formats as {listed:?}"
    );
}
