//! `required`: every flagged record first, then the newest unflagged ones that fit.

use super::{Context, Fill, Outcome, Overflow, View};

pub fn apply(
    view: View,
    capacity: u64,
    fill: Fill,
    overflow: Overflow,
    out: &mut Context,
) -> Outcome {
    let sep = view.separator;
    let n = view.len();
    let (flags, costs) = (&view.flags[..n], &view.costs[..n]);
    let chosen = &mut out.chosen[..n];
    // Branch-free over zipped slices, so the compiler vectorises it: this loop runs once per
    // cell and was the sweep's hottest.
    let (mut count, mut sum) = (0u64, 0u64);
    for ((c, &flag), &cost) in chosen.iter_mut().zip(flags).zip(costs) {
        *c = flag;
        count += u64::from(flag);
        sum += cost * u64::from(flag);
    }
    if out.joined_cost(sum, count, sep) > capacity {
        match overflow {
            Overflow::Infeasible => {
                out.chosen.iter_mut().for_each(|c| *c = false);
                return Outcome::Infeasible;
            }
            Overflow::DropOldestFlagged => {
                let gap = out.gap_to_tail;
                for (c, &cost) in out.chosen[..n].iter_mut().zip(costs) {
                    if Context::joined(sum, count, sep, gap) <= capacity {
                        break;
                    }
                    if *c {
                        *c = false;
                        count -= 1;
                        sum -= cost;
                    }
                }
            }
        }
    }
    let gap = out.gap_to_tail;
    for ((c, &flag), &cost) in out.chosen[..n].iter_mut().zip(flags).zip(costs).rev() {
        if flag {
            continue;
        }
        if Context::joined(sum + cost, count + 1, sep, gap) <= capacity {
            *c = true;
            count += 1;
            sum += cost;
        } else if fill == Fill::Stop {
            break;
        }
    }
    out.emit_chosen(costs, sep);
    Outcome::Feasible
}

/// `required`: the flagged records first, then the newest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Required {
    pub fill: Fill,
    pub overflow: Overflow,
}

impl super::rule::RuleSpec for Required {
    // Reads its flags but draws nothing.
    const DRAWS: bool = false;
    const NAME: &'static str = "required";
    // The article's rule, whose spec keeps no head: it is the baseline that shows what dropping
    // the early records costs (`keep_first=task` keeps the task like the harnesses).
    const DEFAULT_HEAD: super::Head = super::Head::First(0);
    fn parse(p: &mut super::spec::Params) -> Result<Self, crate::error::ParseError> {
        Ok(Required {
            fill: super::fill(p)?,
            overflow: match p.choice("on_overflow", &["infeasible", "drop-oldest-flagged"])? {
                Some(s) if s == "drop-oldest-flagged" => Overflow::DropOldestFlagged,
                _ => Overflow::Infeasible,
            },
        })
    }
    fn push_params(&self, params: &mut Vec<String>) {
        super::push_fill(params, self.fill);
        if self.overflow == Overflow::DropOldestFlagged {
            params.push("on_overflow=drop-oldest-flagged".into());
        }
    }
    fn apply(&self, view: View, capacity: u64, _: usize, _: u64, out: &mut Context) -> Outcome {
        apply(view, capacity, self.fill, self.overflow, out)
    }
}
