//! Budget layers: the usable window (window − reserved output) split into system, work,
//! knowledge and history shares, with compaction triggered by the history layer's fill.
//!
//! Which entry of the context falls in which layer (the first rule that matches):
//!
//! 1. **system**: records of kind `system`;
//! 2. **knowledge**: the notes read back at a compaction, and records of kind `note` (what the
//!    agent keeps as memory);
//! 3. **work**: the newest turn — the last agent call's output and the tool results and
//!    messages appended after it, which the next call acts on;
//! 4. **history**: everything else — older turns (messages, calls, results, placeholders) and
//!    summaries, which stand for older turns.
//!
//! A layer's use is the cost of its entries plus one separator for each entry that is not the
//! first of the context, so the four uses add up to the context's cost.

use super::invalid::{invalid, Invalid};

/// The four layers, in the order of [`Layers::shares`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    System = 0,
    Work = 1,
    Knowledge = 2,
    History = 3,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Layers {
    /// Units of the window kept free for the model's output.
    pub reserved_output: u64,
    /// Percentages of the usable window for system, work, knowledge and history; they add up
    /// to 100.
    pub shares: [f64; 4],
    /// Compact when the history layer's use exceeds this share of its budget (strictly).
    pub trigger_fill: f64,
    /// A compaction aims to bring the history layer down to this share of its budget.
    pub target_fill: f64,
}

impl Layers {
    /// The article's split (8/22/30/40 %, trigger above 0.8, target 0.5) with the given reserve.
    pub fn new(reserved_output: u64) -> Self {
        Layers {
            reserved_output,
            shares: [8.0, 22.0, 30.0, 40.0],
            trigger_fill: 0.8,
            target_fill: 0.5,
        }
    }

    pub fn validate(&self, window: u64) -> Result<(), Invalid> {
        if self.reserved_output >= window {
            return Err(invalid(
                "reserved_output",
                format!(
                    "{} leaves nothing of the window {window}: expected less than the window",
                    self.reserved_output
                ),
            ));
        }
        if self.shares.iter().any(|s| !(s.is_finite() && *s >= 0.0)) {
            return Err(invalid(
                "layer_shares",
                "expected four percentages ≥ 0 (system, work, knowledge, history)",
            ));
        }
        let sum: f64 = self.shares.iter().sum();
        if (sum - 100.0).abs() > 1e-6 {
            return Err(invalid(
                "layer_shares",
                format!(
                    "add up to {sum}: expected four percentages adding up to 100, e.g. 8,22,30,40"
                ),
            ));
        }
        if self.shares[Layer::History as usize] <= 0.0 {
            return Err(invalid(
                "layer_shares",
                "the history share must be above 0: it is what triggers compaction",
            ));
        }
        for (key, v) in [
            ("trigger_fill", self.trigger_fill),
            ("target_fill", self.target_fill),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= 1.0) {
                return Err(invalid(
                    key,
                    format!("{v} is out of range: expected a number in (0, 1]"),
                ));
            }
        }
        Ok(())
    }

    /// `window − reserved_output`.
    pub fn usable(&self, window: u64) -> u64 {
        window.saturating_sub(self.reserved_output)
    }

    /// The history layer's budget.
    pub fn history_budget(&self, window: u64) -> f64 {
        self.usable(window) as f64 * self.shares[Layer::History as usize] / 100.0
    }

    /// The history layer's fill: its use over its budget.
    pub fn fill(&self, history_used: u64, window: u64) -> f64 {
        history_used as f64 / self.history_budget(window)
    }

    /// Whether the history layer is over its trigger.
    pub fn over(&self, history_used: u64, window: u64) -> bool {
        self.fill(history_used, window) > self.trigger_fill
    }

    /// How much history a compaction may leave: `floor(history budget × target_fill)`.
    pub fn history_target(&self, window: u64) -> u64 {
        (self.history_budget(window) * self.target_fill).floor() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_budget_and_trigger() {
        let l = Layers::new(200);
        // usable 1800, history 40 % = 720, trigger above 576, target 360.
        assert_eq!(l.usable(2000), 1800);
        assert_eq!(l.history_budget(2000), 720.0);
        assert!(!l.over(576, 2000));
        assert!(l.over(577, 2000));
        assert_eq!(l.history_target(2000), 360);
    }

    #[test]
    fn bad_layers_name_their_key() {
        assert_eq!(
            Layers::new(2000).validate(2000).unwrap_err().key,
            "reserved_output"
        );
        let mut l = Layers::new(0);
        l.shares = [10.0, 20.0, 30.0, 30.0];
        assert!(l
            .validate(100)
            .unwrap_err()
            .message
            .contains("add up to 90"));
        l.shares = [30.0, 40.0, 30.0, 0.0];
        assert_eq!(l.validate(100).unwrap_err().key, "layer_shares");
        let mut l = Layers::new(0);
        l.trigger_fill = 1.2;
        assert_eq!(l.validate(100).unwrap_err().key, "trigger_fill");
    }
}
