//! `Recorded`: the summary a transcript recorded where its harness compacted, the summary
//! record ending the range (`recorded_compaction`'s; never named by `summariser=`).

use crate::context::Context;
use crate::view::View;

/// Copies the record ending the range as the summary's text; returns its cost.
pub fn summarise(view: &View, (_, end): (usize, usize), out: &mut Context) -> u64 {
    let text = &mut out.summary_text;
    text.clear();
    text.push_str(view.texts.get(end - 1));
    view.costs[end - 1]
}
