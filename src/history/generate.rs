//! A seeded generator of agent-like histories.
//!
//! Each history follows an agent loop: a system prompt, the user's task, then cycles of
//! assistant thought → tool call → tool result, with an occasional user follow-up. Text lengths
//! are heavy-tailed the way real runs are: most records are short lines, a few tool outputs are
//! huge (a Pareto tail, capped). `required` records are placed by `required_position`: `early`
//! (mostly among the first records, like constraints stated at the start), `uniform` or `late`.
//! History `i` depends only on (seed, i), so histories can be generated in parallel and a
//! larger `count` extends a smaller one.
//!
//! **Facts and their reuse.** Every record long enough holds its own fact `fact_<i>`. A later
//! record written by the model uses an earlier record's fact again with probability
//! `reuse_required` (0.8) for a required record and `reuse_other` (0.15) for any other: the
//! required records are the ones the agent comes back for, which is why they are required.
//! The reuse goes to one `assistant` or `tool_call` record drawn uniformly among those more
//! than [`DEFAULT_MIN_GAP`] records later (when it has no room for it, the next of them in turn,
//! at most 8 tried, so generating stays linear in the history's length), written over as many
//! characters (no length, line count or cost changes). So a synthetic fact is *needed*
//! ([`crate::history::facts`]) exactly when a later record repeats it. The reuse draws come from a
//! stream of their own, so the records, their lengths and their labels are those of a
//! generator without reuse.

use super::record::{History, Kind, Record};
use crate::history::import::label::DEFAULT_MIN_GAP;
use crate::rng;
use rand::rngs::ChaCha8Rng;
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    #[default]
    Early,
    Uniform,
    Late,
}

/// The `[histories] generate = { ... }` table of an experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GenerateConfig {
    /// Number of histories.
    pub count: u32,
    /// Record count range, inclusive: `[min, max]`.
    pub records: [u32; 2],
    /// Share of records that are required (at least one per history when above 0).
    pub required_share: f64,
    #[serde(default)]
    pub required_position: Position,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// P(a later record uses a required record's fact again).
    #[serde(default = "default_reuse_required")]
    pub reuse_required: f64,
    /// P(a later record uses another record's fact again).
    #[serde(default = "default_reuse_other")]
    pub reuse_other: f64,
    /// P(a required record is overridden by a later one, see [`super::supersede`]); 0 (the
    /// default) plants none. Left out of the written configuration at 0, so the manifests and
    /// reports of experiments without it read as they did.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub supersede_rate: f64,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

fn default_reuse_required() -> f64 {
    0.8
}

fn default_reuse_other() -> f64 {
    0.15
}

/// Generated histories at most (README, "Limits").
pub const MAX_COUNT: u32 = 10_000_000;
/// Records of one generated history at most: it is built whole in memory (~100 MB).
pub const MAX_RECORDS: u32 = 1_000_000;
/// Records of all generated histories at most (`count × records[1]`): ~100 GB of JSONL.
pub const MAX_ALL_RECORDS: u64 = 1_000_000_000;

fn default_seed() -> u64 {
    1
}

impl GenerateConfig {
    /// Checks the ranges; the error names the offending key (relative to this table).
    pub fn validate(&self) -> Result<(), (String, String)> {
        if self.count == 0 {
            return Err(("count".into(), "must be at least 1 (zero histories)".into()));
        }
        if self.count > MAX_COUNT {
            return Err((
                "count".into(),
                format!("{} histories exceed ctxlab's limit of {MAX_COUNT} generated histories (README, \"Limits\"); split them over several seeds", self.count),
            ));
        }
        let [lo, hi] = self.records;
        if lo < 2 || lo > hi {
            return Err((
                "records".into(),
                format!("expected [min, max] with 2 ≤ min ≤ max, found [{lo}, {hi}]"),
            ));
        }
        if hi > MAX_RECORDS {
            return Err((
                "records".into(),
                format!("{hi} records per history exceed ctxlab's limit of {MAX_RECORDS} (README, \"Limits\"); a history is generated whole in memory"),
            ));
        }
        if u64::from(self.count) * u64::from(hi) > MAX_ALL_RECORDS {
            return Err((
                "count".into(),
                format!(
                    "{} histories of up to {hi} records (`records`) may hold more than {MAX_ALL_RECORDS} records, ctxlab's limit (README, \"Limits\"); generate fewer or shorter histories",
                    self.count
                ),
            ));
        }
        for (key, p) in [
            ("reuse_required", self.reuse_required),
            ("reuse_other", self.reuse_other),
            ("supersede_rate", self.supersede_rate),
        ] {
            if !(0.0..=1.0).contains(&p) {
                return Err((
                    key.into(),
                    format!("expected a probability from 0 to 1, found {p}"),
                ));
            }
        }
        if !(0.0..=1.0).contains(&self.required_share) {
            return Err((
                "required_share".into(),
                format!(
                    "expected a share from 0 to 1, found {}",
                    self.required_share
                ),
            ));
        }
        Ok(())
    }
}

/// Tools the agent uses, with a scale for the size of their output (a file read or a web page
/// is larger than an edit confirmation).
const TOOLS: [(&str, f64); 5] = [
    ("bash", 1.0),
    ("read_file", 2.5),
    ("grep", 0.8),
    ("edit_file", 0.3),
    ("web_fetch", 3.0),
];

const WORDS: [&str; 24] = [
    "the", "file", "test", "error", "config", "update", "function", "value", "check", "result",
    "module", "return", "path", "line", "build", "fix", "deploy", "user", "input", "output",
    "approval", "branch", "commit", "data",
];

/// Generates history `index` of the configuration.
pub fn generate_one(cfg: &GenerateConfig, index: u32) -> History {
    let mut r = rng::stream(&[cfg.seed, rng::tag::GENERATE, u64::from(index)]);
    let [lo, hi] = cfg.records;
    let n = lo + (r.next_u64() % u64::from(hi - lo + 1)) as u32;
    let mut records = Vec::with_capacity(n as usize);
    let mut text = String::new();
    let mut tool = 0usize;
    for i in 0..n {
        let (kind, tool_name, len) = match i {
            0 => (Kind::System, None, lognormal(&mut r, 400.0, 0.5, 60, 4000)),
            1 => (Kind::User, None, lognormal(&mut r, 250.0, 0.6, 40, 3000)),
            _ => match (i - 2) % 3 {
                0 if rng::next_unit(&mut r) < 0.08 => {
                    (Kind::User, None, lognormal(&mut r, 120.0, 0.6, 20, 2000))
                }
                0 => (
                    Kind::Assistant,
                    None,
                    lognormal(&mut r, 140.0, 0.7, 15, 3000),
                ),
                1 => {
                    tool = (r.next_u64() % TOOLS.len() as u64) as usize;
                    (
                        Kind::ToolCall,
                        Some(TOOLS[tool].0),
                        lognormal(&mut r, 60.0, 0.5, 10, 600),
                    )
                }
                _ => {
                    let (name, scale) = TOOLS[tool];
                    (
                        Kind::ToolResult,
                        Some(name),
                        pareto(&mut r, 120.0 * scale, 1.3, 40_000),
                    )
                }
            },
        };
        let prefix = fill_text(&mut r, &mut text, kind, tool_name, len);
        plant_fact(&mut text, prefix, i);
        let mut record = Record::new(u64::from(i) + 1, text.clone()).kind(kind);
        if let Some(t) = tool_name {
            record = record.tool(t);
        }
        records.push(record);
    }
    place_required(&mut r, cfg, &mut records);
    reuse_facts(cfg, index, &mut records);
    let supersessions = super::supersede::plant(cfg.supersede_rate, cfg.seed, index, &mut records);
    let mut history = History::new(format!("synthetic-{index:05}"), records);
    history.supersessions = supersessions;
    history
}

/// The token [`plant_fact`] writes for record `i`.
fn fact_token(i: usize) -> String {
    format!("fact_{i}")
}

/// Has later model-written records use earlier records' facts again (see the module
/// documentation). Each reuse is written at the end of its record, before any written there
/// already, after the record's own fact.
fn reuse_facts(cfg: &GenerateConfig, index: u32, records: &mut [Record]) {
    if cfg.reuse_required <= 0.0 && cfg.reuse_other <= 0.0 {
        return;
    }
    let mut r = rng::stream(&[cfg.seed, rng::tag::GENERATE, u64::from(index), REUSE]);
    // Per record, where free text ends (reuses fill it from the end) and starts (after its
    // own fact, which sits in the first stretch after the opening words).
    let mut room_end: Vec<usize> = records.iter().map(|x| x.text.len()).collect();
    let room_start: Vec<usize> = records
        .iter()
        .enumerate()
        .map(|(i, x)| {
            let own = fact_token(i);
            x.text
                .find(&format!("{own} "))
                .map_or(0, |p| p + own.len() + 1)
        })
        .collect();
    // The model-written records, ascending: where reuses go.
    let model: Vec<usize> = (0..records.len())
        .filter(|&j| matches!(records[j].kind, Kind::Assistant | Kind::ToolCall))
        .collect();
    let n = records.len();
    for i in 0..n {
        let token = fact_token(i);
        let has_fact = room_start[i] > 0;
        let p = if records[i].required {
            cfg.reuse_required
        } else {
            cfg.reuse_other
        };
        // One draw per record, made whether or not it holds a fact, so a record's reuse does
        // not depend on the lengths of the records before it.
        let u = rng::next_unit(&mut r);
        let pick = r.next_u64();
        if !has_fact || u >= p {
            continue;
        }
        // ` fact_<i> ` with a space each side, so it reads as a token of its own.
        let width = token.len() + 2;
        let fits = |j: usize, room_end: &[usize]| {
            room_end[j] >= room_start[j] + width
                && !records[j].text[room_end[j] - width..room_end[j]].contains('\n')
        };
        // A model-written record more than the gap later, drawn uniformly; when it has no room,
        // the next ones in turn (a few at most, so a history costs linear time).
        let first = model.partition_point(|&j| j <= i + DEFAULT_MIN_GAP);
        let later = &model[first..];
        if later.is_empty() {
            continue;
        }
        let start = (pick % later.len() as u64) as usize;
        let Some(j) = (0..later.len().min(REUSE_TRIES))
            .map(|k| later[(start + k) % later.len()])
            .find(|&j| fits(j, &room_end))
        else {
            continue;
        };
        let end = room_end[j];
        records[j]
            .text
            .replace_range(end - width..end, &format!(" {token} "));
        room_end[j] = end - width;
    }
}

/// The reuse stream's tag (beside the history's own stream).
const REUSE: u64 = 0x7265757365;
/// Records tried for a reuse, the drawn one and those after it, before it is given up.
const REUSE_TRIES: usize = 8;

/// Generates every history of the configuration, in order.
pub fn generate(cfg: &GenerateConfig) -> Vec<History> {
    use rayon::prelude::*;
    (0..cfg.count)
        .into_par_iter()
        .map(|i| generate_one(cfg, i))
        .collect()
}

/// A log-normal length with the given median and spread, clamped.
fn lognormal(r: &mut ChaCha8Rng, median: f64, sigma: f64, min: usize, max: usize) -> usize {
    let z = standard_normal(r);
    ((median * (sigma * z).exp()) as usize).clamp(min, max)
}

/// A Pareto length (scale `xm`, shape `alpha`): many short outputs, a few huge ones.
fn pareto(r: &mut ChaCha8Rng, xm: f64, alpha: f64, max: usize) -> usize {
    let u = 1.0 - rng::next_unit(r); // in (0, 1]
    ((xm / u.powf(1.0 / alpha)) as usize).min(max)
}

/// Box–Muller: portable, unlike distribution crates whose algorithms may change.
fn standard_normal(r: &mut ChaCha8Rng) -> f64 {
    let u1 = 1.0 - rng::next_unit(r);
    let u2 = rng::next_unit(r);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Writes `len` characters of plausible text into `out`; returns the length of its opening words.
fn fill_text(
    r: &mut ChaCha8Rng,
    out: &mut String,
    kind: Kind,
    tool: Option<&str>,
    len: usize,
) -> usize {
    out.clear();
    match kind {
        Kind::ToolCall => out.push_str(&format!("{}: ", tool.unwrap_or("tool"))),
        Kind::ToolResult => out.push_str("$ "),
        Kind::System => out.push_str("You are a coding agent. "),
        _ => {}
    }
    let prefix = out.len();
    while out.len() < len {
        let w = WORDS[(r.next_u64() % WORDS.len() as u64) as usize];
        out.push_str(w);
        out.push(
            if kind == Kind::ToolResult && r.next_u64().is_multiple_of(8) {
                '\n'
            } else {
                ' '
            },
        );
    }
    // All generated text is ASCII, so byte length is char length.
    out.truncate(len);
    prefix
}

/// Plants record `i`'s fact, the identifier `fact_<i>` and a space, in the first stretch of the
/// text after its opening words (`$ `, `bash: `, ...) free of line breaks, overwriting as many
/// characters: every length, line count and cost is what it was without facts, so the figures
/// of earlier versions stand. A record too short to hold it holds no fact. Generated words are
/// plain lowercase, so nothing else in the text is distinctive: the fact is the record's only one.
fn plant_fact(text: &mut String, prefix: usize, i: u32) {
    let fact = format!("{} ", fact_token(i as usize));
    let mut start = prefix;
    while start + fact.len() <= text.len() {
        match text[start..start + fact.len()].rfind('\n') {
            Some(p) => start += p + 1,
            None => {
                text.replace_range(start..start + fact.len(), &fact);
                return;
            }
        }
    }
}

/// Marks `round(share × n)` records (at least one when share > 0) as required, chosen without
/// replacement with weights that favour the start, the end, or neither.
fn place_required(r: &mut ChaCha8Rng, cfg: &GenerateConfig, records: &mut [Record]) {
    let n = records.len();
    if cfg.required_share <= 0.0 || n == 0 {
        return;
    }
    let k = ((cfg.required_share * n as f64).round() as usize).clamp(1, n);
    let scale = 0.15 * n as f64;
    // Efraimidis–Spirakis: the k largest u^(1/w) are a weighted sample without replacement.
    let mut keys: Vec<(f64, usize)> = (0..n)
        .map(|i| {
            let w = match cfg.required_position {
                Position::Early => (-(i as f64) / scale).exp(),
                Position::Uniform => 1.0,
                Position::Late => (-((n - 1 - i) as f64) / scale).exp(),
            };
            let u = 1.0 - rng::next_unit(r);
            (u.ln() / w.max(1e-300), i)
        })
        .collect();
    keys.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in keys.iter().take(k) {
        records[i].required = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_planted_fact_changes_no_length_and_no_line_break() {
        let mut text = String::from("$ the\nfile error check");
        let before = (text.len(), text.lines().count());
        plant_fact(&mut text, 2, 7);
        // `the\nfil` (the 7 characters after the prefix) holds a break, so the fact goes after it.
        assert_eq!(text, "$ the\nfact_7 ror check");
        assert_eq!((text.len(), text.lines().count()), before);
        let mut short = String::from("bash: ls -la");
        plant_fact(&mut short, 6, 12);
        assert_eq!(short, "bash: ls -la");
    }

    fn cfg(position: Position) -> GenerateConfig {
        GenerateConfig {
            count: 40,
            records: [20, 200],
            required_share: 0.2,
            required_position: position,
            seed: 1,
            reuse_required: 0.8,
            reuse_other: 0.15,
            supersede_rate: 0.0,
        }
    }

    #[test]
    fn same_seed_same_histories_and_agent_loop_shape() {
        let a = generate(&cfg(Position::Early));
        assert_eq!(a, generate(&cfg(Position::Early)));
        assert_eq!(a.len(), 40);
        for h in &a {
            assert!((20..=200).contains(&h.len()));
            assert_eq!(h.records[0].kind, Kind::System);
            assert_eq!(h.records[1].kind, Kind::User);
            let required = h.records.iter().filter(|r| r.required).count();
            assert_eq!(required, (0.2 * h.len() as f64).round() as usize);
            for w in h.records.windows(2) {
                assert!(w[0].id < w[1].id);
                if w[1].kind == Kind::ToolResult {
                    assert_eq!(w[0].kind, Kind::ToolCall);
                    assert_eq!(w[0].tool, w[1].tool);
                }
            }
        }
        let other = GenerateConfig {
            seed: 2,
            ..cfg(Position::Early)
        };
        assert_ne!(a, generate(&other));
    }

    #[test]
    fn a_generated_fact_is_needed_exactly_when_a_later_record_repeats_it() {
        use crate::history::facts::Facts;
        let (mut required, mut required_needed, mut other, mut other_needed) = (0, 0, 0, 0);
        for h in generate(&cfg(Position::Early)) {
            let f = Facts::of(&h);
            for (i, r) in h.records.iter().enumerate() {
                for fact in f.owned(i) {
                    let repeated = f.held_by(fact).len() > 1;
                    assert_eq!(f.is_needed(fact), repeated, "{} record {i}", h.name);
                    if r.required {
                        required += 1;
                        required_needed += usize::from(repeated);
                    } else {
                        other += 1;
                        other_needed += usize::from(repeated);
                    }
                }
            }
        }
        // About 0.8 of the required records' facts and 0.15 of the others' are reused (less
        // where no later model record has room).
        let share = |a: usize, b: usize| a as f64 / b as f64;
        assert!(
            (0.6..0.81).contains(&share(required_needed, required)),
            "{required_needed}/{required}"
        );
        assert!(
            (0.1..0.16).contains(&share(other_needed, other)),
            "{other_needed}/{other}"
        );
    }

    #[test]
    fn tool_outputs_are_heavy_tailed() {
        let lengths: Vec<usize> = generate(&cfg(Position::Uniform))
            .iter()
            .flat_map(|h| h.records.iter())
            .filter(|r| r.kind == Kind::ToolResult)
            .map(|r| r.text.len())
            .collect();
        let mut sorted = lengths.clone();
        sorted.sort_unstable();
        let median = sorted[sorted.len() / 2];
        let max = *sorted.last().unwrap();
        assert!(max > 20 * median, "median {median}, max {max}");
    }

    #[test]
    fn required_position_moves_the_required_records() {
        let mean_position = |p: Position| {
            let hs = generate(&cfg(p));
            let (sum, n) = hs.iter().fold((0.0, 0usize), |(s, n), h| {
                let len = h.len() as f64;
                let pos: Vec<f64> = h
                    .records
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.required)
                    .map(|(i, _)| i as f64 / len)
                    .collect();
                (s + pos.iter().sum::<f64>(), n + pos.len())
            });
            sum / n as f64
        };
        let (early, uniform, late) = (
            mean_position(Position::Early),
            mean_position(Position::Uniform),
            mean_position(Position::Late),
        );
        assert!(
            early < 0.3 && (0.35..0.65).contains(&uniform) && late > 0.7,
            "{early} {uniform} {late}"
        );
    }

    mod supersede {
        use super::super::{generate_one, GenerateConfig, Position};
        use crate::history::import::label::DEFAULT_MIN_GAP;
        use crate::history::Kind;

        fn cfg(supersede_rate: f64) -> GenerateConfig {
            GenerateConfig {
                count: 20,
                records: [40, 120],
                required_share: 0.1,
                required_position: Position::Early,
                seed: 3,
                reuse_required: 0.8,
                reuse_other: 0.15,
                supersede_rate,
            }
        }

        #[test]
        fn supersessions_move_nothing_but_the_overriding_labels() {
            let (mut pairs, mut required) = (0, 0);
            for index in 0..20 {
                let plain = generate_one(&cfg(0.0), index);
                let h = generate_one(&cfg(1.0), index);
                assert!(plain.supersessions.is_empty());
                required += plain.records.iter().filter(|r| r.required).count();
                for (a, b) in plain.records.iter().zip(&h.records) {
                    assert_eq!((&a.text, a.kind, a.id), (&b.text, b.kind, b.id));
                }
                for &(old, new) in &h.supersessions {
                    assert!(plain.records[old].required && !plain.records[new].required);
                    assert!(h.records[new].required);
                    assert_eq!(h.records[new].kind, Kind::Assistant);
                    assert!(new > old + DEFAULT_MIN_GAP);
                }
                // Every other label is the same.
                let overriding: Vec<usize> = h.supersessions.iter().map(|p| p.1).collect();
                for (j, (a, b)) in plain.records.iter().zip(&h.records).enumerate() {
                    if !overriding.contains(&j) {
                        assert_eq!(a.required, b.required, "{index} record {j}");
                    }
                }
                pairs += h.supersessions.len();
            }
            // At rate 1 nearly every required record is overridden (early ones have room).
            assert!(pairs * 10 >= required * 9, "{pairs} of {required}");
            // And rate 0.5 about half of them.
            let half: usize = (0..20)
                .map(|i| generate_one(&cfg(0.5), i).supersessions.len())
                .sum();
            assert!(
                (required * 3 / 10..=required * 7 / 10).contains(&half),
                "{half} of {required}"
            );
        }

        #[test]
        fn a_rate_outside_0_1_is_refused_by_name() {
            for bad in [-0.1, 1.5, f64::NAN] {
                let (key, why) = cfg(bad).validate().unwrap_err();
                assert_eq!(key, "supersede_rate");
                assert!(why.contains("from 0 to 1"), "{why}");
            }
            assert!(cfg(1.0).validate().is_ok() && cfg(0.0).validate().is_ok());
        }
    }
}
