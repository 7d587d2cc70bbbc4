//! The context of a running session: a list of entries, each an original record, a
//! placeholder, a summary or the notes read back, with what each carries.
//!
//! Which records an entry carries is kept per record, not per entry, so nothing is allocated
//! per compaction: a record is either in the context verbatim (as its own entry), inside one
//! summary (with a bit saying whether the summary still carries its information), or neither;
//! the notes read back carry every record noted before the read-back, verbatim.

/// "No summary".
pub(crate) const NONE: u32 = u32::MAX;

/// Where an entry comes from; two entries are the same text exactly when their origins and
/// costs are equal (what the prompt cache compares).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// Record `r` of the history, verbatim.
    Record(u32),
    /// A stand-in for record `r` (masked or cleared): its information is gone.
    Placeholder(u32),
    /// Summary number `id` of the session (numbered in order of creation).
    Summary(u32),
    /// A stand-in for summary `id` (a strategy masked a summary): its information is gone.
    SummaryPlaceholder(u32),
    /// The notes read back at a compaction, holding the first `n` notes written.
    Notes(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub origin: Origin,
    pub cost: u64,
}

/// How the placeholders of a strategy's context are priced. The strategy API gives the
/// context's total cost but not which stand-in each placeholder is, so the session infers it:
/// the mask placeholders if their costs add up to what is left, else the cleared placeholder,
/// else (a strategy mixing stand-ins) what is left split evenly, the remainder on the first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlaceholderCost {
    Mask,
    Clear(u64),
    Even { each: u64, remainder: u64 },
}

impl PlaceholderCost {
    pub fn infer(total: u64, count: u64, mask_sum: u64, clear_cost: u64) -> Self {
        if count == 0 || total == mask_sum {
            PlaceholderCost::Mask
        } else if total == count * clear_cost {
            PlaceholderCost::Clear(clear_cost)
        } else {
            PlaceholderCost::Even {
                each: total / count,
                remainder: total % count,
            }
        }
    }

    /// The cost of the `nth` placeholder (0-based) whose mask stand-in costs `mask_cost`.
    pub fn cost(self, nth: u64, mask_cost: u64) -> u64 {
        match self {
            PlaceholderCost::Mask => mask_cost,
            PlaceholderCost::Clear(c) => c,
            PlaceholderCost::Even { each, remainder } => {
                each + if nth == 0 { remainder } else { 0 }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholder_costs_are_inferred_from_the_total() {
        assert_eq!(PlaceholderCost::infer(30, 2, 30, 25), PlaceholderCost::Mask);
        assert_eq!(
            PlaceholderCost::infer(50, 2, 30, 25),
            PlaceholderCost::Clear(25)
        );
        let even = PlaceholderCost::infer(41, 2, 30, 25);
        assert_eq!(even.cost(0, 9) + even.cost(1, 9), 41);
    }
}
