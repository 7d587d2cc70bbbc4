//! A history with every size computed once, which is all the strategies work on: costs, kinds,
//! tools and the costs of the placeholders that could stand in for a record. Texts are kept for
//! the summarisers that write text; the other strategies never touch them.

use super::facts::Facts;
use super::record::{History, Kind};
use crate::cost::CostModel;
use std::sync::Arc;

/// The text that stands for a masked tool result, naming its tool.
pub fn mask_placeholder(tool: Option<&str>) -> String {
    format!("[Previous: used {}]", tool.unwrap_or("a tool"))
}

/// The text that stands for a cleared tool result or tool call.
pub const CLEARED_PLACEHOLDER: &str = "[cleared to save context]";

/// The text SWE-agent's history processors put in place of an old observation of `lines`
/// lines (`sweagent/agent/history_processors.py`).
pub fn omitted_placeholder(lines: u32) -> String {
    format!("Old environment output: ({lines} lines omitted)")
}

/// The text OpenHands' observation masking puts in place of an observation.
pub const MASKED_PLACEHOLDER: &str = "<MASKED>";

/// The cost of [`omitted_placeholder`] for each line count, each distinct count costed once.
fn omitted_costs(lines: &[u32], model: CostModel) -> Vec<u64> {
    let mut by_lines: std::collections::HashMap<u32, u64> = std::collections::HashMap::new();
    lines
        .iter()
        .map(|&n| {
            *by_lines
                .entry(n)
                .or_insert_with(|| model.cost(&omitted_placeholder(n)))
        })
        .collect()
}

/// `(fact, file)`, sorted: each fact that is a viewed file's path or file name, as the
/// tokenizer finds them in the path.
fn file_names(files: &super::recovery::FileIndex, facts: &Facts) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = files
        .files
        .iter()
        .enumerate()
        .flat_map(|(id, f)| {
            super::tokens::distinctive_tokens(&f.path)
                .filter_map(|t| facts.id(t))
                .map(move |fact| (fact, id as u32))
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// What a provider billed one model call for, as its transcript records it, in the provider's
/// tokens: the prompt is `uncached + cache_read + cache_write`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Usage {
    /// Prompt tokens billed at the plain input price.
    pub uncached: u64,
    /// Prompt tokens served from the provider's cache.
    pub cache_read: u64,
    /// Prompt tokens written to the cache (Anthropic's `cache_creation_input_tokens`; 0 for
    /// providers that bill no writes).
    pub cache_write: u64,
    pub output: u64,
}

impl Usage {
    /// The whole prompt.
    pub fn input(&self) -> u64 {
        self.uncached + self.cache_read + self.cache_write
    }
}

/// One model call a transcript records usage for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordedCall {
    /// The first record of the call's response: the call was made on the records before it.
    pub at: usize,
    pub usage: Usage,
}

#[derive(Debug, Clone)]
pub struct CostedHistory {
    pub name: String,
    pub model: CostModel,
    pub ids: Vec<u64>,
    pub costs: Vec<u64>,
    /// The stand-ins' costs and the text measures that decide them.
    pub stand_ins: StandIns,
    pub kinds: Vec<Kind>,
    pub tools: Vec<Option<String>>,
    /// Ground truth; only scoring (and the oracle, through the runner) may read it.
    pub truth: Vec<bool>,
    /// What the flags strategies see start from before label noise: the truth, unless the
    /// history carries flags of its own (a real run's `histories.flags` rules).
    pub flag_base: Vec<bool>,
    pub separator: u64,
    /// Cost of the whole history, separators included.
    pub total: u64,
    /// The usage its transcript records, call by call, oldest first (empty: none recorded, as
    /// for generated and JSONL histories); what `session.cache = "recorded"` bills.
    pub recorded: Vec<RecordedCall>,
    /// The facts `fact_retention` and `needed_fact_retention` score.
    pub scored: ScoredFacts,
    /// The history itself and its task statement.
    pub text: SourceText,
    /// What can be fetched again once dropped.
    pub fetchable: Fetchable,
}

/// What the stand-ins a strategy may put in place of a record cost, and the text measures
/// that decide them.
#[derive(Debug, Clone)]
pub struct StandIns {
    /// Length of each record's text in Unicode scalar values, whatever the cost model: what
    /// `mask(min_chars=...)` compares against, as the harnesses it comes from do.
    pub chars: Vec<u64>,
    /// Lines of each record's text (as Python's `splitlines` counts them): what a harness's
    /// `(N lines omitted)` stand-in says.
    pub lines: Vec<u32>,
    /// Cost of [`mask_placeholder`] for each record.
    pub mask_costs: Vec<u64>,
    /// Cost of [`CLEARED_PLACEHOLDER`] (the same for every record).
    pub clear_cost: u64,
    /// Cost of [`omitted_placeholder`] for each record, by its line count.
    pub omitted_costs: Vec<u64>,
    /// Cost of [`MASKED_PLACEHOLDER`].
    pub masked_cost: u64,
}

/// What the agent can fetch again once a record is dropped: the files the history views,
/// the records that are re-runnable reads, and the facts that name a viewed file.
#[derive(Debug, Clone)]
pub struct Fetchable {
    /// Per record: a re-runnable read the agent can fetch again once dropped, judged over the
    /// whole history ([`super::recovery`]); every other record is lost when dropped.
    pub recoverable: Vec<bool>,
    /// The files the history views, and what can be fetched again at any moment.
    pub files: super::recovery::FileIndex,
    /// `(fact, file)`, sorted: the facts that name a viewed file (its path or its file name).
    pub file_names: Vec<(u32, u32)>,
}

/// The facts scoring reads: what each record says first, and those of the required records
/// (all and the needed ones).
#[derive(Debug, Clone)]
pub struct ScoredFacts {
    /// What each record says first: what `fact_retention` scores.
    pub facts: Facts,
    /// The facts the required records introduce (`facts.required(&truth)`).
    pub required_facts: Vec<u32>,
    /// The needed ones among them (`facts.needed_of(&required_facts)`): what
    /// `needed_fact_retention` scores.
    pub needed_facts: Vec<u32>,
}

/// The history's own text, for the summarisers that write text.
#[derive(Debug, Clone)]
pub struct SourceText {
    /// The history itself, shared rather than copied: only summarisers that write text read
    /// its records' texts (extractive, llm, recorded).
    pub source: Arc<History>,
    /// The task statement: the first `user` record, if any (what the extractive summariser
    /// ranks lines against).
    pub task: Option<usize>,
}

impl CostedHistory {
    /// Costs a copy of `history` (see [`CostedHistory::shared`] to cost one without copying).
    pub fn new(history: &History, model: CostModel) -> Self {
        CostedHistory::shared(Arc::new(history.clone()), model)
    }

    /// Costs `history`, keeping it shared for the summarisers that read texts.
    pub fn shared(source: Arc<History>, model: CostModel) -> Self {
        let history = &*source;
        let costs: Vec<u64> = history
            .records
            .iter()
            .map(|r| model.cost(&r.text))
            .collect();
        let separator = model.separator();
        let total = costs.iter().sum::<u64>() + separator * (costs.len() as u64).saturating_sub(1);
        let lines: Vec<u32> = history
            .records
            .iter()
            .map(|r| u32::try_from(r.text.lines().count()).unwrap_or(u32::MAX))
            .collect();
        let truth = history.truth();
        let facts = Facts::of(history);
        let files = super::recovery::FileIndex::of(&history.records);
        let file_names = file_names(&files, &facts);
        let required_facts = facts.required(&truth);
        CostedHistory {
            name: history.name.clone(),
            model,
            ids: history.records.iter().map(|r| r.id).collect(),
            stand_ins: StandIns {
                chars: history
                    .records
                    .iter()
                    .map(|r| r.text.chars().count() as u64)
                    .collect(),
                mask_costs: history
                    .records
                    .iter()
                    .map(|r| model.cost(&mask_placeholder(r.tool.as_deref())))
                    .collect(),
                clear_cost: model.cost(CLEARED_PLACEHOLDER),
                omitted_costs: omitted_costs(&lines, model),
                masked_cost: model.cost(MASKED_PLACEHOLDER),
                lines,
            },
            kinds: history.records.iter().map(|r| r.kind).collect(),
            tools: history.records.iter().map(|r| r.tool.clone()).collect(),
            scored: ScoredFacts {
                needed_facts: facts.needed_of(&required_facts),
                required_facts,
                facts,
            },
            truth,
            flag_base: history.flag_base(),
            costs,
            separator,
            total,
            recorded: Vec::new(),
            text: SourceText {
                task: history.records.iter().position(|r| r.kind == Kind::User),
                source: source.clone(),
            },
            fetchable: Fetchable {
                recoverable: (0..history.len())
                    .map(|i| files.recoverable_at(i, history.len()))
                    .collect(),
                file_names,
                files,
            },
        }
    }

    /// The history with its facts found again, the records marked in `not_uses` using
    /// nothing ([`Facts::excluding_uses`]; the needed facts follow).
    pub fn excluding_uses(mut self, not_uses: &[bool]) -> Self {
        let scored = &mut self.scored;
        scored.facts = Facts::excluding_uses(&self.text.source, scored.facts.min_gap(), not_uses);
        scored.required_facts = scored.facts.required(&self.truth);
        scored.needed_facts = scored.facts.needed_of(&scored.required_facts);
        self.fetchable.file_names = file_names(&self.fetchable.files, &scored.facts);
        self
    }

    /// Each record's text, in order.
    pub fn records(&self) -> &[super::Record] {
        &self.text.source.records
    }

    /// The task statement's text (empty without a `user` record).
    pub fn task_text(&self) -> &str {
        self.text
            .task
            .map_or("", |t| &self.text.source.records[t].text)
    }

    /// The history with the usage its transcript records.
    pub fn with_recorded(mut self, recorded: Vec<RecordedCall>) -> Self {
        self.recorded = recorded;
        self
    }

    pub fn len(&self) -> usize {
        self.costs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.costs.is_empty()
    }

    pub fn required_total(&self) -> usize {
        self.truth.iter().filter(|&&t| t).count()
    }

    /// Capacity for a budget given as a percentage of the total: `floor(total × P / 100)`.
    pub fn capacity(&self, budget_percent: f64) -> u64 {
        capacity_for(self.total, budget_percent)
    }
}

/// `floor(total × P / 100)`, exact in integers for whole percentages (the article's rule) and
/// rounded down for fractional ones.
pub fn capacity_for(total: u64, budget_percent: f64) -> u64 {
    if budget_percent.fract() == 0.0 {
        (total as u128 * budget_percent as u128 / 100) as u64
    } else {
        (total as f64 * budget_percent / 100.0).floor() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Record;

    #[test]
    fn totals_count_separators_and_capacities_round_down() {
        let h = History::new(
            "h",
            vec![
                Record::new(1, "abc"),
                Record::new(2, "日本"),
                Record::new(3, ""),
            ],
        );
        let c = CostedHistory::new(&h, CostModel::Chars);
        assert_eq!(c.costs, vec![3, 2, 0]);
        assert_eq!(c.stand_ins.chars, vec![3, 2, 0]);
        assert_eq!(c.total, 7); // 3 + 2 + 0 and two separators
        assert_eq!(c.capacity(50.0), 3);
        let bytes = CostedHistory::new(&h, CostModel::Bytes);
        assert_eq!(bytes.total, 3 + 6 + 2);
        assert_eq!(bytes.stand_ins.chars, vec![3, 2, 0]);
        assert_eq!(capacity_for(256, 70.0), 179);
        assert_eq!(capacity_for(256, 12.5), 32);
    }

    #[test]
    fn placeholders_name_the_tool() {
        assert_eq!(mask_placeholder(Some("bash")), "[Previous: used bash]");
        let h = History::new("h", vec![Record::new(1, "x").tool("bash")]);
        assert_eq!(
            CostedHistory::new(&h, CostModel::Chars)
                .stand_ins
                .mask_costs,
            vec![21]
        );
        // SWE-agent's stand-in says how many lines it replaces; OpenHands' is one word.
        let h = History::new(
            "h",
            vec![
                Record::new(1, "a\nb\nc"),
                Record::new(2, "x".repeat(12).replace('x', "l\n")),
            ],
        );
        let c = CostedHistory::new(&h, CostModel::Chars);
        assert_eq!(c.stand_ins.lines, vec![3, 12]);
        assert_eq!(
            c.stand_ins.omitted_costs,
            vec![
                "Old environment output: (3 lines omitted)".len() as u64,
                "Old environment output: (12 lines omitted)".len() as u64
            ]
        );
        assert_eq!(c.stand_ins.masked_cost, 8);
    }
}
