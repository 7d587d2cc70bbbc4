//! Strategies: rules that turn (history as seen through flags, capacity, parameters) into a
//! [`Context`]. One enum holds them all, so the sweep's hot loop dispatches without boxing, and
//! one spec syntax (`name(key=value, ...)`) names them everywhere; a strategy's [`label`]
//! (Strategy::label) is that spec in canonical form, so any table row can be re-run by pasting it.
//!
//! `keep_recent` is shared by all strategies: `mask` reads it as the window of intact tool
//! results (default 3) and `summary` as its verbatim tail (default 6); `oracle` ignores it (it is
//! the upper bound whatever the tail, and takes no parameters); for every other strategy it pins
//! the newest `keep_recent` records (default 0: they are kept first, the rule fills what is left
//! from the older ones, and a cell whose pinned tail alone exceeds the capacity is infeasible).
//! A spec that sets `keep_recent` itself wins over a sweep's axis.
//!
//! Each strategy lives in its own file — its parameters, their parsing and label, how it reads
//! `keep_recent`, and its rule, as an implementation of [`rule::RuleSpec`] — and is named once
//! in the `strategies!` list below, which generates its `mod` line, the enum and its dispatch:
//! a new strategy is one file plus one line, and one that misses a piece does not compile. The semantics
//! chosen where the field is silent are documented in each file.

mod codex_window;
mod head;
mod last_n_observations;
mod openhands_sdk_cut;
mod preset;
mod reattach;
pub mod rule;
mod summary;
mod summary_call;
mod summary_preset;
mod turns;
mod when;
mod window;

pub use clear_tool_uses::ClearToolUses;
pub use head::Head;
pub use summary_call::SummaryCall;
pub use summary_rule::{SummaryRule, SummarySize};
pub use when::{floor_threshold, threshold, When};

// What a strategy sees and returns, and its spec syntax, sit below strategies and summarisers
// alike; the strategies' files name them through this module.
use crate::context::{Context, Item, Outcome};
use crate::error::ParseError;
use crate::llm::SummaryRequest;
use crate::spec::{self, Spec};
use crate::summariser::{Missing, Summariser};
use crate::view::View;
use rule::{RuleSpec, Tail};

use std::fmt::Write as _;

/// What to do after the first record that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Fill {
    /// Stop there (the article's rule).
    #[default]
    Stop,
    /// Keep trying smaller, older records.
    Skip,
}

/// What `required` does when the flagged records alone exceed the capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overflow {
    /// The cell is infeasible (the article's rule).
    #[default]
    Infeasible,
    /// Drop the oldest flagged records until the rest fit.
    DropOldestFlagged,
}

/// The one list of strategies: each is a type with its own file (`module::Type`, the module
/// declared here, `pub` where other layers name it) that implements [`RuleSpec`]; this
/// generates the `mod` lines, the rule enum, the names, parsing, labels and dispatch.
macro_rules! strategies {
    ($($variant:ident: $vis:vis $module:ident :: $ty:ident),* $(,)?) => {
        $($vis mod $module;)*

        /// The rule of a strategy, with its own parameters.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Rule {
            $($variant($module::$ty),)*
        }

        /// The strategy names [`Strategy::from_spec`] knows.
        pub const NAMES: &[&str] = &[$(<$module::$ty as RuleSpec>::NAME),*];

        impl Rule {
            /// The strategy `name` with the parameters `p` holds (`None`: no such strategy).
            fn parse(name: &str, p: &mut spec::Params) -> Option<Result<Rule, ParseError>> {
                $(if name == <$module::$ty as RuleSpec>::NAME {
                    return Some(<$module::$ty as RuleSpec>::parse(p).map(Rule::$variant));
                })*
                None
            }

            /// Why a strategy takes no shared parameters, when it takes none, and the
            /// parameters of its own it still takes.
            fn no_parameters(name: &str) -> Option<(&'static str, fn(&str) -> bool)> {
                $(if name == <$module::$ty as RuleSpec>::NAME {
                    if let Tail::None(why) = <$module::$ty as RuleSpec>::TAIL {
                        return Some((why, <$module::$ty as RuleSpec>::takes_own));
                    }
                })*
                None
            }

            pub fn name(&self) -> &'static str {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::NAME,)* }
            }

            /// What this rule's placeholders are called ([`RuleSpec::STAND_IN`]).
            pub fn stand_in(&self) -> &'static str {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::STAND_IN,)* }
            }

            fn tail(&self) -> Tail {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::TAIL,)* }
            }

            fn default_head(&self) -> Head {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::DEFAULT_HEAD,)* }
            }

            fn own_head(&self) -> bool {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::OWN_HEAD,)* }
            }

            fn reads_flags(&self) -> bool {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::READS_FLAGS,)* }
            }

            fn draws(&self) -> bool {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::DRAWS,)* }
            }

            fn default_keep_recent(&self) -> usize {
                match self { $(Rule::$variant(_) => <$module::$ty as RuleSpec>::DEFAULT_KEEP_RECENT,)* }
            }

            fn push_params(&self, params: &mut Vec<String>) {
                match self { $(Rule::$variant(r) => RuleSpec::push_params(r, params),)* }
            }

            fn apply(
                &self,
                view: View,
                capacity: u64,
                keep_recent: usize,
                stream: u64,
                out: &mut Context,
            ) -> Outcome {
                match self {
                    $(Rule::$variant(r) => {
                        RuleSpec::apply(r, view, capacity, keep_recent, stream, out)
                    })*
                }
            }

            fn sees_truth(&self) -> bool {
                match self { $(Rule::$variant(r) => RuleSpec::sees_truth(r),)* }
            }

            fn compacts(&self) -> bool {
                match self { $(Rule::$variant(r) => RuleSpec::compacts(r),)* }
            }

            fn unbounded(&self) -> bool {
                match self { $(Rule::$variant(r) => RuleSpec::unbounded(r),)* }
            }

            fn summariser(&self) -> Option<&Summariser> {
                match self { $(Rule::$variant(r) => RuleSpec::summariser(r),)* }
            }

            fn summary_rule(&self) -> Option<&SummaryRule> {
                match self { $(Rule::$variant(r) => RuleSpec::summary_rule(r),)* }
            }

            fn when(&self) -> Option<When> {
                match self { $(Rule::$variant(r) => RuleSpec::when(r),)* }
            }

            fn summary_call(&self) -> SummaryCall {
                match self { $(Rule::$variant(r) => RuleSpec::summary_call(r),)* }
            }

            fn reads_unmasked(&self) -> bool {
                match self { $(Rule::$variant(r) => RuleSpec::reads_unmasked(r),)* }
            }

            fn honours_condensation_request(&self) -> bool {
                match self {
                    $(Rule::$variant(r) => RuleSpec::honours_condensation_request(r),)*
                }
            }

            fn check_window(&self, window: u64) -> Result<(), String> {
                match self { $(Rule::$variant(r) => RuleSpec::check_window(r, window),)* }
            }
        }
    };
}

strategies! {
    Raw: raw::Raw,
    Recent: recent::Recent,
    Required: required::Required,
    Pinned: pinned::Pinned,
    Mask: mask::Mask,
    ClearToolUses: clear_tool_uses::ClearToolUses,
    Summary: summary_rule::SummaryRule,
    Amortized: amortized::Amortized,
    OpenHandsLlmSummarizing: openhands_llm_summarizing::OpenHandsLlmSummarizing,
    CodexCompact: codex_compact::CodexCompact,
    ClaudeCodeCompact: claude_code_compact::ClaudeCodeCompact,
    RecordedCompaction: recorded_compaction::RecordedCompaction,
    GeminiCliCompress: gemini_cli_compress::GeminiCliCompress,
    ComplexityTrapSummary: complexity_trap_summary::ComplexityTrapSummary,
    ComplexityTrapHybrid: complexity_trap_hybrid::ComplexityTrapHybrid,
    Oracle: oracle::Oracle,
    SweAgentLastN: swe_agent_last_n::SweAgentLastN,
    OpenHandsObservationMasking: openhands_observation_masking::OpenHandsObservationMasking,
    OpenHandsRecent: openhands_recent::OpenHandsRecent,
    OpenHandsAmortized: openhands_amortized::OpenHandsAmortized,
    AnthropicClearToolUses: anthropic_clear_tool_uses::AnthropicClearToolUses,
    ClaudeCodeTiers: claude_code::ClaudeCodeTiers,
    AnthropicCompact: anthropic_compact::AnthropicCompact,
    AnthropicClearThinking: anthropic_clear_thinking::AnthropicClearThinking,
    OpenCodeCompact: opencode_compact::OpenCodeCompact,
    PiCompact: pi_compact::PiCompact,
    External: pub external::External,
    OpenHandsSdkSummarizing: openhands_sdk_summarizing::OpenHandsSdkSummarizing,
    CodexCompact2026: codex_compact_2026::CodexCompact2026,
    RequiredSummary: required_summary::RequiredSummary,
}

/// A strategy: a rule plus an optional explicit `keep_recent` and head.
#[derive(Debug, Clone, PartialEq)]
pub struct Strategy {
    pub rule: Rule,
    pub keep_recent: Option<usize>,
    /// `keep_first` as the spec sets it (`None`: the rule's default head).
    pub keep_first: Option<Head>,
}

impl Strategy {
    /// Parses a spec string such as `required(fill=skip)`.
    pub fn parse(text: &str) -> Result<Strategy, ParseError> {
        Strategy::from_spec(&Spec::parse(text)?)
    }

    pub fn from_spec(spec: &Spec) -> Result<Strategy, ParseError> {
        let name = spec.name.as_str();
        if let Some((why, own)) = Rule::no_parameters(name) {
            if let Some((key, _)) = spec.params.iter().find(|(k, _)| !own(k)) {
                return Err(format!("strategy `{name}`: unknown parameter `{key}` ({why})").into());
            }
        }
        let mut p = spec.reader();
        let keep_recent = p.usize("keep_recent")?;
        let keep_first = Head::parse(&mut p)?;
        let rule = match Rule::parse(name, &mut p) {
            Some(rule) => rule?,
            None => {
                return Err(format!(
                    "unknown strategy `{name}`, expected one of {}",
                    NAMES.join(", ")
                )
                .into())
            }
        };
        p.finish()?;
        // The default head written out is the default head: one strategy, one label.
        let keep_first = keep_first.filter(|h| *h != rule.default_head());
        Ok(Strategy {
            rule,
            keep_recent,
            keep_first,
        })
    }

    pub fn name(&self) -> &'static str {
        self.rule.name()
    }

    /// The canonical spec: the name and every parameter that differs from its default.
    pub fn label(&self) -> String {
        let mut params: Vec<String> = Vec::new();
        if let Some(k) = self.keep_recent {
            params.push(format!("keep_recent={k}"));
        }
        if let Some(head) = self.keep_first.filter(|h| *h != self.rule.default_head()) {
            params.push(head.param());
        }
        self.rule.push_params(&mut params);
        let mut label = self.name().to_string();
        if !params.is_empty() {
            let _ = write!(label, "({})", params.join(", "));
        }
        label
    }

    /// `keep_recent` when neither the spec nor a sweep axis sets it.
    pub fn default_keep_recent(&self) -> usize {
        self.rule.default_keep_recent()
    }

    /// The `keep_recent` in force for a cell whose sweep axis gives `axis`.
    pub fn effective_keep_recent(&self, axis: Option<usize>) -> usize {
        self.keep_recent
            .or(axis)
            .unwrap_or_else(|| self.default_keep_recent())
    }

    /// Whether the runner must hand this strategy the true labels as its flags (the oracle).
    pub fn sees_truth(&self) -> bool {
        self.rule.sees_truth()
    }

    /// The flags this strategy is handed: the true labels for the oracle, the noisy flags for
    /// every other strategy.
    pub fn flags<'a>(&self, truth: &'a [bool], noisy: &'a [bool]) -> &'a [bool] {
        if self.sees_truth() {
            truth
        } else {
            noisy
        }
    }

    /// What a cell of this strategy can be reused on: `None` when its context depends on the
    /// summariser's draws (or a program's answer), else whether it depends on the noisy flags
    /// (`Some(true)`) or on nothing a noise level or replicate changes (`Some(false)`: the
    /// oracle, handed the truth, and the rules that never read a flag). See
    /// [`RuleSpec::READS_FLAGS`] and [`RuleSpec::DRAWS`].
    pub fn reusable(&self) -> Option<bool> {
        (!self.rule.draws()).then(|| self.rule.reads_flags() && !self.sees_truth())
    }

    /// Whether the strategy ever changes a context: `raw` does not, so a session under it never
    /// compacts.
    pub fn compacts(&self) -> bool {
        self.rule.compacts()
    }

    /// Whether a session under it ignores the window (`raw(window=none)`: the agent as it ran,
    /// which no context-length error ever stopped).
    pub fn unbounded(&self) -> bool {
        self.rule.unbounded()
    }

    /// The simulated summariser of a summarising strategy, so a session can apply recall again
    /// to what an earlier summary carries (summarising a summary compounds loss).
    pub fn summariser(&self) -> Option<&Summariser> {
        self.rule.summariser()
    }

    /// How large its summaries are, for a strategy whose summaries [`SummaryRule`] sizes
    /// (`None`: it writes none, or sizes them its own way, as `external` does).
    pub fn summary_size(&self) -> Option<SummarySize> {
        self.rule.summary_rule().map(|s| s.size)
    }

    /// The preset's own trigger in a session (`None`: the session's threshold).
    pub fn when(&self) -> Option<When> {
        self.rule.when()
    }

    /// How its harness sends the call that writes a summary.
    pub fn summary_call(&self) -> SummaryCall {
        self.rule.summary_call()
    }

    /// Whether its rule reads masked records of a session's context as the records they were.
    pub fn reads_unmasked(&self) -> bool {
        self.rule.reads_unmasked()
    }

    /// Whether a context the provider refuses makes its harness condense and retry.
    pub fn honours_condensation_request(&self) -> bool {
        self.rule.honours_condensation_request()
    }

    /// One clear error when its harness is undefined on a window of `window` units.
    pub fn check_window(&self, window: u64) -> Result<(), String> {
        self.rule
            .check_window(window)
            .map_err(|why| format!("strategy `{}`: {why}", self.label()))
    }

    /// The head kept verbatim (none for a strategy without parameters: `raw` keeps
    /// everything, the oracle is the bound over every choice).
    pub fn head(&self) -> Head {
        match self.rule.tail() {
            Tail::None(_) => Head::First(0),
            // The rule reads `keep_first` itself.
            _ if self.rule.own_head() => Head::First(0),
            _ => self.keep_first.unwrap_or_else(|| self.rule.default_head()),
        }
    }

    /// Builds the context for `view` under `capacity` into `out`: the head verbatim, then the
    /// rule's context of what lies between the head and the pinned tail, then the tail. `stream`
    /// keys the strategy's own random draws (the simulated summariser), so a cell is
    /// reproducible on its own.
    pub fn apply(
        &self,
        view: View,
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        out.clear(view.len());
        let n = view.len();
        let h = self.head().len(view.kinds);
        out.head_len = h;
        out.head_cost = view.span_cost(0..h);
        // Pinned-tail rules see `keep_recent` as the tail; the others read it themselves.
        let (k, rule_keep_recent) = match self.rule.tail() {
            Tail::Pinned => (keep_recent.min(n - h), 0),
            Tail::Own | Tail::None(_) => (0, keep_recent),
        };
        let outcome = if h == 0 && k == 0 {
            self.rule
                .apply(view, capacity, rule_keep_recent, stream, out)
        } else {
            self.apply_between(view, (h, k), capacity, rule_keep_recent, stream, out)
        };
        if outcome == Outcome::Infeasible {
            out.items.clear();
            out.placeholder_costs.clear();
            out.cost = 0;
        }
        outcome
    }

    /// Keeps the first `h` and the newest `k` records verbatim and lets the rule fill what is
    /// left of the capacity from the records between them.
    fn apply_between(
        &self,
        view: View,
        (h, k): (usize, usize),
        capacity: u64,
        keep_recent: usize,
        stream: u64,
        out: &mut Context,
    ) -> Outcome {
        let n = view.len();
        let sep = view.separator;
        let kept =
            view.span_cost(0..h) + view.span_cost(n - k..n) + if h > 0 && k > 0 { sep } else { 0 };
        if kept > capacity {
            return Outcome::Infeasible;
        }
        // Whatever the rule keeps sits next to the head or the tail: its first item pays the
        // separator between them, so the rule sees the true room left.
        out.gap_to_tail = sep;
        let middle = view.slice(h..n - k);
        if self
            .rule
            .apply(middle, capacity - kept, keep_recent, stream, out)
            == Outcome::Infeasible
        {
            return Outcome::Infeasible;
        }
        out.gap_to_tail = 0;
        out.cost += kept;
        if h > 0 {
            for item in &mut out.items {
                *item = match *item {
                    Item::Verbatim(i) => Item::Verbatim(i + h),
                    Item::Placeholder(i) => Item::Placeholder(i + h),
                    Item::Summary { first, end, cost } => Item::Summary {
                        first: first + h,
                        end: end + h,
                        cost,
                    },
                };
            }
            out.summary_kept.copy_within(0..middle.len(), h);
            out.summary_kept[..h].fill(false);
            out.items.extend((0..h).map(Item::Verbatim));
            out.items.rotate_right(h);
        }
        out.items.extend((n - k..n).map(Item::Verbatim));
        Outcome::Feasible
    }
}

pub(crate) fn fill(p: &mut spec::Params) -> Result<Fill, ParseError> {
    Ok(match p.choice("fill", &["stop", "skip"])? {
        Some(s) if s == "skip" => Fill::Skip,
        _ => Fill::Stop,
    })
}

pub(crate) fn push_fill(params: &mut Vec<String>, fill: Fill) {
    if fill == Fill::Skip {
        params.push("fill=skip".into());
    }
}
// Here rather than beside the rest of `Missing` (summariser/llm.rs): it reads strategies, and the
// summarisers sit below them.
impl Missing {
    /// What the `llm` summarisers of `strategies` still need after a sweep.
    pub fn of(strategies: &[Strategy]) -> Missing {
        let mut m = Missing::default();
        for s in strategies {
            if let Some(Summariser::Llm(l)) = s.summariser() {
                l.add_missing(&mut m);
            }
        }
        // One request per hash, in hash order: the same file whatever the threads.
        m.requests.sort_by_cached_key(SummaryRequest::hash);
        m.requests.dedup_by_key(|r| r.hash());
        m
    }
}
