//! `summaries import`: a batch service's answers into the cache, checked against the requests
//! they answer, all or nothing.

use super::batch;
use super::{SummaryCache, SummaryRequest};
use crate::error::{InputError, Result};
use std::collections::HashMap;
use std::path::Path;

/// What an import did, and what it rests on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportReport {
    /// Answer lines in the responses file.
    pub responses: usize,
    /// Distinct requests in the requests file.
    pub requests: usize,
    /// Answers stored by this import.
    pub stored: usize,
    /// Answers the cache already held, the same text: left as they were.
    pub already: usize,
    /// Requests of the file that still have no answer in the cache.
    pub unanswered: usize,
}

/// Stores the answers of the Batch output file `responses` in the cache folder `into`, after
/// checking every one: its `custom_id` must be a request of the Batch input file `requests`
/// (whose lines must each carry the hash of their own body), answered once, with status 200 and
/// text; and where the cache already answers that request, with the same text. Any failure
/// stores nothing (answers stored before a write fails are removed again).
pub fn import(responses: &Path, requests: &Path, into: &Path) -> Result<ImportReport> {
    let asked = batch::read_requests(requests)?;
    let by_hash: HashMap<String, &SummaryRequest> = asked.iter().map(|r| (r.hash(), r)).collect();
    let answers = batch::read_response_lines(responses)?;
    let mut first_line: HashMap<&str, usize> = HashMap::new();
    for a in &answers {
        let at = |message: String| InputError::line(responses, a.line, message);
        if !by_hash.contains_key(&a.custom_id) {
            return Err(at(format!(
                "custom_id {} is not a request of {} (which holds {} requests): answers to another export?",
                crate::quote::cut(&a.custom_id, crate::quote::QUOTE_CHARS),
                requests.display(),
                by_hash.len()
            ))
            .into());
        }
        if let Some(earlier) = first_line.insert(&a.custom_id, a.line) {
            return Err(at(format!(
                "custom_id {} is answered twice (lines {earlier} and {}); keep one answer a request",
                a.custom_id, a.line
            ))
            .into());
        }
    }
    // Everything in the files is sound; now the cache, which may already answer some.
    let cache = SummaryCache::open(into)?;
    let mut new = Vec::new();
    let mut already = 0;
    for a in &answers {
        let request = by_hash[&a.custom_id];
        match cache.entry(&a.custom_id)? {
            None => new.push((request, a)),
            Some((stored_request, text)) => {
                if stored_request != *request {
                    return Err(InputError::File {
                        path: cache.path_of(&a.custom_id),
                        message: format!(
                            "holds another request under custom_id {} ({}:{}); remove the file to import",
                            a.custom_id,
                            responses.display(),
                            a.line
                        ),
                    }
                    .into());
                }
                if text != a.text {
                    return Err(InputError::File {
                        path: cache.path_of(&a.custom_id),
                        message: format!(
                            "already holds another answer to custom_id {} ({}:{} answers it differently); nothing was imported: remove the file to store the new answer",
                            a.custom_id,
                            responses.display(),
                            a.line
                        ),
                    }
                    .into());
                }
                already += 1;
            }
        }
    }
    for (i, (request, a)) in new.iter().enumerate() {
        if let Err(e) = cache.put(request, &a.text) {
            for (_, stored) in &new[..i] {
                cache.remove(&stored.custom_id);
            }
            return Err(e);
        }
    }
    let mut unanswered = 0;
    for hash in by_hash.keys() {
        if !first_line.contains_key(hash.as_str()) && cache.get(hash)?.is_none() {
            unanswered += 1;
        }
    }
    Ok(ImportReport {
        responses: answers.len(),
        requests: by_hash.len(),
        stored: new.len(),
        already,
        unanswered,
    })
}
