//! `llm`: summaries a model wrote. The summariser renders what a compaction replaces as text,
//! makes it a [`SummaryRequest`] with the harness's summary prompt, and reads the answer from
//! a cache folder of answers by request hash (`cache=DIR`, filled by `ctxlab summaries import`
//! from a Batch output file, or by an OpenAI-compatible endpoint: `url=...`). A sweep that needs
//! an answer the cache lacks stops, before anything is published, naming how many and how to
//! export them (`ctxlab summaries export`). In a session a later compaction summarises the
//! earlier summaries, so its request exists only once those are answered: export, answer,
//! import again until none is missing.
//!
//! - `prompt`: `codex`, `claude_code`, `openhands` or a file's path; default the strategy's own
//!   harness (`codex_compact` → codex, `claude_code_compact` → claude_code,
//!   `openhands_llm_summarizing` → openhands), `codex` for the others.
//! - `model`: the model that answers (part of every request and its hash); required.
//! - The input: each replaced entry as `[kind] text`, entries separated by a blank line; a
//!   stand-in's text is the harness's and is left out. The model writes what it writes: the
//!   summary costs what its text costs, and a cell whose summary does not fit is infeasible.

use crate::error::ParseError;
use crate::llm::{Endpoint, SummaryCache, SummaryRequest};
use crate::spec::Params;
use crate::view::{TextRef, Texts, View};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// What a summary the cache lacks is written as in the context until the run stops: a
/// request whose input holds it waits on that answer and is not asked for.
pub(crate) const MISSING: &str = "\u{0}ctxlab: summary not answered yet\u{0}";

#[derive(Debug, Clone)]
pub struct Llm {
    pub cache: PathBuf,
    pub prompt: String,
    pub model: String,
    pub url: Option<String>,
    pub key_env: Option<String>,
    /// The strategy's own prompt, left out of its label.
    default_prompt: &'static str,
    state: Arc<State>,
}

impl PartialEq for Llm {
    fn eq(&self, o: &Self) -> bool {
        (
            &self.cache,
            &self.prompt,
            &self.model,
            &self.url,
            &self.key_env,
        ) == (&o.cache, &o.prompt, &o.model, &o.url, &o.key_env)
    }
}

#[derive(Debug)]
struct State {
    prompt_text: String,
    cache: SummaryCache,
    endpoint: Option<Endpoint>,
    /// Answers read so far, by hash.
    memo: Mutex<HashMap<String, Option<String>>>,
    /// Requests the cache lacks, by hash, and how many more wait on them.
    missing: Mutex<BTreeMap<String, SummaryRequest>>,
    waiting: Mutex<u64>,
    /// The first error reading the cache or asking the endpoint.
    failure: Mutex<Option<String>>,
}

/// What a sweep still needs of its `llm` summarisers.
#[derive(Debug, Default)]
pub struct Missing {
    pub requests: Vec<SummaryRequest>,
    /// Compactions whose input holds an unanswered summary.
    pub waiting: u64,
    pub caches: Vec<PathBuf>,
    pub failure: Option<String>,
}

fn default_prompt(strategy: &str) -> &'static str {
    match strategy {
        "claude_code_compact" => "claude_code",
        "openhands_llm_summarizing" => "openhands",
        _ => "codex",
    }
}

impl Llm {
    pub fn from_params(p: &mut Params) -> Result<Self, ParseError> {
        let cache = p.text("cache")?.ok_or_else(|| {
            ParseError(format!(
                "strategy `{}`: the `llm` summariser needs `cache=DIR`, the folder of answers by request hash (`ctxlab summaries import`)",
                p.strategy()
            ))
        })?;
        let model = p.text("model")?.ok_or_else(|| {
            ParseError(format!(
                "strategy `{}`: the `llm` summariser needs `model=NAME`, the model that answers (part of every request)",
                p.strategy()
            ))
        })?;
        let own = default_prompt(p.strategy());
        let prompt = p.text("prompt")?.unwrap_or_else(|| own.into());
        let url = p.text("url")?;
        let key_env = p.text("key_env")?;
        let prompt_text = crate::llm::prompts::by_name(&prompt)
            .map_err(|e| ParseError(format!("strategy `{}`: {e}", p.strategy())))?;
        let cache_dir = PathBuf::from(&cache);
        let store = SummaryCache::open(&cache_dir)
            .map_err(|e| ParseError(format!("strategy `{}`: {e}", p.strategy())))?;
        let endpoint = url.as_ref().map(|u| Endpoint {
            model: Some(model.clone()),
            api_key_env: key_env.clone(),
            ..Endpoint::new(u.clone())
        });
        if let Some(e) = &endpoint {
            e.completions_url()
                .map_err(|err| ParseError(format!("strategy `{}`: {err}", p.strategy())))?;
        }
        Ok(Llm {
            cache: cache_dir,
            prompt,
            model,
            url,
            key_env,
            default_prompt: own,
            state: Arc::new(State {
                prompt_text,
                cache: store,
                endpoint,
                memo: Mutex::new(HashMap::new()),
                missing: Mutex::new(BTreeMap::new()),
                waiting: Mutex::new(0),
                failure: Mutex::new(None),
            }),
        })
    }

    pub fn push_params(&self, params: &mut Vec<String>) {
        params.push("summariser=llm".into());
        params.push(format!("cache={}", self.cache.display()));
        params.push(format!("model={}", self.model));
        if self.prompt != self.default_prompt {
            params.push(format!("prompt={}", self.prompt));
        }
        if let Some(u) = &self.url {
            params.push(format!("url={u}"));
        }
        if let Some(k) = &self.key_env {
            params.push(format!("key_env={k}"));
        }
    }

    /// The text of what view records `first..end` (those `carried` selects) say.
    fn input(view: &View, (first, end): (usize, usize), carried: &dyn Fn(usize) -> bool) -> String {
        let mut input = String::new();
        for i in (first..end).filter(|&i| carried(i)) {
            let stand = matches!(view.texts, Texts::Entries { entries, .. } if entries[i] == TextRef::Stand);
            if stand {
                continue;
            }
            if !input.is_empty() {
                input.push_str("\n\n");
            }
            input.push_str(&format!("[{}] {}", view.kinds[i], view.texts.get(i)));
        }
        input
    }

    /// Writes the model's summary of view records `first..end` into `text` and returns its
    /// cost; an answer the cache lacks is noted and written as a marker (the run stops later).
    pub fn write(
        &self,
        view: &View,
        range: (usize, usize),
        carried: &dyn Fn(usize) -> bool,
        text: &mut String,
    ) -> u64 {
        text.clear();
        let input = Self::input(view, range, carried);
        let s = &self.state;
        if input.contains(MISSING) {
            *s.waiting.lock().unwrap() += 1;
            text.push_str(MISSING);
            return 0;
        }
        let request = SummaryRequest {
            prompt: s.prompt_text.clone(),
            input,
            model: self.model.clone(),
            max_tokens: None,
        };
        let hash = request.hash();
        let known = s.memo.lock().unwrap().get(&hash).cloned();
        let answer = match known {
            Some(a) => a,
            None => {
                let mut answer = self.read(&hash);
                if answer.is_none() {
                    if let Some(e) = &s.endpoint {
                        match e.fill(std::slice::from_ref(&request), &s.cache) {
                            Ok(_) => answer = self.read(&hash),
                            Err(err) => self.fail(err.to_string()),
                        }
                    }
                }
                s.memo.lock().unwrap().insert(hash.clone(), answer.clone());
                answer
            }
        };
        match answer {
            Some(a) => {
                text.push_str(&a);
                view.model.cost(text)
            }
            None => {
                s.missing.lock().unwrap().insert(hash, request);
                text.push_str(MISSING);
                0
            }
        }
    }

    fn read(&self, hash: &str) -> Option<String> {
        match self.state.cache.get(hash) {
            Ok(a) => a,
            Err(e) => {
                self.fail(e.to_string());
                None
            }
        }
    }

    fn fail(&self, message: String) {
        self.state.failure.lock().unwrap().get_or_insert(message);
    }

    /// Adds what this summariser still needs to `m`.
    pub fn add_missing(&self, m: &mut Missing) {
        let s = &self.state;
        let missing = s.missing.lock().unwrap();
        m.requests.extend(missing.values().cloned());
        m.waiting += *s.waiting.lock().unwrap();
        if !missing.is_empty() && !m.caches.contains(&self.cache) {
            m.caches.push(self.cache.clone());
        }
        if m.failure.is_none() {
            m.failure = s.failure.lock().unwrap().clone();
        }
    }
}

impl Missing {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.waiting == 0 && self.failure.is_none()
    }

    /// The error a sweep stops with.
    pub fn error(&self, experiment: &str) -> String {
        if let Some(f) = &self.failure {
            return format!("the `llm` summariser could not get its summaries: {f}");
        }
        let dirs: Vec<String> = self
            .caches
            .iter()
            .map(|d| d.display().to_string())
            .collect();
        format!(
            "{} summaries the `llm` summariser needs are not in {} ({} more compactions wait on them); nothing was written. Write their requests with `ctxlab summaries export {experiment} --out requests.jsonl`, have a model answer them (any OpenAI Batch service, or `ctxlab summaries fill`), store the answers with `ctxlab summaries import RESPONSES --requests requests.jsonl --into DIR`, and run the sweep again",
            self.requests.len(),
            if dirs.is_empty() { "the cache".to_string() } else { dirs.join(", ") },
            self.waiting
        )
    }
}

impl super::Summarise for Llm {
    const PARAMS: &'static [&'static str] = &["cache", "model", "prompt", "url", "key_env"];

    fn read_params(p: &mut Params) -> Result<Self, ParseError> {
        Llm::from_params(p)
    }

    fn canonical_params(&self, params: &mut Vec<String>) {
        self.push_params(params)
    }

    fn summarise(
        &self,
        view: &View,
        range: (usize, usize),
        carried: &dyn Fn(usize) -> bool,
        _budget: u64,
        _stream: u64,
        out: &mut crate::context::Context,
    ) -> u64 {
        self.write(view, range, carried, &mut out.summary_text)
    }
}
