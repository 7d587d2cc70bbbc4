//! Summarisers: what writes a summary's text. Every summarising strategy and preset takes
//! `summariser=NAME` and that summariser's own parameters (`summary(summariser=extractive)`,
//! `codex_compact(summariser=simulated, recall_flagged=0.4)`); retention in any form is then
//! measured on the summary by facts ([`crate::history::facts`]), the same way for all of them.
//!
//! - [`Simulated`] (the default): no text is read; each replaced record survives with a recall
//!   drawn from the cell's stream, and the summary holds the facts of the records that survive.
//! - [`Extractive`]: deterministic and offline; picks whole lines of what it replaces until the
//!   summary's size is spent, and the summary holds the facts its lines hold.
//! - [`Llm`]: a model wrote it (answers cached by request hash; see its module).
//! - `Recorded`: the summary a transcript recorded, where its harness compacted
//!   (`recorded_compaction`).
//!
//! A summary written as text carries a replaced record (for `retention_any`) when it holds one
//! of the facts the record introduced: a text keeps no record as such, only what it says.

mod recorded;

use crate::context::Context;
use crate::error::ParseError;
use crate::history::Kind;
use crate::spec::Params;
use crate::view::View;

/// What a summariser's module gives: how its spec reads and writes, and how it summarises.
pub trait Summarise: Sized {
    /// Its own parameters: a parameter of another summariser is refused by name.
    const PARAMS: &'static [&'static str];
    /// Whether the summary is text whose facts are found by reading it.
    const WRITES_TEXT: bool = true;
    /// Reads its parameters from a strategy's spec.
    fn read_params(p: &mut Params) -> Result<Self, ParseError>;
    /// The parameters that differ from the defaults, in canonical order.
    fn canonical_params(&self, params: &mut Vec<String>);
    /// For a summariser that writes no text: whether record `index`'s information survives a
    /// summary drawn from `stream`.
    fn keeps(&self, _flagged: bool, _kind: Kind, _stream: u64, _index: u64) -> bool {
        true
    }
    /// Writes one summary of view records `first..end` (those `carried` selects) sized at most
    /// `budget` into `out` (its text, or for one that writes none the records that survive in
    /// `out.summary_kept`); returns the summary's cost.
    fn summarise(
        &self,
        view: &View,
        range: (usize, usize),
        carried: &dyn Fn(usize) -> bool,
        budget: u64,
        stream: u64,
        out: &mut Context,
    ) -> u64;
}

/// Declares the summarisers `summariser=NAME` takes: each line is a name, its variant and its
/// file's type. A new summariser is its file plus one line of the list below.
macro_rules! summarisers {
    ($($name:literal => $variant:ident($module:ident::$ty:ident)),* $(,)?) => {
        $(pub mod $module;)*
        $(pub use $module::$ty;)*

        /// The summarisers by name, for messages.
        pub const NAMES: [&str; [$($name),*].len()] = [$($name),*];

        /// Each summariser's own parameters.
        const OWN: [(&str, &[&str]); NAMES.len()] = [$(($name, <$ty as Summarise>::PARAMS)),*];

        #[derive(Debug, Clone, PartialEq)]
        pub enum Summariser {
            $($variant($ty),)*
            /// The summary the transcript itself recorded where its harness compacted (the summary
            /// record ending the range): `recorded_compaction`'s, never named by `summariser=`.
            Recorded,
        }

        impl Summariser {
            fn read(name: &str, p: &mut Params) -> Result<Self, ParseError> {
                match name {
                    $($name => Ok(Summariser::$variant(<$ty as Summarise>::read_params(p)?)),)*
                    other => Err(format!("unknown summariser `{other}`").into()),
                }
            }

            /// The parameters that differ from the defaults, in canonical order.
            pub fn push_params(&self, params: &mut Vec<String>) {
                match self {
                    $(Summariser::$variant(s) => s.canonical_params(params),)*
                    Summariser::Recorded => {}
                }
            }

            /// Whether the summary is text whose facts are found by reading it (every
            /// summariser but the simulated one).
            pub fn writes_text(&self) -> bool {
                match self {
                    $(Summariser::$variant(_) => <$ty as Summarise>::WRITES_TEXT,)*
                    Summariser::Recorded => true,
                }
            }

            /// For the simulated summariser: whether record `index`'s information survives a
            /// summary drawn from `stream` (a summary summarised again puts what it carries
            /// through this once more). Text summarisers decide by reading the new text instead.
            pub fn keeps(&self, flagged: bool, kind: Kind, stream: u64, index: u64) -> bool {
                match self {
                    $(Summariser::$variant(s) => s.keeps(flagged, kind, stream, index),)*
                    Summariser::Recorded => true,
                }
            }

            fn summarise(
                &self,
                view: &View,
                range: (usize, usize),
                carried: &dyn Fn(usize) -> bool,
                budget: u64,
                stream: u64,
                out: &mut Context,
            ) -> u64 {
                match self {
                    $(Summariser::$variant(s) => s.summarise(view, range, carried, budget, stream, out),)*
                    Summariser::Recorded => recorded::summarise(view, range, out),
                }
            }
        }
    };
}

summarisers! {
    "simulated" => Simulated(simulated::Simulated),
    "extractive" => Extractive(extractive::Extractive),
    "llm" => Llm(llm::Llm),
}

pub use llm::Missing;

impl Default for Summariser {
    fn default() -> Self {
        Summariser::Simulated(Simulated::default())
    }
}

/// Whether `key` is a parameter some summariser reads, `summariser` included: what a strategy
/// that takes a summariser and nothing else accepts.
pub fn takes(key: &str) -> bool {
    key == "summariser" || OWN.iter().any(|(_, keys)| keys.contains(&key))
}

impl Summariser {
    /// Reads `summariser` (default `simulated`) and that summariser's parameters.
    pub fn from_params(p: &mut Params) -> Result<Self, ParseError> {
        let name = p
            .choice("summariser", &NAMES)?
            .unwrap_or_else(|| "simulated".into());
        for (other, keys) in OWN.iter().filter(|(n, _)| *n != name) {
            for &key in *keys {
                if p.value(key).is_some() {
                    return Err(format!(
                        "strategy `{}`: `{key}` is a parameter of the `{other}` summariser, not of `{name}` (set `summariser={other}` to use it)",
                        p.strategy()
                    )
                    .into());
                }
            }
        }
        Summariser::read(&name, p)
    }

    /// Writes one summary of view records `first..end` (those `carried` selects; the others
    /// are kept verbatim elsewhere), sized at most `budget`, into `out`: the simulated
    /// summariser marks the records that survive in `out.summary_kept`, a text summariser
    /// writes `out.summary_text` and its facts. Returns the summary's cost.
    pub fn write(
        &self,
        view: &View,
        (first, end): (usize, usize),
        carried: impl Fn(usize) -> bool,
        budget: u64,
        stream: u64,
        out: &mut Context,
    ) -> u64 {
        let cost = self.summarise(view, (first, end), &carried, budget, stream, out);
        if !self.writes_text() {
            return cost;
        }
        // A text summariser: what the text holds is found in it.
        out.summary_from_text = true;
        let facts = &mut out.summary_facts;
        view.facts.find_in(&out.summary_text, |f| facts.push(f));
        facts.sort_unstable();
        facts.dedup();
        cost
    }
}
