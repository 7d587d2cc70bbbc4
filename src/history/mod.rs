//! Records, histories, and where they come from (files, the synthetic generator).

mod costed;
pub mod generate;
mod load;
mod record;

pub use costed::{capacity_for, mask_placeholder, CostedHistory, CLEARED_PLACEHOLDER};
pub use load::{load_jsonl, parse_jsonl, write_jsonl};
pub use record::{History, Kind, Record};
