//! OpenAI Batch files: the requests ctxlab writes (one chat-completions call a line) and the
//! answers a batch service gives back. See
//! <https://platform.openai.com/docs/guides/batch> for the two formats.
//!
//! A request line: `{"custom_id":HASH,"method":"POST","url":"/v1/chat/completions",
//! "body":{"model":M,"messages":[{"role":"system","content":PROMPT},{"role":"user","content":INPUT}],
//! "max_tokens":N}}` (`max_tokens` only when set), where HASH is [`SummaryRequest::hash`].
//!
//! An answer line: `{"id":..,"custom_id":HASH,"response":{"status_code":200,"body":{..chat
//! completion..}},"error":null}`.

use super::chat::{self, Body};
use super::SummaryRequest;
use crate::error::{InputError, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashSet;
use std::io::Write as _;
use std::path::Path;

/// The endpoint every request line names.
pub const URL: &str = "/v1/chat/completions";

/// One line of a Batch input file. Field order is the order written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestLine {
    custom_id: String,
    method: String,
    url: String,
    body: Body,
}

/// Whether [`write_requests`] may replace a file already at its path (only ever a plain file).
pub use crate::output_file::Existing;

/// One request's line, without its line break.
pub fn request_line(request: &SummaryRequest) -> String {
    let line = RequestLine {
        custom_id: request.hash(),
        method: "POST".into(),
        url: URL.into(),
        body: Body::of(request),
    };
    serde_json::to_string(&line).expect("a request line serialises")
}

/// Writes `requests` to `path` as a Batch input file, one line for each distinct request (by
/// hash, first seen first), and returns how many lines it wrote. The file appears whole or not
/// at all ([`crate::output_file`]). With [`Existing::Refuse`] anything already at `path` is
/// left alone and the call fails.
pub fn write_requests(
    path: &Path,
    requests: &[SummaryRequest],
    existing: Existing,
) -> Result<usize> {
    let mut seen = HashSet::new();
    let mut text = String::new();
    for request in requests {
        if seen.insert(request.hash()) {
            text.push_str(&request_line(request));
            text.push('\n');
        }
    }
    crate::output_file::write(path, existing, |w| w.write_all(text.as_bytes()))?;
    Ok(seen.len())
}

/// The requests of a Batch input file ctxlab wrote, in file order (duplicates kept). Each
/// line's `custom_id` must be the hash of its own body: a line edited after export, or a file
/// of another tool's, is refused rather than answered under the wrong key.
pub fn read_requests(path: &Path) -> Result<Vec<SummaryRequest>> {
    let text = crate::text::read(path)?;
    let mut requests = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |message: String| InputError::line(path, i + 1, message);
        let parsed: RequestLine = crate::strict_json::from_str(line)
            .map_err(|e| at(format!("not a Batch request line: {e}")))?;
        if parsed.method != "POST" || parsed.url != URL {
            return Err(at(format!(
                "expected method POST and url {URL}, found {} {}",
                parsed.method, parsed.url
            ))
            .into());
        }
        let request = parsed.body.request().map_err(at)?;
        let hash = request.hash();
        if parsed.custom_id != hash {
            return Err(at(format!(
                "custom_id {} is not the hash of the line's request ({hash}): the line was changed after export; export the requests again",
                parsed.custom_id
            ))
            .into());
        }
        requests.push(request);
    }
    Ok(requests)
}

/// One answered line of a Batch output file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchResponse {
    /// The line it is on, from 1, for messages.
    pub line: usize,
    pub custom_id: String,
    pub text: String,
}

/// The answers of a Batch output file, in file order: `(custom_id, text)`. Any line that is not
/// JSON, has no `custom_id`, reports an error, has a status other than 200, or has no answer
/// text fails the whole file, naming the file and the line.
pub fn read_responses(path: &Path) -> Result<Vec<(String, String)>> {
    Ok(read_response_lines(path)?
        .into_iter()
        .map(|r| (r.custom_id, r.text))
        .collect())
}

/// [`read_responses`], keeping each answer's line number.
pub fn read_response_lines(path: &Path) -> Result<Vec<BatchResponse>> {
    let text = crate::text::read(path)?;
    let mut responses = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |message: String| InputError::line(path, i + 1, message);
        let value: Value = serde_json::from_str(line).map_err(|e| {
            at(format!(
                "not JSON ({e}); expected one Batch output object a line"
            ))
        })?;
        let custom_id = match value.get("custom_id") {
            Some(Value::String(id)) => id.clone(),
            _ => {
                return Err(at("expected a string `custom_id` (the request's hash)".into()).into())
            }
        };
        let text = answer(&value).map_err(|m| at(format!("custom_id {custom_id}: {m}")))?;
        responses.push(BatchResponse {
            line: i + 1,
            custom_id,
            text,
        });
    }
    Ok(responses)
}

/// The summary an output line carries, or why it carries none.
fn answer(value: &Value) -> Result<String, String> {
    if let Some(error) = value.get("error").filter(|e| !e.is_null()) {
        let code = error
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("no code");
        let message = error
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        return Err(format!(
            "the batch service reports an error ({code}): {message}"
        ));
    }
    let Some(response) = value.get("response").filter(|r| !r.is_null()) else {
        return Err(
            "expected a `response` object (the line has neither response nor error)".into(),
        );
    };
    match response.get("status_code").and_then(Value::as_u64) {
        Some(200) => {}
        Some(status) => {
            let body = response
                .get("body")
                .map(Value::to_string)
                .unwrap_or_default();
            return Err(format!(
                "status {status}, not 200: {}",
                chat::error_text(&body)
            ));
        }
        None => return Err("expected response.status_code to be a number".into()),
    }
    let body = response
        .get("body")
        .ok_or("expected a response.body (the chat completion)")?;
    chat::answer_text(body).map_err(|m| format!("response.body: {m}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(input: &str, max_tokens: Option<u32>) -> SummaryRequest {
        SummaryRequest {
            prompt: "Summarise.".into(),
            input: input.into(),
            model: "m".into(),
            max_tokens,
        }
    }

    #[test]
    fn a_request_line_is_exactly_the_batch_format() {
        // The hash is the fixed vector of request.rs's test.
        assert_eq!(
            request_line(&request("user: fix the bug", None)),
            r#"{"custom_id":"cd74b855b376f4acc20d8ff4d84ac16af2165434a8711d5cb875b7f269782c2b","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"system","content":"Summarise."},{"role":"user","content":"user: fix the bug"}]}}"#
        );
        assert_eq!(
            request_line(&request("user: fix the bug", Some(256))),
            r#"{"custom_id":"35d75f72193e9263ee81975d24f4be063bca3bb423cd160137109239e8c0ad4b","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[{"role":"system","content":"Summarise."},{"role":"user","content":"user: fix the bug"}],"max_tokens":256}}"#
        );
    }

    #[test]
    fn requests_are_written_once_each_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.jsonl");
        let a = request("a", None);
        let b = request("b", Some(10));
        // a, b, a: two distinct requests, so two lines.
        let n =
            write_requests(&path, &[a.clone(), b.clone(), a.clone()], Existing::Refuse).unwrap();
        assert_eq!(n, 2);
        assert_eq!(read_requests(&path).unwrap(), vec![a.clone(), b]);
        // A second write is refused and leaves the file as it was.
        let before = std::fs::read(&path).unwrap();
        let e = write_requests(&path, std::slice::from_ref(&a), Existing::Refuse).unwrap_err();
        assert!(e.to_string().contains("already exists"), "{e}");
        assert_eq!(std::fs::read(&path).unwrap(), before);
        assert_eq!(
            write_requests(&path, std::slice::from_ref(&a), Existing::Replace).unwrap(),
            1
        );
        assert_eq!(read_requests(&path).unwrap(), vec![a]);
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_request_line_with_more_than_the_hash_covers_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("requests.jsonl");
        let line = request_line(&request("a", None))
            .replace(r#""model":"m""#, r#""model":"m","temperature":0"#);
        std::fs::write(&path, format!("{line}\n")).unwrap();
        let e = read_requests(&path).unwrap_err().to_string();
        assert!(
            e.contains("requests.jsonl:1:") && e.contains("unknown field `temperature`"),
            "{e}"
        );
    }
}
