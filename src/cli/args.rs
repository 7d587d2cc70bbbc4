//! Parsers for argument values shared by several subcommands.

use crate::history::History;
use crate::strategy::Strategy;
use std::path::Path;

/// The history of a file that `--history-name` names, or its only one.
pub fn choose_history<'a>(
    path: &Path,
    histories: &'a [History],
    name: Option<&str>,
) -> anyhow::Result<&'a History> {
    let names = || {
        histories
            .iter()
            .map(|h| format!("{:?}", h.name))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (name, histories.len()) {
        (None, 1) => Ok(&histories[0]),
        (None, n) => anyhow::bail!(
            "{}: holds {n} histories ({}); choose one with --history-name",
            path.display(),
            names()
        ),
        (Some(name), _) => histories.iter().find(|h| h.name == name).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: no history named {name:?} (it holds {})",
                path.display(),
                names()
            )
        }),
    }
}

/// Splits a comma-separated list at top level only, so `recent,mask(keep_recent=10, min_chars=5)`
/// gives two specs.
pub fn split_list(text: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in text.chars() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            parts.push(std::mem::take(&mut current).trim().to_string());
        } else {
            current.push(c);
        }
    }
    parts.push(current.trim().to_string());
    parts.retain(|p| !p.is_empty());
    parts
}

/// A list of strategy specs.
pub fn strategies(text: &str) -> Result<Vec<Strategy>, String> {
    let specs = split_list(text);
    if specs.is_empty() {
        return Err("expected at least one strategy, e.g. recent,required".into());
    }
    specs
        .iter()
        .map(|s| Strategy::parse(s).map_err(String::from))
        .collect()
}

/// Checks a budget percentage: a number from 0 to 100.
pub fn check_budget(b: f64) -> Result<f64, String> {
    if b.is_finite() && (0.0..=100.0).contains(&b) {
        Ok(b)
    } else {
        Err(format!(
            "budget {b} is out of range: expected a percentage from 0 to 100"
        ))
    }
}

/// A list of budget percentages such as `100,70,50,25`.
pub fn budgets(text: &str) -> Result<Vec<f64>, String> {
    let parts = split_list(text);
    if parts.is_empty() {
        return Err("expected at least one budget, e.g. 100,70,50,25".into());
    }
    parts
        .iter()
        .map(|p| {
            let b = p.trim_end_matches('%').parse::<f64>().map_err(|_| {
                format!("budget {p:?} is not a number: expected percentages such as 100,70,50,25")
            })?;
            check_budget(b)
        })
        .collect()
}

/// A probability from 0 to 1.
pub fn rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "{text:?} is not a rate: expected a number from 0 to 1"
        )),
    }
}

/// The flags of `flags` that were given, listed, with the verb that agrees ("applies" for
/// one, "apply" for several), for a message saying where they apply; `None` when none was.
pub fn given_flags(flags: &[(&str, bool)]) -> Option<(String, &'static str)> {
    let given: Vec<&str> = flags
        .iter()
        .filter(|(_, on)| *on)
        .map(|(f, _)| *f)
        .collect();
    match given.len() {
        0 => None,
        1 => Some((given[0].to_string(), "applies")),
        _ => Some((given.join(", "), "apply")),
    }
}

/// Whether `a` and `b` name one existing file: the same canonical path, or (a hard link) the
/// same device and inode.
pub fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(x), Ok(y)) = (a.canonicalize(), b.canonicalize()) {
        if x == y {
            return true;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt as _;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    false
}

/// Refuses an `--out` (or the temporary file written beside it) that is one of the inputs:
/// the command would overwrite what it reads.
pub fn refuse_overwrite(out: &Path, temporary: &Path, inputs: &[&Path]) -> anyhow::Result<()> {
    for input in inputs {
        for target in [out, temporary] {
            if same_file(target, input) {
                anyhow::bail!(
                    "--out {}: is the input {}; writing it would overwrite the input. Choose another --out",
                    out.display(),
                    input.display()
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_split_at_top_level_only() {
        assert_eq!(
            split_list("recent, mask(keep_recent=10, min_chars=5),x(a=[1,2])"),
            vec!["recent", "mask(keep_recent=10, min_chars=5)", "x(a=[1,2])"]
        );
    }

    #[test]
    fn budgets_are_checked() {
        assert_eq!(budgets("100,70,50%").unwrap(), vec![100.0, 70.0, 50.0]);
        assert!(budgets("-5").unwrap_err().contains("from 0 to 100"));
        assert!(budgets("101").is_err());
        assert!(budgets("abc").unwrap_err().contains("not a number"));
        assert!(budgets("").is_err());
        assert!(rate("1.3").unwrap_err().contains("from 0 to 1"));
    }

    #[test]
    fn given_flags_are_listed_with_the_verb_agreeing() {
        assert_eq!(given_flags(&[("--a", false)]), None);
        assert_eq!(
            given_flags(&[("--a", true), ("--b", false)]),
            Some(("--a".into(), "applies"))
        );
        assert_eq!(
            given_flags(&[("--a", true), ("--b", true)]),
            Some(("--a, --b".into(), "apply"))
        );
    }
}
