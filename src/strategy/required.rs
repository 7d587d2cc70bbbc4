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
    let mut count = 0u64;
    let mut sum = 0u64;
    for i in 0..view.len() {
        if view.flags[i] {
            out.chosen[i] = true;
            count += 1;
            sum += view.costs[i];
        }
    }
    if out.joined_cost(sum, count, sep) > capacity {
        match overflow {
            Overflow::Infeasible => {
                out.chosen.iter_mut().for_each(|c| *c = false);
                return Outcome::Infeasible;
            }
            Overflow::DropOldestFlagged => {
                for i in 0..view.len() {
                    if out.joined_cost(sum, count, sep) <= capacity {
                        break;
                    }
                    if out.chosen[i] {
                        out.chosen[i] = false;
                        count -= 1;
                        sum -= view.costs[i];
                    }
                }
            }
        }
    }
    for i in (0..view.len()).rev() {
        if view.flags[i] {
            continue;
        }
        let c = view.costs[i];
        if out.joined_cost(sum + c, count + 1, sep) <= capacity {
            out.chosen[i] = true;
            count += 1;
            sum += c;
        } else if fill == Fill::Stop {
            break;
        }
    }
    out.emit_chosen(view.costs, sep);
    Outcome::Feasible
}
