//! How a run's histories are cut into chunks of at most `--chunk-cells` rows: whole histories
//! when one history fits in a chunk, otherwise a run of whole replicates of one history per
//! chunk. Memory follows the chunk whatever the grid's shape, and the rows come out in the
//! same order, so the tables do not depend on the cut.

use std::ops::Range;

/// The cut of a run's histories into chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    histories: Range<usize>,
    replicates: u32,
    per_replicate: usize,
    /// Whole histories per chunk (one when histories are split).
    histories_per_chunk: usize,
    /// Replicates per chunk when a history is split (`None`: histories are whole).
    replicates_per_chunk: Option<u32>,
}

/// What one chunk evaluates: `replicates` of every history in `histories`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    pub histories: Range<usize>,
    pub replicates: Range<u32>,
    /// Whether the chunk starts its histories (and so names them).
    pub starts_history: bool,
    /// Whether the chunk ends its histories (their summary can be closed, a checkpoint taken).
    pub ends_history: bool,
}

impl Plan {
    /// The cut of `histories` of `replicates` replicates of `per_replicate` rows into chunks of
    /// at most `chunk_cells` rows (a chunk holds at least one replicate).
    pub fn new(
        histories: Range<usize>,
        replicates: u32,
        per_replicate: usize,
        chunk_cells: usize,
    ) -> Plan {
        let chunk_cells = chunk_cells.max(1);
        let per_history = (replicates as usize).saturating_mul(per_replicate).max(1);
        let split = per_history > chunk_cells && replicates > 1;
        let replicates_per_chunk = split.then(|| {
            let r = (chunk_cells / per_replicate.max(1)).max(1);
            u32::try_from(r).unwrap_or(replicates).min(replicates)
        });
        Plan {
            histories,
            replicates,
            per_replicate,
            histories_per_chunk: if split {
                1
            } else {
                (chunk_cells / per_history).max(1)
            },
            replicates_per_chunk,
        }
    }

    /// Chunks a history is cut into (1 when histories are whole).
    fn pieces(&self) -> usize {
        self.replicates_per_chunk
            .map_or(1, |r| self.replicates.div_ceil(r) as usize)
    }

    pub fn chunks(&self) -> usize {
        match self.replicates_per_chunk {
            Some(_) => self.histories.len() * self.pieces(),
            None => self.histories.len().div_ceil(self.histories_per_chunk),
        }
    }

    /// The most rows one chunk holds.
    pub fn rows_per_chunk(&self) -> u64 {
        let per_history = u64::from(self.replicates) * self.per_replicate as u64;
        match self.replicates_per_chunk {
            Some(r) => u64::from(r) * self.per_replicate as u64,
            None => per_history * self.histories_per_chunk.min(self.histories.len()) as u64,
        }
    }

    /// The histories a chunk holds at most.
    pub fn histories_per_chunk(&self) -> usize {
        self.histories_per_chunk.min(self.histories.len().max(1))
    }

    /// Chunk `k` (of [`Plan::chunks`]).
    pub fn chunk(&self, k: usize) -> Chunk {
        match self.replicates_per_chunk {
            Some(r) => {
                let pieces = self.pieces();
                let history = self.histories.start + k / pieces;
                let piece = (k % pieces) as u32;
                let start = piece * r;
                Chunk {
                    histories: history..history + 1,
                    replicates: start..(start.saturating_add(r)).min(self.replicates),
                    starts_history: piece == 0,
                    ends_history: k % pieces == pieces - 1,
                }
            }
            None => {
                let start = self.histories.start + k * self.histories_per_chunk;
                Chunk {
                    histories: start..(start + self.histories_per_chunk).min(self.histories.end),
                    replicates: 0..self.replicates,
                    starts_history: true,
                    ends_history: true,
                }
            }
        }
    }

    /// Rows of the chunks before chunk `k`.
    pub fn rows_before(&self, k: usize) -> u64 {
        let per_history = u64::from(self.replicates) * self.per_replicate as u64;
        match self.replicates_per_chunk {
            Some(r) => {
                let pieces = self.pieces();
                let whole = (k / pieces) as u64 * per_history;
                let part = (k % pieces) as u64 * u64::from(r);
                whole + part.min(u64::from(self.replicates)) * self.per_replicate as u64
            }
            None => (k * self.histories_per_chunk).min(self.histories.len()) as u64 * per_history,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_histories_when_they_fit() {
        // 48 rows per history (4 replicates × 12), 96 per chunk: 2 histories a chunk, and
        // 5 histories make 3 chunks, the last of one history.
        let p = Plan::new(0..5, 4, 12, 96);
        assert_eq!(p.chunks(), 3);
        assert_eq!(p.chunk(2).histories, 4..5);
        assert_eq!(p.chunk(2).replicates, 0..4);
        assert_eq!(p.rows_per_chunk(), 96);
    }

    #[test]
    fn split_histories_by_replicates() {
        // 10 replicates × 12 rows = 120 per history > 50: 50 / 12 = 4 replicates a chunk,
        // 3 chunks a history (0..4, 4..8, 8..10), 6 chunks for 2 histories.
        let p = Plan::new(3..5, 10, 12, 50);
        assert_eq!(p.chunks(), 6);
        let c = p.chunk(5);
        assert_eq!((c.histories, c.replicates), (4..5, 8..10));
        assert!(!c.starts_history && c.ends_history);
        assert!(p.chunk(3).starts_history);
        assert_eq!(p.rows_per_chunk(), 48);
        // Before chunk 4: history 3 whole (120) and 4 replicates of history 4 (48).
        assert_eq!(p.rows_before(4), 168);
    }
}
