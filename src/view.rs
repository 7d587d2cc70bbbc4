//! What a strategy may look at: sizes, kinds, tools and the (possibly wrong) flags — never the
//! ground truth.

use crate::cost::CostModel;
use crate::history::facts::Facts;
use crate::history::{CostedHistory, Kind, Record};

/// Where the text of a view's entry is, for summarisers that write text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextRef {
    /// Record `r` of the history.
    Record(u32),
    /// Summary `id` of a session.
    Summary(u32),
    /// A stand-in: the harness's fixed text, which names no record's facts.
    Stand,
}

/// The texts of a view's entries.
#[derive(Debug, Clone, Copy)]
pub enum Texts<'a> {
    /// A cell: entry `i` is record `i` of these.
    Records(&'a [Record]),
    /// A session's context: entries refer to records or to summaries written so far.
    Entries {
        records: &'a [Record],
        summaries: &'a [String],
        entries: &'a [TextRef],
    },
}

impl<'a> Texts<'a> {
    /// Entry `i`'s text ("" for a stand-in).
    pub fn get(&self, i: usize) -> &'a str {
        match *self {
            Texts::Records(r) => &r[i].text,
            Texts::Entries {
                records,
                summaries,
                entries,
            } => match entries[i] {
                TextRef::Record(r) => &records[r as usize].text,
                TextRef::Summary(id) => &summaries[id as usize],
                TextRef::Stand => "",
            },
        }
    }

    /// When entry `i` was written, if it is a record whose transcript says (a stand-in or a
    /// summary of the session has no time): what a rule keyed to idle time reads.
    pub fn time(&self, i: usize) -> Option<crate::history::Time> {
        match *self {
            Texts::Records(r) => r[i].time,
            Texts::Entries {
                records, entries, ..
            } => match entries[i] {
                TextRef::Record(r) => records[r as usize].time,
                TextRef::Summary(_) | TextRef::Stand => None,
            },
        }
    }

    /// Whether entry `i` is a record of the history (not a stand-in or a summary of the session).
    pub fn is_record(&self, i: usize) -> bool {
        match *self {
            Texts::Records(_) => true,
            Texts::Entries { entries, .. } => matches!(entries[i], TextRef::Record(_)),
        }
    }

    fn slice(self, range: std::ops::Range<usize>) -> Self {
        match self {
            Texts::Records(r) => Texts::Records(&r[range]),
            Texts::Entries {
                records,
                summaries,
                entries,
            } => Texts::Entries {
                records,
                summaries,
                entries: &entries[range],
            },
        }
    }
}

/// What the stand-ins that strategies put in place of a record cost, as the history's cost
/// model counts their fixed texts.
#[derive(Debug, Clone, Copy)]
pub struct StandInCosts<'a> {
    /// What a mask of each record costs.
    pub mask_costs: &'a [u64],
    /// What a cleared tool result's placeholder costs.
    pub clear_cost: u64,
    /// What SWE-agent's `Old environment output: (N lines omitted)` costs for each record (a
    /// stand-in already: its own cost).
    pub omitted_costs: &'a [u64],
    /// What OpenHands' `<MASKED>` costs.
    pub masked_cost: u64,
}

impl StandInCosts<'_> {
    /// Those of records `range` only.
    fn slice(self, range: std::ops::Range<usize>) -> Self {
        StandInCosts {
            mask_costs: &self.mask_costs[range.clone()],
            omitted_costs: &self.omitted_costs[range],
            ..self
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub costs: &'a [u64],
    /// Text lengths in chars, whatever the cost model (see [`crate::history::StandIns::chars`]).
    pub chars: &'a [u64],
    /// Lines of each record's text; 0 for stand-ins.
    pub lines: &'a [u32],
    pub kinds: &'a [Kind],
    pub tools: &'a [Option<String>],
    pub stand_ins: StandInCosts<'a>,
    pub separator: u64,
    pub flags: &'a [bool],
    /// The history's cost model, for what a stand-in text of a strategy's own costs.
    pub model: CostModel,
    /// The entries' texts, the task statement and the history's facts: what summarisers that
    /// write text read (the other strategies work on sizes alone).
    pub texts: Texts<'a>,
    pub task: &'a str,
    pub facts: &'a Facts,
    /// Units every call sends ahead of the view that no strategy can touch (a session's
    /// fixed prefix, [`crate::session::SessionConfig::prefix_tokens`]; 0 in a cell): a trigger
    /// counted in tokens counts them, as the provider does.
    pub fixed_prefix: u64,
}

impl<'a> View<'a> {
    /// The history as the strategy sees it, with the given flags.
    pub fn new(history: &'a CostedHistory, flags: &'a [bool]) -> Self {
        assert_eq!(flags.len(), history.len(), "one flag per record");
        View {
            costs: &history.costs,
            chars: &history.stand_ins.chars,
            lines: &history.stand_ins.lines,
            kinds: &history.kinds,
            tools: &history.tools,
            stand_ins: StandInCosts {
                mask_costs: &history.stand_ins.mask_costs,
                clear_cost: history.stand_ins.clear_cost,
                omitted_costs: &history.stand_ins.omitted_costs,
                masked_cost: history.stand_ins.masked_cost,
            },
            separator: history.separator,
            flags,
            model: history.model,
            texts: Texts::Records(history.records()),
            task: history.task_text(),
            facts: &history.scored.facts,
            fixed_prefix: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.costs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.costs.is_empty()
    }

    /// The oldest `n` records only.
    pub fn prefix(self, n: usize) -> Self {
        View {
            costs: &self.costs[..n],
            chars: &self.chars[..n],
            lines: &self.lines[..n],
            kinds: &self.kinds[..n],
            tools: &self.tools[..n],
            stand_ins: self.stand_ins.slice(0..n),
            flags: &self.flags[..n],
            texts: self.texts.slice(0..n),
            ..self
        }
    }

    /// Records `range` only (indices in the result start at 0).
    pub fn slice(self, range: std::ops::Range<usize>) -> Self {
        View {
            costs: &self.costs[range.clone()],
            chars: &self.chars[range.clone()],
            lines: &self.lines[range.clone()],
            kinds: &self.kinds[range.clone()],
            tools: &self.tools[range.clone()],
            stand_ins: self.stand_ins.slice(range.clone()),
            flags: &self.flags[range.clone()],
            texts: self.texts.slice(range),
            ..self
        }
    }

    /// Cost of records `range` joined by separators.
    pub fn span_cost(&self, range: std::ops::Range<usize>) -> u64 {
        let n = range.len() as u64;
        self.costs[range].iter().sum::<u64>() + self.separator * n.saturating_sub(1)
    }
}
