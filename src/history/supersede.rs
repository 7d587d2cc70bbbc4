//! Superseded records: a later record that changes an earlier required one's decision.
//!
//! With `supersede_rate = p`, each record `place_required` made required is overridden with
//! probability `p` by an `assistant` record (the agent stating the changed decision) more than
//! [`DEFAULT_MIN_GAP`] records later, drawn uniformly among them (when the drawn one is
//! required or overrides another record already, the next ones in turn, at most
//! [`TRIES`] tried; none left, the record is not overridden). The overriding record becomes
//! required too: a context that keeps the old decision must keep the new one. Its text, kind
//! and length are unchanged: its own fact stands for the new decision. Only records
//! `place_required` chose are overridden, so no record both overrides and is overridden.
//!
//! The draws come from a stream of their own (one `(u, pick)` pair per record, whether or not
//! it is required), taken after the facts' reuses are written: every text, length, label and
//! reuse is that of the same history without supersessions; only the overriding records'
//! `required` labels differ.

use super::record::{Kind, Record};
use crate::history::import::label::DEFAULT_MIN_GAP;
use crate::rng;
use rand::Rng;

/// The supersession stream's tag (beside the history's own stream and the reuses').
const SUPERSEDE: u64 = 0x7375706572;
/// Records tried for an overriding record, the drawn one and those after it.
const TRIES: usize = 8;

/// Plants the supersessions of history `index` of the generator seeded `seed` in `records` at
/// `rate` (marking the overriding records required); returns `(overridden, overriding)` record
/// indices, by overridden record.
pub(super) fn plant(
    rate: f64,
    seed: u64,
    index: u32,
    records: &mut [Record],
) -> Vec<(usize, usize)> {
    if rate <= 0.0 {
        return Vec::new();
    }
    let mut r = rng::stream(&[seed, rng::tag::GENERATE, u64::from(index), SUPERSEDE]);
    let chosen: Vec<bool> = records.iter().map(|x| x.required).collect();
    let assistant: Vec<usize> = (0..records.len())
        .filter(|&j| records[j].kind == Kind::Assistant)
        .collect();
    let mut out = Vec::new();
    for (i, &required) in chosen.iter().enumerate() {
        let u = rng::next_unit(&mut r);
        let pick = r.next_u64();
        if !required || u >= rate {
            continue;
        }
        let later = &assistant[assistant.partition_point(|&j| j <= i + DEFAULT_MIN_GAP)..];
        if later.is_empty() {
            continue;
        }
        let start = (pick % later.len() as u64) as usize;
        let Some(j) = (0..later.len().min(TRIES))
            .map(|k| later[(start + k) % later.len()])
            .find(|&j| !records[j].required)
        else {
            continue;
        };
        records[j].required = true;
        out.push((i, j));
    }
    out
}
