//! Reading text files and quoting their values in messages, the same way in every loader.
//!
//! - A leading UTF-8 byte-order mark (what some Windows editors write) is skipped, so the
//!   first line parses like the others.
//! - Invalid UTF-8 is reported with the line and the byte offset of the first bad byte, so it
//!   can be found with `xxd -s OFFSET`.
//! - A value quoted in a message is cut to [`QUOTE_CHARS`] characters with an ellipsis: a
//!   100 000-character line must not flood the terminal.

use crate::error::InputError;
use std::path::Path;

/// The longest quoted value a message shows in full.
pub const QUOTE_CHARS: usize = 80;

/// An unquoted word longer than this (in bytes) is a value, not a path: it is cut too.
const LONG_WORD: usize = 512;

const BOM: &str = "\u{feff}";

/// Reads a text file as UTF-8, without its byte-order mark.
pub fn read(path: &Path) -> Result<String, InputError> {
    let bytes = std::fs::read(path).map_err(|e| InputError::io(path, e))?;
    decode(path, bytes)
}

/// Bytes as UTF-8 text without a leading byte-order mark; `path` names them in the error.
pub fn decode(path: &Path, bytes: Vec<u8>) -> Result<String, InputError> {
    match String::from_utf8(bytes) {
        Ok(mut text) => {
            if text.starts_with(BOM) {
                text.drain(..BOM.len());
            }
            Ok(text)
        }
        Err(e) => {
            let offset = e.utf8_error().valid_up_to();
            let bytes = e.as_bytes();
            let line = 1 + bytes[..offset].iter().filter(|&&b| b == b'\n').count();
            Err(InputError::line(
                path,
                line,
                format!("invalid UTF-8 at byte offset {offset}: the file must be UTF-8 text"),
            ))
        }
    }
}

/// `text` without a leading byte-order mark.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// `s` cut to `max` characters, with an ellipsis when it was longer.
pub fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_string(),
        Some((at, _)) => format!("{}…", &s[..at]),
    }
}

/// A message with every quoted value (between `"` or backticks) and every runaway unquoted word
/// cut to [`QUOTE_CHARS`] characters: serde and TOML quote the offending value whole.
pub fn cut_long(msg: &str) -> String {
    if msg.len() <= QUOTE_CHARS {
        return msg.to_string();
    }
    let mut out = String::with_capacity(msg.len().min(4 * 1024));
    let mut inside = false;
    let mut rest = msg;
    loop {
        let end = rest.find(['"', '`']).unwrap_or(rest.len());
        let segment = &rest[..end];
        if inside {
            out.push_str(&cut(segment, QUOTE_CHARS));
        } else {
            let mut word_start = 0;
            for (i, c) in segment.char_indices().chain([(segment.len(), ' ')]) {
                if c.is_whitespace() {
                    let word = &segment[word_start..i];
                    // Paths are unquoted words too: only a runaway word is cut.
                    if word.len() > LONG_WORD {
                        out.push_str(&cut(word, QUOTE_CHARS));
                    } else {
                        out.push_str(word);
                    }
                    if i < segment.len() {
                        out.push(c);
                    }
                    word_start = i + c.len_utf8();
                }
            }
        }
        if end == rest.len() {
            break;
        }
        let quote = &rest[end..end + 1];
        out.push_str(quote);
        inside = !inside;
        rest = &rest[end + 1..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bom_is_skipped_and_bad_utf8_located() {
        let p = Path::new("h.jsonl");
        assert_eq!(decode(p, b"\xef\xbb\xbf{}".to_vec()).unwrap(), "{}");
        let e = decode(p, b"{}\n{\"a\xff\"}".to_vec()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "h.jsonl:2: invalid UTF-8 at byte offset 6: the file must be UTF-8 text"
        );
    }

    #[test]
    fn long_values_are_cut_short_ones_kept() {
        assert_eq!(cut("abc", 2), "ab…");
        assert_eq!(cut("ab", 2), "ab");
        let long = "x".repeat(100_000);
        let msg = cut_long(&format!("unknown kind \"{long}\" (and `{long}`) {long}"));
        let x80 = "x".repeat(80);
        assert_eq!(
            msg,
            format!("unknown kind \"{x80}…\" (and `{x80}…`) {x80}…")
        );
        let spaced = "a b ".repeat(100);
        assert!(cut_long(&format!("v \"{spaced}\"")).chars().count() < 90);
        assert_eq!(cut_long("short \"value\""), "short \"value\"");
    }
}
