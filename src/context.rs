//! What a strategy returns: an ordered list of items, each a record kept verbatim, a placeholder
//! standing for one record, or a summary standing for several.

/// One item of a context; indices are positions in the history (0-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item {
    /// The record's original text.
    Verbatim(usize),
    /// A short stand-in for the record (a masked or cleared tool result): its information is gone.
    Placeholder(usize),
    /// One summary standing for the records `first..end`; which of them it still carries is in
    /// [`Context::summary_kept`].
    Summary { first: usize, end: usize, cost: u64 },
}

/// A reusable context buffer: strategies clear and refill it, so the sweep's hot loop does not
/// allocate once the buffers have grown to the largest history.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Items in original order.
    pub items: Vec<Item>,
    /// The cost of each placeholder, in order (a stand-in costs what its own text costs, which
    /// only the strategy that wrote it knows; a verbatim record costs its record, a summary says
    /// its cost). Kept for placeholders alone: a push per verbatim item would slow every cell.
    pub placeholder_costs: Vec<u64>,
    /// Cost of the context under the history's cost model, separators included.
    pub cost: u64,
    /// Per record: whether a summary covering it still carries its information (meaningful only
    /// for records inside a [`Item::Summary`] range).
    pub summary_kept: Vec<bool>,
    /// A summary written as text (every summariser but the simulated one): its text, the facts
    /// found in it, and that it was (so scoring reads the facts, not `summary_kept`).
    pub summary_text: String,
    pub summary_facts: Vec<u32>,
    pub summary_from_text: bool,
    /// Scratch space for strategies that pick records out of order.
    pub(crate) chosen: Vec<bool>,
    /// Scratch space for strategies that visit records in an order of their own (the oracle).
    pub(crate) order: Vec<usize>,
    /// Scratch space for a stand-in text a strategy writes to cost it (Gemini CLI's
    /// truncation header), so costing it does not allocate once grown.
    pub(crate) text: String,
    /// The separator owed before a pinned tail that will follow whatever the rule keeps: the
    /// first item the rule adds pays it, so rules see the true room left.
    pub(crate) gap_to_tail: u64,
    /// The records `Strategy::apply` kept verbatim before the rule's view (the head): how many
    /// and their joined cost. Presets whose trigger counts the whole context (events, a share of
    /// the window) read them; the window a rule compacts against is its capacity plus the head.
    pub(crate) head_len: usize,
    pub(crate) head_cost: u64,
    /// What the session tells the rule before a compaction (kept across [`Context::clear`]).
    pub from_session: FromSession,
    /// What the rule reports of its compaction's model calls besides the items (reset by
    /// [`Context::clear`]).
    pub call_report: CallReport,
}

/// What the session sets in a context before a compaction, for the rule to read: none of it is
/// reset by [`Context::clear`], which runs before the rule.
#[derive(Debug, Clone, Default)]
pub struct FromSession {
    /// The session asks for a condensation now, whatever the trigger says (the provider refused
    /// the context as too long: OpenHands' `CondensationRequestAction`). Set by the session
    /// around one compaction and not reset by [`Context::clear`], which runs before the rule.
    pub condensation_requested: bool,
    /// An earlier compression of the session was rejected (Gemini CLI's
    /// `hasFailedCompressionAttempt`): set by the session before a compaction, not reset by
    /// [`Context::clear`]; a cell has no earlier attempt.
    pub compression_failed_before: bool,
    /// How many entries at the front of the view the session's latest compaction left (the
    /// entries after them were appended since): 0 in a cell and before a session's first
    /// compaction. Harnesses that treat what their last compaction kept apart from what came
    /// after it read it (pi summarises only what came after; OpenCode's continuation message
    /// starts a turn there). Set by the session before a compaction, not reset by
    /// [`Context::clear`]; it counts from the start of the whole view, head included.
    pub left_by_compaction: usize,
}

/// What a rule reports of its compaction's model calls beyond the items it keeps: set by the
/// rule, reset by [`Context::clear`], read by the session that bills the calls.
#[derive(Debug, Clone, Default)]
pub struct CallReport {
    /// This compaction was rejected as a failed attempt the harness remembers (set by the rule,
    /// reset by [`Context::clear`]).
    pub compression_failed: bool,
    /// What this compaction's summary call read besides the view records its summary stands
    /// for (Gemini CLI's environment-context message, which is not in a replayed transcript),
    /// in cost units; set by the rule, reset by [`Context::clear`].
    pub summary_read_extra: u64,
    /// A compression whose model calls ran and whose result the harness then rejected (Gemini
    /// CLI's inflated attempt): what its summary call read and the summary it wrote. The
    /// session bills those calls though the context is left as it was. Set by the rule, reset
    /// by [`Context::clear`].
    pub rejected_call: Option<(u64, u64)>,
}

impl Context {
    pub fn clear(&mut self, records: usize) {
        self.items.clear();
        self.placeholder_costs.clear();
        self.cost = 0;
        self.summary_kept.clear();
        self.summary_kept.resize(records, false);
        self.summary_text.clear();
        self.summary_facts.clear();
        self.summary_from_text = false;
        self.chosen.clear();
        self.chosen.resize(records, false);
        self.order.clear();
        self.gap_to_tail = 0;
        self.head_len = 0;
        self.head_cost = 0;
        self.call_report = CallReport::default();
    }

    /// Appends an item of the given cost, adding the separator when it is not the first.
    pub fn push(&mut self, item: Item, cost: u64, separator: u64) {
        self.cost = self.cost_with(cost, separator);
        if let Item::Placeholder(_) = item {
            self.placeholder_costs.push(cost);
        }
        self.items.push(item);
    }

    /// The cost of the context after adding an item of `cost`.
    pub fn cost_with(&self, cost: u64, separator: u64) -> u64 {
        let gap = if self.items.is_empty() {
            self.gap_to_tail
        } else {
            separator
        };
        self.cost + cost + gap
    }

    /// The cost of `count` items of total size `sum` joined by separators, as this context
    /// counts it (with the gap to a pinned tail, if any).
    pub fn joined_cost(&self, sum: u64, count: u64, separator: u64) -> u64 {
        Context::joined(sum, count, separator, self.gap_to_tail)
    }

    /// The cost of `count` items of total size `sum` joined by separators, the first of them
    /// paying `first_gap` for what comes before it (nothing, a head, or a pinned tail's gap).
    /// For a rule whose loop holds `chosen` mutably, where `joined_cost` cannot borrow `self`.
    pub(crate) fn joined(sum: u64, count: u64, separator: u64, first_gap: u64) -> u64 {
        match count {
            0 => 0,
            n => sum + separator * (n - 1) + first_gap,
        }
    }

    /// The cost of every item in order, given the costs of the records the items index.
    pub fn item_costs(&self, record_costs: &[u64]) -> Vec<u64> {
        let mut placeholders = self.placeholder_costs.iter();
        self.items
            .iter()
            .map(|item| match *item {
                Item::Verbatim(i) => record_costs[i],
                Item::Placeholder(_) => placeholders.next().copied().unwrap_or(0),
                Item::Summary { cost, .. } => cost,
            })
            .collect()
    }

    /// Emits the records marked in `chosen` as verbatim items, in original order, after
    /// whatever the context already holds: the cost `push` would reach item by item, added
    /// once (a push per record was most of the cost of `required`).
    pub(crate) fn emit_chosen(&mut self, costs: &[u64], separator: u64) {
        let chosen = &self.chosen[..costs.len()];
        let before = self.items.len();
        // Every record written to the next free slot and the slot taken only when chosen: no
        // branch on `chosen`, whose pattern (the flags) the processor cannot predict.
        self.items.resize(before + costs.len(), Item::Verbatim(0));
        let mut end = before;
        for (i, &c) in chosen.iter().enumerate() {
            self.items[end] = Item::Verbatim(i);
            end += usize::from(c);
        }
        self.items.truncate(end);
        let sum: u64 = costs
            .iter()
            .zip(chosen)
            .map(|(&cost, &c)| cost * u64::from(c))
            .sum();
        // The first record pays the gap `push` would charge it: to the tail's, or a separator.
        let first_gap = if before == 0 {
            self.gap_to_tail
        } else {
            separator
        };
        self.cost += Context::joined(sum, (end - before) as u64, separator, first_gap);
    }

    /// Puts the items back in original order (for strategies that build newest first).
    pub(crate) fn reverse(&mut self) {
        self.items.reverse();
        self.placeholder_costs.reverse();
    }
}

/// Whether a strategy could meet the capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Feasible,
    /// What the strategy must keep does not fit: an outcome of the cell, not a crash.
    Infeasible,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitting_the_chosen_records_costs_what_pushing_them_one_by_one_costs() {
        // Costs 5, 7, 11, 13; separator 2; records 1 and 3 chosen.
        let costs = [5, 7, 11, 13];
        for (head, gap) in [(false, 0), (false, 3), (true, 0), (true, 3)] {
            let mut emitted = Context::default();
            emitted.clear(4);
            emitted.gap_to_tail = gap;
            let mut pushed = emitted.clone();
            if head {
                emitted.push(Item::Placeholder(0), 4, 2);
                pushed.push(Item::Placeholder(0), 4, 2);
            }
            emitted.chosen[1] = true;
            emitted.chosen[3] = true;
            emitted.emit_chosen(&costs, 2);
            pushed.push(Item::Verbatim(1), 7, 2);
            pushed.push(Item::Verbatim(3), 13, 2);
            assert_eq!(emitted.items, pushed.items, "head {head}, gap {gap}");
            assert_eq!(emitted.cost, pushed.cost, "head {head}, gap {gap}");
        }
        // By hand, with no head and a gap of 3: 3 + 7 + 2 + 13.
        let mut c = Context::default();
        c.clear(4);
        c.gap_to_tail = 3;
        c.chosen[1] = true;
        c.chosen[3] = true;
        c.emit_chosen(&costs, 2);
        assert_eq!(c.cost, 25);
        // Nothing chosen: nothing added, not even a separator.
        let mut none = Context::default();
        none.clear(4);
        none.emit_chosen(&costs, 2);
        assert_eq!((none.items.len(), none.cost), (0, 0));
    }
}
