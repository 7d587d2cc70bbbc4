//! Every session of one history, written into a reused row buffer.
//!
//! Random numbers are common across everything that is not random: the label noise of a
//! history depends on (seed, history, replicate) only, through [`noise::Draws`] (the very draws
//! a cell sweep with the same seed uses), and so does the session stream that keys the notes
//! and the summariser. Every strategy, window, ratio and note rate of a replicate therefore
//! meets the same mislabelled records, the same note draws (a record noted at rate 0.1 is also
//! noted at 0.2) and the same summariser luck.

use super::grid::{Coordinates, SessionGrid};
use crate::history::CostedHistory;
use crate::noise;
use crate::rng;
use crate::session::{self, CompactionEvent, SessionMetrics, SessionScratch};

/// One simulated session: where it sits in the grid and what it measured (labels are
/// attached when the tables are written).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionRow {
    pub key: SessionKey,
    pub metrics: SessionMetrics,
}

impl SessionRow {
    pub fn key(&self) -> SessionKey {
        self.key
    }

    pub fn coordinates(&self) -> Coordinates {
        self.key.coordinates()
    }
}

/// One compaction of a session of the grid: the session's axis indices and what it did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventRow {
    pub session: SessionKey,
    pub event: CompactionEvent,
}

/// Where a session sits in the grid, by axis indices.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionKey {
    pub history: u32,
    pub replicate: u32,
    pub level: u16,
    pub strategy: u16,
    pub window: u16,
    pub ratio: u16,
    pub note_rate: u16,
    pub cache: u16,
    /// What the noise model's flags got wrong on this history and replicate.
    pub realised: noise::Realised,
}

impl SessionKey {
    pub fn coordinates(&self) -> Coordinates {
        Coordinates {
            strategy: usize::from(self.strategy),
            window: usize::from(self.window),
            ratio: usize::from(self.ratio),
            note_rate: usize::from(self.note_rate),
            cache: usize::from(self.cache),
            level: usize::from(self.level),
        }
    }
}

/// Buffers reused across histories by one worker, and the compactions logged since they were
/// last taken ([`take_events`]).
#[derive(Debug, Default)]
pub struct SessionGridScratch {
    session: SessionScratch,
    draws: noise::Draws,
    flags: Vec<bool>,
    log: Vec<CompactionEvent>,
    events: Vec<EventRow>,
}

/// Moves the compactions of the sessions evaluated since the last call into `out`, in the
/// sessions' order.
pub fn take_events(s: &mut SessionGridScratch, out: &mut Vec<EventRow>) {
    out.append(&mut s.events);
}

/// The stream of every draw of the sessions of (history, replicate): notes and summaries.
pub fn session_stream(seed: u64, history: u64, replicate: u64) -> u64 {
    rng::key(&[seed, rng::tag::SESSION, history, replicate])
}

/// Appends the sessions of `replicates` of history `index` to `out`, in grid order (a
/// replicate's sessions depend on (history, replicate) only, so a history evaluated piece by
/// piece gives the very rows it gives whole).
pub fn evaluate_replicates(
    grid: &SessionGrid,
    index: usize,
    history: &CostedHistory,
    replicates: std::ops::Range<u32>,
    s: &mut SessionGridScratch,
    out: &mut Vec<SessionRow>,
) {
    let records = noise::Records::of(history);
    // The compactions of these sessions only: what an earlier call logged and nobody took is
    // not theirs.
    s.events.clear();
    for replicate in replicates {
        s.draws.fill(
            grid.seed,
            index as u64,
            u64::from(replicate),
            history.len(),
            grid.shares_draws,
        );
        let stream = session_stream(grid.seed, index as u64, u64::from(replicate));
        for (level, model) in grid.noise.iter().enumerate() {
            model.apply(records, &s.draws, &mut s.flags);
            let realised = noise::Realised::of(&history.truth, &s.flags);
            for (strategy_index, strategy) in grid.strategies.iter().enumerate() {
                let flags = strategy.flags(&history.truth, &s.flags);
                for window in 0..grid.windows.len() {
                    for ratio in 0..grid.ratios.len() {
                        for note_rate in 0..grid.note_rates.len() {
                            // One replay bills every cache: nothing the session does reads
                            // the cache, so only the bill differs between them.
                            let at = Coordinates {
                                strategy: strategy_index,
                                window,
                                ratio,
                                note_rate,
                                cache: 0,
                                level,
                            };
                            let key = |cache: usize| SessionKey {
                                history: index as u32,
                                replicate,
                                level: level as u16,
                                strategy: strategy_index as u16,
                                window: window as u16,
                                ratio: ratio as u16,
                                note_rate: note_rate as u16,
                                cache: cache as u16,
                                realised,
                            };
                            s.log.clear();
                            let mut cache = 0;
                            session::simulate_billed(
                                history,
                                flags,
                                strategy,
                                grid.configs(at),
                                stream,
                                &mut s.session,
                                &mut s.log,
                                |metrics| {
                                    out.push(SessionRow {
                                        key: key(cache),
                                        metrics,
                                    });
                                    cache += 1;
                                },
                            );
                            // The log holds each cache's compactions in turn, as many each.
                            let per_cache = s.log.len() / grid.caches.len();
                            for (i, &event) in s.log.iter().enumerate() {
                                let session = key(i / per_cache);
                                s.events.push(EventRow { session, event });
                            }
                        }
                    }
                }
            }
        }
    }
}
