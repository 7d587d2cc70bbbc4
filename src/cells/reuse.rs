//! Cells whose rows an earlier noise level or replicate of the same history already gave. A
//! strategy that draws nothing builds the same context from the same flags (and one that reads
//! no flag from any flags): its cells are copied from the first time it met them, with the new
//! cell's replicate, noise level and realised noise. `recent` in `noise.toml` meets 40 flag
//! draws per history and is evaluated once; `required` is evaluated once per distinct draw.

/// What one worker remembers of the history it is evaluating. Cleared per history.
#[derive(Debug, Default)]
pub struct Reuse {
    /// The distinct flag vectors met so far, `len` flags each, one after another.
    flags: Vec<bool>,
    len: usize,
    /// Per strategy and flag vector (`ANY_FLAGS` for a strategy that reads none): where its
    /// first block of rows (every keep_recent and budget) sits in the output.
    blocks: Vec<(u16, u32, usize)>,
}

/// The flag key of a strategy whose context no flag changes.
const ANY_FLAGS: u32 = u32::MAX;

impl Reuse {
    /// Forgets the last history; the next one has `len` records.
    pub fn start(&mut self, len: usize) {
        self.flags.clear();
        self.blocks.clear();
        self.len = len;
    }

    /// The key of this draw of flags: the index of the first equal draw met for this history.
    pub fn key_of(&mut self, flags: &[bool]) -> u32 {
        debug_assert_eq!(flags.len(), self.len);
        if self.len == 0 {
            return 0; // every draw of no flags is the same
        }
        let known = self
            .flags
            .chunks_exact(self.len)
            .position(|seen| seen == flags);
        known.unwrap_or_else(|| {
            self.flags.extend_from_slice(flags);
            self.flags.len() / self.len - 1
        }) as u32
    }

    /// The key of a strategy's block: `reads_flags` from [`crate::strategy::Strategy::reusable`].
    pub fn block_key(strategy: usize, reads_flags: bool, flags: u32) -> (u16, u32) {
        (strategy as u16, if reads_flags { flags } else { ANY_FLAGS })
    }

    /// Where the block of `key` starts in the output, if it was evaluated already.
    pub fn find(&self, key: (u16, u32)) -> Option<usize> {
        self.blocks
            .iter()
            .find(|&&(s, f, _)| (s, f) == key)
            .map(|&(_, _, at)| at)
    }

    /// Remembers that the block of `key` starts at `at` in the output.
    pub fn remember(&mut self, key: (u16, u32), at: usize) {
        self.blocks.push((key.0, key.1, at));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_draws_share_a_key_and_blocks_are_found_by_strategy_and_draw() {
        let mut r = Reuse::default();
        r.start(3);
        assert_eq!(r.key_of(&[true, false, false]), 0);
        assert_eq!(r.key_of(&[false, false, false]), 1);
        assert_eq!(r.key_of(&[true, false, false]), 0);
        assert_eq!(r.key_of(&[false, false, true]), 2);
        let required = Reuse::block_key(1, true, 2);
        let recent = Reuse::block_key(0, false, 2);
        assert_eq!(r.find(required), None);
        r.remember(required, 40);
        r.remember(recent, 20);
        assert_eq!(r.find(required), Some(40));
        assert_eq!(r.find(Reuse::block_key(1, true, 0)), None);
        // A strategy that reads no flag is found whatever the draw.
        assert_eq!(r.find(Reuse::block_key(0, false, 0)), Some(20));
        r.start(2);
        assert_eq!(r.find(required), None);
        assert_eq!(r.key_of(&[true, true]), 0);
    }
}
