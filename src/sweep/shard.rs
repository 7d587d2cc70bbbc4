//! Shards: a deterministic 1/n of a sweep's cells, by history, for cluster job arrays.
//!
//! Shard i of n takes the contiguous histories `[i·H/n, (i+1)·H/n)`, so a history's cells stay
//! together and shards 0..n in order are the whole run in order. The index and count come from
//! `--shard i/n`, or else from the scheduler: Slurm job arrays (`SLURM_ARRAY_TASK_ID`,
//! `SLURM_ARRAY_TASK_COUNT`) or Kubernetes indexed Jobs (`JOB_COMPLETION_INDEX` with
//! `--shard-count n`, since Kubernetes does not export the count).

use crate::error::ParseError;
use std::fmt;
use std::ops::Range;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn new(index: usize, count: usize) -> Result<Shard, ParseError> {
        if count == 0 || index >= count {
            return Err(format!("shard {index}/{count}: expected i/n with 0 ≤ i < n").into());
        }
        Ok(Shard { index, count })
    }

    /// Parses `i/n`.
    pub fn parse(text: &str) -> Result<Shard, ParseError> {
        let (i, n) = text
            .split_once('/')
            .ok_or_else(|| format!("--shard {text:?}: expected i/n, e.g. 0/8"))?;
        let num = |s: &str| {
            s.trim()
                .parse::<usize>()
                .map_err(|_| format!("--shard {text:?}: expected whole numbers i/n, e.g. 0/8"))
        };
        Shard::new(num(i)?, num(n)?)
    }

    /// The shard from `--shard`, `--shard-count` and the scheduler's environment, in that
    /// order; `None` for an unsharded run.
    pub fn resolve(
        flag: Option<&str>,
        count_flag: Option<usize>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Shard>, ParseError> {
        if let Some(f) = flag {
            return Shard::parse(f).map(Some);
        }
        let num = |name: &str, v: String| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("environment variable {name}={v:?} is not a whole number"))
        };
        if let Some(id) = env("SLURM_ARRAY_TASK_ID") {
            let index = num("SLURM_ARRAY_TASK_ID", id)?;
            let count = match (count_flag, env("SLURM_ARRAY_TASK_COUNT")) {
                (Some(c), _) => c,
                (None, Some(c)) => num("SLURM_ARRAY_TASK_COUNT", c)?,
                (None, None) => return Err(
                    "SLURM_ARRAY_TASK_ID is set but not SLURM_ARRAY_TASK_COUNT: pass --shard-count"
                        .into(),
                ),
            };
            return Shard::new(index, count).map(Some);
        }
        if let Some(id) = env("JOB_COMPLETION_INDEX") {
            let index = num("JOB_COMPLETION_INDEX", id)?;
            let count = count_flag.ok_or(
                "JOB_COMPLETION_INDEX is set (a Kubernetes indexed Job): pass --shard-count with the Job's completions",
            )?;
            return Shard::new(index, count).map(Some);
        }
        match count_flag {
            Some(_) => Err(
                "--shard-count needs --shard, SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX".into(),
            ),
            None => Ok(None),
        }
    }

    /// The histories of this shard.
    pub fn histories(&self, total: usize) -> Range<usize> {
        (self.index * total / self.count)..((self.index + 1) * total / self.count)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_histories_in_order() {
        let mut next = 0;
        for i in 0..7 {
            let r = Shard::new(i, 7).unwrap().histories(100);
            assert_eq!(r.start, next);
            next = r.end;
        }
        assert_eq!(next, 100);
        assert_eq!(Shard::new(2, 4).unwrap().histories(10), 5..7);
        assert_eq!(Shard::new(0, 3).unwrap().histories(2), 0..0);
    }

    #[test]
    fn parse_and_environment() {
        assert_eq!(Shard::parse("3/8").unwrap(), Shard { index: 3, count: 8 });
        assert!(Shard::parse("8/8").is_err());
        assert!(Shard::parse("x").is_err());
        let none = |_: &str| None;
        assert_eq!(Shard::resolve(None, None, none).unwrap(), None);
        let slurm = |k: &str| match k {
            "SLURM_ARRAY_TASK_ID" => Some("2".to_string()),
            "SLURM_ARRAY_TASK_COUNT" => Some("5".to_string()),
            _ => None,
        };
        assert_eq!(
            Shard::resolve(None, None, slurm).unwrap(),
            Some(Shard { index: 2, count: 5 })
        );
        assert_eq!(
            Shard::resolve(Some("1/2"), None, slurm).unwrap(),
            Some(Shard { index: 1, count: 2 })
        );
        let k8s = |k: &str| (k == "JOB_COMPLETION_INDEX").then(|| "4".to_string());
        assert!(Shard::resolve(None, None, k8s)
            .unwrap_err()
            .contains("--shard-count"));
        assert_eq!(
            Shard::resolve(None, Some(6), k8s).unwrap(),
            Some(Shard { index: 4, count: 6 })
        );
        assert!(Shard::resolve(None, Some(6), none).is_err());
    }
}
