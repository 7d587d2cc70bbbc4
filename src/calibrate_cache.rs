//! Fitting a cache model's free parameters to the usage transcripts record
//! (`ctxlab calibrate RUNS --fit-cache PROVIDER`).
//!
//! Two parameters, fitted in turn on the runs given:
//! - `miss`: of the recorded calls that could read the cache by the model's rules — not the
//!   first of a context, the previous prompt at least the minimum cacheable length, and (with
//!   times and a TTL) within the TTL of the previous call — the share whose recorded cache read
//!   is 0;
//! - `credit`: the share of what the model reads, at that `miss`, that makes the pooled modelled
//!   share of input read from cache (every run replayed under `raw`) equal the pooled recorded
//!   share. The modelled share is linear in `credit`, so one replay at `credit = 1` fixes it;
//!   above 1 it is capped (the model reads less than was recorded even when crediting all).
//!
//! For Anthropic's cache the lifetime is fitted too, between the two the provider offers
//! (5 minutes, 1 hour): the one whose fitted model is nearer the recorded share run by run
//! (the sum of the absolute differences). Each figure is printed beside the recorded one, per
//! run, before (the documented rules) and after (the spec as printed, rounded to three
//! decimals), and a held-out check fits on every other run and checks on the rest.

use crate::calibrate::share;
use crate::cost::CostModel;
use crate::history::import::Run;
use crate::history::CostedHistory;
use crate::session::CacheRules;
use std::fmt::Write;

/// A run ready to replay, with what its transcript records.
pub struct FitRun {
    pub name: String,
    costed: CostedHistory,
    /// Per recorded call: (input, cache read, context start, time) in the provider's tokens.
    calls: Vec<(u64, u64, usize, Option<crate::history::Time>)>,
}

impl FitRun {
    pub fn new(run: &Run, model: CostModel) -> FitRun {
        let records = &run.history.records;
        let calls = run
            .calls
            .iter()
            .filter_map(|c| {
                let u = c.usage?;
                // The call's time is that of its response's first record.
                let time = records.get(c.end).and_then(|r| r.time);
                Some((u.input(), u.cache_read, c.start, time))
            })
            .collect();
        FitRun {
            name: run.history.name.clone(),
            costed: CostedHistory::new(&run.history, model),
            calls,
        }
    }

    /// (cache read, input) as the transcript records them.
    pub fn recorded(&self) -> (u64, u64) {
        self.calls
            .iter()
            .fold((0, 0), |(r, i), c| (r + c.1, i + c.0))
    }

    /// (cache read, input) of the run replayed under `raw` with `rules`.
    pub fn modelled(&self, rules: CacheRules) -> (u64, u64) {
        crate::calibrate::replayed_cache(&self.costed, rules)
    }

    /// (calls that could read the cache, of which read nothing) under `rules`.
    fn misses(&self, rules: &CacheRules) -> (u64, u64) {
        let (mut could, mut missed) = (0, 0);
        for w in self.calls.windows(2) {
            let (prev, cur) = (w[0], w[1]);
            let expired = match (prev.3, cur.3, rules.ttl_seconds) {
                (Some(a), Some(b), Some(ttl)) => b.seconds_since(a) > ttl as f64,
                _ => false,
            };
            if cur.2 != prev.2 || prev.0 < rules.min_tokens || expired {
                continue;
            }
            could += 1;
            if cur.1 == 0 {
                missed += 1;
            }
        }
        (could, missed)
    }
}

/// Sums (part, whole) pairs.
fn pooled(xs: impl Iterator<Item = (u64, u64)>) -> (u64, u64) {
    xs.fold((0, 0), |(a, b), (x, y)| (a + x, b + y))
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// A fit on some runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fit {
    /// The fitted rules, parameters rounded as printed.
    pub rules: CacheRules,
    /// Calls that could read the cache, and of those the ones that read nothing.
    pub could: u64,
    pub missed: u64,
}

/// Fits `miss` and `credit` of `base` on `runs` (which must record usage).
pub fn fit(runs: &[&FitRun], base: CacheRules) -> Fit {
    let (could, missed) = pooled(runs.iter().map(|r| r.misses(&base)));
    let miss = if could == 0 {
        0.0
    } else {
        round3(missed as f64 / could as f64).min(0.999)
    };
    let at_miss = CacheRules { miss, ..base };
    let modelled = share(pooled(runs.iter().map(|r| r.modelled(at_miss)))).unwrap_or(0.0);
    let recorded = share(pooled(runs.iter().map(|r| r.recorded()))).unwrap_or(0.0);
    let credit = if modelled > 0.0 {
        round3(recorded / modelled).clamp(0.001, 1.0)
    } else {
        1.0
    };
    Fit {
        rules: CacheRules { credit, ..at_miss },
        could,
        missed,
    }
}

/// Whether any run's calls have times.
fn timed(runs: &[&FitRun]) -> bool {
    runs.iter().any(|r| r.calls.iter().any(|c| c.3.is_some()))
}

/// [`fit`], with the lifetime chosen among the provider's when the runs have times.
pub fn fit_with_lifetime(runs: &[&FitRun], base: CacheRules) -> Fit {
    fit_lifetimes(runs, base).0
}

/// [`fit_with_lifetime`], and each lifetime tried with its summed absolute difference between
/// modelled and recorded shares over the runs.
fn fit_lifetimes(runs: &[&FitRun], base: CacheRules) -> (Fit, Vec<(u64, f64)>) {
    let choices = base.kind.lifetimes();
    if !timed(runs) || choices.is_empty() {
        return (fit(runs, base), Vec::new());
    }
    let mut tried = Vec::new();
    let mut best: Option<(f64, Fit)> = None;
    for &ttl in choices {
        let f = fit(
            runs,
            CacheRules {
                ttl_seconds: Some(ttl),
                ..base
            },
        );
        let error: f64 = runs
            .iter()
            .map(|r| {
                let m = share(r.modelled(f.rules)).unwrap_or(0.0);
                let d = share(r.recorded()).unwrap_or(0.0);
                (m - d).abs()
            })
            .sum();
        tried.push((ttl, error));
        if best.as_ref().is_none_or(|(e, _)| error < *e) {
            best = Some((error, f));
        }
    }
    (best.expect("at least one lifetime").1, tried)
}

/// The report of `--fit-cache`: the spec, per-run shares before and after, pooled, and the
/// held-out check.
pub fn report(runs: &[FitRun], base: CacheRules) -> String {
    let all: Vec<&FitRun> = runs.iter().collect();
    let (f, tried) = fit_lifetimes(&all, base);
    let mut out = fit_lines(runs, f, &tried);
    // With times, "untimed" is the rules as they bill a history without times (every call
    // within the TTL); "before" applies the TTL.
    let untimed_rules = timed(&all).then_some(CacheRules {
        ttl_seconds: None,
        ..base
    });
    let _ = writeln!(
        out,
        "cached share of input, recorded and modelled (runs replayed under raw) with the rules before (\"{}\"{}) and after fitting:\n",
        base.spec(),
        if untimed_rules.is_some() {
            "; untimed: the same without the calls' times, every call within the TTL"
        } else {
            ""
        }
    );
    out += &share_table(runs, base, f.rules, untimed_rules);
    if runs.len() >= 2 {
        out += &held_out(runs, base);
    }
    out
}

/// A share as the report prints it, three decimals; blank without a whole.
fn cell(x: (u64, u64)) -> String {
    share(x).map(|v| format!("{v:.3}")).unwrap_or_default()
}

/// The fitted spec and what it rests on: the lifetimes tried, the recorded misses, and the
/// calls `miss` and `credit` were fitted on.
fn fit_lines(runs: &[FitRun], f: Fit, tried: &[(u64, f64)]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "cache = \"{}\"", f.rules.spec());
    if !tried.is_empty() {
        let each: Vec<String> = tried
            .iter()
            .map(|(ttl, e)| format!("{e:.3} at ttl={ttl}"))
            .collect();
        let _ = writeln!(
            out,
            "\nlifetime: the one whose fit is nearest the recorded share run by run (summed |modelled − recorded|: {})",
            each.join(", ")
        );
    }
    let (after_first, no_read) = runs.iter().fold((0, 0), |(n, z), r| {
        let later = r.calls.len().saturating_sub(1);
        let zero = r.calls.iter().skip(1).filter(|c| c.1 == 0).count();
        (n + later, z + zero)
    });
    let _ = writeln!(
        out,
        "\nrecorded: {no_read} of the {after_first} calls after a run's first read nothing from cache ({:.1} %)",
        100.0 * no_read as f64 / after_first.max(1) as f64
    );
    let _ = writeln!(
        out,
        "fitted on {} run(s): {} of {} calls that could read the cache by the rules read nothing (miss = {}); credit = {} scales what the model reads to bring the pooled modelled share to the recorded one (at most 1)",
        runs.len(),
        f.missed,
        f.could,
        f.rules.miss,
        f.rules.credit
    );
    out
}

/// Per run and pooled: the recorded cached share of input beside the modelled one before and
/// after fitting (and untimed, when the runs have times).
fn share_table(
    runs: &[FitRun],
    base: CacheRules,
    fitted: CacheRules,
    untimed_rules: Option<CacheRules>,
) -> String {
    let mut rows = Vec::new();
    let (mut rec, mut before, mut after, mut untimed) = ((0, 0), (0, 0), (0, 0), (0, 0));
    let add = |a: &mut (u64, u64), b: (u64, u64)| {
        a.0 += b.0;
        a.1 += b.1;
    };
    for r in runs {
        let (d, b, a) = (r.recorded(), r.modelled(base), r.modelled(fitted));
        add(&mut rec, d);
        add(&mut before, b);
        add(&mut after, a);
        let u = untimed_rules.map(|u| r.modelled(u)).unwrap_or((0, 0));
        add(&mut untimed, u);
        rows.push(vec![r.name.clone(), cell(d), cell(u), cell(b), cell(a)]);
    }
    rows.push(vec![
        "pooled".into(),
        cell(rec),
        cell(untimed),
        cell(before),
        cell(after),
    ]);
    let mut headings = vec!["run", "recorded", "untimed", "before", "after"];
    if untimed_rules.is_none() {
        headings.remove(2);
        for row in &mut rows {
            row.remove(2);
        }
    }
    use crate::report::text_table::{self, Align};
    let mut align = vec![Align::Right; headings.len()];
    align[0] = Align::Left;
    text_table::render(&headings, &rows, &align)
}

/// The held-out check: fitted on every other run, checked on the rest, both ways round.
fn held_out(runs: &[FitRun], base: CacheRules) -> String {
    let mut out = String::new();
    let halves: [Vec<&FitRun>; 2] = [
        runs.iter().step_by(2).collect(),
        runs.iter().skip(1).step_by(2).collect(),
    ];
    let _ = writeln!(
        out,
        "\nheld out (runs in the order given, alternately in halves A and B; fitted on one, checked on the other):"
    );
    for (name, fit_on, check_on) in [("A", 0, 1), ("B", 1, 0)] {
        let hf = fit_with_lifetime(&halves[fit_on], base);
        let other = if name == "A" { "B" } else { "A" };
        let rec = pooled(halves[check_on].iter().map(|r| r.recorded()));
        let before = pooled(halves[check_on].iter().map(|r| r.modelled(base)));
        let after = pooled(halves[check_on].iter().map(|r| r.modelled(hf.rules)));
        let _ = writeln!(
            out,
            "  fitted on {name} ({} runs): \"{}\"; on {other} ({} runs): recorded {}, before {}, after {}",
            halves[fit_on].len(),
            hf.rules.spec(),
            halves[check_on].len(),
            cell(rec),
            cell(before),
            cell(after)
        );
    }
    out
}
