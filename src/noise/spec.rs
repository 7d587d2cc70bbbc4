//! Reading a noise model's parameters from its spec (`name(key=value, ...)`, the strategies'
//! syntax): every parameter is a number, each error names the model, the key and what was
//! expected, and a key the model never asked for is an error (a typo never falls back to 0).

use super::NoiseLevel;
use crate::error::ParseError;
use crate::spec::{Spec, SpecValue};

/// Typed access to a noise spec's parameters, by name.
pub struct Rates<'a> {
    spec: &'a Spec,
    used: Vec<bool>,
    known: Vec<String>,
}

impl<'a> Rates<'a> {
    pub fn new(spec: &'a Spec) -> Self {
        Rates {
            spec,
            used: vec![false; spec.params.len()],
            known: Vec::new(),
        }
    }

    /// The value of `key`, when given; 0 and 1 may be written as whole numbers.
    fn number(&mut self, key: &str) -> Result<Option<f64>, ParseError> {
        if !self.known.iter().any(|k| k == key) {
            self.known.push(key.to_string());
        }
        // A key given twice was refused with the spec (`Spec::parse_as`).
        let mut found = None;
        if let Some(i) = self.spec.params.iter().position(|(k, _)| k == key) {
            self.used[i] = true;
            found = Some(&self.spec.params[i].1);
        }
        match found {
            None => Ok(None),
            Some(SpecValue::Float(x)) => Ok(Some(*x)),
            Some(SpecValue::Int(i)) => Ok(Some(*i as f64)),
            Some(other) => Err(self.error(key, &format!("a number, found `{other}`"))),
        }
    }

    /// A probability in `[0, 1]`, when given.
    pub fn rate(&mut self, key: &str) -> Result<Option<f64>, ParseError> {
        match self.number(key)? {
            Some(x) if !(x.is_finite() && (0.0..=1.0).contains(&x)) => {
                Err(self.error(key, &format!("a rate from 0 to 1, found `{x}`")))
            }
            // `-0` is `0`: one value, one label.
            other => Ok(other.map(|x| x + 0.0)),
        }
    }

    /// A probability in `[0, 1]`, 0 when absent.
    pub fn rate_or_zero(&mut self, key: &str) -> Result<f64, ParseError> {
        Ok(self.rate(key)?.unwrap_or(0.0))
    }

    /// The pair `fn`, `fp` (each 0 when absent): the rates of every model but `by_kind`'s
    /// overrides and `by_position`'s ends.
    pub fn level(&mut self) -> Result<NoiseLevel, ParseError> {
        Ok(NoiseLevel::new(
            self.rate_or_zero("fn")?,
            self.rate_or_zero("fp")?,
        ))
    }

    /// A probability that must be given.
    pub fn required_rate(&mut self, key: &str) -> Result<f64, ParseError> {
        self.rate(key)?
            .ok_or_else(|| self.error(key, "a rate from 0 to 1, but it is missing"))
    }

    fn error(&self, key: &str, expected: &str) -> ParseError {
        ParseError(format!(
            "noise model `{}`: parameter `{key}` expects {expected}",
            self.spec.name
        ))
    }

    /// Fails on any parameter that was never asked for, listing the known ones.
    pub fn finish(self) -> Result<(), ParseError> {
        match self.used.iter().position(|used| !used) {
            None => Ok(()),
            Some(i) => Err(ParseError(format!(
                "noise model `{}`: unknown parameter `{}` (known: {})",
                self.spec.name,
                self.spec.params[i].0,
                self.known.join(", ")
            ))),
        }
    }
}

/// A canonical spec: `name(key=value, ...)` in the model's own order, numbers as Rust prints
/// them (`0.05`, `0`), so two spellings of one model get one label.
pub fn label<V: std::fmt::Display>(name: &str, params: &[(String, V)]) -> String {
    if params.is_empty() {
        return name.to_string();
    }
    let params: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{name}({})", params.join(", "))
}

/// `fn` and `fp` as a model's label writes them.
pub fn level_params(level: NoiseLevel) -> Vec<(String, f64)> {
    vec![
        ("fn".into(), level.false_negative),
        ("fp".into(), level.false_positive),
    ]
}
