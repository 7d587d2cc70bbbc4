//! The strategy's view of the context: what each entry of the replay shows a compactor.

use super::Replay;
use crate::history::Kind;
use crate::session::context::{Entry, Origin};
use crate::session::Compactor;
use crate::view::TextRef;

impl<C: Compactor + ?Sized> Replay<'_, C> {
    /// Fills the strategy's view of the context: every entry but the notes (the fresh read-back,
    /// a superset, replaces them). Returns the view's length and cost.
    pub(super) fn build_view(&mut self) -> (usize, u64) {
        let s = &mut *self.s;
        let h = self.h;
        s.view.costs.clear();
        s.view.chars.clear();
        s.view.lines.clear();
        s.view.kinds.clear();
        s.view.mask.clear();
        s.view.omitted.clear();
        s.view.flags.clear();
        s.view.texts.clear();
        s.view.map.clear();
        let mut len = 0usize;
        // A rule that reads the full history sees what earlier calls masked as it was.
        let unmasked = self.compactor.reads_unmasked();
        for (i, &entry) in s.entries.iter().enumerate() {
            let e = match entry.origin {
                Origin::Placeholder(r) if unmasked => Entry {
                    origin: Origin::Record(r),
                    cost: h.costs[r as usize],
                },
                _ => entry,
            };
            let (kind, tool, mask, flag) = match e.origin {
                Origin::Record(r) => {
                    let r = r as usize;
                    (
                        h.kinds[r],
                        &h.tools[r],
                        h.stand_ins.mask_costs[r],
                        self.flags[r],
                    )
                }
                // A stand-in carries nothing, so it is never flagged; masking it again
                // changes nothing.
                Origin::Placeholder(r) => {
                    (h.kinds[r as usize], &h.tools[r as usize], e.cost, false)
                }
                Origin::Summary(id) => {
                    (Kind::Summary, &None, e.cost, s.summaries.flags[id as usize])
                }
                Origin::SummaryPlaceholder(_) => (Kind::Summary, &None, e.cost, false),
                Origin::Notes(_) => continue,
            };
            s.view.costs.push(e.cost);
            s.view.chars.push(match e.origin {
                Origin::Record(r) => h.stand_ins.chars[r as usize],
                _ => 0,
            });
            s.view.lines.push(match e.origin {
                Origin::Record(r) => h.stand_ins.lines[r as usize],
                _ => 0,
            });
            s.view.kinds.push(kind);
            s.view.mask.push(mask);
            // A stand-in elided again keeps its cost, as a masked one does.
            s.view.omitted.push(match e.origin {
                Origin::Record(r) => h.stand_ins.omitted_costs[r as usize],
                _ => e.cost,
            });
            s.view.flags.push(flag);
            s.view.texts.push(match e.origin {
                Origin::Record(r) => TextRef::Record(r),
                Origin::Summary(id) if self.book.text_summaries => TextRef::Summary(id),
                _ => TextRef::Stand,
            });
            s.view.map.push(i as u32);
            if len == s.view.tools.len() {
                s.view.tools.push(None);
            }
            set_tool(&mut s.view.tools[len], tool, &mut s.view.spare_tools);
            len += 1;
        }
        let cost = s.view.costs.iter().sum::<u64>() + h.separator * (len as u64).saturating_sub(1);
        (len, cost)
    }
}

/// Copies `tool` into `slot`, reusing buffers (the slot's own, or one from `spare`).
fn set_tool(slot: &mut Option<String>, tool: &Option<String>, spare: &mut Vec<String>) {
    match (slot.as_mut(), tool) {
        (Some(buf), Some(name)) => buf.clone_from(name),
        (Some(_), None) => spare.extend(slot.take()),
        (None, Some(name)) => {
            let mut buf = spare.pop().unwrap_or_default();
            buf.clone_from(name);
            *slot = Some(buf);
        }
        (None, None) => {}
    }
}
