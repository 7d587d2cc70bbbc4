//! Stale contexts: a context that holds a record a later one overrides (a changed decision,
//! [`crate::history::History::supersessions`]) without the record overriding it, once that
//! one has appeared. The agent reading it acts on the old decision.
//!
//! A record is *held* when the context keeps it verbatim, a simulated summary carries it, or a
//! summary's text holds any of the facts that carry it ([`crate::history::facts::Facts::carried_by`]):
//! any trace of the old decision can mislead, and a new decision the context holds in part
//! still tells the agent the old one changed. A placeholder holds nothing.

/// The supersessions of `pairs` (`(overridden, overriding)`) that are stale in a context
/// holding the records `held` tells, over the first `appeared` records: the overriding record
/// has appeared, the overridden one is held and the overriding one is not.
pub fn count(pairs: &[(usize, usize)], appeared: usize, held: impl Fn(usize) -> bool) -> u32 {
    pairs
        .iter()
        .filter(|&&(old, new)| new < appeared && held(old) && !held(new))
        .count() as u32
}

#[cfg(test)]
mod tests {
    use super::count;

    #[test]
    fn stale_when_the_old_is_held_without_the_new() {
        // Record 2 overrides 0, record 7 overrides 3.
        let pairs = [(0, 2), (3, 7)];
        let held = |kept: &'static [usize]| move |i: usize| kept.contains(&i);
        // Kept 0 and 3, dropped 2 and 7: both stale.
        assert_eq!(count(&pairs, 10, held(&[0, 3])), 2);
        // Both of a pair kept, or only the new: not stale.
        assert_eq!(count(&pairs, 10, held(&[0, 2, 3, 7])), 0);
        assert_eq!(count(&pairs, 10, held(&[2, 7])), 0);
        // Neither kept: lost, not stale.
        assert_eq!(count(&pairs, 10, held(&[])), 0);
        // Record 7 has not appeared in the first 5 records: only (0, 2) can be stale.
        assert_eq!(count(&pairs, 5, held(&[0, 3])), 1);
    }
}
