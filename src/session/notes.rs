//! Notes: a diligent agent writes some records to a notes file as they appear, and the
//! harness reads the file back verbatim after every compaction — a lossless copy beside a lossy
//! summary.
//!
//! Each record is noted when it appears with probability `note_rate`, and a flagged record
//! (the agent believes it is a constraint or a decision) with probability `min(1, 2 × note_rate)`:
//! constraints are noted first. The draw is counter-based on (session stream, notes tag,
//! record index), so whether a record is noted does not depend on the strategy, the window or
//! anything else of the session: strategies are compared on the same notes.
//! Writing a note costs nothing extra (the record itself already went through the context);
//! reading the notes back costs their size, joined like any records.

use crate::rng;

/// The probability that a record is noted when it appears.
pub fn probability(note_rate: f64, flagged: bool) -> f64 {
    if flagged {
        (2.0 * note_rate).min(1.0)
    } else {
        note_rate
    }
}

/// The stream of a session's note draws.
pub fn stream(session_stream: u64) -> u64 {
    rng::key(&[session_stream, rng::tag::NOTES])
}

/// Whether record `index` is noted, drawn from `notes_stream` (see [`stream`]).
pub fn noted(note_rate: f64, flagged: bool, notes_stream: u64, index: usize) -> bool {
    note_rate > 0.0 && rng::unit_at(notes_stream, index as u64) < probability(note_rate, flagged)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flagged_records_are_noted_at_twice_the_rate() {
        assert_eq!(probability(0.3, true), 0.6);
        assert_eq!(probability(0.3, false), 0.3);
        assert_eq!(probability(0.7, true), 1.0);
        let s = stream(9);
        let n = 20_000;
        let share =
            |flagged| (0..n).filter(|&i| noted(0.25, flagged, s, i)).count() as f64 / n as f64;
        assert!((share(false) - 0.25).abs() < 0.01);
        assert!((share(true) - 0.5).abs() < 0.01);
        assert!((0..1000).all(|i| !noted(0.0, true, s, i)));
    }
}
