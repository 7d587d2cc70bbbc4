//! `correlated(rho, fn, fp)`: mistakes shared across the replicates of a history, as the same
//! flagger run twice errs alike. Each record of a replicate takes, with probability `rho`, a
//! draw of the history (the same in every replicate) and otherwise the replicate's own draw —
//! the very draw `uniform` uses. The draw taken is uniform either way, so each record is
//! mislabelled with probability `fn` / `fp` exactly as under `uniform`; what changes is that
//! replicates agree: at `rho = 1` every replicate of a history has the same flags, at
//! `rho = 0` the flags are `uniform`'s bit for bit. The choice between the two draws is itself
//! a draw per (history, replicate, record), shared by every rate and every `rho`, so a record
//! that shares its mistake at `rho = 0.5` shares it at `rho = 0.8` too.

use super::spec::Rates;
use super::{flag, Draws, Model, NoiseLevel, Records};
use crate::error::ParseError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Correlated {
    pub rho: f64,
    pub rates: NoiseLevel,
}

impl Model for Correlated {
    fn read(r: &mut Rates) -> Result<Self, ParseError> {
        Ok(Correlated {
            rho: r.required_rate("rho")?,
            rates: r.level()?,
        })
    }

    fn params(&self) -> Vec<(String, f64)> {
        vec![
            ("rho".into(), self.rho),
            ("fn".into(), self.rates.false_negative),
            ("fp".into(), self.rates.false_positive),
        ]
    }

    fn nominal(&self) -> NoiseLevel {
        self.rates
    }

    fn shares_draws(&self) -> bool {
        true
    }

    fn apply(&self, records: Records, draws: &Draws, out: &mut Vec<bool>) {
        out.clear();
        out.extend((0..records.flags.len()).map(|i| {
            let u = if draws.selector[i] < self.rho {
                draws.history[i]
            } else {
                draws.own[i]
            };
            flag(records.flags[i], u, self.rates)
        }));
    }
}
