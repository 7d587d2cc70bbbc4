//! Records, histories, and where they come from (files, the synthetic generator, agent
//! transcripts).

pub mod batch;
mod costed;
pub mod facts;
pub mod flags_file;
pub mod generate;
pub mod import;
mod load;
mod record;
pub mod recovery;
pub mod source;
pub mod stream;
mod supersede;
pub mod time;
pub mod time_order;
pub mod tokens;

pub use costed::{
    capacity_for, mask_placeholder, CostedHistory, Fetchable, RecordedCall, ScoredFacts,
    SourceText, StandIns, Usage, CLEARED_PLACEHOLDER,
};
pub use load::{load_jsonl, parse_jsonl, write_jsonl};
pub use record::THINKING_TOOL;
pub use record::{starts_call, History, Kind, Record};
pub use time::Time;
