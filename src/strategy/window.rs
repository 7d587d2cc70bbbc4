//! Steps shared by the strategies that rewrite old records and then trim from the oldest end
//! (`mask`, `clear_tool_uses`): which records of a kind are among the newest `k`, and keeping
//! the newest items that fit.

use super::{Context, Item, View};
use crate::history::Kind;

/// The position from which the newest `keep` records of `kind` start: records of that kind at
/// or after it are inside the window, older ones are outside. `keep = 0` puts every record
/// outside (returns `kinds.len()`); fewer than `keep` records of the kind put every one inside
/// (returns 0).
pub fn window_start(kinds: &[Kind], kind: Kind, keep: usize) -> usize {
    if keep == 0 {
        return kinds.len();
    }
    let mut seen = 0;
    for i in (0..kinds.len()).rev() {
        if kinds[i] == kind {
            seen += 1;
            if seen == keep {
                return i;
            }
        }
    }
    0
}

/// Emits, in original order, the newest of the items `item_of(0..n)` whose joined cost fits
/// `capacity`: the oldest items are dropped one by one until the rest fit (so the result is a
/// contiguous run ending at the newest record, possibly empty). Never infeasible.
pub fn push_dropping_oldest(
    view: View,
    capacity: u64,
    out: &mut Context,
    item_of: impl Fn(usize) -> (Item, u64),
) {
    let n = view.len();
    let sep = view.separator;
    let mut sum: u64 = (0..n).map(|i| item_of(i).1).sum();
    let mut start = 0;
    while start < n && out.joined_cost(sum, (n - start) as u64, sep) > capacity {
        sum -= item_of(start).1;
        start += 1;
    }
    for i in start..n {
        let (item, cost) = item_of(i);
        out.push(item, cost, sep);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Kind::{Assistant as A, ToolResult as R};

    #[test]
    fn window_counts_only_the_given_kind_from_the_newest() {
        let kinds = [R, A, R, A, R, A];
        assert_eq!(window_start(&kinds, R, 0), 6);
        assert_eq!(window_start(&kinds, R, 1), 4);
        assert_eq!(window_start(&kinds, R, 2), 2);
        assert_eq!(window_start(&kinds, R, 3), 0);
        assert_eq!(window_start(&kinds, R, 9), 0);
        assert_eq!(window_start(&[], R, 2), 0);
    }
}
