//! What a strategy may look at: sizes, kinds, tools and the (possibly wrong) flags — never the
//! ground truth.

use crate::cost::CostModel;
use crate::history::{CostedHistory, Kind};

#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub costs: &'a [u64],
    /// Text lengths in chars, whatever the cost model (see [`CostedHistory::chars`]).
    pub chars: &'a [u64],
    /// Lines of each record's text; 0 for stand-ins.
    pub lines: &'a [u32],
    pub kinds: &'a [Kind],
    pub tools: &'a [Option<String>],
    pub mask_costs: &'a [u64],
    pub clear_cost: u64,
    /// What SWE-agent's `Old environment output: (N lines omitted)` costs for each record (a
    /// stand-in already: its own cost).
    pub omitted_costs: &'a [u64],
    /// What OpenHands' `<MASKED>` costs.
    pub masked_cost: u64,
    pub separator: u64,
    pub flags: &'a [bool],
    /// The history's cost model, for what a stand-in text of a strategy's own costs.
    pub model: CostModel,
}

impl<'a> View<'a> {
    /// The history as the strategy sees it, with the given flags.
    pub fn new(history: &'a CostedHistory, flags: &'a [bool]) -> Self {
        assert_eq!(flags.len(), history.len(), "one flag per record");
        View {
            costs: &history.costs,
            chars: &history.chars,
            lines: &history.lines,
            kinds: &history.kinds,
            tools: &history.tools,
            mask_costs: &history.mask_costs,
            clear_cost: history.clear_cost,
            omitted_costs: &history.omitted_costs,
            masked_cost: history.masked_cost,
            separator: history.separator,
            flags,
            model: history.model,
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
            mask_costs: &self.mask_costs[..n],
            omitted_costs: &self.omitted_costs[..n],
            flags: &self.flags[..n],
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
            mask_costs: &self.mask_costs[range.clone()],
            omitted_costs: &self.omitted_costs[range.clone()],
            flags: &self.flags[range],
            ..self
        }
    }

    /// Cost of records `range` joined by separators.
    pub fn span_cost(&self, range: std::ops::Range<usize>) -> u64 {
        let n = range.len() as u64;
        self.costs[range].iter().sum::<u64>() + self.separator * n.saturating_sub(1)
    }
}
