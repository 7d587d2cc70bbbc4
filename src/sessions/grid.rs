//! The grid of a session sweep: its axes, their order, and where each session and group sits.
//!
//! Sessions are ordered history, replicate, noise level (the shorthand's uniform grid,
//! false-negative major, then the models of `noise`), strategy, window, ratio, note rate, cache —
//! the order of the rows in the sessions table. Summary groups are ordered strategy, window,
//! ratio, note rate, cache, noise level.

use crate::experiment::outer::OuterAxes;
use crate::experiment::SessionExperiment;
use crate::session::SessionConfig;

#[derive(Debug, Clone)]
pub struct SessionGrid {
    pub outer: OuterAxes,
    pub windows: Vec<u64>,
    pub ratios: Vec<f64>,
    pub note_rates: Vec<f64>,
    /// The caches the sessions are billed under, as canonical specs (one without an axis).
    pub caches: Vec<String>,
    /// One configuration per (window, ratio, note rate, cache), see [`SessionGrid::config`].
    configs: Vec<SessionConfig>,
}

impl std::ops::Deref for SessionGrid {
    type Target = OuterAxes;
    fn deref(&self) -> &OuterAxes {
        &self.outer
    }
}

impl SessionGrid {
    pub fn new(exp: &SessionExperiment, histories: usize) -> Self {
        SessionGrid {
            outer: OuterAxes::new(&exp.file, &exp.frame, histories),
            windows: exp.windows.clone(),
            ratios: exp.ratios.clone(),
            note_rates: exp.note_rates.clone(),
            caches: exp.cache_labels(),
            configs: exp.configs.clone(),
        }
    }

    /// The configuration of the sessions at these axis indices.
    pub fn config(&self, c: Coordinates) -> &SessionConfig {
        &self.configs[self.config_index(c)]
    }

    /// The configurations of the sessions at these axis indices under every cache, in the
    /// axis's order (`c.cache` is not read).
    pub fn configs(&self, c: Coordinates) -> &[SessionConfig] {
        let start = self.config_index(Coordinates { cache: 0, ..c });
        &self.configs[start..start + self.caches.len()]
    }

    fn config_index(&self, c: Coordinates) -> usize {
        ((c.window * self.ratios.len() + c.ratio) * self.note_rates.len() + c.note_rate)
            * self.caches.len()
            + c.cache
    }

    /// Sessions per strategy at one noise level: window × ratio × note rate × cache.
    pub fn settings(&self) -> usize {
        self.windows.len() * self.ratios.len() * self.note_rates.len() * self.caches.len()
    }

    pub fn sessions_per_history(&self) -> usize {
        self.replicates as usize * self.levels.len() * self.strategies.len() * self.settings()
    }

    pub fn sessions(&self) -> u64 {
        self.histories as u64 * self.sessions_per_history() as u64
    }

    pub fn groups(&self) -> usize {
        self.strategies.len() * self.settings() * self.levels.len()
    }

    /// The summary group of a session's axis indices.
    pub fn group(&self, c: Coordinates) -> usize {
        ((((c.strategy * self.windows.len() + c.window) * self.ratios.len() + c.ratio)
            * self.note_rates.len()
            + c.note_rate)
            * self.caches.len()
            + c.cache)
            * self.levels.len()
            + c.level
    }

    /// The axis indices of a group, inverse of [`SessionGrid::group`].
    pub fn group_coordinates(&self, group: usize) -> Coordinates {
        let mut rest = group;
        let mut take = |len: usize| {
            let i = rest % len;
            rest /= len;
            i
        };
        let level = take(self.levels.len());
        let cache = take(self.caches.len());
        let note_rate = take(self.note_rates.len());
        let ratio = take(self.ratios.len());
        let window = take(self.windows.len());
        Coordinates {
            strategy: rest,
            window,
            ratio,
            note_rate,
            cache,
            level,
        }
    }
}

/// Where a session or group sits on the axes that define a group (indices into the axes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Coordinates {
    pub strategy: usize,
    pub window: usize,
    pub ratio: usize,
    pub note_rate: usize,
    pub cache: usize,
    pub level: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::{parse_any, AnyExperiment};

    #[test]
    fn groups_and_coordinates_are_inverse() {
        let text = r#"
name = "g"
seed = 1
replicates = 2
[histories]
generate = { count = 3, records = [10, 20], required_share = 0.2 }
[session]
strategies = ["recent", "required", "mask"]
windows = [500, 1000]
ratios = [0.5, 0.7, 0.9]
note_rates = [0.0, 0.3]
false_negative = [0.0, 0.2]
false_positive = [0.0, 0.1]
"#;
        let AnyExperiment::Sessions(e) = parse_any("g.toml", text, &[]).unwrap() else {
            panic!("a session experiment")
        };
        let g = SessionGrid::new(&e, 3);
        assert_eq!(g.sessions_per_history(), 2 * 4 * 3 * 2 * 3 * 2);
        assert_eq!(g.sessions(), 3 * 288);
        assert_eq!(g.groups(), 3 * 2 * 3 * 2 * 4);
        for i in 0..g.groups() {
            assert_eq!(g.group(g.group_coordinates(i)), i);
        }
        let c = g.group_coordinates(g.groups() - 1);
        assert_eq!(
            (c.strategy, c.window, c.ratio, c.note_rate, c.cache, c.level),
            (2, 1, 2, 1, 0, 3)
        );
        let cfg = g.config(Coordinates {
            window: 1,
            ratio: 2,
            note_rate: 0,
            ..c
        });
        assert_eq!((cfg.window, cfg.ratio, cfg.note_rate), (1000, 0.9, 0.0));
    }
}
