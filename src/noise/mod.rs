//! Label noise: the flags a strategy sees are a possibly wrong copy of the flags a harness
//! could know (`flag_base`, the truth unless a history carries flags of its own).
//!
//! Flags depend only on (seed, history, replicate) and the noise model — never on the strategy
//! or the budget — so strategies are compared on the very same mistakes (common random numbers).
//! Each record gets one uniform draw `u` per (seed, history, replicate); a required record loses
//! its flag when `u < false_negative`, an unrequired one gains a flag when `u < false_positive`.
//! The same draws serve every noise level and every model, so a record mislabelled at 10 % is
//! also mislabelled at 20 %: curves over the noise axis are not jittered by fresh draws at each
//! level, and two models at one rate differ only where their patterns differ.
//!
//! A model ([`NoiseModel`]) turns the records (flags, kinds, costs) and the draws into the flags:
//! `uniform` (one rate for all), `by_kind`, `by_position`, `by_length` (per-record rates) and
//! `correlated` (draws shared across replicates). Each is one file here implementing [`Model`];
//! a new one is its file plus one line of the `noise_models!` list below.

mod spec;

use crate::error::ParseError;
use crate::history::{CostedHistory, Kind};
use crate::rng;
use serde::Serialize;

pub use spec::Rates;

/// P(flag off | required) and P(flag on | not required).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct NoiseLevel {
    pub false_negative: f64,
    pub false_positive: f64,
}

impl NoiseLevel {
    pub const NONE: NoiseLevel = NoiseLevel {
        false_negative: 0.0,
        false_positive: 0.0,
    };

    pub fn new(false_negative: f64, false_positive: f64) -> Self {
        NoiseLevel {
            false_negative,
            false_positive,
        }
    }
}

/// The rates a flagger realised on one history: what its flags got wrong against the truth
/// (the base flags a history carries and the noise on top alike). Two noise models compare
/// fairly at the same realised rate, not at the same nominal one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Realised {
    pub required: u32,
    /// Required records left unflagged.
    pub missed: u32,
    pub others: u32,
    /// Records not required but flagged.
    pub false_flags: u32,
}

impl Realised {
    /// Counts the mistakes of `flags` against `truth`.
    pub fn of(truth: &[bool], flags: &[bool]) -> Realised {
        let mut r = Realised::default();
        for (&t, &f) in truth.iter().zip(flags) {
            if t {
                r.required += 1;
                r.missed += u32::from(!f);
            } else {
                r.others += 1;
                r.false_flags += u32::from(f);
            }
        }
        r
    }

    /// `missed / required`; `None` without required records.
    pub fn false_negative(&self) -> Option<f64> {
        (self.required > 0).then(|| f64::from(self.missed) / f64::from(self.required))
    }

    /// `false_flags / others`; `None` when every record is required.
    pub fn false_positive(&self) -> Option<f64> {
        (self.others > 0).then(|| f64::from(self.false_flags) / f64::from(self.others))
    }
}

/// Every (false_negative, false_positive) pair, false-negative major: a sweep's noise axis.
pub fn levels(false_negative: &[f64], false_positive: &[f64]) -> Vec<NoiseLevel> {
    false_negative
        .iter()
        .flat_map(|&q| false_positive.iter().map(move |&p| NoiseLevel::new(q, p)))
        .collect()
}

/// Fills `out` with one uniform draw per record for (seed, history, replicate).
pub fn draws(seed: u64, history: u64, replicate: u64, records: usize, out: &mut Vec<f64>) {
    let mut s = rng::stream(&[seed, rng::tag::NOISE, history, replicate]);
    out.clear();
    out.extend((0..records).map(|_| rng::next_unit(&mut s)));
}

/// One record's flag from its base flag, its draw and its rates: the rule every model shares.
#[inline]
pub fn flag(base: bool, u: f64, rates: NoiseLevel) -> bool {
    if base {
        u >= rates.false_negative
    } else {
        u < rates.false_positive
    }
}

/// Fills `out` with the flags for `truth` at `level`, given the record draws.
pub fn apply(truth: &[bool], draws: &[f64], level: NoiseLevel, out: &mut Vec<bool>) {
    out.clear();
    out.extend(
        truth
            .iter()
            .zip(draws)
            .map(|(&required, &u)| flag(required, u, level)),
    );
}

/// The flags for one history at one noise level, drawn afresh (for one-off callers).
pub fn flags(
    truth: &[bool],
    level: NoiseLevel,
    seed: u64,
    history: u64,
    replicate: u64,
) -> Vec<bool> {
    let mut d = Vec::new();
    draws(seed, history, replicate, truth.len(), &mut d);
    let mut f = Vec::new();
    apply(truth, &d, level, &mut f);
    f
}

/// What a noise model may look at: the flags before noise and what a flagger sees of each
/// record (its kind, its cost). Never the truth, unless the flags are the truth.
#[derive(Debug, Clone, Copy)]
pub struct Records<'a> {
    pub flags: &'a [bool],
    pub kinds: &'a [Kind],
    pub costs: &'a [u64],
}

impl<'a> Records<'a> {
    /// A history's records, starting from its `flag_base`.
    pub fn of(history: &'a CostedHistory) -> Self {
        Records {
            flags: &history.flag_base,
            kinds: &history.kinds,
            costs: &history.costs,
        }
    }
}

/// The random numbers of one (seed, history, replicate), shared by every model and rate.
#[derive(Debug, Clone, Default)]
pub struct Draws {
    /// The replicate's own draw per record: [`draws`], what `uniform` uses.
    pub own: Vec<f64>,
    /// Per record, a draw of the history alone, the same in every replicate (empty unless
    /// filled with `shared`).
    pub history: Vec<f64>,
    /// Per record, the draw that picks between `history` and `own` (empty unless `shared`).
    pub selector: Vec<f64>,
}

impl Draws {
    /// Fills the draws of (seed, history, replicate) for `records` records; `shared` also
    /// fills the draws models such as `correlated` need (see [`NoiseModel::shares_draws`]).
    pub fn fill(&mut self, seed: u64, history: u64, replicate: u64, records: usize, shared: bool) {
        draws(seed, history, replicate, records, &mut self.own);
        self.history.clear();
        self.selector.clear();
        if shared {
            let h = rng::key(&[seed, rng::tag::NOISE_HISTORY, history]);
            let s = rng::key(&[seed, rng::tag::NOISE_SELECTOR, history, replicate]);
            self.history
                .extend((0..records as u64).map(|i| rng::unit_at(h, i)));
            self.selector
                .extend((0..records as u64).map(|i| rng::unit_at(s, i)));
        }
    }

    /// The draws of (seed, history, replicate), filled for `model`.
    pub fn new(
        seed: u64,
        history: u64,
        replicate: u64,
        records: usize,
        model: &NoiseModel,
    ) -> Self {
        let mut d = Draws::default();
        d.fill(seed, history, replicate, records, model.shares_draws());
        d
    }
}

/// What a noise model does. One file per model implements it; [`NoiseModel`] lists them.
pub trait Model {
    /// Reads the model's parameters from its spec.
    fn read(rates: &mut Rates) -> Result<Self, ParseError>
    where
        Self: Sized;
    /// Every parameter in its canonical order, defaults written out: the spec's label.
    fn params(&self) -> Vec<(String, f64)>;
    /// The rates the `false_negative` / `false_positive` columns report for the model (each
    /// model says what they mean for it).
    fn nominal(&self) -> NoiseLevel;
    /// Whether the model reads [`Draws::history`] and [`Draws::selector`].
    fn shares_draws(&self) -> bool {
        false
    }
    /// The parameters of the model's pattern, without its rate: what models of one family
    /// share (by default every parameter but `fn` and `fp`).
    fn family_params(&self) -> Vec<(String, String)> {
        self.params()
            .into_iter()
            .filter(|(k, _)| k != "fn" && k != "fp")
            .map(|(k, v)| (k, v.to_string()))
            .collect()
    }
    /// Fills `out` with the flags of `records` under the draws.
    fn apply(&self, records: Records, draws: &Draws, out: &mut Vec<bool>);
}

/// Declares the models: each line is a spec name, its variant and its file's type.
macro_rules! noise_models {
    ($($name:literal => $variant:ident($module:ident::$ty:ident)),* $(,)?) => {
        $(mod $module;)*
        $(pub use $module::$ty;)*

        /// A noise model, as a spec names it.
        // A sweep holds a handful of models, built once: the variants' sizes do not matter.
        #[allow(clippy::large_enum_variant)]
        #[derive(Debug, Clone, PartialEq)]
        pub enum NoiseModel {
            $($variant($ty),)*
        }

        impl NoiseModel {
            /// The models' spec names.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The spec name of the model.
            pub fn name(&self) -> &'static str {
                match self {
                    $(NoiseModel::$variant(_) => $name,)*
                }
            }

            fn model(&self) -> &dyn Model {
                match self {
                    $(NoiseModel::$variant(m) => m,)*
                }
            }

            fn read(name: &str, rates: &mut Rates) -> Option<Result<NoiseModel, ParseError>> {
                match name {
                    $($name => Some($ty::read(rates).map(NoiseModel::$variant)),)*
                    _ => None,
                }
            }
        }
    };
}

noise_models! {
    "uniform" => Uniform(uniform::Uniform),
    "by_kind" => ByKind(by_kind::ByKind),
    "by_position" => ByPosition(by_position::ByPosition),
    "by_length" => ByLength(by_length::ByLength),
    "correlated" => Correlated(correlated::Correlated),
}

impl NoiseModel {
    /// Parses a spec such as `uniform(fn=0.2, fp=0.05)` or `correlated(rho=0.8, fn=0.2)`.
    pub fn parse(text: &str) -> Result<NoiseModel, ParseError> {
        let spec = crate::spec::Spec::parse_as(text, "noise model")?;
        let mut rates = Rates::new(&spec);
        let model = NoiseModel::read(&spec.name, &mut rates).unwrap_or_else(|| {
            Err(ParseError(format!(
                "unknown noise model `{}`: expected one of {}, e.g. \"uniform(fn=0.2, fp=0.05)\"",
                spec.name,
                NoiseModel::NAMES.join(", ")
            )))
        })?;
        rates.finish()?;
        Ok(model)
    }

    /// The uniform model at one level: what the `false_negative` / `false_positive` axes mean.
    pub fn uniform(level: NoiseLevel) -> NoiseModel {
        NoiseModel::Uniform(Uniform(level))
    }

    /// The canonical spec, e.g. `uniform(fn=0.2, fp=0.05)`: what the `noise` column holds.
    pub fn label(&self) -> String {
        spec::label(self.name(), &self.model().params())
    }

    /// The label without the rates of 0 the spec may leave out, e.g.
    /// `by_position(fn_end=0.8)`: short enough for a chart's panel title, and the same model
    /// when parsed back.
    pub fn short_label(&self) -> String {
        let mut params = self.model().params();
        for i in (0..params.len()).rev() {
            if params[i].1 != 0.0 {
                continue;
            }
            let mut fewer = params.clone();
            fewer.remove(i);
            let same = NoiseModel::parse(&spec::label(self.name(), &fewer)).ok();
            if same.as_ref() == Some(self) {
                params = fewer;
            }
        }
        spec::label(self.name(), &params)
    }

    /// The model's pattern without its nominal rates, e.g. `uniform`, `correlated(rho=0.8)`
    /// or `by_position(fn_start=0×fn, fn_end=2×fn, fp_start=0, fp_end=0)`: models of one
    /// family differ only in their rates, so a chart can join them into one line over the rate.
    pub fn family(&self) -> String {
        spec::label(self.name(), &self.model().family_params())
    }

    pub fn is_uniform(&self) -> bool {
        matches!(self, NoiseModel::Uniform(_))
    }

    /// The rates the `false_negative` / `false_positive` columns report: `uniform`'s and
    /// `correlated`'s rates (each record's exact rate), `by_kind`'s rates of the kinds without
    /// an override, `by_position`'s mean over positions, `by_length`'s miss chance of a record
    /// of the mean cost (and its uniform `fp`).
    pub fn nominal(&self) -> NoiseLevel {
        self.model().nominal()
    }

    /// Whether the model needs [`Draws::history`] and [`Draws::selector`].
    pub fn shares_draws(&self) -> bool {
        self.model().shares_draws()
    }

    /// Fills `out` with the flags of `records` under `draws` (filled with `shared` when
    /// [`NoiseModel::shares_draws`]).
    pub fn apply(&self, records: Records, draws: &Draws, out: &mut Vec<bool>) {
        self.model().apply(records, draws, out)
    }

    /// The flags of `records` for (seed, history, replicate), drawn afresh (one-off callers).
    pub fn flags(&self, records: Records, seed: u64, history: u64, replicate: u64) -> Vec<bool> {
        let draws = Draws::new(seed, history, replicate, records.flags.len(), self);
        let mut out = Vec::new();
        self.apply(records, &draws, &mut out);
        out
    }
}

impl std::fmt::Display for NoiseModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.label())
    }
}

/// The noise axis of a sweep: the uniform grid of the shorthand axes (false-negative major),
/// then the listed models.
pub fn models(
    false_negative: &[f64],
    false_positive: &[f64],
    listed: &[NoiseModel],
) -> Vec<NoiseModel> {
    levels(false_negative, false_positive)
        .into_iter()
        .map(NoiseModel::uniform)
        .chain(listed.iter().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_noise_gives_the_truth() {
        let truth = vec![true, false, true, false];
        assert_eq!(flags(&truth, NoiseLevel::NONE, 1, 2, 3), truth);
    }

    #[test]
    fn rates_one_flip_everything() {
        let truth = vec![true, false, true, false];
        assert_eq!(
            flags(&truth, NoiseLevel::new(1.0, 1.0), 1, 2, 3),
            vec![false, true, false, true]
        );
    }

    #[test]
    fn false_negatives_hit_about_q_of_required_records_and_nest_across_levels() {
        let truth = vec![true; 10_000];
        let low = flags(&truth, NoiseLevel::new(0.1, 0.0), 7, 0, 0);
        let high = flags(&truth, NoiseLevel::new(0.2, 0.0), 7, 0, 0);
        let off = |f: &[bool]| f.iter().filter(|&&x| !x).count() as f64 / f.len() as f64;
        assert!((off(&low) - 0.1).abs() < 0.01, "{}", off(&low));
        assert!((off(&high) - 0.2).abs() < 0.012, "{}", off(&high));
        // Every record wrong at 10 % is wrong at 20 %.
        assert!(low.iter().zip(&high).all(|(l, h)| *l || !*h));
    }

    #[test]
    fn different_replicates_and_histories_draw_differently() {
        let truth = vec![true; 64];
        let level = NoiseLevel::new(0.5, 0.0);
        let a = flags(&truth, level, 7, 0, 0);
        assert_ne!(a, flags(&truth, level, 7, 0, 1));
        assert_ne!(a, flags(&truth, level, 7, 1, 0));
        assert_eq!(a, flags(&truth, level, 7, 0, 0));
    }

    #[test]
    fn labels_are_canonical_and_families_drop_the_rates() {
        let m = NoiseModel::parse(" uniform( fp = 0.05 , fn=0.2 )").unwrap();
        assert_eq!(m.label(), "uniform(fn=0.2, fp=0.05)");
        assert_eq!(m.family(), "uniform");
        let m = NoiseModel::parse(
            "by_kind(fp_user=0, fn_tool_result=0.4, fp=0.02, fn=0.1, fn_user=0.1)",
        )
        .unwrap();
        // `fn_user=0.1` repeats the default, so it is not part of the label.
        assert_eq!(
            m.label(),
            "by_kind(fn=0.1, fp=0.02, fn_tool_result=0.4, fp_user=0)"
        );
        assert_eq!(m.family(), "by_kind(fn_tool_result=0.4, fp_user=0)");
        let m = NoiseModel::parse("correlated(fn=0.2, rho=1)").unwrap();
        assert_eq!(m.label(), "correlated(rho=1, fn=0.2, fp=0)");
        assert_eq!(m.family(), "correlated(rho=1)");
        assert_eq!(m.nominal(), NoiseLevel::new(0.2, 0.0));
        let m = NoiseModel::parse("by_position(fn_end=0.4)").unwrap();
        assert_eq!(
            m.label(),
            "by_position(fn_start=0, fn_end=0.4, fp_start=0, fp_end=0)"
        );
        assert_eq!(m.nominal(), NoiseLevel::new(0.2, 0.0));
        // A slope is the pattern, its mean the rate: (0, 0.4) and (0, 0.8) are one family.
        let family = "by_position(fn_start=0×fn, fn_end=2×fn, fp_start=0, fp_end=0)";
        assert_eq!(m.family(), family);
        assert_eq!(
            NoiseModel::parse("by_position(fn_end=0.8)")
                .unwrap()
                .family(),
            family
        );
        assert_eq!(m.short_label(), "by_position(fn_end=0.4)");
        // A rate of 0 that differs from the default stays; `rho` is required.
        let m = NoiseModel::parse("by_kind(fp=0.02, fp_user=0)").unwrap();
        assert_eq!(m.short_label(), "by_kind(fp=0.02, fp_user=0)");
        let m = NoiseModel::parse("correlated(rho=0, fn=0.1)").unwrap();
        assert_eq!(m.short_label(), "correlated(rho=0, fn=0.1)");
        // A label parses back to itself.
        for text in [
            "by_length(fn=0.3, fp=0.01)",
            "by_kind(fn=0.1, fp=0.02, fn_tool_result=0.4, fp_user=0)",
        ] {
            assert_eq!(NoiseModel::parse(text).unwrap().label(), text);
        }
    }
}
