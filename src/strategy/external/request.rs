//! A request: what a strategy may see of one context, as one JSON line. Never the truth: the
//! flags are the ones the strategy is handed (noisy in a noisy cell), and nothing of the
//! labels, facts or later records reaches the program.

use super::{External, SpecValue, View};
use crate::view::{TextRef, Texts};
use serde::Serialize;

/// The protocol version ctxlab speaks (see `docs/external-strategies.md`).
pub const PROTOCOL: u32 = 1;

/// What one call of an external strategy asks.
pub struct Asked<'a> {
    pub external: &'a External,
    pub view: &'a View<'a>,
    pub capacity: u64,
    pub keep_recent: usize,
    pub seed: u64,
}

#[derive(Serialize)]
struct ProgramRequest<'a> {
    protocol: u32,
    request: u64,
    /// `cell`: the whole history at the end; `session`: the context at a compaction.
    mode: &'static str,
    strategy: StrategyPart<'a>,
    capacity: u64,
    keep_recent: usize,
    seed: u64,
    separator: u64,
    cost_model: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    task: Option<&'a str>,
    records: Vec<ContextEntry<'a>>,
}

#[derive(Serialize)]
struct StrategyPart<'a> {
    name: Option<&'a str>,
    params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Serialize)]
struct ContextEntry<'a> {
    id: usize,
    /// In a session: `record`, `placeholder` (a stand-in an earlier compaction left) or
    /// `summary`; absent in a cell, where every entry is a record and its id is its position
    /// (fewer keys per record: parsing the records is most of a simple program's time).
    #[serde(skip_serializing_if = "Option::is_none")]
    entry: Option<&'static str>,
    /// In a session, a record's position in the history.
    #[serde(skip_serializing_if = "Option::is_none")]
    record: Option<u32>,
    kind: &'static str,
    tool: Option<&'a str>,
    cost: u64,
    chars: u64,
    mask_cost: u64,
    flag: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
}

fn json(v: &SpecValue) -> serde_json::Value {
    match v {
        SpecValue::Int(i) => (*i).into(),
        SpecValue::Float(x) => (*x).into(),
        SpecValue::Bool(b) => (*b).into(),
        SpecValue::Str(s) => s.clone().into(),
        SpecValue::List(l) => l.clone().into(),
    }
}

impl Asked<'_> {
    /// Appends request `number` as JSON (without the line break) to `buf`.
    pub fn write(&self, number: u64, buf: &mut Vec<u8>) {
        let view = self.view;
        let texts = self.external.texts;
        let session = matches!(view.texts, Texts::Entries { .. });
        let records = (0..view.len())
            .map(|i| {
                let (entry, record) = match view.texts {
                    Texts::Records(_) => (None, None),
                    Texts::Entries { entries, .. } => match entries[i] {
                        TextRef::Record(r) => (Some("record"), Some(r)),
                        TextRef::Summary(_) => (Some("summary"), None),
                        TextRef::Stand => (Some("placeholder"), None),
                    },
                };
                ContextEntry {
                    id: i,
                    entry,
                    record,
                    kind: view.kinds[i].as_str(),
                    tool: view.tools[i].as_deref(),
                    cost: view.costs[i],
                    chars: view.chars[i],
                    mask_cost: view.stand_ins.mask_costs[i],
                    flag: view.flags[i],
                    text: (texts && entry != Some("placeholder")).then(|| view.texts.get(i)),
                }
            })
            .collect();
        let request = ProgramRequest {
            protocol: PROTOCOL,
            request: number,
            mode: if session { "session" } else { "cell" },
            strategy: StrategyPart {
                name: self.external.name.as_deref(),
                params: self
                    .external
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), json(v)))
                    .collect(),
            },
            capacity: self.capacity,
            keep_recent: self.keep_recent,
            seed: self.seed,
            separator: view.separator,
            cost_model: view.model.to_string(),
            task: texts.then_some(view.task),
            records,
        };
        serde_json::to_writer(buf, &request).expect("a request serialises");
    }
}
