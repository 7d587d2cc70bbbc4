//! Facts and `fact_retention` on hand-made histories: a required record's facts are the
//! distinctive tokens it is the first to hold, kept wherever the context's text still holds
//! the token.

use ctxlab::context::{Context, Item, Outcome};
use ctxlab::history::facts::Facts;
use ctxlab::history::generate::{generate_one, GenerateConfig, Position};
use ctxlab::history::{CostedHistory, History, Kind, Record};
use ctxlab::{score, CostModel};

/// r0 (required): the task, introducing parse_args, src/cli.rs and cli.rs (a path ending in a
/// file name gives both); r1: a tool result repeating parse_args; r2 (required): E0308;
/// r3: nothing distinctive. Required facts: 3 + 1 = 4.
fn hand() -> CostedHistory {
    let records = vec![
        Record::new(1, "fix parse_args in src/cli.rs")
            .kind(Kind::User)
            .required(true),
        Record::new(2, "see parse_args line 3")
            .kind(Kind::ToolResult)
            .tool("bash"),
        Record::new(3, "error E0308 here")
            .kind(Kind::ToolResult)
            .tool("bash")
            .required(true),
        Record::new(4, "ok").kind(Kind::Assistant),
    ];
    CostedHistory::new(&History::new("hand", records), CostModel::Chars)
}

fn context(items: &[Item], kept: &[usize]) -> Context {
    let mut c = Context::default();
    c.clear(4);
    for &item in items {
        c.push(item, 5, 1);
    }
    for &i in kept {
        c.summary_kept[i] = true;
    }
    c
}

fn facts_of(items: &[Item], kept: &[usize]) -> (u32, u32, Option<f64>) {
    let m = score(&hand(), Outcome::Feasible, &context(items, kept));
    (m.facts.facts_kept, m.facts.facts_total, m.fact_retention())
}

#[test]
fn records_own_what_they_say_first() {
    let h = hand();
    let f = &h.scored.facts;
    let owned = |i| {
        f.owned(i)
            .map(|x| f.name(x).to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(owned(0), ["cli.rs", "parse_args", "src/cli.rs"]);
    // r1 repeats parse_args and owns nothing; the tool's name `bash` is no fact anyway.
    assert!(owned(1).is_empty());
    assert_eq!(owned(2), ["E0308"]);
    assert!(owned(3).is_empty());
    assert_eq!(f.held_by(f.id("parse_args").unwrap()), [0, 1]);
}

#[test]
fn verbatim_records_keep_their_facts_and_the_facts_they_repeat() {
    use Item::Verbatim as V;
    // Everything required kept: 4 of 4.
    assert_eq!(facts_of(&[V(0), V(2)], &[]), (4, 4, Some(1.0)));
    // Only r1 and r3: parse_args survives in r1's text: 1 of 4.
    assert_eq!(facts_of(&[V(1), V(3)], &[]), (1, 4, Some(0.25)));
}

#[test]
fn placeholders_keep_nothing() {
    use Item::{Placeholder as P, Verbatim as V};
    // The stand-ins for r0 and r2 name no fact; r1 still says parse_args: 1 of 4.
    assert_eq!(facts_of(&[P(0), V(1), P(2)], &[]), (1, 4, Some(0.25)));
    assert_eq!(facts_of(&[P(0), P(2)], &[]), (0, 4, Some(0.0)));
}

#[test]
fn a_summary_keeps_the_facts_of_the_records_it_carries() {
    use Item::Verbatim as V;
    let s = Item::Summary {
        first: 0,
        end: 3,
        cost: 5,
    };
    // Carrying r2 only: E0308, 1 of 4.
    assert_eq!(facts_of(&[s, V(3)], &[2]), (1, 4, Some(0.25)));
    // Carrying r1 only: its text repeats parse_args, 1 of 4 (though r0 itself is lost).
    assert_eq!(facts_of(&[s, V(3)], &[1]), (1, 4, Some(0.25)));
    // Carrying r0 and r2: 4 of 4.
    assert_eq!(facts_of(&[s], &[0, 2]), (4, 4, Some(1.0)));
}

#[test]
fn an_infeasible_cell_keeps_no_fact_and_a_history_without_facts_has_no_share() {
    let m = score(&hand(), Outcome::Infeasible, &Context::default());
    assert_eq!(
        (m.facts.facts_total, m.facts.facts_kept, m.fact_retention()),
        (4, 0, None)
    );
    let plain = CostedHistory::new(
        &History::new("plain", vec![Record::new(1, "just words").required(true)]),
        CostModel::Chars,
    );
    let mut c = Context::default();
    c.clear(1);
    c.push(Item::Verbatim(0), 10, 1);
    let m = score(&plain, Outcome::Feasible, &c);
    assert_eq!((m.facts.facts_total, m.fact_retention()), (0, None));
    assert_eq!(m.required_retention(), Some(1.0));
}

#[test]
fn generated_histories_plant_one_fact_per_record() {
    let cfg = GenerateConfig {
        count: 3,
        records: [20, 60],
        required_share: 0.2,
        required_position: Position::Early,
        seed: 1,
        reuse_required: 0.8,
        reuse_other: 0.15,
        supersede_rate: 0.0,
    };
    for index in 0..3 {
        let h = generate_one(&cfg, index);
        let f = Facts::of(&h);
        let mut planted = 0;
        for (i, r) in h.records.iter().enumerate() {
            let owned: Vec<&str> = f.owned(i).map(|x| f.name(x)).collect();
            let fact = format!("fact_{i}");
            if r.text.split([' ', '\n']).any(|w| w == fact) {
                // Its own fact and nothing else: tool names are no facts, words are plain.
                assert_eq!(owned, [fact.as_str()], "record {i}: {:?}", r.text);
                planted += 1;
            } else {
                assert!(owned.is_empty(), "record {i}: {owned:?}");
                // Only a record too short for `fact_<i> ` after its opening words lacks one.
                assert!(r.text.len() < 14 + fact.len(), "record {i}: {:?}", r.text);
            }
        }
        assert!(planted * 10 >= h.len() * 9, "{planted} of {}", h.len());
    }
}
