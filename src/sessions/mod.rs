//! Session sweeps: the grid of a `[session]` experiment, which runs a whole session (see
//! [`crate::session`]) for every history × replicate × noise level × strategy × window ×
//! ratio × note rate, and the loop that simulates every session of one history.

mod eval;
mod grid;

pub use eval::{
    evaluate_replicates, take_events, EventRow, SessionGridScratch, SessionKey, SessionRow,
};
pub use grid::{Coordinates, SessionGrid};
