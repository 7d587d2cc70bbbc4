//! The tokenizer the facts and the `hindsight` label rule share: the distinctive tokens of a
//! text (paths, file names, identifiers, error codes, hashes) and of a record.

use crate::history::{Kind, Record};
use std::collections::HashSet;

/// The distinctive tokens of a record, once each: a tool call whose text is JSON counts its
/// string values only (its keys are the tool's schema, repeated by every call). The token rule
/// of `hindsight` and of [`crate::history::facts`].
pub fn record_tokens(r: &Record, out: &mut HashSet<String>) {
    out.clear();
    for_each_record_token(r, |t| {
        if !out.contains(t) {
            out.insert(t.to_string());
        }
    });
}

/// Calls `f` with each distinctive token of a record, as often as it occurs (the rule of
/// [`record_tokens`], without collecting).
pub fn for_each_record_token(r: &Record, mut f: impl FnMut(&str)) {
    if r.kind == Kind::ToolCall && r.text.trim_start().starts_with(['{', '[']) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&r.text) {
            let mut strings = Vec::new();
            string_values(&v, &mut strings);
            for s in strings {
                distinctive_tokens(s).for_each(&mut f);
            }
            return;
        }
    }
    distinctive_tokens(&r.text).for_each(f);
}

fn string_values<'a>(v: &'a serde_json::Value, out: &mut Vec<&'a str>) {
    use serde_json::Value;
    match v {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|i| string_values(i, out)),
        Value::Object(map) => map.values().for_each(|i| string_values(i, out)),
        _ => {}
    }
}

/// File extensions that make a word a file name.
const EXTENSIONS: &[&str] = &[
    "c", "cc", "cfg", "cmake", "cpp", "cs", "css", "csv", "cu", "go", "h", "hpp", "html", "ini",
    "ipynb", "java", "js", "json", "jsx", "kt", "lock", "md", "mk", "php", "py", "pyi", "pyx",
    "rb", "rs", "rst", "sh", "sql", "swift", "toml", "ts", "tsx", "txt", "xml", "yaml", "yml",
];

/// Minimum length of an identifier token.
pub const MIN_IDENTIFIER: usize = 6;

/// The distinctive tokens of a text, each as often as it occurs. A word is a maximal run of
/// ASCII letters, digits and `_ . / -`, trimmed of leading and trailing `. / -`. A word gives:
///
/// - itself, when it is a **path**: it contains `/` and either has at least three segments or
///   ends in a file name (`django/contrib/auth`, `src/lib.rs`, from `/testbed/src/lib.rs` the
///   trimmed `testbed/src/lib.rs`);
/// - its last segment, when that is a **file name**: `stem.ext` with a stem holding a letter
///   and `ext` one of [`EXTENSIONS`] (`validators.py`, `STATUS.md`);
/// - otherwise each of its parts split at `.`, `/` and `-` that is
///   - an **identifier** of at least [`MIN_IDENTIFIER`] characters (letters, digits, `_`, not
///     starting with a digit) with an inner `_` (between two letters or digits) or a camelCase
///     hump (a lowercase letter followed by an uppercase one): `vsla_tensor_t`,
///     `UsernameValidator`, not `__init__` or `setup`;
///   - an **error code**: 1–4 capital letters then 3–5 digits (`E0308`, `TS2345`, `C0103`);
///   - a **hex id**: 7–40 lowercase hex digits with at least one digit and one letter (git
///     commit hashes).
pub fn distinctive_tokens(text: &str) -> impl Iterator<Item = &str> {
    Words { text, at: 0 }.flat_map(word_tokens)
}

/// Which bytes belong to a word: ASCII letters and digits and `_ . / -`.
const WORD_BYTES: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        table[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'/' | b'-');
        b += 1;
    }
    table
};

/// The words of a text that may hold a token, trimmed of their leading and trailing `. / -`.
/// Scanned byte by byte: a word's characters are all ASCII, and every byte of another
/// character is at least 0x80, so the words are those a split by `char` finds, found without
/// decoding UTF-8. A word of lowercase letters alone is no token of any kind (each needs a
/// `/`, a `.`, an `_`, a digit or a capital), and most words are such: they are skipped as
/// they are scanned.
struct Words<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        loop {
            while self.at < bytes.len() && !WORD_BYTES[bytes[self.at] as usize] {
                self.at += 1;
            }
            if self.at == bytes.len() {
                return None;
            }
            let start = self.at;
            let mut lowercase = true;
            while self.at < bytes.len() && WORD_BYTES[bytes[self.at] as usize] {
                lowercase &= bytes[self.at].is_ascii_lowercase();
                self.at += 1;
            }
            // Trimming removes only bytes that are not lowercase letters, so a word of
            // lowercase letters alone has nothing to trim.
            if lowercase {
                continue;
            }
            let word = self.text[start..self.at].trim_matches(['.', '/', '-']);
            if !word.is_empty() && !word.bytes().all(|b| b.is_ascii_lowercase()) {
                return Some(word);
            }
        }
    }
}

/// A word's tokens, in order: itself when it is a path, then its file name or its parts. An
/// iterator, not a list: the facts of every history are found word by word, and an allocation
/// per word was most of their cost.
fn word_tokens(word: &str) -> impl Iterator<Item = &str> {
    let last = word.rsplit('/').next().unwrap_or(word);
    let file = is_file_name(last);
    let path = word.contains('/') && {
        let segments = word.split('/').filter(|s| !s.is_empty()).count();
        segments >= 3 || (segments >= 2 && file)
    };
    let parts = (!file)
        .then(|| {
            word.split(['.', '/', '-'])
                .filter(|p| is_identifier(p) || is_error_code(p) || is_hex_id(p))
        })
        .into_iter()
        .flatten();
    path.then_some(word)
        .into_iter()
        .chain(file.then_some(last))
        .chain(parts)
}

fn is_file_name(s: &str) -> bool {
    match s.rsplit_once('.') {
        Some((stem, ext)) => {
            stem.chars().any(|c| c.is_ascii_alphabetic()) && EXTENSIONS.contains(&ext)
        }
        None => false,
    }
}

fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < MIN_IDENTIFIER
        || b[0].is_ascii_digit()
        || !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return false;
    }
    let inner_underscore = b
        .windows(3)
        .any(|w| w[1] == b'_' && w[0].is_ascii_alphanumeric() && w[2].is_ascii_alphanumeric());
    let camel = b
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    inner_underscore || camel
}

fn is_error_code(s: &str) -> bool {
    let letters = s.bytes().take_while(u8::is_ascii_uppercase).count();
    let digits = s.len() - letters;
    (1..=4).contains(&letters)
        && (3..=5).contains(&digits)
        && s.bytes().skip(letters).all(|c| c.is_ascii_digit())
}

fn is_hex_id(s: &str) -> bool {
    (7..=40).contains(&s.len())
        && s.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f'))
        && s.bytes().any(|c| c.is_ascii_digit())
        && s.bytes().any(|c| c.is_ascii_alphabetic())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<&str> {
        distinctive_tokens(text).collect()
    }

    #[test]
    fn tokens_are_paths_files_identifiers_codes_and_hashes() {
        assert_eq!(
            tokens("see /testbed/django/contrib/auth/validators.py."),
            vec!["testbed/django/contrib/auth/validators.py", "validators.py"]
        );
        assert_eq!(
            tokens("edit ./src/lib.rs now"),
            vec!["src/lib.rs", "lib.rs"]
        );
        assert_eq!(tokens("and/or src/backends"), Vec::<&str>::new());
        assert_eq!(tokens("src/backends/cpu/"), vec!["src/backends/cpu"]);
        assert_eq!(
            tokens("self._wcs.axis_correlation_matrix UsernameValidator __init__ setup"),
            vec!["axis_correlation_matrix", "UsernameValidator"]
        );
        assert_eq!(
            tokens("error[E0308]: TS2345 HTTP 404"),
            vec!["E0308", "TS2345"]
        );
        assert_eq!(
            tokens("commit 1a2b3c4d and deadbeef and 1234567"),
            vec!["1a2b3c4d"]
        );
        assert_eq!(tokens("np.array e.g. get_x"), Vec::<&str>::new());
        assert_eq!(tokens("日本語 vsla_new()"), vec!["vsla_new"]);
    }

    /// The split by `char` the byte split replaced, as it was.
    fn tokens_by_char(text: &str) -> Vec<&str> {
        text.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')))
            .map(|w| w.trim_matches(|c| matches!(c, '.' | '/' | '-')))
            .filter(|w| !w.is_empty() && !w.bytes().all(|b| b.is_ascii_lowercase()))
            .flat_map(word_tokens)
            .collect()
    }

    #[test]
    fn the_byte_split_finds_the_tokens_the_char_split_found() {
        // Texts drawn from pieces that make every kind of token and every edge, non-ASCII
        // letters (two, three and four bytes) glued to words among them.
        let pieces = [
            "src/lib.rs",
            "/testbed/a/b/c.py",
            "vsla_tensor_t",
            "UsernameValidator",
            "E0308",
            "1a2b3c4d",
            "..",
            "/",
            "-",
            "é",
            "日本",
            "🦀",
            " ",
            "\n",
            "(",
            "x.",
            "-y-",
            "ü_ß",
            "get_x",
            "A1234",
            "deadbeef1",
            "./",
            "café/src/x.rs",
        ];
        let mut state = 7u64;
        for _ in 0..5000 {
            let mut text = String::new();
            for _ in 0..12 {
                state = state
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                text.push_str(pieces[(state >> 33) as usize % pieces.len()]);
            }
            assert_eq!(tokens(&text), tokens_by_char(&text), "{text:?}");
        }
    }
}
