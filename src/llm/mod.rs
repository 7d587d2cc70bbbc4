//! Summaries written by a model: the plumbing of the `llm` summariser.
//!
//! A compaction's summary is a [`SummaryRequest`]: the harness's summary prompt ([`prompts`]),
//! the text it summarises, the model and an optional length limit. Its [`SummaryRequest::hash`]
//! (SHA-256 of a length-prefixed encoding, see there) names it everywhere: it is the Batch
//! `custom_id` and the cache key. Answers get into the [`SummaryCache`] two ways:
//!
//! - **Batch files**, for any model or batch service: [`batch::write_requests`] writes the
//!   requests in the OpenAI Batch input format (`summaries export`); the service answers in
//!   the Batch output format; [`import()`] (`summaries import RESPONSES --requests REQUESTS
//!   --into DIR`) checks each answer against the request it claims to answer and stores them
//!   all or none.
//! - **An endpoint**: [`Endpoint::fill`] asks an OpenAI-compatible `/v1/chat/completions`
//!   server (vLLM, llama.cpp, ollama) for the answers the cache lacks, a few at a time, with
//!   retries (`summaries fill`).
//!
//! A sweep then reads the answers with [`SummaryCache::get`] by hash; a request the cache lacks
//! is one to export (or fill) before the sweep can run.
//!
//! The request a model sees: the prompt as the system message, the text as the user message
//! (see [`batch`] for the exact JSON). The harnesses themselves differ (Codex sends its prompt
//! as a user message after the history; OpenHands sends one user message holding the prompt,
//! the previous summary and the events): the prompts' source comments say how, for whoever
//! renders the input.
//!
//! One module a job: [`request`] (the request and its hash), [`prompts`], `chat` (the
//! chat-completions JSON both ways), [`batch`] (the files), [`cache`], [`import`](mod@import),
//! [`endpoint`].

pub mod batch;
pub mod cache;
mod chat;
pub mod endpoint;
pub mod import;
pub mod prompts;
pub mod request;

pub use cache::SummaryCache;
pub use endpoint::Endpoint;
pub use import::{import, ImportReport};
pub use request::SummaryRequest;
