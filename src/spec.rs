//! Strategy specs: one syntax everywhere, `name` or `name(key=value, ...)`, e.g.
//! `mask(keep_recent=10, min_chars=100)`. Experiment files may also use the table form
//! `{ name = "mask", keep_recent = 10 }`; both end up as a [`Spec`].

use crate::error::ParseError;
use std::fmt;

/// A parameter value as written.
#[derive(Debug, Clone, PartialEq)]
pub enum SpecValue {
    Int(i64),
    Float(f64),
    Bool(bool),
    Str(String),
    List(Vec<String>),
}

impl fmt::Display for SpecValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SpecValue::Int(v) => write!(f, "{v}"),
            SpecValue::Float(v) => write!(f, "{v}"),
            SpecValue::Bool(v) => write!(f, "{v}"),
            SpecValue::Str(v) => f.write_str(v),
            SpecValue::List(v) => write!(f, "[{}]", v.join(",")),
        }
    }
}

/// A strategy name with its parameters, in the order written.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    pub name: String,
    pub params: Vec<(String, SpecValue)>,
}

impl Spec {
    /// Parses `name` or `name(key=value, ...)`.
    pub fn parse(text: &str) -> Result<Spec, ParseError> {
        Spec::parse_as(text, "strategy")
    }

    /// [`Spec::parse`] for specs of another kind (`what`, e.g. "noise model"), which the
    /// syntax errors name.
    pub fn parse_as(text: &str, what: &str) -> Result<Spec, ParseError> {
        let text = text.trim();
        let (name, rest) = match text.find('(') {
            None => (text, None),
            Some(open) => {
                let inner = text[open + 1..].strip_suffix(')').ok_or_else(|| {
                    format!("{what} {text:?}: expected `name(key=value, ...)` with a closing `)`")
                })?;
                (&text[..open], Some(inner))
            }
        };
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "{what} {text:?}: expected a name of letters, digits and `_`, optionally followed by `(key=value, ...)`"
            ).into());
        }
        let mut params = Vec::new();
        if let Some(inner) = rest {
            for part in split_top_level(inner) {
                let part = part.trim();
                if part.is_empty() {
                    continue;
                }
                let (key, value) = part.split_once('=').ok_or_else(|| {
                    format!("{what} {text:?}: parameter {part:?} should read `key=value`")
                })?;
                let key = key.trim();
                if params.iter().any(|(k, _)| k == key) {
                    return Err(crate::error::given_twice(what, text, key).into());
                }
                params.push((key.to_string(), parse_value(value.trim())));
            }
        }
        Ok(Spec {
            name: name.to_string(),
            params,
        })
    }

    /// Builds a spec from an experiment file's table form `{ name = "...", key = value }`.
    pub fn from_toml(table: &toml::Table) -> Result<Spec, ParseError> {
        let name = match table.get("name") {
            Some(toml::Value::String(s)) => s.clone(),
            Some(other) => return Err(format!("`name` must be a string, found {other}").into()),
            None => return Err("a strategy table needs `name = \"...\"`".into()),
        };
        let mut params = Vec::new();
        for (key, value) in table {
            if key == "name" {
                continue;
            }
            let v = match value {
                toml::Value::Integer(i) => SpecValue::Int(*i),
                toml::Value::Float(x) => SpecValue::Float(*x),
                toml::Value::Boolean(b) => SpecValue::Bool(*b),
                toml::Value::String(s) => SpecValue::Str(s.clone()),
                toml::Value::Array(items) => SpecValue::List(
                    items
                        .iter()
                        .map(|i| match i {
                            toml::Value::String(s) => Ok(s.clone()),
                            other => Err(ParseError(format!(
                                "`{key}`: expected a list of strings, found {other}"
                            ))),
                        })
                        .collect::<Result<_, _>>()?,
                ),
                other => return Err(format!("`{key}`: unsupported value {other}").into()),
            };
            params.push((key.clone(), v));
        }
        Ok(Spec { name, params })
    }

    /// A reader that hands out parameters by name and reports the ones never asked for.
    pub fn reader(&self) -> Params<'_> {
        Params {
            spec: self,
            used: vec![false; self.params.len()],
            known: Vec::new(),
        }
    }
}

fn split_top_level(s: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&s[start..]);
    parts
}

fn parse_value(v: &str) -> SpecValue {
    if let Some(inner) = v.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
        return SpecValue::List(
            inner
                .split(',')
                .map(|s| unquote(s.trim()).to_string())
                .filter(|s| !s.is_empty())
                .collect(),
        );
    }
    if let Ok(i) = v.parse::<i64>() {
        return SpecValue::Int(i);
    }
    if let Ok(x) = v.parse::<f64>() {
        return SpecValue::Float(x);
    }
    match v {
        "true" => SpecValue::Bool(true),
        "false" => SpecValue::Bool(false),
        _ => SpecValue::Str(unquote(v).to_string()),
    }
}

fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(s)
}

/// Typed access to a spec's parameters.
pub struct Params<'a> {
    spec: &'a Spec,
    used: Vec<bool>,
    known: Vec<&'static str>,
}

impl Params<'_> {
    fn take(&mut self, key: &'static str) -> Option<&SpecValue> {
        // A preset may read a generic key again (to check it against its own parameters).
        if !self.known.contains(&key) {
            self.known.push(key);
        }
        let pos = self.spec.params.iter().position(|(k, _)| k == key)?;
        self.used[pos] = true;
        Some(&self.spec.params[pos].1)
    }

    /// The name of the strategy being read, for messages about its parameters.
    pub fn strategy(&self) -> &str {
        &self.spec.name
    }

    /// The raw value of `key`, for parameters with a type of their own.
    pub fn value(&mut self, key: &'static str) -> Option<SpecValue> {
        self.take(key).cloned()
    }

    pub fn bad(&self, key: &str, expected: &str, found: &SpecValue) -> ParseError {
        ParseError(format!(
            "strategy `{}`: parameter `{key}` expects {expected}, found `{found}`",
            self.spec.name
        ))
    }

    pub fn usize(&mut self, key: &'static str) -> Result<Option<usize>, ParseError> {
        match self.take(key).cloned() {
            None => Ok(None),
            Some(SpecValue::Int(i)) if i >= 0 => Ok(Some(i as usize)),
            Some(v) => Err(self.bad(key, "a whole number ≥ 0", &v)),
        }
    }

    pub fn u64(&mut self, key: &'static str) -> Result<Option<u64>, ParseError> {
        Ok(self.usize(key)?.map(|v| v as u64))
    }

    /// A number in `[lo, hi]`.
    pub fn fraction(
        &mut self,
        key: &'static str,
        lo: f64,
        hi: f64,
    ) -> Result<Option<f64>, ParseError> {
        let v = match self.take(key).cloned() {
            None => return Ok(None),
            Some(SpecValue::Int(i)) => (i as f64, SpecValue::Int(i)),
            Some(SpecValue::Float(x)) => (x, SpecValue::Float(x)),
            Some(v) => return Err(self.bad(key, &format!("a number from {lo} to {hi}"), &v)),
        };
        if !(lo..=hi).contains(&v.0) {
            return Err(self.bad(key, &format!("a number from {lo} to {hi}"), &v.1));
        }
        Ok(Some(v.0))
    }

    pub fn bool(&mut self, key: &'static str) -> Result<Option<bool>, ParseError> {
        match self.take(key).cloned() {
            None => Ok(None),
            Some(SpecValue::Bool(b)) => Ok(Some(b)),
            Some(v) => Err(self.bad(key, "true or false", &v)),
        }
    }

    /// One of the given words.
    pub fn choice(
        &mut self,
        key: &'static str,
        options: &[&str],
    ) -> Result<Option<String>, ParseError> {
        match self.take(key).cloned() {
            None => Ok(None),
            Some(SpecValue::Str(s)) if options.contains(&s.as_str()) => Ok(Some(s)),
            Some(v) => Err(self.bad(key, &format!("one of {}", options.join(", ")), &v)),
        }
    }

    /// A word or a path, as written (`cache=answers/`, `model=gpt-5-mini`).
    pub fn text(&mut self, key: &'static str) -> Result<Option<String>, ParseError> {
        match self.take(key).cloned() {
            None => Ok(None),
            Some(SpecValue::Str(s)) => Ok(Some(s)),
            Some(v) => Err(self.bad(key, "a text", &v)),
        }
    }

    pub fn list(&mut self, key: &'static str) -> Result<Option<Vec<String>>, ParseError> {
        match self.take(key).cloned() {
            None => Ok(None),
            Some(SpecValue::List(l)) => Ok(Some(l)),
            Some(SpecValue::Str(s)) => Ok(Some(vec![s])),
            Some(v) => Err(self.bad(key, "a list such as [bash,grep]", &v)),
        }
    }

    /// Every parameter not asked for so far, in the order written, taken as read: what a
    /// strategy that passes its own parameters on (an external program's) hands over.
    pub fn rest(&mut self) -> Vec<(String, SpecValue)> {
        let mut rest = Vec::new();
        for (i, (key, value)) in self.spec.params.iter().enumerate() {
            if !self.used[i] {
                self.used[i] = true;
                rest.push((key.clone(), value.clone()));
            }
        }
        rest
    }

    /// Fails on any parameter that was never asked for.
    pub fn finish(self) -> Result<(), ParseError> {
        for (i, (key, _)) in self.spec.params.iter().enumerate() {
            if !self.used[i] {
                let known = if self.known.is_empty() {
                    "it takes no parameters".to_string()
                } else {
                    format!("known: {}", self.known.join(", "))
                };
                return Err(format!(
                    "strategy `{}`: unknown parameter `{key}` ({known})",
                    self.spec.name
                )
                .into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_params_and_lists() {
        let s = Spec::parse(
            " mask(keep_recent=10, min_chars = 100, exclude=[a, \"b\"], r=0.5, on=true, fill=skip)",
        )
        .unwrap();
        assert_eq!(s.name, "mask");
        assert_eq!(
            s.params,
            vec![
                ("keep_recent".into(), SpecValue::Int(10)),
                ("min_chars".into(), SpecValue::Int(100)),
                (
                    "exclude".into(),
                    SpecValue::List(vec!["a".into(), "b".into()])
                ),
                ("r".into(), SpecValue::Float(0.5)),
                ("on".into(), SpecValue::Bool(true)),
                ("fill".into(), SpecValue::Str("skip".into())),
            ]
        );
        assert_eq!(Spec::parse("recent").unwrap().params, vec![]);
        assert_eq!(Spec::parse("recent()").unwrap().params, vec![]);
    }

    #[test]
    fn a_parameter_given_twice_is_refused_by_name() {
        let e = Spec::parse("recent(keep_recent=3, keep_recent=4)").unwrap_err();
        assert_eq!(
            e,
            "strategy \"recent(keep_recent=3, keep_recent=4)\": parameter `keep_recent` is given twice; give each parameter once"
        );
        let e = Spec::parse_as("uniform(rate=0.1,rate = 0.2)", "noise model").unwrap_err();
        assert!(
            e.starts_with(
                "noise model \"uniform(rate=0.1,rate = 0.2)\": parameter `rate` is given twice"
            ),
            "{e}"
        );
    }

    #[test]
    fn rejects_malformed_specs() {
        assert!(Spec::parse("mask(keep_recent=10")
            .unwrap_err()
            .contains("closing"));
        assert!(Spec::parse("mask(10)").unwrap_err().contains("key=value"));
        assert!(Spec::parse("").is_err());
        assert!(Spec::parse("a b").is_err());
    }

    #[test]
    fn reader_checks_types_ranges_and_unknown_keys() {
        let s = Spec::parse("x(a=3, b=1.5, c=-1)").unwrap();
        let mut r = s.reader();
        assert_eq!(r.usize("a").unwrap(), Some(3));
        assert!(r
            .fraction("b", 0.0, 1.0)
            .unwrap_err()
            .contains("from 0 to 1"));
        assert!(r.usize("c").unwrap_err().contains("whole number"));
        let s = Spec::parse("x(a=3, zz=1)").unwrap();
        let mut r = s.reader();
        r.usize("a").unwrap();
        assert!(r
            .finish()
            .unwrap_err()
            .contains("unknown parameter `zz` (known: a)"));
    }
}
