//! The Complexity Trap's live runs (Lindenbauer et al., arXiv 2508.21433; per-instance results
//! from `Recursive-Safeguarding/the-complexity-trap`, `auxiliary-data/`), banded by run length as
//! `cost_ratio_vs_length` draws them beside ctxlab's replays: observation masking against the
//! raw agent, SWE-agent with Gemini 2.5 Flash (no thinking), on SWE-bench Verified.
//!
//! Every figure is computed from the folder's `experiment_instance_costs_sweagent.csv`; none is
//! typed in. Where the folder is not found the chart draws none and says so.
//!
//! Two ways of banding, because the runs are live: under masking the same instance often ran a
//! different number of turns than raw.
//! - by each run's own length: masking's runs whose turn count falls in the band against raw's
//!   runs whose turn count falls in it (different instances on each side);
//! - paired: only instances whose two runs both fall in the band.
//!
//! Each band's ratio is a ratio of means (mean masked over mean raw), as a per-run bill adds up.

use crate::error::InputError;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where a session sweep looks for the folder, relative to the working directory (the project
/// root when run as the guide does): the shared data beside the repository.
pub const DEFAULT_DIR: &str = "../shared/data/complexity-trap";

/// The environment variable that names another folder; set to the empty string, no folder is
/// looked for.
pub const DIR_VAR: &str = "CTXLAB_COMPLEXITY_TRAP";

/// The file of per-instance SWE-agent results in the folder.
pub const FILE: &str = "experiment_instance_costs_sweagent.csv";

/// The experiments read: Gemini 2.5 Flash without thinking (`gemini_2.5_flash-agent-...`; the
/// thinking runs are `gemini_2.5_flash_thinking-...`).
pub const EXPERIMENT_PREFIX: &str = "gemini_2.5_flash-agent";

/// The conditions compared, as the file names them.
pub const RAW: &str = "Raw Agent";
pub const MASKING: &str = "Observation Masking";

/// Run-length bands, `[low, high)` turns (for ctxlab: calls of the baseline).
pub const BANDS: [(u64, u64); 3] = [(20, 40), (40, 80), (80, 160)];

/// One run of the file: an instance under raw or masking.
#[derive(Debug, Clone, PartialEq)]
pub struct TrapRun {
    pub instance: String,
    pub masking: bool,
    /// Billed cost of the run, USD.
    pub cost: f64,
    pub turns: u64,
    pub mean_prompt_tokens: f64,
}

/// Masking over raw in one band: ratios of means, `None` where a side has no run.
#[derive(Debug, Clone, PartialEq)]
pub struct Band {
    pub low: u64,
    pub high: u64,
    /// Runs in the band by their own length: (raw, masking).
    pub runs: (usize, usize),
    pub cost: Option<f64>,
    pub prompt_per_call: Option<f64>,
    /// Instances whose two runs both fall in the band.
    pub paired_instances: usize,
    pub paired_cost: Option<f64>,
    pub paired_prompt_per_call: Option<f64>,
}

/// What the chart has of the paper: its bands, or where it looked and found nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Trap {
    Found {
        file: PathBuf,
        bands: Vec<Band>,
    },
    /// Not looked for (the variable set empty) or not at this path.
    Absent(Option<PathBuf>),
}

/// The folder to read: the variable's if set (an error if it names no folder), else the
/// default when it exists.
pub fn locate() -> Result<Option<PathBuf>, InputError> {
    match std::env::var_os(DIR_VAR) {
        Some(v) if v.is_empty() => Ok(None),
        Some(v) => {
            let dir = PathBuf::from(v);
            if dir.is_dir() {
                Ok(Some(dir))
            } else {
                Err(InputError::key(
                    format!("environment variable {DIR_VAR}"),
                    DIR_VAR,
                    format!(
                        "{}: expected a folder of the Complexity Trap's results",
                        dir.display()
                    ),
                ))
            }
        }
        None => Ok(Path::new(DEFAULT_DIR)
            .is_dir()
            .then(|| PathBuf::from(DEFAULT_DIR))),
    }
}

/// The paper's bands from the folder [`locate`] finds, or where it did not.
pub fn load() -> Result<Trap, InputError> {
    let Some(dir) = locate()? else {
        let looked = std::env::var_os(DIR_VAR).is_none();
        return Ok(Trap::Absent(looked.then(|| PathBuf::from(DEFAULT_DIR))));
    };
    let file = dir.join(FILE);
    let runs = read(&file)?;
    Ok(Trap::Found {
        bands: bands(&runs),
        file,
    })
}

/// The raw and masking runs of [`EXPERIMENT_PREFIX`] in `path`; other rows are skipped.
pub fn read(path: &Path) -> Result<Vec<TrapRun>, InputError> {
    let mut reader = csv::Reader::from_path(path).map_err(|e| csv_error(path, e))?;
    let header = reader.headers().map_err(|e| csv_error(path, e))?.clone();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| InputError::line(path, 1, format!("no column `{name}` in the header")))
    };
    let [experiment, strategy, instance, cost, turns, prompt] = [
        "experiment",
        "strategy",
        "instance_id",
        "cost",
        "turn_count",
        "mean_prompt_tokens",
    ]
    .map(col);
    let (experiment, strategy, instance) = (experiment?, strategy?, instance?);
    let (cost, turns, prompt) = (cost?, turns?, prompt?);
    let mut runs = Vec::new();
    for (i, record) in reader.records().enumerate() {
        let record = record.map_err(|e| csv_error(path, e))?;
        let line = i + 2;
        let masking = match &record[strategy] {
            _ if !record[experiment].starts_with(EXPERIMENT_PREFIX) => continue,
            RAW => false,
            MASKING => true,
            _ => continue,
        };
        let number = |c: usize, what: &str| {
            record[c]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    InputError::line(
                        path,
                        line,
                        format!("{what} {:?}: expected a number of at least 0", &record[c]),
                    )
                })
        };
        let turn_count = record[turns].parse::<u64>().map_err(|_| {
            InputError::line(
                path,
                line,
                format!("turn_count {:?}: expected a whole number", &record[turns]),
            )
        })?;
        runs.push(TrapRun {
            instance: record[instance].to_string(),
            masking,
            cost: number(cost, "cost")?,
            turns: turn_count,
            mean_prompt_tokens: number(prompt, "mean_prompt_tokens")?,
        });
    }
    Ok(runs)
}

fn csv_error(path: &Path, e: csv::Error) -> InputError {
    let line = e.position().map_or(0, |p| p.line() as usize);
    InputError::line(path, line, format!("not readable as CSV: {e}"))
}

/// The mean of `top` over the mean of `bottom`; `None` when either is empty or `bottom`'s is 0.
fn ratio_of_means(top: &[f64], bottom: &[f64]) -> Option<f64> {
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    match (mean(top), mean(bottom)) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    }
}

/// Masking over raw in each of [`BANDS`], both ways of banding.
pub fn bands(runs: &[TrapRun]) -> Vec<Band> {
    // Instance → (raw run, masked run); a later row of the same instance and side wins.
    let mut by_instance: HashMap<&str, (Option<&TrapRun>, Option<&TrapRun>)> = HashMap::new();
    for r in runs {
        let e = by_instance.entry(&r.instance).or_default();
        if r.masking {
            e.1 = Some(r);
        } else {
            e.0 = Some(r);
        }
    }
    BANDS
        .iter()
        .map(|&(low, high)| {
            let inside = |r: &TrapRun| (low..high).contains(&r.turns);
            let side = |masking: bool, f: fn(&TrapRun) -> f64| -> Vec<f64> {
                runs.iter()
                    .filter(|r| r.masking == masking && inside(r))
                    .map(f)
                    .collect()
            };
            let mut pairs: Vec<(&TrapRun, &TrapRun)> = by_instance
                .values()
                .filter_map(|&(raw, masked)| Some((raw?, masked?)))
                .filter(|(raw, masked)| inside(raw) && inside(masked))
                .collect();
            // The map's order is arbitrary; sums must not depend on it.
            pairs.sort_by(|a, b| a.0.instance.cmp(&b.0.instance));
            let paired = |f: fn(&TrapRun) -> f64| {
                let masked: Vec<f64> = pairs.iter().map(|p| f(p.1)).collect();
                let raw: Vec<f64> = pairs.iter().map(|p| f(p.0)).collect();
                ratio_of_means(&masked, &raw)
            };
            let cost = |r: &TrapRun| r.cost;
            let prompt = |r: &TrapRun| r.mean_prompt_tokens;
            Band {
                low,
                high,
                runs: (side(false, cost).len(), side(true, cost).len()),
                cost: ratio_of_means(&side(true, cost), &side(false, cost)),
                prompt_per_call: ratio_of_means(&side(true, prompt), &side(false, prompt)),
                paired_instances: pairs.len(),
                paired_cost: paired(cost),
                paired_prompt_per_call: paired(prompt),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(instance: &str, masking: bool, cost: f64, turns: u64, prompt: f64) -> TrapRun {
        TrapRun {
            instance: instance.into(),
            masking,
            cost,
            turns,
            mean_prompt_tokens: prompt,
        }
    }

    /// Band 20–40. Raw: a (30 turns, $1.00, 1 000 a call), b (25, $3.00, 3 000); masked: a (35,
    /// $0.50, 400), b (50 turns: out of band), c (20, $2.00, 800).
    /// Own lengths: masked mean $1.25, raw $2.00 → 0.625; prompt 600 / 2 000 = 0.30.
    /// Paired (only a): 0.50 / 1.00 = 0.50, prompt 400 / 1 000 = 0.40.
    /// Band 40–80 holds only masked b: no ratio. Band 80–160 holds nothing.
    #[test]
    fn bands_by_own_length_and_paired() {
        let runs = vec![
            run("a", false, 1.0, 30, 1000.0),
            run("b", false, 3.0, 25, 3000.0),
            run("a", true, 0.5, 35, 400.0),
            run("b", true, 9.0, 50, 9000.0),
            run("c", true, 2.0, 20, 800.0),
        ];
        let b = bands(&runs);
        assert_eq!((b[0].low, b[0].high, b[0].runs), (20, 40, (2, 2)));
        assert_eq!(b[0].cost, Some(0.625));
        assert!((b[0].prompt_per_call.unwrap() - 0.3).abs() < 1e-12);
        assert_eq!(b[0].paired_instances, 1);
        assert_eq!(b[0].paired_cost, Some(0.5));
        assert_eq!(b[0].paired_prompt_per_call, Some(0.4));
        assert_eq!(
            (b[1].runs, b[1].cost, b[1].paired_cost),
            ((0, 1), None, None)
        );
        assert_eq!((b[2].runs, b[2].paired_instances), ((0, 0), 0));
    }
}
