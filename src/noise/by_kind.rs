//! `by_kind(fn, fp, fn_<kind>, fp_<kind>, ...)`: rates per record kind (a flagger that skims
//! tool results misses more there than in user messages). `fn` / `fp` are the rates of every
//! kind without an override of its own; kinds are spelled as `Kind::as_str` spells them.

use super::spec::Rates;
use super::{flag, Draws, Model, NoiseLevel, Records};
use crate::error::ParseError;
use crate::history::Kind;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ByKind {
    /// The rates of kinds without an override.
    pub default: NoiseLevel,
    /// Overrides by kind, in the order of `Kind::ALL`; only those that differ from the
    /// default are kept, so two spellings of one model get one label.
    pub false_negative: [Option<f64>; Kind::ALL.len()],
    pub false_positive: [Option<f64>; Kind::ALL.len()],
}

impl ByKind {
    /// The rates of records of `kind`.
    pub fn rates(&self, kind: Kind) -> NoiseLevel {
        let i = kind_index(kind);
        NoiseLevel::new(
            self.false_negative[i].unwrap_or(self.default.false_negative),
            self.false_positive[i].unwrap_or(self.default.false_positive),
        )
    }
}

fn kind_index(kind: Kind) -> usize {
    Kind::ALL
        .iter()
        .position(|&k| k == kind)
        .expect("every kind is listed")
}

impl Model for ByKind {
    fn read(r: &mut Rates) -> Result<Self, ParseError> {
        let default = r.level()?;
        let mut m = ByKind {
            default,
            false_negative: [None; Kind::ALL.len()],
            false_positive: [None; Kind::ALL.len()],
        };
        for (i, kind) in Kind::ALL.iter().enumerate() {
            let fn_kind = r.rate(&format!("fn_{kind}"))?;
            let fp_kind = r.rate(&format!("fp_{kind}"))?;
            m.false_negative[i] = fn_kind.filter(|&q| q != default.false_negative);
            m.false_positive[i] = fp_kind.filter(|&p| p != default.false_positive);
        }
        Ok(m)
    }

    fn params(&self) -> Vec<(String, f64)> {
        let mut p = vec![
            ("fn".to_string(), self.default.false_negative),
            ("fp".to_string(), self.default.false_positive),
        ];
        for (prefix, rates) in [("fn", &self.false_negative), ("fp", &self.false_positive)] {
            for (kind, rate) in Kind::ALL.iter().zip(rates) {
                if let Some(rate) = rate {
                    p.push((format!("{prefix}_{kind}"), *rate));
                }
            }
        }
        p
    }

    /// The rates of the kinds without an override: the overall rate depends on each
    /// history's mix of kinds.
    fn nominal(&self) -> NoiseLevel {
        self.default
    }

    fn apply(&self, records: Records, draws: &Draws, out: &mut Vec<bool>) {
        // An array, not a Vec: the sweep's hot loop does not allocate.
        let rates = Kind::ALL.map(|k| self.rates(k));
        out.clear();
        out.extend(
            records
                .flags
                .iter()
                .zip(records.kinds)
                .zip(&draws.own)
                .map(|((&base, &kind), &u)| flag(base, u, rates[kind_index(kind)])),
        );
    }
}
