//! The state a replay keeps beside its context, one type per job: what the session is billed,
//! the notes written, the retention at need, the compactions' bookkeeping, how far the loop has
//! come, and each layer's use.

use crate::history::{Kind, Time};
use crate::session::cache::{Billing, Cache};
use crate::session::config::SessionConfig;
use crate::session::context::Origin;
use crate::session::layers::Layer;
use crate::session::ledger::Open;
use crate::session::need::NeedTally;
use crate::session::notes;
use crate::session::{NextCall, Prices};

/// What the session is billed under one cache, and that cache's state. A replay holds one
/// per cache it bills (the caches of a sweep's axis): nothing the replay decides reads the
/// cache, so one replay bills them all.
#[derive(Debug)]
pub(super) struct CacheBill {
    pub(super) cache: Cache,
    pub(super) prices: Prices,
    /// The sum of every model call's bill.
    pub(super) total: Billing,
    /// The latest model call's bill.
    pub(super) last: Billing,
    /// The summary calls of the compaction under way.
    pub(super) summary: Billing,
    /// What the re-reads added to the bill ([`NeedTally`] counts them once for every cache).
    pub(super) refetch: Billing,
    /// Prefixes (in entries) an Anthropic cache holds at breakpoints, sorted.
    pub(super) points: Vec<usize>,
    /// The ledger of each compaction of the session ([`crate::session::ledger`]), logged or
    /// not.
    pub(super) ledgers: Vec<Open>,
    /// What the agent call after each logged compaction paid, in the order logged (the
    /// compactions after the last call have none).
    pub(super) next: Vec<NextCall>,
    /// What the last agent call left in the provider's cache (its cache read + cache write).
    pub(super) last_cached: u64,
}

impl CacheBill {
    pub(super) fn new(cfg: &SessionConfig) -> Self {
        CacheBill {
            cache: Cache::new(cfg.cache).with_fixed_prefix(cfg.prefix_tokens),
            prices: cfg.prices,
            total: Billing::default(),
            last: Billing::default(),
            summary: Billing::default(),
            refetch: Billing::default(),
            points: Vec::new(),
            ledgers: Vec::new(),
            next: Vec::new(),
            last_cached: 0,
        }
    }

    /// Starts a session billed under `cfg`, keeping the buffers' capacity.
    pub(super) fn reset(&mut self, cfg: &SessionConfig) {
        let (mut points, mut ledgers, mut next) = (
            std::mem::take(&mut self.points),
            std::mem::take(&mut self.ledgers),
            std::mem::take(&mut self.next),
        );
        points.clear();
        ledgers.clear();
        next.clear();
        *self = CacheBill {
            points,
            ledgers,
            next,
            ..CacheBill::new(cfg)
        };
    }
}

/// The notes the agent wrote so far, and how much of them the context read back.
pub(super) struct NotesKept {
    /// The random stream that decides which records are noted.
    pub(super) stream: u64,
    pub(super) count: u32,
    /// The notes' joined cost, separators included.
    pub(super) cost: u64,
    /// Records before this index were appended when the notes in the context were read back.
    pub(super) upto: usize,
}

impl NotesKept {
    pub(super) fn new(session_stream: u64) -> Self {
        NotesKept {
            stream: notes::stream(session_stream),
            count: 0,
            cost: 0,
            upto: 0,
        }
    }

    /// Writes a record of `cost` to the notes, after a separator unless it is the first.
    pub(super) fn write(&mut self, cost: u64, separator: u64) {
        self.cost += cost + if self.count > 0 { separator } else { 0 };
        self.count += 1;
    }
}

/// What the context held each time an agent call needed it: the required records, their facts,
/// the uses of needed facts, the needs met or recovered, and the stale inputs.
#[derive(Default)]
pub(super) struct RetentionTally {
    pub(super) appeared_required: u32,
    /// Required records present in the context: 1 each verbatim, the carried share of each a
    /// text summary holds (see [`crate::history::facts::Facts::carried_share`]).
    pub(super) present_required: f64,
    pub(super) need_pairs: u64,
    pub(super) need_hits: f64,
    /// Facts of the required records that appeared, over later agent calls, and of those the
    /// ones the context's text held (retention at need, by facts).
    pub(super) need_facts: u64,
    pub(super) need_facts_kept: u64,
    /// Uses of a needed fact of a required record (an agent call whose output holds it, beyond
    /// the gap), and of those the ones whose call's input held it (needed facts at need).
    pub(super) need_uses: u64,
    pub(super) need_uses_met: u64,
    /// Needed facts at their first return, and the re-reads that recover them.
    pub(super) needs: NeedTally,
    /// (agent call, supersession) pairs whose input was stale ([`crate::stale`]).
    pub(super) stale_calls: u64,
}

/// What the compactions of the session did, and what the next one must know of them.
pub(super) struct CompactionBook {
    /// The session's random stream, from which each compaction draws its own.
    pub(super) stream: u64,
    /// The compactor's summaries are text whose facts are read from it (not the simulated
    /// summariser's draws).
    pub(super) text_summaries: bool,
    /// Summaries created so far (their ids are `0..summaries`).
    pub(super) summaries: u32,
    /// A compaction ran since the last agent call.
    pub(super) compacted: bool,
    pub(super) failed: u32,
    /// Compactions that wrote a summary: the only ones that call a model.
    pub(super) summary_calls: u32,
    /// Whether the last replacement left the context as it was.
    pub(super) unchanged: bool,
    /// A compression of this session was rejected as a failure its harness remembers.
    pub(super) compression_failed: bool,
    /// The entries the latest compaction that changed the context left before the ones
    /// appended since ([`crate::context::FromSession::left_by_compaction`]).
    pub(super) left_by_compaction: usize,
}

impl CompactionBook {
    pub(super) fn new(stream: u64, text_summaries: bool) -> Self {
        CompactionBook {
            stream,
            text_summaries,
            summaries: 0,
            compacted: false,
            failed: 0,
            summary_calls: 0,
            unchanged: false,
            compression_failed: false,
            left_by_compaction: 0,
        }
    }
}

/// How far the agent loop has come through the history, and the sizes of its calls.
#[derive(Default)]
pub(super) struct ReplayProgress {
    /// Records appended so far: `0..appeared`.
    pub(super) appeared: usize,
    pub(super) calls: u32,
    /// The agent call whose context did not fit the window, which ended the session.
    pub(super) exit_call: Option<u32>,
    /// The last agent call's input and output; after a compaction, the context it left (what
    /// Codex recomputes its usage to).
    pub(super) last_call_usage: u64,
    pub(super) peak_input: u64,
    /// The time of the coming agent call, if the history has one (what a cache's TTL reads).
    pub(super) now: Option<Time>,
}

/// The use of each [`Layer`], kept up to date whether or not layers trigger.
#[derive(Default)]
pub(super) struct LayerUse {
    pub(super) used: [u64; 4],
    /// The first record of the newest turn (the last agent call's output).
    pub(super) turn_start: usize,
}

impl LayerUse {
    /// Adds `cost` to the layer of the entry from `origin`.
    pub(super) fn add(&mut self, kinds: &[Kind], origin: Origin, cost: u64) {
        self.used[layer_of(kinds, self.turn_start, origin) as usize] += cost;
    }

    /// A new turn starts at record `a`: the previous one is history now.
    pub(super) fn new_turn(&mut self, a: usize) {
        self.used[Layer::History as usize] += self.used[Layer::Work as usize];
        self.used[Layer::Work as usize] = 0;
        self.turn_start = a;
    }

    pub(super) fn history(&self) -> u64 {
        self.used[Layer::History as usize]
    }
}

/// The layer of an entry (the rules are in [`crate::session::layers`]); `turn_start` is the
/// first record of the newest turn.
fn layer_of(kinds: &[Kind], turn_start: usize, origin: Origin) -> Layer {
    match origin {
        Origin::Record(r) | Origin::Placeholder(r) => match kinds[r as usize] {
            Kind::System => Layer::System,
            Kind::Note => Layer::Knowledge,
            _ if r as usize >= turn_start => Layer::Work,
            _ => Layer::History,
        },
        Origin::Notes(_) => Layer::Knowledge,
        Origin::Summary(_) | Origin::SummaryPlaceholder(_) => Layer::History,
    }
}
