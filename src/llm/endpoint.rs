//! An OpenAI-compatible chat-completions endpoint (vLLM, llama.cpp's server and ollama speak
//! it) answering the requests the cache lacks, a few at a time.
//!
//! Plain HTTP only: the build carries no TLS stack (see Cargo.toml). The endpoints this is for
//! run beside the sweep; a hosted service is reached through Batch files instead.

use super::chat::{self, Body};
use super::{SummaryCache, SummaryRequest};
use crate::error::{Error, Result};
use serde_json::Value;
use std::collections::HashSet;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Where and how to ask.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    /// `http://host:port`, `http://host:port/v1` or the full `…/v1/chat/completions`.
    pub url: String,
    /// The model to ask for; every request must name it (the model is part of the cache key).
    /// `None`: each request's own.
    pub model: Option<String>,
    /// The environment variable holding the API key, sent as `Authorization: Bearer KEY`.
    pub api_key_env: Option<String>,
    /// How many requests are in flight at once (at least 1).
    pub concurrency: usize,
    /// How many times a request is tried again after a timeout, a 408, a 429 or a 5xx status
    /// (at most [`MAX_RETRIES`]); a `Retry-After` in the answer sets the wait before the next
    /// try, up to `max_retry_after`.
    pub retries: u32,
    /// How long one try may take, from connecting to the last byte of the answer.
    pub timeout: Duration,
    /// The wait before the first retry when the server does not say (`Retry-After`); each
    /// further retry waits twice as long, at most a minute.
    pub backoff: Duration,
    /// The longest wait a `Retry-After` is honoured for ([`MAX_RETRY_AFTER`] by default); a
    /// server asking for more is waited for this long.
    pub max_retry_after: Duration,
}

impl Endpoint {
    /// An endpoint at `url` with the defaults: 4 at once, 3 retries, 300 s a try, 1 s backoff.
    pub fn new(url: impl Into<String>) -> Self {
        Endpoint {
            url: url.into(),
            model: None,
            api_key_env: None,
            concurrency: 4,
            retries: 3,
            timeout: Duration::from_secs(300),
            backoff: Duration::from_secs(1),
            max_retry_after: MAX_RETRY_AFTER,
        }
    }

    /// The chat-completions address `url` names.
    pub fn completions_url(&self) -> Result<String> {
        let url = self.url.trim_end_matches('/');
        if url.starts_with("https://") {
            return Err(self.error(
                "https is not supported: this build speaks plain HTTP only, for local servers (vLLM, llama.cpp, ollama); reach a hosted service through `summaries export` and its batch interface".into(),
            ));
        }
        if !url.starts_with("http://") || url.len() == "http://".len() {
            return Err(
                self.error("expected an http:// address such as http://127.0.0.1:8000/v1".into())
            );
        }
        Ok(if url.ends_with("/chat/completions") {
            url.to_string()
        } else if url.ends_with("/v1") {
            format!("{url}/chat/completions")
        } else {
            format!("{url}/v1/chat/completions")
        })
    }

    /// Asks for every request of `requests` the cache has no answer to (each distinct request
    /// once) and stores each answer as it comes, whole. Returns how many it stored. Stops at the
    /// first request that fails for good (an error status, a timeout after the retries, an
    /// endpoint that is not there) with an error naming the url; what was stored before stays,
    /// so running again asks only for the rest.
    pub fn fill(&self, requests: &[SummaryRequest], cache: &SummaryCache) -> Result<usize> {
        let url = self.completions_url()?;
        let key = self.key()?;
        if let Some(model) = &self.model {
            if let Some(r) = requests.iter().find(|r| &r.model != model) {
                return Err(self.error(format!(
                    "a request names model {:?}, not {model:?}; the model is part of the cache key, so export the requests with model {model:?} (or ask for {:?})",
                    r.model, r.model
                )));
            }
        }
        let mut seen = HashSet::new();
        let mut missing = Vec::new();
        for r in requests {
            let hash = r.hash();
            if seen.insert(hash.clone()) && cache.get(&hash)?.is_none() {
                missing.push((hash, r));
            }
        }
        if missing.is_empty() {
            return Ok(0);
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(self.timeout))
            .http_status_as_error(false)
            .proxy(None)
            .build()
            .into();
        let next = AtomicUsize::new(0);
        let stored = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let failure: Mutex<Option<(usize, Error)>> = Mutex::new(None);
        let workers = self.concurrency.clamp(1, missing.len());
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((hash, request)) = missing.get(i) else {
                        break;
                    };
                    let outcome = self
                        .ask(&agent, &url, key.as_deref(), request)
                        .map_err(|m| self.error(format!("request {hash}: {m}")))
                        .and_then(|text| cache.put(request, &text));
                    match outcome {
                        Ok(()) => {
                            stored.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            stop.store(true, Ordering::Relaxed);
                            let mut first = failure.lock().unwrap_or_else(|p| p.into_inner());
                            // The failure of the earliest request is reported, whoever saw it.
                            if first.as_ref().is_none_or(|(j, _)| i < *j) {
                                *first = Some((i, e));
                            }
                            break;
                        }
                    }
                });
            }
        });
        let stored = stored.into_inner();
        match failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
            None => Ok(stored),
            Some((_, Error::Endpoint { url, message })) => Err(Error::Endpoint {
                url,
                message: format!(
                    "{message}; {stored} of the {} missing answers were stored before it (running again asks only for the rest)",
                    missing.len()
                ),
            }),
            Some((_, e)) => Err(e),
        }
    }

    /// One request, tried again on failures that may pass; the answer's text or why none came.
    fn ask(
        &self,
        agent: &ureq::Agent,
        url: &str,
        key: Option<&str>,
        request: &SummaryRequest,
    ) -> Result<String, String> {
        let body = serde_json::to_string(&Body::of(request)).expect("a body serialises");
        let mut last = String::new();
        // The wait the server asked for with its last answer (`Retry-After`), bounded.
        let mut asked: Option<Duration> = None;
        for attempt in 0..=self.retries.min(MAX_RETRIES) {
            if attempt > 0 {
                // The server's own wait when it gave one (shorter or longer than the backoff),
                // bounded; the doubling backoff otherwise.
                let backoff = self.backoff.saturating_mul(1 << (attempt - 1).min(16));
                let wait = match asked.take() {
                    Some(a) => a.min(self.max_retry_after),
                    None => backoff.min(Duration::from_secs(60)),
                };
                std::thread::sleep(wait);
            }
            let mut call = agent.post(url).header("Content-Type", "application/json");
            if let Some(key) = key {
                call = call.header("Authorization", format!("Bearer {key}"));
            }
            match call.send(body.as_bytes()) {
                Ok(mut response) => {
                    let status = response.status().as_u16();
                    asked = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(retry_after);
                    let text = match response.body_mut().read_to_string() {
                        Ok(text) => text,
                        Err(e) if is_timeout(&e) => {
                            last = self.timed_out();
                            continue;
                        }
                        Err(e) => {
                            last = format!("the answer could not be read ({e})");
                            continue;
                        }
                    };
                    match status {
                        200 => {
                            let value: Value = serde_json::from_str(&text).map_err(|e| {
                                format!("status 200, but the body is not JSON ({e})")
                            })?;
                            return chat::answer_text(&value);
                        }
                        408 | 429 | 500..=599 => {
                            last = format!("status {status}: {}", chat::error_text(&text));
                        }
                        _ => {
                            let hint = match (status, &self.api_key_env) {
                                (401 | 403, Some(var)) => format!(" (check the key in ${var})"),
                                (401 | 403, None) => {
                                    " (the endpoint wants a key: --key-env VAR)".into()
                                }
                                _ => String::new(),
                            };
                            return Err(format!(
                                "status {status}: {}{hint}",
                                chat::error_text(&text)
                            ));
                        }
                    }
                }
                Err(e) if is_timeout(&e) => last = self.timed_out(),
                Err(ureq::Error::Io(e)) if e.kind() == ErrorKind::ConnectionRefused => {
                    return Err(
                        "connection refused: no server is listening there (is it running?)".into(),
                    )
                }
                Err(ureq::Error::HostNotFound) => return Err("host not found".into()),
                Err(ureq::Error::ConnectionFailed) => return Err("cannot connect".into()),
                // A reset or a dropped connection may pass.
                Err(ureq::Error::Io(e)) => last = format!("connection failed ({e})"),
                Err(e) => return Err(e.to_string()),
            }
        }
        let tries = self.retries.min(MAX_RETRIES) + 1;
        Err(format!(
            "{last} ({tries} {})",
            if tries == 1 { "try" } else { "tries" }
        ))
    }

    fn timed_out(&self) -> String {
        format!("no answer within {} s", self.timeout.as_secs_f64())
    }

    /// The API key, when one is asked for: the variable must be set and not empty.
    fn key(&self) -> Result<Option<String>> {
        let Some(var) = &self.api_key_env else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(key) if !key.trim().is_empty() => Ok(Some(key.trim().to_string())),
            _ => Err(self.error(format!(
                "the API key's environment variable {var} is not set (or empty)"
            ))),
        }
    }

    fn error(&self, message: String) -> Error {
        Error::Endpoint {
            url: self.url.clone(),
            message,
        }
    }
}

/// The most retries a request gets (`--retries`): beyond it a failing endpoint is down, not busy.
pub const MAX_RETRIES: u32 = 10;

/// The longest wait a `Retry-After` answer is honoured for; a server asking for more waits
/// this long.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// A `Retry-After` value in whole seconds (the HTTP-date form is not read: the default backoff
/// applies), at most [`MAX_RETRY_AFTER`].
pub fn retry_after(value: &str) -> Option<Duration> {
    let seconds: u64 = value.trim().parse().ok()?;
    Some(Duration::from_secs(seconds).min(MAX_RETRY_AFTER))
}

fn is_timeout(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::Timeout(_) => true,
        ureq::Error::Io(io) => matches!(io.kind(), ErrorKind::TimedOut | ErrorKind::WouldBlock),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_is_read_in_seconds_and_bounded() {
        assert_eq!(retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(retry_after(" 7 "), Some(Duration::from_secs(7)));
        assert_eq!(retry_after("86400"), Some(MAX_RETRY_AFTER));
        assert_eq!(retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
        assert_eq!(retry_after("-1"), None);
    }

    #[test]
    fn addresses_are_completed_to_the_chat_completions_path() {
        let url = |u: &str| Endpoint::new(u).completions_url();
        let full = "http://127.0.0.1:8000/v1/chat/completions";
        assert_eq!(url("http://127.0.0.1:8000").unwrap(), full);
        assert_eq!(url("http://127.0.0.1:8000/v1/").unwrap(), full);
        assert_eq!(url(full).unwrap(), full);
        let e = url("https://api.example.com/v1").unwrap_err().to_string();
        assert!(
            e.starts_with("https://api.example.com/v1: https is not supported"),
            "{e}"
        );
        assert!(url("localhost:8000")
            .unwrap_err()
            .to_string()
            .contains("expected an http://"));
    }
}
