//! One summary a model must write, and its content hash: the cache key and the Batch
//! `custom_id`.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One summary a model must write: the harness's summary prompt and the text it summarises.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SummaryRequest {
    /// The harness's summary instructions, sent as the system message.
    pub prompt: String,
    /// What is summarised (the records a compaction replaces, rendered as text), sent as the
    /// user message.
    pub input: String,
    /// The model asked, as the endpoint or batch service names it.
    pub model: String,
    /// The answer's length limit, when the request sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

/// Names the encoding, so a later change of it cannot collide with answers hashed under this one.
const DOMAIN: &[u8] = b"ctxlab summary request v1";

impl SummaryRequest {
    /// SHA-256, as 64 lowercase hex digits, of a canonical encoding: the domain tag
    /// `ctxlab summary request v1`, then the fields model, max_tokens, prompt, input, each as
    /// its UTF-8 bytes preceded by their length as an 8-byte big-endian integer. `max_tokens` is
    /// written in decimal digits, or as no bytes when absent (no decimal is empty, so absent and
    /// present never meet). Length prefixes make the encoding unambiguous whatever the texts
    /// hold; no JSON escaping rule enters it, so any language can recompute it.
    pub fn hash(&self) -> String {
        let max_tokens = self.max_tokens.map(|n| n.to_string()).unwrap_or_default();
        let mut h = Sha256::new();
        for field in [
            DOMAIN,
            self.model.as_bytes(),
            max_tokens.as_bytes(),
            self.prompt.as_bytes(),
            self.input.as_bytes(),
        ] {
            h.update((field.len() as u64).to_be_bytes());
            h.update(field);
        }
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Whether `text` has the shape of [`SummaryRequest::hash`]: 64 lowercase hex digits. Checked
/// before a hash names a file, so no id can reach outside the cache folder.
pub fn is_hash(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(max_tokens: Option<u32>) -> SummaryRequest {
        SummaryRequest {
            prompt: "Summarise.".into(),
            input: "user: fix the bug".into(),
            model: "m".into(),
            max_tokens,
        }
    }

    /// The fixed vector, recomputed outside Rust with Python's hashlib:
    /// `f = lambda b: len(b).to_bytes(8, "big") + b`;
    /// `sha256(f(b"ctxlab summary request v1") + f(b"m") + f(b"") + f(b"Summarise.")
    ///  + f(b"user: fix the bug")).hexdigest()`.
    #[test]
    fn the_hash_is_a_fixed_sha256_of_the_length_prefixed_fields() {
        assert_eq!(
            request(None).hash(),
            "cd74b855b376f4acc20d8ff4d84ac16af2165434a8711d5cb875b7f269782c2b"
        );
        assert_eq!(
            request(Some(256)).hash(),
            "35d75f72193e9263ee81975d24f4be063bca3bb423cd160137109239e8c0ad4b"
        );
    }

    #[test]
    fn every_field_moves_the_hash_and_fields_cannot_trade_bytes() {
        let base = request(None);
        let mut other = base.clone();
        other.model = "n".into();
        assert_ne!(base.hash(), other.hash());
        // The same bytes split differently between prompt and input: length prefixes tell them apart.
        let a = SummaryRequest {
            prompt: "ab".into(),
            input: "c".into(),
            ..base.clone()
        };
        let b = SummaryRequest {
            prompt: "a".into(),
            input: "bc".into(),
            ..base.clone()
        };
        assert_ne!(a.hash(), b.hash());
        assert_ne!(request(Some(0)).hash(), request(None).hash());
        assert!(is_hash(&base.hash()));
        assert!(!is_hash("../../etc/passwd"));
        assert!(!is_hash(&base.hash().to_uppercase()));
    }
}
